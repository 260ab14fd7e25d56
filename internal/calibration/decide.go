package calibration

import (
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/tz"
)

// SensorMeter is a sensor's meter as the register of sensors keeps it.
type SensorMeter struct {
	Grade        string // class1 | class2 | screening
	CalibratedAt string // YYYY-MM-DD
	Certificate  string
}

// SensorRegisterValidity is how long, in months, the register of sensors'
// calibration date counts for a sensor the calibration register holds no
// certificate for.
const SensorRegisterValidity = 12

// Sources of a Decision.
const (
	SourceRegister = "registro de calibrações"
	SourceSensors  = "cadastro de sensores"
)

// Decision says whether a sensor's readings at an instant may found a
// constatação or a notice. It is the one rule the workflow applies and the
// alert card shows.
type Decision struct {
	OK bool `json:"ok"`
	// Why is pt-BR: what grounds the readings, or why they are
	// indicativas ("leituras indicativas: …").
	Why    string `json:"why"`
	Source string `json:"source"` // SourceRegister or SourceSensors
	// Verdict is the calibration register's, whenever it holds a
	// certificate of the sensor.
	Verdict *Verdict `json:"verdict,omitempty"`
}

// GradeScreening is the register of sensors' grade of a screening meter
// (neither class 1 nor class 2).
const GradeScreening = "screening"

// classed says whether grade is class 1 or class 2.
func classed(grade string) bool { return grade == "class1" || grade == "class2" }

// Decide is the rule: readings are indicativas unless the register of
// sensors grades the meter class 1 or 2, whatever the calibration register
// holds (a certificate does not make a screening meter, or a meter whose
// class the register of sensors does not give, class 1 or 2); a sensor the
// calibration register holds any certificate revision for is otherwise
// judged by the register (Evaluate); one it holds none for yet, by the
// register of sensors' meter: calibrated no later than at and less than
// SensorRegisterValidity months before it.
func Decide(f Facts, m SensorMeter, at time.Time) Decision {
	if len(f.Certificates) == 0 {
		ok, why := bySensorRegister(m, at)
		if !ok {
			why = "leituras indicativas: " + why
		}
		return Decision{OK: ok, Why: why, Source: SourceSensors}
	}
	v := Evaluate(f, at)
	d := Decision{OK: v.OK, Why: v.Why(), Source: SourceRegister, Verdict: &v}
	if !classed(m.Grade) {
		// The grade is the register of sensors': it decides, and the
		// register's own reasons, if any, follow.
		d.OK, d.Source = false, SourceSensors
		d.Why = "leituras indicativas: " + unclassed(m.Grade) + ", mesmo com certificado no registro de calibrações"
		if len(v.Reasons) > 0 {
			d.Why += "; " + strings.Join(v.Reasons, "; ")
		}
		return d
	}
	if v.OK {
		d.Why = "calibração válida no registro de calibrações"
		if c := v.Certificate; c != nil {
			d.Why = fmt.Sprintf("calibração válida no registro de calibrações (certificado nº %s, válido até %s)", c.Number, brDate(c.Expires))
		}
	}
	return d
}

// unclassed says why a grade other than class 1 or 2 grounds nothing.
func unclassed(grade string) string {
	switch grade {
	case GradeScreening:
		return "medidor de triagem (não é classe 1 ou 2, segundo o cadastro de sensores)"
	case "":
		return "o cadastro de sensores não informa a classe do medidor (sensor fora do cadastro?), e só classe 1 ou 2 sustenta constatação"
	}
	return fmt.Sprintf("classe %q desconhecida no cadastro de sensores (só classe 1 ou 2 sustenta constatação)", grade)
}

// bySensorRegister judges the register of sensors' meter data.
func bySensorRegister(m SensorMeter, at time.Time) (bool, string) {
	switch {
	case m.Grade == GradeScreening:
		return false, "medidor de triagem, sem classe (nenhum certificado no registro de calibrações)"
	case !classed(m.Grade):
		return false, unclassed(m.Grade) + " (nenhum certificado no registro de calibrações)"
	}
	cal, err := time.ParseInLocation(time.DateOnly, m.CalibratedAt, tz.Brasilia())
	if err != nil {
		return false, "nenhum certificado no registro de calibrações, e o cadastro do sensor não informa a data de calibração"
	}
	calBR := cal.Format("02/01/2006")
	until := cal.AddDate(0, SensorRegisterValidity, 0)
	switch {
	case cal.After(at):
		return false, fmt.Sprintf("nenhum certificado no registro de calibrações, e a calibração do cadastro do sensor (%s) é posterior à medição", calBR)
	case !at.Before(until):
		return false, fmt.Sprintf("nenhum certificado no registro de calibrações, e a calibração do cadastro do sensor (%s) venceu em %s", calBR, until.Format("02/01/2006"))
	}
	note := "calibrado em " + calBR
	if m.Certificate != "" {
		note += ", certificado " + m.Certificate
	}
	return true, note + " (cadastro do sensor; nenhum certificado no registro de calibrações)"
}
