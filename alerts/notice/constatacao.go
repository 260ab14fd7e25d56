package notice

// Constatação: what a fiscal verified in person. An alert is an indício; a
// notice rests on a constatação that names the source of the noise, where
// the fiscal stood, when, what was heard and the confirming measurement.

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/internal/docid"
)

// SourceKind says how the source of the noise is identified.
type SourceKind string

// Source kinds.
const (
	// SourceEstablishment is an establishment of the register, chosen by
	// its register id (the CNPJ/CPF it is registered with).
	SourceEstablishment SourceKind = "establishment"
	// SourceOther is a party the fiscal identified on site and typed in
	// (name, CNPJ/CPF, address).
	SourceOther SourceKind = "other"
	// SourceUnidentified records the facts without a party: it cannot
	// ground a notice against anyone.
	SourceUnidentified SourceKind = "unidentified"
)

// Source is who made the noise.
type Source struct {
	Kind SourceKind `json:"kind"`
	// EstablishmentID is the register's key of the establishment (its
	// CNPJ/CPF digits), for SourceEstablishment.
	EstablishmentID string `json:"establishment_id,omitempty"`
	Name            string `json:"name,omitempty"`
	Document        string `json:"document,omitempty"` // CNPJ or CPF, check digits verified
	Address         string `json:"address,omitempty"`
	Type            string `json:"type,omitempty"` // establishment type, when known
}

// Party is the notified party this source names.
func (s Source) Party() Party {
	return Party{Name: s.Name, Document: s.Document, Address: s.Address, Type: s.Type}
}

// Position is where the fiscal stood.
type Position struct {
	Address     string   `json:"address"`
	Description string   `json:"description,omitempty"` // free text: "calçada oposta, em frente ao nº 120"
	Lat         *float64 `json:"lat,omitempty"`
	Lon         *float64 `json:"lon,omitempty"`
}

// MeasurementKind is how the constatação's measurement was made.
type MeasurementKind string

// Measurement kinds.
const (
	// MeasureSensor: the sensor's own window (the alert's), valid only
	// when its meter is class 1 or 2 with a valid calibration and the
	// fiscal attests the source.
	MeasureSensor MeasurementKind = "sensor_window"
	// MeasureOnSite: a reading the fiscal took on site with a class 1 or 2
	// meter.
	MeasureOnSite MeasurementKind = "on_site"
	// MeasureStatement: the fiscal's statement with its evidence (photos,
	// video, complaints) — accepted only for a follow-up constatação
	// after a notice's prazo, never to ground the first notice.
	MeasureStatement MeasurementKind = "statement"
)

// Meter is the instrument of an on-site reading.
type Meter struct {
	Grade        string `json:"grade"` // class1 | class2
	Model        string `json:"model"`
	Serial       string `json:"serial"`
	CalibratedAt string `json:"calibrated_at"` // YYYY-MM-DD
	Certificate  string `json:"certificate,omitempty"`
}

// Measurement is the confirming measurement of a constatação.
type Measurement struct {
	Kind MeasurementKind `json:"kind"`

	// Sensor window (MeasureSensor): filled by the service from the alert
	// and the register; the calibration verdict comes from the
	// calibration register (or the register's meter when none is wired).
	Sensor          string    `json:"sensor,omitempty"`
	WindowStart     time.Time `json:"window_start,omitzero"`
	WindowEnd       time.Time `json:"window_end,omitzero"`
	SensorGrade     string    `json:"sensor_grade,omitempty"`
	CalibrationOK   bool      `json:"calibration_ok,omitempty"`
	CalibrationNote string    `json:"calibration_note,omitempty"`
	// SourceAttested: the fiscal attests that the sensor's window measured
	// the source named in the constatação.
	SourceAttested bool `json:"source_attested,omitempty"`

	// On-site reading (MeasureOnSite).
	Meter      *Meter   `json:"meter,omitempty"`
	DurationS  int      `json:"duration_s,omitempty"`
	ResidualDB *float64 `json:"residual_db,omitempty"` // background level, when measured

	// Both kinds: the levels (the window's or the on-site reading's).
	LAeqDB   *float64 `json:"laeq_db,omitempty"`
	LAFmaxDB *float64 `json:"lafmax_db,omitempty"`
	// LimitDB is the limit in force at the constatação's time (set by the
	// service from the code); nil for rules without a numeric limit.
	LimitDB *float64 `json:"limit_db,omitempty"`

	// Statement (MeasureStatement): the evidence the statement rests on.
	Evidence string `json:"evidence,omitempty"`
}

// Constatacao is one constatação recorded by a fiscal.
type Constatacao struct {
	ID      string `json:"id"` // e.g. lapa-CT-2026-000001, numbered by the store
	AlertID string `json:"alert_id"`
	CodeID  string `json:"code_id"`
	// FollowsUp is the notice whose prazo this constatação checks (empty
	// for the constatação that grounds the first document).
	FollowsUp   string      `json:"follows_up,omitempty"`
	Source      Source      `json:"source"`
	Position    Position    `json:"position"`
	At          time.Time   `json:"at"`    // when the fiscal verified the facts
	Heard       string      `json:"heard"` // what was heard
	Measurement Measurement `json:"measurement"`
	// Agent is the fiscal who verified and signs the constatação (the
	// logged-in user).
	Agent      Agent     `json:"agent"`
	RecordedBy Actor     `json:"recorded_by"`
	RecordedAt time.Time `json:"recorded_at"`
}

// Limits of the constatação's free texts and values.
const (
	MaxText          = 4000 // characters of a free text (heard, evidence, circumstances)
	MaxLine          = 300  // characters of a one-line text (names, addresses, models)
	MaxOnSiteSeconds = 24 * 3600
)

// ErrNoGround is wrapped when a constatação cannot ground a notice against
// a party; the message says why and what is needed (pt-BR).
var ErrNoGround = errors.New("a constatação não sustenta uma notificação")

// CheckConstatacao validates a constatação before it is stored, against
// the instant it is recorded (now): every problem is listed in pt-BR with
// what to fix. It does not decide whether the constatação grounds a notice
// ([Constatacao.Grounds]); a screening sensor's window may still be
// recorded as an indício.
func CheckConstatacao(k Constatacao, now time.Time) error {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	s := k.Source
	switch s.Kind {
	case SourceEstablishment:
		if strings.TrimSpace(s.EstablishmentID) == "" {
			add("fonte: escolha o estabelecimento do cadastro")
		}
	case SourceOther:
		if strings.TrimSpace(s.Name) == "" {
			add("fonte: informe o nome ou a razão social de quem produziu o ruído")
		}
		if err := docid.Check(s.Document); err != nil {
			add("fonte: CNPJ/CPF %q inválido (%s)", s.Document, err)
		}
		if strings.TrimSpace(s.Address) == "" {
			add("fonte: informe o endereço de quem produziu o ruído")
		}
	case SourceUnidentified:
	case "":
		add("informe a fonte do ruído: um estabelecimento do cadastro, outra pessoa ou empresa (com CNPJ/CPF e endereço) ou “fonte não identificada”")
	default:
		add("fonte %q desconhecida: use establishment, other ou unidentified", s.Kind)
	}
	for name, v := range map[string]string{"nome da fonte": s.Name, "endereço da fonte": s.Address, "endereço do fiscal": k.Position.Address} {
		if len([]rune(v)) > MaxLine {
			add("%s com mais de %d caracteres", name, MaxLine)
		}
	}
	if strings.TrimSpace(k.Position.Address) == "" {
		add("informe onde o fiscal estava (endereço do ponto de constatação)")
	}
	if (k.Position.Lat == nil) != (k.Position.Lon == nil) {
		add("coordenadas: informe latitude e longitude juntas, ou nenhuma")
	} else if k.Position.Lat != nil && (math.IsNaN(*k.Position.Lat) || math.Abs(*k.Position.Lat) > 90 || math.IsNaN(*k.Position.Lon) || math.Abs(*k.Position.Lon) > 180) {
		add("coordenadas fora do intervalo (latitude −90 a 90, longitude −180 a 180)")
	}
	switch {
	case k.At.IsZero():
		add("informe a data e a hora da constatação")
	case k.At.After(now.Add(5 * time.Minute)):
		add("a data e hora da constatação (%s) está no futuro", br(k.At))
	}
	if strings.TrimSpace(k.Heard) == "" {
		add("descreva o que foi ouvido (tipo de som, intensidade percebida, duração)")
	} else if len([]rune(k.Heard)) > MaxText {
		add("o relato do que foi ouvido passa de %d caracteres", MaxText)
	}
	if strings.TrimSpace(k.Agent.Name) == "" || strings.TrimSpace(k.Agent.Matricula) == "" {
		add("o fiscal que constata precisa de nome completo e matrícula no cadastro de usuários")
	}
	errs = append(errs, checkMeasurement(k)...)
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInput, strings.Join(errs, "; "))
	}
	return nil
}

func checkMeasurement(k Constatacao) []string {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	m := k.Measurement
	level := func(name string, v *float64, required bool) {
		switch {
		case v == nil && required:
			add("informe o %s medido em dB(A)", name)
		case v != nil && (math.IsNaN(*v) || *v < 0 || *v > 160):
			add("%s de %v dB fora do intervalo de 0 a 160 dB", name, *v)
		}
	}
	switch m.Kind {
	case MeasureSensor:
		if m.Sensor == "" || m.WindowStart.IsZero() || !m.WindowEnd.After(m.WindowStart) {
			add("a janela do sensor está vazia: a constatação com a medição do sensor precisa do alerta")
		}
		level("LAeq", m.LAeqDB, true)
	case MeasureOnSite:
		mt := m.Meter
		if mt == nil {
			add("medição no local: informe o medidor (classe, modelo, número de série, data de calibração)")
			break
		}
		if mt.Grade != alerts.GradeClass1 && mt.Grade != alerts.GradeClass2 {
			add("medição no local: o medidor deve ser classe 1 ou 2 (IEC 61672-1); informado %q", mt.Grade)
		}
		if strings.TrimSpace(mt.Model) == "" || strings.TrimSpace(mt.Serial) == "" {
			add("medição no local: informe o modelo e o número de série do medidor")
		}
		if cal, err := time.ParseInLocation("2006-01-02", mt.CalibratedAt, saoPaulo); err != nil {
			add("medição no local: data de calibração %q inválida (use AAAA-MM-DD)", mt.CalibratedAt)
		} else if !k.At.IsZero() && cal.After(k.At) {
			add("medição no local: a calibração (%s) é posterior à medição", cal.Format("02/01/2006"))
		}
		level("LAeq", m.LAeqDB, true)
		level("LAFmax", m.LAFmaxDB, false)
		level("nível residual", m.ResidualDB, false)
		if m.DurationS <= 0 || m.DurationS > MaxOnSiteSeconds {
			add("medição no local: informe a duração em segundos (1 a %d)", MaxOnSiteSeconds)
		}
	case MeasureStatement:
		if k.FollowsUp == "" {
			add("a declaração do fiscal só vale para a constatação após o prazo de uma notificação; a primeira constatação precisa de medição")
		}
		if strings.TrimSpace(m.Evidence) == "" {
			add("declaração do fiscal: descreva a evidência que a acompanha (fotos, vídeo, reclamações registradas)")
		} else if len([]rune(m.Evidence)) > MaxText {
			add("a evidência passa de %d caracteres", MaxText)
		}
	case "":
		add("informe a medição que confirma o ruído: a janela do sensor (medidor classe 1 ou 2 calibrado) ou uma medição no local com medidor classe 1 ou 2")
	default:
		add("medição %q desconhecida: use sensor_window, on_site ou statement", m.Kind)
	}
	return errs
}

// Grounds reports whether the constatação grounds a notice (or an auto)
// against a party; the error wraps ErrNoGround and says, in pt-BR, why
// not and what is needed.
func (k Constatacao) Grounds() error {
	if k.Source.Kind == SourceUnidentified {
		return fmt.Errorf("%w: a fonte não foi identificada; sem um responsável não há a quem notificar. "+
			"Registre nova constatação identificando o estabelecimento ou a pessoa (CNPJ/CPF e endereço)", ErrNoGround)
	}
	m := k.Measurement
	switch m.Kind {
	case MeasureSensor:
		if m.SensorGrade != alerts.GradeClass1 && m.SensorGrade != alerts.GradeClass2 {
			return fmt.Errorf("%w: o sensor %s é de triagem (%s), sem classe 1 ou 2: a janela dele é indício, não prova. "+
				"Faça a medição no local com medidor classe 1 ou 2 calibrado (modelo, série, data de calibração, LAeq e duração)",
				ErrNoGround, m.Sensor, gradeLabel(m.SensorGrade))
		}
		if !m.CalibrationOK {
			why := m.CalibrationNote
			if why == "" {
				why = "sem calibração válida registrada"
			}
			return fmt.Errorf("%w: o medidor do sensor %s não tem calibração válida na data (%s). "+
				"Faça a medição no local com medidor classe 1 ou 2 calibrado, ou registre a calibração do sensor", ErrNoGround, m.Sensor, why)
		}
		if !m.SourceAttested {
			return fmt.Errorf("%w: a janela do sensor só vale se o fiscal atestar que o som medido vinha da fonte indicada: "+
				"marque o atestado da fonte ou faça a medição no local", ErrNoGround)
		}
	case MeasureOnSite:
		if m.ResidualDB != nil && m.LAeqDB != nil && *m.LAeqDB-*m.ResidualDB < 3 {
			return fmt.Errorf("%w: o LAeq medido (%s dB) está a menos de 3 dB do nível residual (%s dB): o som da fonte não se distingue do ambiente. "+
				"Repita a medição com a fonte mais evidente ou em outro ponto", ErrNoGround, dB(*m.LAeqDB), dB(*m.ResidualDB))
		}
	case MeasureStatement:
		if k.FollowsUp == "" {
			return fmt.Errorf("%w: a primeira constatação precisa de medição (janela do sensor calibrado ou medição no local)", ErrNoGround)
		}
		return nil
	default:
		return fmt.Errorf("%w: sem medição que confirme o ruído", ErrNoGround)
	}
	if m.LimitDB != nil && m.LAeqDB != nil && *m.LAeqDB <= *m.LimitDB {
		return fmt.Errorf("%w: o LAeq medido (%s dB) não passa do limite de %s dB em vigor no horário: não há infração a notificar",
			ErrNoGround, dB(*m.LAeqDB), dB(*m.LimitDB))
	}
	return nil
}

// Text words the constatação for the documents (pt-BR, Brasília time).
func (k Constatacao) Text() string {
	var b strings.Builder
	at := k.At.In(saoPaulo)
	fmt.Fprintf(&b, "Constatação nº %s, em %s às %s, pelo fiscal %s (matrícula %s)", k.ID, at.Format("02/01/2006"), at.Format("15:04"),
		k.Agent.Name, k.Agent.Matricula)
	fmt.Fprintf(&b, ", do ponto %s", k.Position.Address)
	if k.Position.Description != "" {
		fmt.Fprintf(&b, " (%s)", k.Position.Description)
	}
	if k.Position.Lat != nil && k.Position.Lon != nil {
		fmt.Fprintf(&b, " [%.5f, %.5f]", *k.Position.Lat, *k.Position.Lon)
	}
	switch k.Source.Kind {
	case SourceUnidentified:
		b.WriteString("; fonte não identificada")
	default:
		fmt.Fprintf(&b, "; fonte: %s", k.Source.Name)
		if k.Source.Document != "" {
			fmt.Fprintf(&b, ", %s %s", docLabel(k.Source.Document), k.Source.Document)
		}
		if k.Source.Address != "" {
			fmt.Fprintf(&b, ", %s", k.Source.Address)
		}
	}
	fmt.Fprintf(&b, ". Ouvido: %s.", strings.TrimSuffix(strings.TrimSpace(k.Heard), "."))
	m := k.Measurement
	switch m.Kind {
	case MeasureSensor:
		fmt.Fprintf(&b, " Medição: janela do sensor %s de %s a %s", m.Sensor, br(m.WindowStart), m.WindowEnd.In(saoPaulo).Format("15:04"))
		if m.LAeqDB != nil {
			fmt.Fprintf(&b, ", LAeq %s dB(A)", dB(*m.LAeqDB))
		}
		fmt.Fprintf(&b, " (%s", gradeLabel(m.SensorGrade))
		if m.CalibrationNote != "" {
			fmt.Fprintf(&b, "; %s", m.CalibrationNote)
		}
		b.WriteString(")")
		if m.SourceAttested {
			b.WriteString("; fonte atestada pelo fiscal")
		}
		b.WriteString(".")
	case MeasureOnSite:
		mt := m.Meter
		if mt == nil {
			break
		}
		fmt.Fprintf(&b, " Medição no local com %s %s, nº de série %s, calibrado em %s", gradeLabel(mt.Grade), mt.Model, mt.Serial, dateBR(mt.CalibratedAt))
		if mt.Certificate != "" {
			fmt.Fprintf(&b, " (certificado %s)", mt.Certificate)
		}
		if m.LAeqDB != nil {
			fmt.Fprintf(&b, ": LAeq %s dB(A) em %s", dB(*m.LAeqDB), duration(m.DurationS))
		}
		if m.LAFmaxDB != nil {
			fmt.Fprintf(&b, ", LAFmax %s dB(A)", dB(*m.LAFmaxDB))
		}
		if m.ResidualDB != nil {
			fmt.Fprintf(&b, ", nível residual %s dB(A)", dB(*m.ResidualDB))
		}
		b.WriteString(".")
	case MeasureStatement:
		fmt.Fprintf(&b, " Declaração do fiscal; evidência: %s.", strings.TrimSuffix(strings.TrimSpace(m.Evidence), "."))
	}
	if m.LimitDB != nil {
		fmt.Fprintf(&b, " Limite em vigor: %s dB.", dB(*m.LimitDB))
	}
	return b.String()
}

func duration(s int) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s%60 == 0:
		return fmt.Sprintf("%d min", s/60)
	}
	return fmt.Sprintf("%d min %d s", s/60, s%60)
}

// Edit is one change a fiscal made to a draft, kept in the document and in
// the audit trail.
type Edit struct {
	At     time.Time `json:"at"`
	Actor  Actor     `json:"actor"`
	Field  string    `json:"field"` // see [EditableFields]
	Before string    `json:"before"`
	After  string    `json:"after"`
}

// FieldChange is one requested change of a draft: Field is one of
// [EditableFields] or "field.<id>" for a field of the code's procedure.
type FieldChange struct {
	Field string `json:"field"`
	Value string `json:"value"`
}

// StoredPDF describes a stored PDF of an act: the bytes of the act as
// issued (Seq 1), then as delivered with the ciente or recusa recorded
// (Seq 2); each immutable, with its SHA-256.
type StoredPDF struct {
	Seq      int       `json:"seq"`
	Stage    string    `json:"stage"` // issue | ciente | recusa
	SHA256   string    `json:"sha256"`
	Size     int       `json:"size"`
	StoredAt time.Time `json:"stored_at"`
}

// Witness document types.
const (
	WitnessCPF = "cpf"
	WitnessRG  = "rg"
)
