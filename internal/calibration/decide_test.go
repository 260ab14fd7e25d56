package calibration

import (
	"strings"
	"testing"
)

// TestDecide: the one rule the workflow applies and the alert card shows.
// A meter the register of sensors does not grade class 1 or 2 (screening,
// no grade: a sensor out of the register, or an unknown grade) never
// grounds an act, whatever the register holds. A
// sensor the register holds any certificate for is otherwise judged by the
// register alone (even when the register of sensors would pass it); one it
// holds none for, by the register of sensors' class and calibration date.
func TestDecide(t *testing.T) {
	now := at("2026-12-01 22:00")
	valid := SensorMeter{Grade: "class2", CalibratedAt: "2026-05-02", Certificate: "CAL-2026-0415"}
	expired := Facts{Certificates: []Certificate{cert(1, "RBC-1/2025", "2025-01-10", "2026-01-10", "A2A-1")}}
	current := Facts{Certificates: []Certificate{cert(1, "RBC-2/2026", "2026-01-10", "2027-01-10", "A2A-1")}}
	for _, tc := range []struct {
		name   string
		f      Facts
		m      SensorMeter
		ok     bool
		source string
		why    string
	}{
		{"register: certificate in force", current, valid, true, SourceRegister, "calibração válida no registro de calibrações (certificado nº RBC-2/2026, válido até 10/01/2027)"},
		{"register: expired, though the sensor register would pass", expired, valid, false, SourceRegister, "leituras indicativas: o certificado de calibração nº RBC-1/2025 venceu em 10/01/2026"},
		{"sensor register: calibrated this year", Facts{}, valid, true, SourceSensors, "calibrado em 02/05/2026, certificado CAL-2026-0415 (cadastro do sensor; nenhum certificado no registro de calibrações)"},
		{"sensor register: over 12 months", Facts{}, SensorMeter{Grade: "class1", CalibratedAt: "2025-11-30"}, false, SourceSensors, "leituras indicativas: nenhum certificado no registro de calibrações, e a calibração do cadastro do sensor (30/11/2025) venceu em 30/11/2026"},
		{"sensor register: calibrated after the reading", Facts{}, SensorMeter{Grade: "class1", CalibratedAt: "2026-12-02"}, false, SourceSensors, "é posterior à medição"},
		{"sensor register: no date", Facts{}, SensorMeter{Grade: "class1"}, false, SourceSensors, "não informa a data de calibração"},
		{"sensor register: screening", Facts{}, SensorMeter{Grade: "screening", CalibratedAt: "2026-05-02"}, false, SourceSensors, "leituras indicativas: medidor de triagem"},
		{"unknown sensor", Facts{}, SensorMeter{}, false, SourceSensors,
			"leituras indicativas: o cadastro de sensores não informa a classe do medidor (sensor fora do cadastro?), e só classe 1 ou 2 sustenta constatação (nenhum certificado no registro de calibrações)"},
		{"sensor register: unknown grade", Facts{}, SensorMeter{Grade: "class3", CalibratedAt: "2026-05-02"}, false, SourceSensors,
			`leituras indicativas: classe "class3" desconhecida no cadastro de sensores`},
		{"screening with a certificate in force", current, SensorMeter{Grade: "screening"}, false, SourceSensors,
			"leituras indicativas: medidor de triagem (não é classe 1 ou 2, segundo o cadastro de sensores), mesmo com certificado no registro de calibrações"},
		{"screening with an expired certificate: both reasons", expired, SensorMeter{Grade: "screening", CalibratedAt: "2026-05-02"}, false, SourceSensors,
			"medidor de triagem (não é classe 1 ou 2, segundo o cadastro de sensores), mesmo com certificado no registro de calibrações; o certificado de calibração nº RBC-1/2025 venceu em 10/01/2026"},
		{"no grade with a certificate in force", current, SensorMeter{}, false, SourceSensors,
			"leituras indicativas: o cadastro de sensores não informa a classe do medidor (sensor fora do cadastro?), e só classe 1 ou 2 sustenta constatação, mesmo com certificado no registro de calibrações"},
		{"no grade with an expired certificate: both reasons", expired, SensorMeter{}, false, SourceSensors,
			"mesmo com certificado no registro de calibrações; o certificado de calibração nº RBC-1/2025 venceu em 10/01/2026"},
		{"unknown grade with a certificate in force", current, SensorMeter{Grade: "Class1"}, false, SourceSensors, `classe "Class1" desconhecida`},
		{"class 1 with a certificate in force", current, SensorMeter{Grade: "class1"}, true, SourceRegister, "calibração válida no registro de calibrações"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.f, tc.m, now)
			if d.OK != tc.ok || d.Source != tc.source || !strings.Contains(d.Why, tc.why) || (d.Verdict != nil) != (len(tc.f.Certificates) > 0) {
				t.Errorf("Decide = %+v, want ok %v from %s saying %q", d, tc.ok, tc.source, tc.why)
			}
		})
	}
}
