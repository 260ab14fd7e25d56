package codes

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Tri is a verdict value: true, false or undetermined.
type Tri int

// Verdict values (codes-conventions.md "Verdicts").
const (
	False Tri = iota
	True
	Undetermined
)

func (t Tri) String() string {
	switch t {
	case True:
		return "true"
	case Undetermined:
		return "undetermined"
	}
	return "false"
}

// Observation is what the engine judges: the facts of one event.
type Observation struct {
	At               time.Time
	Zone             string
	Source           string
	LAeq             *float64 // dB; nil = not measured
	DurationS        *float64 // nil = not measured / not applicable
	PriorInfractions int
	AssumeInForce    bool
	Facts            map[string]any // validated values: bool, string, float64
}

// Verdict is the engine's answer for one observation.
type Verdict struct {
	Violation   Tri
	Article     string   // the main provision the verdict rests on ("" if none)
	Articles    []string // every decisive provision
	RuleIDs     []string // the decisive rules
	LimitDBA    *float64 // numeric limit in force at that time and zone, or nil
	PenaltyStep string   // when Violation is True
	Reason      string   // one sentence in Portuguese
	Warnings    []string
}

type outcome struct {
	rule   *Rule
	status Tri
	skip   bool
	reason string
}

// Evaluate judges o under c. It is pure: same inputs, same verdict.
func Evaluate(c *Code, o Observation) Verdict {
	var v Verdict
	note := "nível tratado como LAeq ponderado A na janela de avaliação (convenção de leitura)"
	if !c.Status.InForce && !o.AssumeInForce {
		v.Violation = Undetermined
		v.Article = c.Status.Article
		if v.Article != "" {
			v.Articles = []string{v.Article}
		}
		v.Reason = fmt.Sprintf("%s não está em vigor: %s; avalie pela lei vigente ou use assume_in_force para ler o texto de 1977 como escrito",
			c.Title(), c.Status.RevokedBy)
		return v
	}
	if !c.Status.InForce {
		v.Warnings = append(v.Warnings, fmt.Sprintf("modo texto: %s foi revogada (%s) e foi avaliada como escrita porque assume_in_force=true", c.Title(), c.Status.RevokedBy))
	}
	ctx := c.newEvalCtx(o)
	outs := make([]outcome, len(c.Rules))
	overridden := map[string]bool{}
	for i := range c.Rules {
		r := &c.Rules[i]
		outs[i] = c.evalRule(r, &o, &ctx)
		if !outs[i].skip {
			for _, id := range r.Overrides {
				overridden[id] = true
			}
		}
		if r.Kind == KindLevelLimit && v.LimitDBA == nil && ctx.levelScope[r.ID] {
			l := *r.LimitDBA
			v.LimitDBA = &l
		}
	}
	var viol, und, ok []outcome
	for _, out := range outs {
		if out.skip || overridden[out.rule.ID] {
			continue
		}
		switch out.status {
		case True:
			viol = append(viol, out)
		case Undetermined:
			und = append(und, out)
		default:
			ok = append(ok, out)
		}
	}
	var decisive []outcome
	switch {
	case len(viol) > 0:
		v.Violation, decisive = True, viol
	case len(und) > 0:
		v.Violation, decisive = Undetermined, und
	default:
		v.Violation, decisive = False, ok
	}
	var reasons []string
	for _, out := range decisive {
		if !slices.Contains(v.Articles, out.rule.Article) {
			v.Articles = append(v.Articles, out.rule.Article)
		}
		v.RuleIDs = append(v.RuleIDs, out.rule.ID)
		reasons = append(reasons, out.reason)
	}
	if len(decisive) > 0 {
		v.Article = decisive[0].rule.Article
	} else {
		v.Articles = []string{}
		reasons = append(reasons, fmt.Sprintf("nenhuma disposição de %s sobre ruído se aplica a esta fonte, local e horário", c.Title()))
	}
	if v.Violation == True {
		v.PenaltyStep = c.penaltyStep(decisive[0].rule, &o)
	}
	if o.LAeq != nil {
		reasons = append(reasons, note)
	}
	v.Reason = strings.Join(reasons, "; ")
	return v
}

type evalCtx struct {
	local      time.Time
	date       Date
	minute     int
	levelScope map[string]bool // level rules whose scope matched (for limit_dba)
}

func (c *Code) newEvalCtx(o Observation) evalCtx {
	lt := o.At.In(c.loc)
	return evalCtx{local: lt, date: dateOf(lt), minute: lt.Hour()*60 + lt.Minute(), levelScope: map[string]bool{}}
}

func factBool(o *Observation, k string) (val, present bool) {
	v, ok := o.Facts[k]
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	return b, ok
}

func factString(o *Observation, k string) (string, bool) {
	v, ok := o.Facts[k]
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok && s != ""
}

func factNumber(o *Observation, k string) (float64, bool) {
	v, ok := o.Facts[k]
	if !ok {
		return 0, false
	}
	f, ok := v.(float64)
	return f, ok
}

// factHolds reports whether the observation states fact k with a value
// matching want; present is false when it does not state k at all.
func factHolds(o *Observation, k string, want any) (holds, present bool) {
	got, ok := o.Facts[k]
	if !ok {
		return false, false
	}
	switch w := want.(type) {
	case []any:
		for _, x := range w {
			if got == x {
				return true, true
			}
		}
		return false, true
	default:
		return got == want, true
	}
}

func (c *Code) evalRule(r *Rule, o *Observation, ctx *evalCtx) outcome {
	out := outcome{rule: r}
	skip := func() outcome { out.skip = true; return out }
	undetermined := func(why string) outcome {
		out.status = Undetermined
		out.reason = fmt.Sprintf("%s (%s): %s", r.Label, r.Article, why)
		return out
	}
	m := &r.Match
	// Activity: source or mechanism.
	if len(m.Sources) > 0 || len(m.Mechanisms) > 0 {
		mech, _ := factString(o, "mechanism")
		if !slices.Contains(m.Sources, o.Source) && !(mech != "" && slices.Contains(m.Mechanisms, mech)) {
			return skip()
		}
	}
	for k, want := range m.Facts {
		if holds, _ := factHolds(o, k, want); !holds {
			return skip()
		}
	}
	// Zone.
	zoneUnknown := false
	if len(m.Zones) > 0 && r.Kind != KindLocationBan {
		if o.Zone == "unclassified" {
			zoneUnknown = true
		} else if !slices.Contains(m.Zones, o.Zone) {
			return skip()
		}
	}
	// Time window (level limits, hour bans, duration rules with a window).
	inWindow := true
	if r.Window != nil && r.Kind != KindPermittedHours {
		inWindow = c.inWindow(r.Window, ctx)
		if !inWindow {
			return skip()
		}
	}
	// Establishment and content, which may be unknown.
	var missing []string
	if len(m.Establishments) > 0 {
		est, ok := factString(o, "establishment_type")
		switch {
		case !ok:
			missing = append(missing, "tipo de estabelecimento (facts.establishment_type)")
		case !slices.Contains(m.Establishments, est):
			return skip()
		}
	}
	if len(m.Content) > 0 {
		ct, ok := factString(o, "content")
		switch {
		case !ok:
			missing = append(missing, "conteúdo da propaganda (facts.content)")
		case !slices.Contains(m.Content, ct):
			return skip()
		}
	}
	if r.Kind == KindLevelLimit {
		ctx.levelScope[r.ID] = !zoneUnknown
	}
	for _, ex := range r.ExemptIf {
		all := true
		for k, want := range ex {
			if holds, _ := factHolds(o, k, want); !holds {
				all = false
				break
			}
		}
		if all {
			out.status = False
			out.reason = fmt.Sprintf("%s (%s): caso isento (%s)", r.Label, r.Article, describeFacts(ex))
			return out
		}
	}
	if zoneUnknown {
		return undetermined("zona não classificada; a regra depende da zona (" + strings.Join(m.Zones, ", ") + ")")
	}
	for _, k := range m.Needs {
		if _, present := o.Facts[k]; !present {
			missing = append(missing, "facts."+k)
		}
	}
	if len(missing) > 0 {
		return undetermined("falta informar " + strings.Join(missing, " e "))
	}

	switch r.Kind {
	case KindLevelLimit:
		lim := *r.LimitDBA
		if o.LAeq == nil {
			out.status = False
			out.skip = true // no level measured: the limit is reported, nothing judged
			return out
		}
		if *o.LAeq > lim {
			out.status = True
			out.reason = fmt.Sprintf("%s (%s): máximo %s dB; %.1f excede", r.Label, r.Article, fmtNum(lim), *o.LAeq)
		} else {
			out.status = False
			out.reason = fmt.Sprintf("%s (%s): máximo %s dB; %.1f não excede", r.Label, r.Article, fmtNum(lim), *o.LAeq)
		}
	case KindProhibitedHours:
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): proibido às %s", r.Label, r.Article, fmtHM(ctx.minute))
	case KindPermittedHours:
		if !c.inWindow(r.Window, ctx) {
			out.status = True
			out.reason = fmt.Sprintf("%s (%s): permitido só das %s às %s; ocorreu às %s", r.Label, r.Article, r.Window.From, r.Window.To, fmtHM(ctx.minute))
		} else if r.PermissionFact != "" {
			if b, present := factBool(o, r.PermissionFact); present && !b {
				return undetermined("dentro do horário, mas a permissão depende de " + r.PermissionFact + ", informado como falso")
			}
			out.status = False
			out.reason = fmt.Sprintf("%s (%s): dentro do horário permitido", r.Label, r.Article)
		} else {
			out.status = False
			out.reason = fmt.Sprintf("%s (%s): dentro do horário permitido", r.Label, r.Article)
		}
	case KindDuration:
		lim := *r.MaxDurationS
		if o.DurationS == nil {
			return undetermined(fmt.Sprintf("duração não medida; o limite é mais de %s s", fmtNum(lim)))
		}
		if *o.DurationS > lim {
			out.status = True
			out.reason = fmt.Sprintf("%s (%s): duração %s s excede %s s", r.Label, r.Article, fmtNum(*o.DurationS), fmtNum(lim))
		} else {
			out.status = False
			out.reason = fmt.Sprintf("%s (%s): duração %s s não excede %s s", r.Label, r.Article, fmtNum(*o.DurationS), fmtNum(lim))
		}
	case KindSchedule:
		return c.evalSchedule(r, o, ctx)
	case KindLicence:
		lic, present := factBool(o, "licensed")
		switch {
		case !present:
			return undetermined("exige licença prévia; informe facts.licensed")
		case lic:
			out.status = False
			out.reason = fmt.Sprintf("%s (%s): licenciado", r.Label, r.Article)
		default:
			out.status = True
			out.reason = fmt.Sprintf("%s (%s): sem a licença exigida", r.Label, r.Article)
		}
	case KindLocationBan:
		in, known := c.inBannedArea(r, o)
		switch {
		case in:
			out.status = True
			out.reason = fmt.Sprintf("%s (%s): proibido neste local", r.Label, r.Article)
		case !known:
			return undetermined("local não classificado; informe a zona ou facts.distance_m_to_sensitive_poi")
		default:
			out.status = False
			out.reason = fmt.Sprintf("%s (%s): fora da área proibida", r.Label, r.Article)
		}
	case KindMinInterval:
		iv, ok := factNumber(o, "interval_between_series_s")
		lim := *r.MinIntervalS
		switch {
		case !ok:
			return undetermined("informe facts.interval_between_series_s")
		case iv < lim:
			out.status = True
			out.reason = fmt.Sprintf("%s (%s): intervalo de %s s menor que %s s", r.Label, r.Article, fmtNum(iv), fmtNum(lim))
		default:
			out.status = False
			out.reason = fmt.Sprintf("%s (%s): intervalo de %s s respeita o mínimo de %s s", r.Label, r.Article, fmtNum(iv), fmtNum(lim))
		}
	case KindQualitative, KindOutOfScope:
		return undetermined(r.Why)
	case KindRequiredSignal:
		out.status = False
		out.reason = fmt.Sprintf("%s (%s): sinal exigido pela lei, não é infração", r.Label, r.Article)
	}
	return out
}

func (c *Code) inWindow(w *Window, ctx *evalCtx) bool {
	if !w.containsMinute(ctx.minute) {
		return false
	}
	start := ctx.date
	if w.startsPreviousDay(ctx.minute) {
		start = start.AddDays(-1)
	}
	return c.anyDay(w.Days, start)
}

func (c *Code) inBannedArea(r *Rule, o *Observation) (in, known bool) {
	if slices.Contains(r.Match.Zones, o.Zone) {
		return true, true
	}
	if b, ok := factBool(o, "in_centro_historico"); ok && b && slices.Contains(r.Match.Zones, "centro_historico") {
		return true, true
	}
	if loc, ok := factString(o, "location"); ok && slices.Contains(r.Match.Zones, loc) {
		return true, true
	}
	if r.RadiusM != nil {
		if d, ok := factNumber(o, "distance_m_to_sensitive_poi"); ok {
			return d < *r.RadiusM, true
		}
	}
	return false, o.Zone != "unclassified"
}

// evalSchedule judges an operating schedule by service day: minutes before
// calendar.service_day_start belong to the previous day's schedule
// (codes-conventions.md "Time", closing "do dia seguinte").
func (c *Code) evalSchedule(r *Rule, o *Observation, ctx *evalCtx) outcome {
	out := outcome{rule: r}
	day, minute := ctx.date, ctx.minute
	if minute < mustHM(c.Calendar.ServiceDayStart) {
		day, minute = day.AddDays(-1), minute+1440
	}
	wd := weekdayNames[day.Weekday()]
	if slices.Contains(r.UndeterminedOnConflict, wd) && c.HolidayEve(day) {
		out.status = Undetermined
		out.reason = fmt.Sprintf("%s (%s): %s é %s e véspera de feriado, e o código dá horários diferentes para os dois casos",
			r.Label, r.Article, day, ptWeekday(day.Weekday()))
		return out
	}
	e := c.scheduleEntry(r, day)
	if e == nil {
		out.status = Undetermined
		out.reason = fmt.Sprintf("%s (%s): o código não prevê horário para %s (%s)", r.Label, r.Article, ptWeekday(day.Weekday()), day)
		return out
	}
	if e.Closed {
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): fechado em %s (%s)", r.Label, r.Article, ptWeekday(day.Weekday()), day)
		return out
	}
	closeM := e.closeMinutes()
	switch {
	case e.Open != "" && minute < mustHM(e.Open):
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): antes da abertura (%s) do dia de funcionamento %s", r.Label, r.Article, e.Open, day)
	case minute >= closeM:
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): depois do encerramento (%s%s) do dia de funcionamento %s", r.Label, r.Article,
			e.Close, map[bool]string{true: " do dia seguinte", false: ""}[e.CloseNextDay], day)
	default:
		if r.PermissionFact != "" {
			if b, present := factBool(o, r.PermissionFact); present && !b {
				out.status = Undetermined
				out.reason = fmt.Sprintf("%s (%s): dentro do horário, mas a permissão exige %s, informado como falso", r.Label, r.Article, r.PermissionFact)
				return out
			}
		}
		out.status = False
		out.reason = fmt.Sprintf("%s (%s): dentro do horário de funcionamento", r.Label, r.Article)
	}
	return out
}

// scheduleEntry picks the line for a service day: holiday lines first, then
// holiday-eve lines, then weekday lines (the more specific wins).
func (c *Code) scheduleEntry(r *Rule, d Date) *ScheduleEntry {
	for _, pass := range []string{"holiday", "holiday_eve", ""} {
		for i := range r.Schedule {
			e := &r.Schedule[i]
			for _, tok := range e.Days {
				special := tok == "holiday" || tok == "holiday_eve"
				if pass != "" && tok == pass && c.dayMatches(tok, d) {
					return e
				}
				if pass == "" && !special && c.dayMatches(tok, d) {
					return e
				}
			}
		}
	}
	return nil
}

func ptWeekday(w time.Weekday) string {
	return [...]string{"domingo", "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado"}[w]
}

func describeFacts(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func fmtNum(f float64) string {
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.1f", f)
}

// penaltyStep words the penalty for this infractor.
func (c *Code) penaltyStep(r *Rule, o *Observation) string {
	p := c.PenaltyByID(r.Penalty)
	if p == nil {
		return ""
	}
	punished, _ := factBool(o, "prior_punished")
	reinc := o.PriorInfractions > 0 && punished && p.Doubling != nil
	unit := c.unit(p.Unit)
	switch p.Type {
	case "ladder":
		i := o.PriorInfractions
		if i >= len(p.Steps) {
			i = len(p.Steps) - 1
		}
		s := p.Steps[i]
		txt := fmt.Sprintf("%dª infração: %s (%s)", o.PriorInfractions+1, s.Text, s.Item)
		if o.PriorInfractions >= len(p.Steps) {
			txt += fmt.Sprintf("; a escada do %s termina na %dª infração", p.Article, len(p.Steps))
		}
		if s.Percent != nil {
			txt += c.amount(*s.Percent, 1, unit)
		}
		return txt
	case "fixed":
		f := 1.0
		txt := fmt.Sprintf("multa de %s%% %s (%s)", fmtNum(*p.Percent), unitName(unit, p.Unit), p.Article)
		if reinc {
			f = p.Doubling.Factor
			txt += fmt.Sprintf(", em dobro por reincidência (%s): %s%%", p.Doubling.Article, fmtNum(*p.Percent*f))
		}
		return txt + c.amount(*p.Percent, f, unit)
	case "range":
		txt := fmt.Sprintf("multa de %s%% a %s%% %s (%s)", fmtNum(*p.PercentMin), fmtNum(*p.PercentMax), unitName(unit, p.Unit), p.Article)
		if reinc {
			txt += fmt.Sprintf(", em dobro por reincidência (%s): %s%% a %s%%", p.Doubling.Article,
				fmtNum(*p.PercentMin*p.Doubling.Factor), fmtNum(*p.PercentMax*p.Doubling.Factor))
		}
		return txt
	default: // unmapped
		txt := fmt.Sprintf("multa (%s: %s; a faixa aplicável não está mapeada no código)", p.Article, strings.Join(p.Amounts, " / "))
		if reinc {
			txt += fmt.Sprintf(", em dobro por reincidência (%s)", p.Doubling.Article)
		}
		return txt
	}
}

func (c *Code) unit(id string) *Unit {
	for i := range c.Units {
		if c.Units[i].ID == id {
			return &c.Units[i]
		}
	}
	return nil
}

func unitName(u *Unit, id string) string {
	if u == nil {
		return id
	}
	return u.ID
}

// amount computes the fine in R$ only where the unit's value is configured.
func (c *Code) amount(pct, factor float64, u *Unit) string {
	if u == nil || u.ValueBRL == nil {
		return ""
	}
	v := pct / 100 * factor * *u.ValueBRL
	return fmt.Sprintf(" = R$ %s", strings.Replace(fmt.Sprintf("%.2f", v), ".", ",", 1))
}
