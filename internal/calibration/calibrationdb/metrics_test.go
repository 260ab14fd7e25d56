package calibrationdb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/internal/calibration"
)

// TestOverviewAndGaugeAreDecide: the overview's decision and the
// sossego_calibration_indicative gauge are calibration.Decide over the
// register of sensors' meter, not the register's own verdict: a certified
// screening meter, or a certified sensor out of the register of sensors,
// is indicativas though its certificate is in force; an uncertified class 2
// meter calibrated this year is not, though the register holds nothing.
func TestOverviewAndGaugeAreDecide(t *testing.T) {
	ctx := context.Background()
	c := &clock{at("2026-06-10 12:00")}
	class2 := calibration.SensorMeter{Grade: "class2", CalibratedAt: "2026-03-01"}
	r := openTest(t, filepath.Join(t.TempDir(), calibration.FileName), c,
		calibration.Sensor{ID: "class1-cert", Municipality: "lapa", Meter: calibration.SensorMeter{Grade: "class1", CalibratedAt: "2026-01-10"}},
		calibration.Sensor{ID: "screening-cert", Municipality: "lapa", Meter: calibration.SensorMeter{Grade: "screening"}},
		calibration.Sensor{ID: "class2-uncertified", Municipality: "lapa", Meter: class2},
		calibration.Sensor{ID: "screening-uncertified", Municipality: "lapa", Meter: calibration.SensorMeter{Grade: "screening"}})
	for _, s := range []string{"class1-cert", "screening-cert", "unregistered-cert"} {
		k := cert(0, "RBC-"+s, "2026-01-10", "2027-01-10", "A2A-1")
		k.Sensor = s
		if _, err := r.Add(ctx, k, nil, "ana"); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := r.Overview(ctx, c.Now())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]calibration.Row{}
	for _, row := range rows {
		byID[row.Sensor] = row
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(r.Collector())
	for _, tc := range []struct {
		sensor          string
		registerOK, ok  bool
		source, why     string
		indicativeGauge float64
	}{
		{"class1-cert", true, true, calibration.SourceRegister, "calibração válida no registro de calibrações (certificado nº RBC-class1-cert", 0},
		{"screening-cert", true, false, calibration.SourceSensors, "leituras indicativas: medidor de triagem (não é classe 1 ou 2", 1},
		{"unregistered-cert", true, false, calibration.SourceSensors, "o cadastro de sensores não informa a classe do medidor", 1},
		{"class2-uncertified", false, true, calibration.SourceSensors, "calibrado em 01/03/2026 (cadastro do sensor", 0},
		{"screening-uncertified", false, false, calibration.SourceSensors, "leituras indicativas: medidor de triagem, sem classe", 1},
	} {
		t.Run(tc.sensor, func(t *testing.T) {
			row, found := byID[tc.sensor]
			d := row.Decision
			if !found || row.Verdict.OK != tc.registerOK || d.OK != tc.ok || d.Source != tc.source || !strings.Contains(d.Why, tc.why) || d.Verdict != nil {
				t.Errorf("row %+v, want register ok %v, decision ok %v from %s saying %q", row, tc.registerOK, tc.ok, tc.source, tc.why)
			}
			if got, ok := value(t, reg, "sossego_calibration_indicative", tc.sensor); !ok || got != tc.indicativeGauge {
				t.Errorf("sossego_calibration_indicative = %v (present %v), want %v", got, ok, tc.indicativeGauge)
			}
		})
	}
}
