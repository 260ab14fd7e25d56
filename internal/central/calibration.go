package central

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/registry"
)

// openCalibration opens the calibration register (DataDir/calibration.db,
// docs/metrology.md) over the registry's sensors and registers its gauges.
func openCalibration(ctx context.Context, dataDir string, reg *registry.Live, prom prometheus.Registerer, log *slog.Logger) (*calibrationdb.Register, error) {
	cal, err := calibrationdb.Open(ctx, filepath.Join(dataDir, calibration.FileName), calibrationdb.Options{
		Sensors: func() []calibration.Sensor { return CalibrationSensors(reg.Current()) }, Log: log.With("componente", "metrologia")})
	if err != nil {
		return nil, err
	}
	if err := prom.Register(cal.Collector()); err != nil {
		cal.Close()
		return nil, err
	}
	return cal, nil
}

// CalibrationSensors lists the registered sensors with their municipality
// and meter: what the calibration register's overview and gauges decide
// over (calibrationdb.Options.Sensors), for the service and the CLI alike.
func CalibrationSensors(r *registry.Registry) []calibration.Sensor {
	ss := r.Sensors()
	out := make([]calibration.Sensor, 0, len(ss))
	for _, s := range ss {
		g, _ := r.Gateway(s.Gateway)
		out = append(out, calibration.Sensor{ID: s.ID, Municipality: g.Municipality, Meter: s.Meter.Calibration()})
	}
	return out
}

// calibrationAPI serves the calibration register's routes.
func calibrationAPI(cal *calibrationdb.Register, reg *registry.Live, log *slog.Logger) *dashboard.CalibrationAPI {
	return dashboard.NewCalibrationAPI(dashboard.CalibrationOptions{Register: cal, Certificates: cal, Registry: reg, Log: log.With("componente", "metrologia")})
}

// EvidenceMeters is the calibration register as the evidence export reads
// it (dashboard.Meters), the one adapter the service's export and `sossego
// evidence export` use, so both build the same bag from the same state.
//
// Meter is the certificate in force at the window's start (number,
// laboratory, dates, uncertainty, the file when one was uploaded), the
// field checks and whether the readings are indicativas (calibration.Decide,
// the rule the workflow applies). A sensor the register holds no
// certificate for answers ok false: the export then takes the register of
// sensors' meter data and says so, with FieldChecks, which answers
// whatever the register holds of certificates.
type EvidenceMeters struct {
	Register *calibrationdb.Register
	// Registry is the register of sensors in force (the meter's grade).
	Registry func() *registry.Registry
}

// Meter is the sensor's meter at at from the register, once it holds a
// certificate of the sensor.
func (m EvidenceMeters) Meter(ctx context.Context, sensor string, at time.Time) (evidence.Meter, bool, error) {
	if sensor == "" {
		return evidence.Meter{}, false, nil
	}
	f, err := m.Register.Facts(ctx, sensor)
	if err != nil || len(f.Certificates) == 0 {
		return evidence.Meter{}, false, err
	}
	sn, _ := m.Registry().Sensor(sensor)
	sm := sn.Meter.Calibration()
	// The rule the workflow applies: a screening meter's readings are
	// indicativas even with a certificate in force.
	d := calibration.Decide(f, sm, at)
	out := evidence.Meter{Source: "registro de calibrações (metrologia); classe do cadastro de sensores", Grade: sm.Grade, Indicative: !d.OK}
	if !d.OK {
		out.IndicativeWhy = d.Why
	}
	if c := d.Verdict.Certificate; c != nil {
		u := c.UncertaintyDB
		out.Model, out.Serial = c.MeterModel, c.MeterSerial
		out.Calibration = &evidence.Calibration{Certificate: c.Number, Laboratory: c.Laboratory, Date: c.CalibratedOn,
			Expiry: c.Expires, UncertaintyDB: &u}
		if c.FileName != "" {
			_, file, err := m.Register.File(ctx, c.ID)
			if err != nil {
				return evidence.Meter{}, false, err
			}
			out.Calibration.FileName, out.Calibration.File = c.FileName, file
		}
	}
	if out.FieldCheck, out.Checks, err = m.FieldChecks(ctx, sensor, at); err != nil {
		return evidence.Meter{}, false, err
	}
	return out, true, nil
}

// FieldChecks are the sensor's calibrator checks that bracket at, with
// their signed bytes (the latest made by at and the first after it), and
// the latest made by at as the meter's last field check (nil: none).
func (m EvidenceMeters) FieldChecks(ctx context.Context, sensor string, at time.Time) (*evidence.FieldCheck, []evidence.Batch, error) {
	if sensor == "" {
		return nil, nil, nil
	}
	ks, err := m.Register.SignedChecks(ctx, sensor, at)
	if err != nil {
		return nil, nil, err
	}
	var last *evidence.FieldCheck
	var signed []evidence.Batch
	for _, k := range ks {
		if !k.At.After(at) {
			last = &evidence.FieldCheck{At: k.At, ReferenceDB: k.ReferenceDB, MeasuredDB: k.MeasuredDB, FrequencyHz: k.FrequencyHz}
		}
		signed = append(signed, evidence.Batch{Gateway: k.Gateway, Seq: k.Seq, Body: k.Body, Sig: k.Sig, VerifiedAtIngest: k.Verified,
			ReceivedAt: k.ReceivedAt})
	}
	return last, signed, nil
}
