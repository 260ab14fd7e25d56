// Package noticetest holds the scenarios the notice, PDF, evidence and
// workflow tests share: a Lapa night exceedance at a bar (Art. 96, 60 dB), a
// Conceição de Macabu exceedance (Art. 55, 45 dB) and a Campos Altos bar
// open after hours (Art. 202, VIII: no decibel limit, no preliminary
// notice), each with its establishment, sensor and synthetic 1-s readings.
package noticetest

import (
	"fmt"
	"math"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/tz"
)

// SaoPaulo is America/Sao_Paulo.
var SaoPaulo = tz.Brasilia()

// Scenario is one municipality's case.
type Scenario struct {
	Name    string
	Code    *codes.Code
	Finding notice.Finding
	Alert   *alerts.Alert // nil for rule-based findings
	Party   notice.Party
	Site    notice.Site
	Gateway string
	// Level is the 1-s LAeq the synthetic readings follow: Base outside the
	// event, Event inside [Finding.WindowStart, Finding.WindowEnd).
	Base, Event float64
}

// Codes loads the built-in codes or panics.
func Codes() *codes.Set {
	s, err := codes.Builtin()
	if err != nil {
		panic(err)
	}
	return s
}

// Lapa is the night exceedance of the central-service test: a bar with a
// sound system in "outras áreas", 23:10–23:14 on Friday 06/03/2026,
// LAeq 68.4 dB against the 60 dB night limit of Art. 96.
func Lapa(set *codes.Set) Scenario {
	c, _ := set.Code("lapa")
	start := time.Date(2026, 3, 6, 23, 10, 0, 0, SaoPaulo)
	l, ok := c.ActiveLimit("other", "bar", start)
	if !ok {
		panic("noticetest: lapa has no limit at night")
	}
	a := alerts.Alert{ID: "lapa-bar-01/2026-03-07T02:10:00.000Z", Kind: alerts.KindExceedance, State: alerts.StateFiring,
		SensorInfo: alerts.SensorInfo{Sensor: "lapa-bar-01", Gateway: "lapa-centro-01", Municipality: "lapa", Code: "lapa",
			Zone: "other", EstablishmentType: "bar", Establishment: "Bar Exemplo da Lapa Ltda (fictício)", Grade: alerts.GradeClass2},
		CodeID: l.CodeID, CodeVersion: l.CodeVersion, RuleID: l.RuleID, Article: l.Article, Quote: l.Quote,
		Period: l.Period, PeriodLabel: l.PeriodLabel, LimitDB: l.DBA, MarginDB: 1.4, LAeqDB: 68.4, LAFmaxDB: 79.2,
		WindowStart: start.UTC(), WindowEnd: start.Add(4 * time.Minute).UTC(), PendingAt: start.UTC(),
		FiringAt: start.Add(2 * time.Minute).UTC()}
	return Scenario{Name: "lapa", Code: c, Finding: notice.FromAlert(a), Alert: &a, Gateway: "lapa-centro-01",
		Party: notice.Party{Name: "Bar Exemplo da Lapa Ltda (fictício)", Document: "12.345.678/0001-95",
			Address: "Rua XV de Novembro, 98, Centro, Lapa - PR", Type: "bar"},
		Site: notice.Site{Sensor: "lapa-bar-01", Address: "Rua XV de Novembro, 100, Centro, Lapa - PR", Lat: -25.7697, Lon: -49.7158,
			Zone: "other", Grade: alerts.GradeClass2, MeterModel: "NSRT_mk4", MeterSerial: "NSRT-0001", CalibratedAt: "2026-02-05", Certificate: "CAL-2026-0415"},
		Base: 52, Event: 68.4}
}

// Macabu is a Conceição de Macabu exceedance of the flat 45 dB (Art. 55).
func Macabu(set *codes.Set) Scenario {
	c, _ := set.Code("conceicao-de-macabu")
	start := time.Date(2026, 3, 10, 21, 30, 0, 0, SaoPaulo)
	l, ok := c.ActiveLimit("residential", "bar", start)
	if !ok {
		panic("noticetest: macabu has no limit")
	}
	a := alerts.Alert{ID: "macabu-praca-01/2026-03-11T00:30:00.000Z", Kind: alerts.KindExceedance, State: alerts.StateFiring,
		SensorInfo: alerts.SensorInfo{Sensor: "macabu-praca-01", Gateway: "macabu-praca-01", Municipality: "conceicao-de-macabu",
			Zone: "residential", EstablishmentType: "bar", Establishment: "Lanchonete Praça Ltda (fictícia)", Grade: alerts.GradeClass1},
		CodeID: l.CodeID, CodeVersion: l.CodeVersion, RuleID: l.RuleID, Article: l.Article, Quote: l.Quote,
		Period: l.Period, PeriodLabel: l.PeriodLabel, LimitDB: l.DBA, MarginDB: 1.1, LAeqDB: 58.7, LAFmaxDB: 71.3,
		WindowStart: start.UTC(), WindowEnd: start.Add(5 * time.Minute).UTC(), PendingAt: start.UTC(), FiringAt: start.Add(2 * time.Minute).UTC()}
	return Scenario{Name: "conceicao-de-macabu", Code: c, Finding: notice.FromAlert(a), Alert: &a, Gateway: "macabu-praca-01",
		Party: notice.Party{Name: "Lanchonete Praça Ltda (fictícia)", Document: "11.222.333/0001-81",
			Address: "Praça José Bonifácio, 12, Centro, Conceição de Macabu - RJ", Type: "bar"},
		Site: notice.Site{Sensor: "macabu-praca-01", Address: "Praça José Bonifácio, 10, Conceição de Macabu - RJ", Lat: -22.0849, Lon: -41.8681,
			Zone: "residential", Grade: alerts.GradeClass1, MeterModel: "XL2", MeterSerial: "A2A-12345", CalibratedAt: "2026-01-15", Certificate: "RBC-0042/2026"},
		Base: 41, Event: 58.7}
}

// CamposAltos is a bar operating with music at 01:30 on a Saturday:
// Art. 202, VIII (bars from 7 to 24 h), judged by the codes engine. The
// code has no decibel limit and no preliminary notice.
func CamposAltos(set *codes.Set) Scenario {
	c, _ := set.Code("campos-altos")
	start := time.Date(2026, 3, 7, 1, 30, 0, 0, SaoPaulo)
	lvl := 66.0
	v := codes.Evaluate(c, codes.Observation{At: start, Zone: "residential", Source: "amplified_music", LAeq: &lvl,
		Facts: map[string]any{"establishment_type": "bar", "operating": true, "mechanism": "sound_system"}})
	f, err := notice.FromVerdict(c, v, "ca-bar-01/2026-03-07T04:30:00.000Z", "ca-bar-01", alerts.GradeClass2,
		start.UTC(), start.Add(10*time.Minute).UTC(), 66.0, 78.5)
	if err != nil {
		panic(fmt.Sprintf("noticetest: campos altos: %v (%+v)", err, v))
	}
	return Scenario{Name: "campos-altos", Code: c, Finding: f, Gateway: "ca-gw-01",
		Party: notice.Party{Name: "Bar do Largo ME (fictício)", Document: "529.982.247-25",
			Address: "Largo da Matriz, 5, Centro, Campos Altos - MG", Type: "bar"},
		Site: notice.Site{Sensor: "ca-bar-01", Address: "Largo da Matriz, 7, Campos Altos - MG", Lat: -19.6961, Lon: -46.1725,
			Zone: "residential", Grade: alerts.GradeClass2, MeterModel: "NSRT_mk4", MeterSerial: "NSRT-0777", CalibratedAt: "2025-11-20"},
		Base: 48, Event: 66}
}

// Reading is one synthetic 1-s record.
type Reading struct {
	T      time.Time
	LAeq   float64
	LAFmax float64
	LAFmin float64
}

// Readings returns 1-s records over [from, to): Base with a slow
// deterministic ripple outside the event, Event (with the same ripple,
// energy-balanced) inside it.
func (s Scenario) Readings(from, to time.Time) []Reading {
	var out []Reading
	for t := from.Truncate(time.Second); t.Before(to); t = t.Add(time.Second) {
		lv := s.Base
		if !t.Before(s.Finding.WindowStart) && t.Before(s.Finding.WindowEnd) {
			lv = s.Event
		}
		i := float64(t.Unix() % 60)
		ripple := 1.5 * math.Sin(2*math.Pi*i/60)
		out = append(out, Reading{T: t.UTC(), LAeq: lv + ripple, LAFmax: lv + ripple + 6 + 2*math.Abs(math.Cos(i)), LAFmin: lv + ripple - 4})
	}
	return out
}

// Agent is the fiscal of the scenarios' constatações and notices.
var Agent = notice.Agent{Name: "Ana Paula Ferreira", Matricula: "F-1234"}

// Fiscal is the logged-in fiscal who signs as Agent.
var Fiscal = notice.Actor{ID: "ana", Name: Agent.Name, Role: notice.RoleFiscal, Matricula: Agent.Matricula}

// Constatacao is the fiscal's constatação that confirms the scenario's
// finding with the sensor's own window (its class 1/2 meter calibrated,
// the source attested), recorded 20 minutes after the window ended.
func (s Scenario) Constatacao() notice.Constatacao {
	f := s.Finding
	laeq, lafmax := f.LAeqDB, f.LAFmaxDB
	at := f.WindowEnd.Add(5 * time.Minute)
	return notice.Constatacao{ID: s.Code.ID + "-CT-2026-000001", AlertID: f.AlertID, CodeID: s.Code.ID,
		Source: notice.Source{Kind: notice.SourceEstablishment, EstablishmentID: digits(s.Party.Document), Name: s.Party.Name,
			Document: s.Party.Document, Address: s.Party.Address, Type: s.Party.Type},
		Position: notice.Position{Address: s.Site.Address, Description: "calçada em frente ao estabelecimento"},
		At:       at, Heard: "música mecânica amplificada, com graves audíveis da calçada",
		Measurement: notice.Measurement{Kind: notice.MeasureSensor, Sensor: f.Sensor, WindowStart: f.WindowStart, WindowEnd: f.WindowEnd,
			SensorGrade: s.Site.Grade, CalibrationOK: true, CalibrationNote: "calibrado em " + s.Site.CalibratedAt, SourceAttested: true,
			LAeqDB: &laeq, LAFmaxDB: &lafmax, LimitDB: f.LimitDB},
		Agent: Agent, RecordedBy: Fiscal, RecordedAt: at}
}

// FollowUp is a constatação after the prazo of the notice noticeID: an
// on-site reading at at with a class 1 meter, LAeq laeq.
func (s Scenario) FollowUp(noticeID string, at time.Time, laeq float64) notice.Constatacao {
	k := s.Constatacao()
	k.ID = s.Code.ID + "-CT-2026-000002"
	k.FollowsUp, k.At, k.RecordedAt = noticeID, at, at
	res := s.Base
	k.Heard = "a mesma música amplificada, após o prazo da notificação"
	k.Measurement = notice.Measurement{Kind: notice.MeasureOnSite, Meter: &notice.Meter{Grade: alerts.GradeClass1, Model: "XL2",
		Serial: "A2A-99999", CalibratedAt: "2026-01-10", Certificate: "RBC-0099/2026"}, LAeqDB: &laeq, DurationS: 300,
		ResidualDB: &res, LimitDB: s.Finding.LimitDB}
	return k
}

func digits(s string) string {
	out := []rune{}
	for _, r := range s {
		if r >= '0' && r <= '9' {
			out = append(out, r)
		}
	}
	return string(out)
}
