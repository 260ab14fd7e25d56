package workflow

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/registry"
)

// TestCalibrationVerdict: the calibration register decides for the sensors
// it holds certificates for; a sensor it holds nothing for, or no register
// at all, is judged by the register of sensors' calibration date (12
// months); a screening meter never passes, even with a certificate in the
// register.
func TestCalibrationVerdict(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	reg, err := calibrationdb.Open(ctx, filepath.Join(t.TempDir(), calibration.FileName), calibrationdb.Options{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if _, err := reg.Add(ctx, calibration.Certificate{Sensor: "s1", Number: "CAL-1", Laboratory: "Lab Acústica", MeterModel: "NSRT_mk4",
		MeterSerial: "N-1", CalibratedOn: "2025-11-01", Expires: "2026-11-01", UncertaintyDB: 0.4}, nil, "ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Add(ctx, calibration.Certificate{Sensor: "s5", Number: "CAL-5", Laboratory: "Lab Acústica", MeterModel: "PCBA-DBM",
		MeterSerial: "P-5", CalibratedOn: "2026-11-01", Expires: "2027-11-01", UncertaintyDB: 0.4}, nil, "ana"); err != nil {
		t.Fatal(err)
	}
	certifiedScreening := registry.Sensor{ID: "s5", Meter: registry.Meter{Grade: "screening"}}
	class2 := registry.Sensor{ID: "s1", Meter: registry.Meter{Grade: "class2", CalibratedAt: "2026-05-02"}}
	uncertified := registry.Sensor{ID: "s4", Meter: registry.Meter{Grade: "class2", CalibratedAt: "2026-05-02", Certificate: "RBC-9"}}
	old := registry.Sensor{ID: "s2", Meter: registry.Meter{Grade: "class2", CalibratedAt: "2025-05-02"}}
	screening := registry.Sensor{ID: "s3", Meter: registry.Meter{Grade: "screening"}}
	for _, tc := range []struct {
		name string
		cal  Calibrations
		s    registry.Sensor
		ok   bool
		why  string
	}{
		{"no register, calibrated this year", nil, class2, true, "calibrado em 02/05/2026"},
		{"no register, calibration over 12 months old", nil, old, false, "venceu em 02/05/2026"},
		{"no register, screening meter", nil, screening, false, "medidor de triagem"},
		{"register holding the sensor decides", reg, class2, false, "o certificado de calibração nº CAL-1 venceu em 01/11/2026"},
		{"register not holding the sensor: the sensor's date", reg, old, false, "venceu em 02/05/2026"},
		{"register not holding a calibrated sensor", reg, uncertified, true, "certificado RBC-9 (cadastro do sensor"},
		{"register not holding a screening sensor", reg, screening, false, "leituras indicativas: medidor de triagem"},
		{"register holding a screening sensor: still indicativas", reg, certifiedScreening, false,
			"leituras indicativas: medidor de triagem (não é classe 1 ou 2, segundo o cadastro de sensores), mesmo com certificado"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Calibrations: tc.cal})
			ok, why := s.calibration(tc.s, at)
			if ok != tc.ok || !strings.Contains(why, tc.why) {
				t.Errorf("calibration = %v %q, want %v and %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}
