package notice

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/tz"
)

// Kind is the kind of document.
type Kind string

// Document kinds. The first four are the codes' own (codes.Document.Kind);
// KindRelatorio is Sossego's for codes with no preliminary notice.
const (
	KindNotificacaoPreliminar Kind = "notificacao_preliminar"
	KindIntimacaoPreliminar   Kind = "intimacao_preliminar"
	KindNotificacaoIntimacao  Kind = "notificacao_intimacao"
	KindRelatorio             Kind = "relatorio_constatacao"
	KindAuto                  Kind = "auto_de_infracao"
)

// IsNotice reports whether k is a preliminary notice (with a prazo).
func (k Kind) IsNotice() bool {
	return k == KindNotificacaoPreliminar || k == KindIntimacaoPreliminar || k == KindNotificacaoIntimacao
}

// Feminine reports whether the kind's title is feminine in Portuguese
// (Notificação, Intimação) for the agreement of its state labels.
func (k Kind) Feminine() bool { return k.IsNotice() }

// Abbrev is the prefix of document numbers of this kind.
func (k Kind) Abbrev() string {
	switch k {
	case KindNotificacaoPreliminar:
		return "NP"
	case KindIntimacaoPreliminar:
		return "IP"
	case KindNotificacaoIntimacao:
		return "NI"
	case KindRelatorio:
		return "RC"
	case KindAuto:
		return "AI"
	}
	return "DOC"
}

// ErrInput is wrapped by Build errors about missing or inconsistent inputs.
var ErrInput = errors.New("notice: invalid input")

// Finding is what the system established: the rule broken, where, when and
// with which levels. FromAlert fills it from a firing alert; FromVerdict from
// a rule-based verdict of the codes engine (codes with no numeric limit).
type Finding struct {
	AlertID     string `json:"alert_id"`
	CodeID      string `json:"code_id"`
	CodeVersion string `json:"code_version"`
	RuleID      string `json:"rule_id"`
	Article     string `json:"article"`
	Quote       string `json:"quote"`
	RuleLabel   string `json:"rule_label,omitempty"`
	PeriodLabel string `json:"period_label,omitempty"`
	// LimitDB is the numeric limit; nil for rules without one.
	LimitDB     *float64  `json:"limit_db,omitempty"`
	MarginDB    float64   `json:"margin_db"`
	LAeqDB      float64   `json:"laeq_db"`
	LAFmaxDB    float64   `json:"lafmax_db"`
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	Sensor      string    `json:"sensor"`
	Grade       string    `json:"grade"`
	Screening   bool      `json:"screening"`
	// Reason is the codes engine's sentence for rule-based findings.
	Reason string `json:"reason,omitempty"`
}

// FromAlert is the finding of a firing exceedance alert.
func FromAlert(a alerts.Alert) Finding {
	lim := a.LimitDB
	return Finding{
		AlertID: a.ID, CodeID: a.CodeID, CodeVersion: a.CodeVersion, RuleID: a.RuleID, Article: a.Article,
		Quote: a.Quote, PeriodLabel: a.PeriodLabel, LimitDB: &lim, MarginDB: a.MarginDB,
		LAeqDB: a.LAeqDB, LAFmaxDB: a.LAFmaxDB, WindowStart: a.WindowStart, WindowEnd: a.WindowEnd,
		Sensor: a.Sensor, Grade: a.Grade, Screening: a.Screening,
	}
}

// FromVerdict is the finding of a rule-based violation (e.g. a bar open
// after hours in Campos Altos, where the code sets no decibel limit); the
// levels measured in [start, end) are reported as supporting facts.
func FromVerdict(c *codes.Code, v codes.Verdict, id, sensor, grade string, start, end time.Time, laeq, lafmax float64) (Finding, error) {
	if v.Violation != codes.True || len(v.RuleIDs) == 0 {
		return Finding{}, fmt.Errorf("%w: o veredito não é uma infração (%s)", ErrInput, v.Violation)
	}
	r := c.Rule(v.RuleIDs[0])
	if r == nil {
		return Finding{}, fmt.Errorf("%w: regra %q não existe em %s", ErrInput, v.RuleIDs[0], c.Title())
	}
	return Finding{AlertID: id, CodeID: c.ID, CodeVersion: c.Version, RuleID: r.ID, Article: r.Article, Quote: r.Quote,
		RuleLabel: r.Label, LimitDB: v.LimitDBA, LAeqDB: laeq, LAFmaxDB: lafmax, WindowStart: start, WindowEnd: end,
		Sensor: sensor, Grade: grade, Screening: grade != alerts.GradeClass1 && grade != alerts.GradeClass2, Reason: v.Reason}, nil
}

// Party is the notified party: the establishment the sensor watches.
type Party struct {
	Name     string `json:"name"`
	Document string `json:"document"` // CNPJ or CPF as registered
	Address  string `json:"address"`
	Type     string `json:"type,omitempty"` // codes-eval establishment type
}

// Site is the measuring point and its instrument.
type Site struct {
	Sensor       string  `json:"sensor"`
	Address      string  `json:"address"`
	Lat          float64 `json:"lat"`
	Lon          float64 `json:"lon"`
	Zone         string  `json:"zone,omitempty"`
	Grade        string  `json:"grade"`
	MeterModel   string  `json:"meter_model,omitempty"`
	MeterSerial  string  `json:"meter_serial,omitempty"`
	CalibratedAt string  `json:"calibrated_at,omitempty"` // YYYY-MM-DD
	Certificate  string  `json:"certificate,omitempty"`
}

// Field is one required element of the document.
type Field struct {
	ID      string `json:"id"`
	Label   string `json:"label"`   // the code's words
	Article string `json:"article"` // e.g. "Art. 334, I"
	ByHand  bool   `json:"by_hand"` // only the fiscal can fill it
	Value   string `json:"value,omitempty"`
	// Pending is true for a by-hand field nobody filled yet.
	Pending bool `json:"pending"`
	// Edited is true once the fiscal wrote the value: it is no longer
	// recomputed from the draft's data.
	Edited bool `json:"edited,omitempty"`
}

// Reference points an auto de infração at the notice it follows.
type Reference struct {
	ID        string    `json:"id"`
	Kind      Kind      `json:"kind"`
	Title     string    `json:"title"`
	IssuedAt  time.Time `json:"issued_at,omitzero"`
	CienciaAt time.Time `json:"ciencia_at,omitzero"`
	Refused   bool      `json:"refused,omitempty"`
	PrazoEnd  time.Time `json:"prazo_end,omitzero"`
}

// Draft is the content of a document as the system prepares it.
type Draft struct {
	Kind         Kind   `json:"kind"`
	Title        string `json:"title"`
	Article      string `json:"article"` // the articles that prescribe the document
	Quote        string `json:"quote"`
	CodeID       string `json:"code_id"`
	CodeVersion  string `json:"code_version"`
	CodeTitle    string `json:"code_title"` // "Lei nº 1783/2004 (Lapa/PR)"
	Municipality string `json:"municipality"`
	State        string `json:"state"`
	Department   string `json:"department"`

	Finding Finding `json:"finding"`
	Party   Party   `json:"party"`
	Site    Site    `json:"site"`
	Fields  []Field `json:"fields"`

	// Penalty is the penalty of this infraction given the history.
	Penalty codes.PenaltyOutcome `json:"penalty"`
	// OnNonCompliance is what a notice announces if the party does not
	// regularise (the next ladder rung, or the same fine).
	OnNonCompliance *codes.PenaltyOutcome   `json:"on_non_compliance,omitempty"`
	History         []codes.PriorInfraction `json:"history"`
	// Fine is the fine in R$ on the date of the act (ApplyFine, fine.go);
	// nil when no fine applies or nobody valued it.
	Fine *Fine `json:"fine,omitempty"`

	PrazoDaysMax int    `json:"prazo_days_max,omitempty"` // 0 = the code fixes none
	NotWhen      string `json:"not_when,omitempty"`       // e.g. imminent risk
	Witnesses    int    `json:"witnesses_on_refusal"`     // required on refusal (0 = "se houver")

	// Deadlines are the code's procedural deadlines that run from this
	// document (the auto's defence, payment and appeal).
	Deadlines []codes.Deadline `json:"deadlines,omitempty"`

	RefersTo *Reference `json:"refers_to,omitempty"`
	// Constatacoes are the constatações the document rests on: the one
	// that grounds the notice and, on an auto, the one after the prazo.
	Constatacoes []Constatacao `json:"constatacoes,omitempty"`
	// LavraturaPlace is where the act is drawn up (the fiscal's choice;
	// the party's address by default).
	LavraturaPlace string `json:"lavratura_place,omitempty"`
	// Circumstances are the fiscal's own words on the facts, printed with
	// the automatic text.
	Circumstances string `json:"circumstances,omitempty"`
	// Corrects points at the issued act this one corrects.
	Corrects *Reference `json:"corrects,omitempty"`
	Notes    []string   `json:"notes,omitempty"`
	Prepared time.Time  `json:"prepared"`

	labels []codes.Field
}

// Pending lists the by-hand fields still to be filled.
func (d *Draft) Pending() []Field {
	var out []Field
	for _, f := range d.Fields {
		if f.Pending {
			out = append(out, f)
		}
	}
	return out
}

// Field returns the field with id, or nil.
func (d *Draft) Field(id string) *Field {
	for i := range d.Fields {
		if d.Fields[i].ID == id {
			return &d.Fields[i]
		}
	}
	return nil
}

// BuildFrom prepares the first document for a finding confirmed by a
// constatação: the constatação must ground a notice ([Constatacao.Grounds]);
// its source is the party; an on-site reading replaces the sensor's levels
// and instrument. s is the sensor's site (its zone is kept).
func BuildFrom(c *codes.Code, f Finding, k Constatacao, s Site, history []codes.PriorInfraction, now time.Time) (Draft, error) {
	if err := k.Grounds(); err != nil {
		return Draft{}, err
	}
	if k.CodeID != "" && k.CodeID != c.ID {
		return Draft{}, fmt.Errorf("%w: a constatação %s é do código %q, não de %q", ErrInput, k.ID, k.CodeID, c.ID)
	}
	f, s = k.apply(f, s)
	return build(c, f, k.Source.Party(), s, history, now, []Constatacao{k})
}

// apply returns the finding and site as the constatação's measurement
// establishes them.
func (k Constatacao) apply(f Finding, s Site) (Finding, Site) {
	m := k.Measurement
	if m.Kind != MeasureOnSite || m.Meter == nil || m.LAeqDB == nil {
		return f, s
	}
	f.LAeqDB, f.LAFmaxDB, f.MarginDB = *m.LAeqDB, 0, 0
	if m.LAFmaxDB != nil {
		f.LAFmaxDB = *m.LAFmaxDB
	}
	f.WindowStart, f.WindowEnd = k.At, k.At.Add(time.Duration(m.DurationS)*time.Second)
	f.Sensor, f.Grade, f.Screening = "", m.Meter.Grade, false
	if m.LimitDB != nil {
		f.LimitDB = m.LimitDB
	}
	addr := k.Position.Address
	if k.Position.Description != "" {
		addr += " (" + k.Position.Description + ")"
	}
	site := Site{Address: addr, Zone: s.Zone, Grade: m.Meter.Grade, MeterModel: m.Meter.Model, MeterSerial: m.Meter.Serial,
		CalibratedAt: m.Meter.CalibratedAt, Certificate: m.Meter.Certificate}
	if k.Position.Lat != nil && k.Position.Lon != nil {
		site.Lat, site.Lon = *k.Position.Lat, *k.Position.Lon
	}
	return f, site
}

// Build prepares the first document for a finding: the code's preliminary
// notice, or a Relatório de Constatação when the code has none or when the
// ladder step for this infraction is not a preliminary notice.
//
// A draft built without a constatação cannot be issued: an alert is an
// indício, and [BuildFrom] is the path to a notice.
func Build(c *codes.Code, f Finding, p Party, s Site, history []codes.PriorInfraction, now time.Time) (Draft, error) {
	return build(c, f, p, s, history, now, nil)
}

func build(c *codes.Code, f Finding, p Party, s Site, history []codes.PriorInfraction, now time.Time, ks []Constatacao) (Draft, error) {
	r, pen, err := check(c, f, p, history)
	if err != nil {
		return Draft{}, err
	}
	d := base(c, f, p, s, history, now)
	d.Constatacoes, d.LavraturaPlace = ks, p.Address
	d.Penalty = pen
	n := c.Procedure.Notice
	ladderSaysFine := pen.Step != nil && pen.Step.Action != "notificacao_preliminar"
	switch {
	case n != nil && !ladderSaysFine:
		d.Kind, d.Title, d.Article, d.Quote = Kind(n.Kind), n.Title, n.Article, n.Quote
		d.PrazoDaysMax, d.NotWhen, d.Witnesses = n.PrazoDaysMax, n.NotWhen, n.Witnesses
		if next, ok, err := c.NextOnNonCompliance(pen, history); err != nil {
			return Draft{}, fmt.Errorf("notice: build: %w", err)
		} else if ok {
			d.OnNonCompliance = &next
		} else {
			d.OnNonCompliance = &pen
		}
		d.Fields = fill(n.Fields, &d, r)
		if Kind(n.Kind) == KindNotificacaoIntimacao {
			d.Notes = append(d.Notes, "a notificação/intimação não sujeita o infrator a penalidade pecuniária, exceto se transformada em Auto de Infração ("+n.Article+")")
		}
		if n.NotWhen != "" {
			d.Notes = append(d.Notes, fmt.Sprintf("não cabe %s quando houver %s (%s): nesse caso lavre diretamente o auto de infração", n.Title, n.NotWhen, n.Article))
		}
	default:
		a := c.Procedure.Auto
		d.Kind, d.Title = KindRelatorio, "Relatório de Constatação"
		d.Article, d.Quote = a.Article, a.Quote
		d.Witnesses = a.Witnesses
		d.Deadlines = c.Procedure.Deadlines
		why := fmt.Sprintf("%s não prevê notificação preliminar", c.Title())
		if n != nil {
			why = fmt.Sprintf("pela escada do %s a %s", pen.Article, strings.TrimSuffix(pen.Text, "."))
		}
		d.Notes = append(d.Notes, why+": este relatório registra os fatos medidos e prepara o Auto de Infração ("+a.Article+")")
		d.Fields = fill(a.Fields, &d, r)
	}
	return d, nil
}

// BuildAuto prepares the auto de infração that follows an issued notice or
// relatório (from), with the notice referenced (Lapa Art. 337, III;
// Conceição de Macabu Art. 176). history must not yet contain from itself:
// a notice counts as the infraction it recorded, so the auto is the next one
// under a ladder.
//
// follow is the constatação after the prazo that shows the infraction went
// on (required after a notice with a prazo; nil after a relatório or on
// imminent risk): the auto cites it with the notice's own constatação.
func BuildAuto(c *codes.Code, from *Document, follow *Constatacao, history []codes.PriorInfraction, now time.Time) (Draft, error) {
	src := from.Draft
	r, _, err := check(c, src.Finding, src.Party, history)
	if err != nil {
		return Draft{}, err
	}
	d := base(c, src.Finding, src.Party, src.Site, history, now)
	d.Constatacoes = append([]Constatacao(nil), src.Constatacoes...)
	if follow != nil {
		d.Constatacoes = append(d.Constatacoes, *follow)
	}
	d.LavraturaPlace = src.Party.Address
	a := c.Procedure.Auto
	d.Kind, d.Title, d.Article, d.Quote, d.Witnesses = KindAuto, a.Title, a.Article, a.Quote, a.Witnesses
	h := history
	if from.Draft.Kind.IsNotice() {
		// The notice was this party's infraction under the provision; not
		// regularising makes the auto the next one (Lapa Art. 102, 335).
		h = append(append([]codes.PriorInfraction(nil), history...),
			codes.PriorInfraction{PenaltyID: src.Penalty.PenaltyID, Ordinal: src.Penalty.Ordinal, Ref: from.ID})
		d.RefersTo = &Reference{ID: from.ID, Kind: src.Kind, Title: src.Title, IssuedAt: from.IssuedAt,
			CienciaAt: from.CienciaAt, Refused: !from.CienciaAt.IsZero() && from.SignedBy == "", PrazoEnd: from.PrazoEnd}
	} else {
		d.RefersTo = &Reference{ID: from.ID, Kind: src.Kind, Title: src.Title, IssuedAt: from.IssuedAt}
	}
	if from.ImminentRisk {
		d.Notes = append(d.Notes, fmt.Sprintf("auto lavrado sem %s por %s, declarado pelo fiscal", src.Title, src.NotWhen))
	}
	pen, err := c.PenaltyForHistory(src.Penalty.PenaltyID, h)
	if err != nil {
		return Draft{}, fmt.Errorf("notice: build auto: %w", err)
	}
	d.Penalty = pen
	d.History = h
	d.Deadlines = c.Procedure.Deadlines
	d.Fields = fill(a.Fields, &d, r)
	return d, nil
}

func check(c *codes.Code, f Finding, p Party, history []codes.PriorInfraction) (*codes.Rule, codes.PenaltyOutcome, error) {
	var errs []error
	if f.CodeID != c.ID {
		errs = append(errs, fmt.Errorf("a constatação é do código %q, não de %q", f.CodeID, c.ID))
	}
	if p.Name == "" || p.Address == "" {
		errs = append(errs, errors.New("o cadastro do sensor não identifica o estabelecimento (nome e endereço): complete o cadastro"))
	}
	if f.WindowStart.IsZero() || !f.WindowEnd.After(f.WindowStart) {
		errs = append(errs, errors.New("a janela de medição está vazia"))
	}
	if c.Procedure.Auto == nil {
		errs = append(errs, fmt.Errorf("%s não define o auto de infração", c.Title()))
	}
	r := c.Rule(f.RuleID)
	if r == nil {
		errs = append(errs, fmt.Errorf("a regra %q não existe na versão carregada de %s", f.RuleID, c.Title()))
	} else if r.Penalty == "" {
		errs = append(errs, fmt.Errorf("a regra %s (%s) não tem penalidade no código", r.ID, r.Article))
	}
	if len(errs) > 0 {
		return nil, codes.PenaltyOutcome{}, fmt.Errorf("%w: %w", ErrInput, errors.Join(errs...))
	}
	pen, err := c.PenaltyForHistory(r.Penalty, history)
	if err != nil {
		return nil, pen, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return r, pen, nil
}

func base(c *codes.Code, f Finding, p Party, s Site, history []codes.PriorInfraction, now time.Time) Draft {
	d := Draft{CodeID: c.ID, CodeVersion: c.Version, CodeTitle: c.Title(), Municipality: c.Municipality, State: c.State,
		Department: c.Procedure.Department, Finding: f, Party: p, Site: s, Prepared: now,
		History: append([]codes.PriorInfraction{}, history...)}
	if f.CodeVersion != "" && f.CodeVersion != c.Version {
		d.Notes = append(d.Notes, fmt.Sprintf("o alerta citou a versão %q do código; o documento usa a versão carregada %q", f.CodeVersion, c.Version))
	}
	if f.Screening {
		d.Notes = append(d.Notes, "medição por sensor de triagem (não calibrado nem homologado): indício para a fiscalização, a confirmar com medidor classe 1 ou 2")
	}
	if !c.Status.InForce {
		d.Notes = append(d.Notes, fmt.Sprintf("atenção: %s consta como revogada (%s); documento preparado em modo texto", c.Title(), c.Status.RevokedBy))
	}
	return d
}

// fill gives every required field of the code's document its value, or
// marks it for the fiscal.
func fill(fields []codes.Field, d *Draft, r *codes.Rule) []Field {
	loc := locOf(d)
	d.labels = fields
	out := make([]Field, 0, len(fields))
	for _, cf := range fields {
		f := Field{ID: cf.ID, Label: cf.Label, Article: cf.Article, ByHand: cf.ByHand}
		if !cf.ByHand {
			f.Value = autoValue(cf.ID, d, r, loc)
			if f.Value == "" {
				f.Value = "(não disponível no sistema: preencher à mão)"
				f.Pending = true
			}
		} else {
			f.Pending = true
		}
		out = append(out, f)
	}
	return out
}

// saoPaulo is the time zone every date of a document is written in.
var saoPaulo = tz.Brasilia()

func locOf(*Draft) *time.Location { return saoPaulo }

func party(d *Draft) string {
	s := d.Party.Name
	if d.Party.Document != "" {
		s += ", " + docLabel(d.Party.Document) + " " + d.Party.Document
	}
	return s
}

func docLabel(doc string) string {
	n := 0
	for _, r := range doc {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	if n == 11 {
		return "CPF"
	}
	return "CNPJ"
}

// FactText words the finding for the "fato" field: date, hours, place,
// measured levels against the limit, the instrument and the provision.
func FactText(d *Draft) string {
	loc := locOf(d)
	f := d.Finding
	ws, we := f.WindowStart.In(loc), f.WindowEnd.In(loc)
	var b strings.Builder
	fmt.Fprintf(&b, "Em %s, das %s às %s (horário de Brasília), ", ws.Format("02/01/2006"), ws.Format("15:04:05"), we.Format("15:04:05"))
	if !sameDay(ws, we) {
		b.Reset()
		fmt.Fprintf(&b, "De %s a %s (horário de Brasília), ", ws.Format("02/01/2006 15:04:05"), we.Format("02/01/2006 15:04:05"))
	}
	fmt.Fprintf(&b, "no estabelecimento %s (%s), ", d.Party.Name, d.Party.Address)
	who := "o sensor " + f.Sensor
	if f.Sensor == "" {
		who = "o fiscal, no local,"
	}
	if f.LimitDB != nil {
		fmt.Fprintf(&b, "%s mediu nível sonoro equivalente LAeq de %s dB(A)", who, dB(f.LAeqDB))
		if f.LAFmaxDB > 0 {
			fmt.Fprintf(&b, " (máximo LAFmax %s dB(A))", dB(f.LAFmaxDB))
		}
		fmt.Fprintf(&b, ", acima do limite de %s dB", dB(*f.LimitDB))
		if f.PeriodLabel != "" {
			fmt.Fprintf(&b, " (%s)", f.PeriodLabel)
		}
		if f.MarginDB > 0 {
			fmt.Fprintf(&b, ", mesmo descontada a margem de incerteza de %s dB do medidor", dB(f.MarginDB))
		}
		b.WriteString(". ")
	} else {
		label := f.RuleLabel
		if label == "" {
			label = "a atividade"
		}
		fmt.Fprintf(&b, "constatou-se infração quanto a %s", label)
		if f.Reason != "" {
			fmt.Fprintf(&b, " (%s)", strings.TrimSuffix(f.Reason, "."))
		}
		fmt.Fprintf(&b, "; %s registrou LAeq de %s dB(A) (LAFmax %s dB(A)) no período. ", strings.TrimSuffix(who, ","), dB(f.LAeqDB), dB(f.LAFmaxDB))
	}
	fmt.Fprintf(&b, "Medidor: %s", gradeLabel(d.Site.Grade))
	if d.Site.MeterModel != "" {
		fmt.Fprintf(&b, ", %s nº de série %s", d.Site.MeterModel, d.Site.MeterSerial)
	}
	if d.Site.CalibratedAt != "" {
		fmt.Fprintf(&b, ", calibrado em %s", dateBR(d.Site.CalibratedAt))
		if d.Site.Certificate != "" {
			fmt.Fprintf(&b, " (certificado %s)", d.Site.Certificate)
		}
	}
	fmt.Fprintf(&b, "; ponto de medição: %s. Dispositivo infringido: %s", d.Site.Address, provision(d))
	if !closesSentence(d.Finding.Quote) {
		// The law's words are quoted as they are; a quote that ends its
		// own sentence ends the fact too (no “… decibéis.”.).
		b.WriteByte('.')
	}
	return b.String()
}

// closesSentence reports whether a quote ends with a sentence's closing
// mark (spaces before it, as the laws' transcriptions have, allowed).
func closesSentence(q string) bool {
	q = strings.TrimRight(q, " ")
	return strings.HasSuffix(q, ".") || strings.HasSuffix(q, "!") || strings.HasSuffix(q, "?") || strings.HasSuffix(q, "…")
}

func provision(d *Draft) string {
	return fmt.Sprintf("%s da %s — “%s”", d.Finding.Article, d.CodeTitle, d.Finding.Quote)
}

func autoValue(id string, d *Draft, r *codes.Rule, loc *time.Location) string {
	ws := d.Finding.WindowStart.In(loc)
	switch id {
	case "notificado", "intimado", "infrator":
		s := party(d) + ", " + d.Party.Address
		if strings.Contains(id, "infrator") && r != nil && strings.Contains(fieldLabel(d, id), "profissão") {
			s += " (profissão, idade e estado civil: a completar pelo fiscal quando o infrator for pessoa física)"
		}
		return s
	case "lavratura":
		return "local: " + d.lavraturaPlace() + "; dia e hora: registrados pelo sistema no ato da emissão"
	case "data_local":
		return fmt.Sprintf("%s, %s", ws.Format("02/01/2006"), d.Party.Address)
	case "local":
		return fmt.Sprintf("%s (ponto de medição: %s, %.5f, %.5f)", d.Party.Address, d.Site.Address, d.Site.Lat, d.Site.Lon)
	case "fato":
		s := FactText(d)
		for _, k := range d.Constatacoes {
			s += " " + k.Text()
		}
		if d.Circumstances != "" {
			s += " Circunstâncias: " + strings.TrimSpace(d.Circumstances)
		}
		if d.RefersTo != nil && d.RefersTo.Kind.IsNotice() {
			s += " " + refText(d.RefersTo, loc)
		}
		return s
	case "dispositivo":
		s := provision(d)
		if d.Kind == KindAuto || d.Kind == KindRelatorio {
			s += "; penalidade: " + d.Penalty.Text
		}
		return s
	case "penalidade":
		if d.Kind.IsNotice() && d.OnNonCompliance != nil {
			return "em caso de não regularização no prazo: " + d.OnNonCompliance.Text
		}
		return d.Penalty.Text
	case "prazo": // Lapa Art. 337, V: the auto's deadline for payment or defence
		return deadlineText(d)
	}
	return ""
}

func fieldLabel(d *Draft, id string) string {
	for _, f := range d.labels {
		if f.ID == id {
			return f.Label
		}
	}
	return ""
}

func refText(r *Reference, loc *time.Location) string {
	s := fmt.Sprintf("Referência: %s nº %s", r.Title, r.ID)
	if !r.IssuedAt.IsZero() {
		s += ", lavrada em " + r.IssuedAt.In(loc).Format("02/01/2006 15:04")
	}
	if !r.CienciaAt.IsZero() {
		if r.Refused {
			s += ", recusada pelo notificado em " + r.CienciaAt.In(loc).Format("02/01/2006") + " (recusa testemunhada)"
		} else {
			s += ", com ciente em " + r.CienciaAt.In(loc).Format("02/01/2006")
		}
	}
	if !r.PrazoEnd.IsZero() {
		s += ", prazo para regularização vencido em " + r.PrazoEnd.Add(-time.Millisecond).In(loc).Format("02/01/2006") + " sem regularização"
	}
	return s + "."
}

func sameDay(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

func dB(v float64) string { return strings.Replace(fmt.Sprintf("%.1f", v), ".", ",", 1) }

func dateBR(iso string) string {
	t, err := time.Parse("2006-01-02", iso)
	if err != nil {
		return iso
	}
	return t.Format("02/01/2006")
}

func gradeLabel(g string) string {
	switch g {
	case alerts.GradeClass1:
		return "classe 1 (IEC 61672-1)"
	case alerts.GradeClass2:
		return "classe 2 (IEC 61672-1)"
	case alerts.GradeScreening:
		return "sensor de triagem (não classificado)"
	}
	return "grau não informado"
}

// deadlineText words the auto's deadlines for payment or defence.
func deadlineText(d *Draft) string {
	var parts []string
	for _, dl := range d.Deadlines {
		if dl.From != "intimacao" && dl.From != "lavratura" {
			continue
		}
		unit := "dias"
		if dl.Business {
			unit = "dias úteis"
		}
		from := "da intimação"
		if dl.From == "lavratura" {
			from = "da lavratura"
		}
		parts = append(parts, fmt.Sprintf("%d %s a contar %s (%s: “%s”)", dl.Days, unit, from, dl.Article, dl.Quote))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ")
}

// lavraturaPlace is where the act is drawn up: the fiscal's choice, or the
// party's address.
func (d *Draft) lavraturaPlace() string {
	if strings.TrimSpace(d.LavraturaPlace) != "" {
		return d.LavraturaPlace
	}
	return d.Party.Address
}

// RefersToID is the id of the document this one follows, or "".
func (d *Draft) RefersToID() string {
	if d.RefersTo == nil {
		return ""
	}
	return d.RefersTo.ID
}
