package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/registry"
)

// fakeCalibrations answers for the sensors it covers with a fixed verdict.
type fakeCalibrations struct {
	covers map[string]bool
	ok     bool
	why    string
}

func (f fakeCalibrations) Status(string, time.Time) (bool, string) { return f.ok, f.why }

type fakeCoverage struct{ fakeCalibrations }

func (f fakeCoverage) Covers(id string) bool { return f.covers[id] }

// TestCalibrationVerdict: the calibration register decides for the sensors
// it holds; one that does not report coverage decides for all; a sensor it
// holds nothing for is judged by the register of sensors' calibration date
// (12 months), and a screening meter never passes there.
func TestCalibrationVerdict(t *testing.T) {
	at := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	class2 := registry.Sensor{ID: "s1", Meter: registry.Meter{Grade: "class2", CalibratedAt: "2026-05-02"}}
	old := registry.Sensor{ID: "s2", Meter: registry.Meter{Grade: "class2", CalibratedAt: "2025-05-02"}}
	screening := registry.Sensor{ID: "s3", Meter: registry.Meter{Grade: "screening"}}
	expired := fakeCalibrations{covers: map[string]bool{"s1": true}, ok: false, why: "certificado CAL-1 vencido em 01/11/2026"}
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
		{"register without coverage decides", expired, class2, false, "vencido"},
		{"register covering the sensor decides", fakeCoverage{expired}, class2, false, "vencido"},
		{"register not holding the sensor: the sensor's date", fakeCoverage{expired}, old, false, "venceu em 02/05/2026"},
		{"register not holding a calibrated sensor", fakeCoverage{fakeCalibrations{covers: map[string]bool{}}}, class2, true, "cadastro do sensor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &WorkflowService{Calibrations: tc.cal}
			ok, why := s.calibration(tc.s, at)
			if ok != tc.ok || !strings.Contains(why, tc.why) {
				t.Errorf("calibration = %v %q, want %v and %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}
