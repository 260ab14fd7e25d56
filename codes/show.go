package codes

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ShowWidth is the widest line Schedule writes.
const ShowWidth = 100

// Schedule renders the code in Portuguese for a person: the level limits by
// period and zone, the hour rules and other provisions, the penalties, the
// procedure and the municipal holidays, every line at most ShowWidth
// columns. It is what `sossego codes show` prints and the dashboard's codes
// page offers as text.
func Schedule(c *Code) string {
	var sh sheet
	st := "em vigor"
	if !c.Status.InForce {
		st = "REVOGADA por " + c.Status.RevokedBy + "; avaliada só com assume_in_force"
	}
	sh.w(0, 0, c.Title()+" — "+c.Law.Title)
	sh.w(0, 0, "versão "+c.Version+" — "+st)
	sh.levelLimits(c)
	sh.otherRules(c)
	sh.penalties(c)
	sh.procedure(c)
	sh.holidays(c)
	return sh.String()
}

// sheet is the text Schedule writes.
type sheet struct{ strings.Builder }

// w writes s wrapped to ShowWidth: its first line indented by indent, the
// others by hang.
func (sh *sheet) w(indent, hang int, s string) { sh.WriteString(wrap(s, indent, hang)) }

// levelLimits writes the level limits by period and zone.
func (sh *sheet) levelLimits(c *Code) {
	sh.WriteString("\nLimites de nível (LAeq; infração só acima do limite)\n")
	n := 0
	for i := range c.Rules {
		r := &c.Rules[i]
		if r.Kind != KindLevelLimit {
			continue
		}
		n++
		when := Label(LabelPeriod, r.Period)
		if r.Window != nil {
			when += ", " + r.Window.From + "–" + r.Window.To
		}
		sh.w(2, 8, fmt.Sprintf("%s %s (%s)", fmtNum(*r.LimitDBA)+" dB", when, r.Article))
		if len(r.Match.Zones) > 0 {
			sh.w(8, 8, "zonas: "+labelList(LabelZone, r.Match.Zones))
		} else {
			sh.w(8, 8, "zonas: todas")
		}
		if len(r.Match.Establishments) > 0 {
			sh.w(8, 8, "estabelecimentos: "+labelList(LabelEstablishment, r.Match.Establishments))
		}
		if len(r.Match.Sources) > 0 && len(r.Match.Sources) < 8 {
			sh.w(8, 8, "fontes: "+labelList(LabelSource, r.Match.Sources))
		}
	}
	if n == 0 {
		sh.WriteString("  (o código não fixa nenhum limite numérico)\n")
	}
}

// otherRules writes the hour rules and the other provisions.
func (sh *sheet) otherRules(c *Code) {
	sh.WriteString("\nHorários, proibições e demais regras\n")
	for i := range c.Rules {
		r := &c.Rules[i]
		if r.Kind == KindLevelLimit {
			continue
		}
		sh.w(2, 4, fmt.Sprintf("- %s (%s) — %s", r.Label, r.Article, Label(LabelRuleKind, r.Kind)))
		for _, line := range describeRule(r) {
			sh.w(4, 6, line)
		}
	}
}

// penalties writes the penalties: amounts, steps, accessory sanctions and
// doubling.
func (sh *sheet) penalties(c *Code) {
	sh.WriteString("\nPenalidades\n")
	for _, p := range c.Penalties {
		head := p.Article
		switch p.Type {
		case "fixed":
			head += fmt.Sprintf(": multa de %s%% %s", fmtNum(*p.Percent), unitText(c, p.Unit))
		case "range":
			head += fmt.Sprintf(": multa de %s%% a %s%% %s", fmtNum(*p.PercentMin), fmtNum(*p.PercentMax), unitText(c, p.Unit))
		case "unmapped":
			head += ": " + strings.Join(p.Amounts, " / ")
		}
		sh.w(2, 4, head)
		for _, s := range p.Steps {
			sh.w(4, 6, fmt.Sprintf("%dª infração: %s", s.Ordinal, s.Text))
		}
		for _, a := range p.Accessory {
			sh.w(4, 6, "sanção acessória: "+a)
		}
		if p.Doubling != nil {
			sh.w(4, 6, fmt.Sprintf("reincidência (%s): multa em dobro se já %s", p.Doubling.Article, p.Doubling.Requires))
		}
	}
}

// procedure writes the procedure: the notice, the auto and the deadlines.
func (sh *sheet) procedure(c *Code) {
	sh.WriteString("\nProcedimento\n")
	if d := c.Procedure.Notice; d != nil {
		s := fmt.Sprintf("%s (%s)", d.Title, d.Article)
		if d.PrazoDaysMax > 0 {
			s += fmt.Sprintf(", prazo de até %d dias fixado pelo fiscal", d.PrazoDaysMax)
		}
		sh.w(2, 4, s)
	} else {
		sh.w(2, 4, "sem notificação preliminar: lavra-se diretamente o auto de infração")
	}
	if a := c.Procedure.Auto; a != nil {
		sh.w(2, 4, fmt.Sprintf("%s (%s)", a.Title, a.Article))
	}
	for _, d := range c.Procedure.Deadlines {
		kind := "dias"
		if d.Business {
			kind = "dias úteis"
		}
		sh.w(2, 4, fmt.Sprintf("prazo de %s: %d %s (%s)", strings.ReplaceAll(d.ID, "_", " "), d.Days, kind, d.Article))
	}
}

// holidays writes the municipal holidays, if the code has any.
func (sh *sheet) holidays(c *Code) {
	if len(c.Calendar.Holidays) == 0 {
		return
	}
	sh.WriteString("\nFeriados municipais\n")
	for _, h := range c.Calendar.Holidays {
		md := h.MonthDay
		if len(md) == 5 {
			md = md[3:] + "/" + md[:2]
		}
		sh.w(2, 4, fmt.Sprintf("%s %s (%s)", md, h.Name, h.Article))
	}
}

func unitText(c *Code, id string) string {
	if u := c.unit(id); u != nil && u.Name != "" {
		return "do " + u.Name
	}
	return id
}

// describeRule words a rule's scope and criterion in Portuguese, one
// sentence per line.
func describeRule(r *Rule) []string {
	var lines []string
	m := &r.Match
	var scope []string
	if len(m.Sources) > 0 {
		scope = append(scope, "fontes: "+labelList(LabelSource, m.Sources))
	}
	if len(m.Establishments) > 0 {
		scope = append(scope, "estabelecimentos: "+labelList(LabelEstablishment, m.Establishments))
	}
	if m.AlcoholVenue {
		scope = append(scope, "estabelecimentos que vendem bebidas alcoólicas")
	}
	if len(m.Zones) > 0 {
		scope = append(scope, "zonas: "+labelList(LabelZone, m.Zones))
	}
	if len(m.Places) > 0 {
		places := make([]string, len(m.Places))
		for i, p := range m.Places {
			places[i] = placeLabel(p)
		}
		scope = append(scope, "locais: "+joinPT(places))
	}
	if len(m.Near) > 0 {
		if r.RadiusM != nil {
			scope = append(scope, fmt.Sprintf("a menos de %s m de %s", fmtNum(*r.RadiusM), labelList(LabelPOI, m.Near)))
		} else {
			scope = append(scope, "nas proximidades de "+labelList(LabelPOI, m.Near))
		}
	}
	if len(scope) > 0 {
		lines = append(lines, strings.Join(scope, "; "))
	}
	switch r.Kind {
	case KindProhibitedHours:
		lines = append(lines, "proibido "+windowText(r.Window))
	case KindPermittedHours:
		lines = append(lines, "permitido só "+windowText(r.Window))
	case KindDuration:
		s := fmt.Sprintf("proibido por mais de %s segundos", fmtNum(*r.MaxDurationS))
		if r.Window != nil {
			s += " " + windowText(r.Window)
		}
		lines = append(lines, s)
	case KindSchedule:
		for _, e := range r.Schedule {
			lines = append(lines, scheduleText(e))
		}
	case KindLicence:
		lines = append(lines, "exige licença prévia")
	case KindLocationBan:
		lines = append(lines, "proibido nesses locais")
	case KindMinInterval:
		lines = append(lines, fmt.Sprintf("intervalo mínimo de %s minutos", fmtNum(*r.MinIntervalS/60)))
	case KindConduct:
		s := "a conduta declarada é a infração"
		if r.Window != nil {
			s += ", " + windowText(r.Window)
		}
		lines = append(lines, s)
	case KindQualitative, KindOutOfScope:
		lines = append(lines, "sem critério objetivo, veredito indeterminado: "+r.Why)
	case KindLicensingReview:
		lines = append(lines, "dirigido à administração, veredito indeterminado com aviso: "+r.Why)
	case KindRequiredSignal:
		lines = append(lines, "sinal exigido por lei (nunca é infração)")
	}
	for _, x := range r.Supersedes {
		lines = append(lines, fmt.Sprintf("prevalece sobre o %s (\"%s\"): %s", x.Article, x.Quote, x.Why))
	}
	return lines
}

func placeLabel(p string) string {
	switch p {
	case "feira_livre":
		return "feira livre"
	case "mercado_municipal":
		return "mercado municipal"
	}
	return ZoneLabel(p)
}

func windowText(w *Window) string {
	if w == nil {
		return ""
	}
	s := "das " + w.From + " às " + w.To
	if w.FromExclusive {
		s = "depois das " + w.From + " até as " + w.To
	}
	if w.ToInclusive {
		s += " (inclusive)"
	}
	if w.From == "00:00" && w.To == "24:00" {
		s = "o dia todo"
	}
	if len(w.Days) > 0 {
		s += " (" + DaysText(w.Days) + ")"
	}
	return s
}

func scheduleText(e ScheduleEntry) string {
	s := DaysText(e.Days)
	if e.FromDate != "" {
		s += fmt.Sprintf(" de %s a %s", e.FromDate[3:]+"/"+e.FromDate[:2], e.ToDate[3:]+"/"+e.ToDate[:2])
	}
	if e.Closed {
		return s + ": fechado"
	}
	s += ":"
	if e.Open != "" {
		s += " abre às " + e.Open + ","
	}
	s += " encerra às " + e.Close
	if e.CloseNextDay {
		s += " do dia seguinte"
	}
	if e.CloseIfExtended != "" {
		s += " (às " + e.CloseIfExtended + " com prorrogação concedida)"
	}
	return s
}

// wrap breaks s into lines of at most ShowWidth columns: the first indented
// by indent spaces, the following by hang.
func wrap(s string, indent, hang int) string {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	col := 0
	for _, word := range strings.Fields(s) {
		wl := utf8.RuneCountInString(word)
		switch {
		case col == 0:
			b.WriteString(pad)
			b.WriteString(word)
			col = indent + wl
		case col+1+wl > ShowWidth:
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", hang))
			b.WriteString(word)
			col = hang + wl
		default:
			b.WriteByte(' ')
			b.WriteString(word)
			col += 1 + wl
		}
	}
	b.WriteByte('\n')
	return b.String()
}
