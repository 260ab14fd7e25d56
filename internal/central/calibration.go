package central

import (
	"context"
	"github.com/sossego/sossego/alerts/evidence"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/registry"
)

// openCalibration opens the calibration register (DataDir/calibration.db,
// docs/metrology.md) over the registry's sensors and registers its gauges.
func openCalibration(ctx context.Context, dataDir string, reg *registry.Live, prom prometheus.Registerer, log *slog.Logger) (*calibrationdb.Register, error) {
	cal, err := calibrationdb.Open(ctx, filepath.Join(dataDir, calibration.FileName), calibrationdb.Options{
		Sensors: func() []calibration.Sensor { return calibrationSensors(reg.Current()) }, Log: log.With("componente", "metrologia")})
	if err != nil {
		return nil, err
	}
	if err := prom.Register(cal.Collector()); err != nil {
		cal.Close()
		return nil, err
	}
	return cal, nil
}

// calibrationSensors lists the registered sensors with their municipality.
func calibrationSensors(r *registry.Registry) []calibration.Sensor {
	ss := r.Sensors()
	out := make([]calibration.Sensor, 0, len(ss))
	for _, s := range ss {
		g, _ := r.Gateway(s.Gateway)
		out = append(out, calibration.Sensor{ID: s.ID, Municipality: g.Municipality})
	}
	return out
}

// registerCalibration mounts the calibration routes.
func registerCalibration(mux *http.ServeMux, cal *calibrationdb.Register, wb *web, reg *registry.Live, log *slog.Logger) {
	dashboard.NewCalibrationAPI(dashboard.CalibrationOptions{Register: cal, Registry: reg,
		Log: log.With("componente", "metrologia")}).Register(mux, wb.auth)
}

// meters is the calibration register as the evidence package reads it: the
// certificate in force at the window's start (number, laboratory, dates,
// uncertainty, the file when one was uploaded), the last field check and
// whether the readings are indicativas. A sensor the register holds no
// certificate for answers ok false: the package then takes the register
// of sensors' meter data and says so.
type meters struct {
	r   *calibrationdb.Register
	reg *registry.Live
}

func (m meters) Meter(ctx context.Context, sensor string, at time.Time) (evidence.Meter, bool, error) {
	if sensor == "" {
		return evidence.Meter{}, false, nil
	}
	f, err := m.r.Facts(ctx, sensor)
	if err != nil || len(f.Certificates) == 0 {
		return evidence.Meter{}, false, err
	}
	var sm calibration.SensorMeter
	if sn, ok := m.reg.Current().Sensor(sensor); ok {
		sm = calibration.SensorMeter{Grade: sn.Meter.Grade, CalibratedAt: sn.Meter.CalibratedAt, Certificate: sn.Meter.Certificate}
	}
	// The rule the workflow applies: a screening meter's readings are
	// indicativas even with a certificate in force.
	d := calibration.Decide(f, sm, at)
	v := *d.Verdict
	out := evidence.Meter{Source: "registro de calibrações (metrologia); classe do cadastro de sensores", Grade: sm.Grade, Indicative: !d.OK}
	if !d.OK {
		out.IndicativeWhy = d.Why
	}
	if c := v.Certificate; c != nil {
		u := c.UncertaintyDB
		out.Model, out.Serial = c.MeterModel, c.MeterSerial
		out.Calibration = &evidence.Calibration{Certificate: c.Number, Laboratory: c.Laboratory, Date: c.CalibratedOn,
			Expiry: c.Expires, UncertaintyDB: &u}
		if c.FileName != "" {
			_, file, err := m.r.File(ctx, c.ID)
			if err != nil {
				return evidence.Meter{}, false, err
			}
			out.Calibration.FileName, out.Calibration.File = c.FileName, file
		}
	}
	if k := v.LastCheck; k != nil {
		out.FieldCheck = &evidence.FieldCheck{At: k.At, ReferenceDB: k.ReferenceDB, MeasuredDB: k.MeasuredDB, FrequencyHz: k.FrequencyHz}
	}
	ks, err := m.r.SignedChecks(ctx, sensor, at)
	if err != nil {
		return evidence.Meter{}, false, err
	}
	for _, k := range ks {
		out.Checks = append(out.Checks, evidence.Batch{Gateway: k.Gateway, Seq: k.Seq, Body: k.Body, Sig: k.Sig, VerifiedAtIngest: k.Verified,
			ReceivedAt: k.ReceivedAt})
	}
	return out, true, nil
}
