package codes

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Tri is a verdict value: true, false or undetermined.
type Tri int

// Verdict values (docs/codes-conventions.md "Verdicts").
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

// Proximity without a number ("nas proximidades de"): a protected place at
// most nearClearM metres away is near; one more than nearFarM metres away is
// not; in between the text does not decide (docs/codes-conventions.md).
const (
	nearClearM = 100
	nearFarM   = 300
)

type outcome struct {
	rule   *Rule
	status Tri
	skip   bool
	reason string
	// candidate marks a level limit judged for an unclassified zone: the
	// verdict comes from every candidate limit together.
	candidate bool
	warning   string
}

// Evaluate judges o under c. It is pure: same inputs, same verdict.
func Evaluate(c *Code, o Observation) Verdict {
	if !c.Status.InForce && !o.AssumeInForce {
		return c.revokedVerdict()
	}
	var v Verdict
	if !c.Status.InForce {
		v.Warnings = append(v.Warnings, fmt.Sprintf("modo texto: %s foi revogada (%s) e foi avaliada como escrita porque assume_in_force=true", c.Title(), c.Status.RevokedBy))
	}
	ctx := c.newEvalCtx(o)
	outs, overridden := c.evalRules(&o, &ctx)
	v.LimitDBA = c.limitInScope(&ctx)
	resolveCandidates(outs, overridden, o.LAeq)
	viol, und, ok, warnings := classify(outs, overridden)
	v.Warnings = append(v.Warnings, warnings...)
	var decisive []int
	v.Violation, decisive = decide(outs, viol, und, ok)
	reasons := c.explain(&v, outs, decisive, &o)
	if v.Violation == True {
		v.PenaltyStep = c.penaltySteps(outs, decisive, &o)
	}
	if o.LAeq != nil {
		reasons = append(reasons, "nível tratado como LAeq ponderado A na janela de avaliação (convenção de leitura)")
	}
	v.Reason = strings.Join(reasons, "; ")
	return v
}

// revokedVerdict is the verdict under a code no longer in force, read
// without assume_in_force: undetermined, citing the revocation.
func (c *Code) revokedVerdict() Verdict {
	v := Verdict{Violation: Undetermined, Article: c.Status.Article}
	if v.Article != "" {
		v.Articles = []string{v.Article}
	}
	v.Reason = fmt.Sprintf("%s não está em vigor: %s; avalie pela lei vigente ou use assume_in_force para ler o texto de %s como escrito",
		c.Title(), c.Status.RevokedBy, c.Law.Date[:4])
	return v
}

// evalRules judges every rule in file order and marks the rules overridden
// by one that applies.
func (c *Code) evalRules(o *Observation, ctx *evalCtx) ([]outcome, []bool) {
	n := len(c.Rules)
	outs := make([]outcome, n)
	overridden := make([]bool, n)
	for i := range c.Rules {
		outs[i] = c.evalRule(i, o, ctx)
		if !outs[i].skip {
			for _, j := range c.overrideIdx[i] {
				overridden[j] = true
			}
		}
	}
	return outs, overridden
}

// limitInScope is the limit of the first level rule whose scope matched
// with a known zone; nil when none did.
func (c *Code) limitInScope(ctx *evalCtx) *float64 {
	for i := range c.Rules {
		if ctx.levelScope[i] {
			l := *c.Rules[i].LimitDBA
			return &l
		}
	}
	return nil
}

// classify sorts the outcomes that count (applied, not overridden) into
// violated, undetermined and complied with, in rule order, and collects
// their warnings.
func classify(outs []outcome, overridden []bool) (viol, und, ok []int, warnings []string) {
	for i := range outs {
		out := &outs[i]
		if out.skip || overridden[i] {
			continue
		}
		if out.warning != "" {
			warnings = append(warnings, out.warning)
		}
		switch out.status {
		case True:
			viol = append(viol, i)
		case Undetermined:
			und = append(und, i)
		default:
			ok = append(ok, i)
		}
	}
	return viol, und, ok, warnings
}

// decide gives the verdict and the provisions that decide it: any
// violation wins, then any undetermined provision, else compliance.
func decide(outs []outcome, viol, und, ok []int) (Tri, []int) {
	// The main provision of an undetermined verdict is the most specific
	// one: a general clause without a criterion comes last.
	slices.SortStableFunc(und, func(a, b int) int { return generality(outs[a].rule) - generality(outs[b].rule) })
	switch {
	case len(viol) > 0:
		return True, viol
	case len(und) > 0:
		return Undetermined, und
	default:
		return False, ok
	}
}

// explain fills v's articles, rule ids and main article from the decisive
// provisions and returns their reasons; with none, the reason says no
// provision applies.
func (c *Code) explain(v *Verdict, outs []outcome, decisive []int, o *Observation) []string {
	reasons := make([]string, 0, len(decisive)+1)
	for _, i := range decisive {
		r := outs[i].rule
		if !slices.Contains(v.Articles, r.Article) {
			v.Articles = append(v.Articles, r.Article)
		}
		v.RuleIDs = append(v.RuleIDs, r.ID)
		reasons = append(reasons, outs[i].reason)
	}
	if len(decisive) > 0 {
		v.Article = outs[decisive[0]].rule.Article
		return reasons
	}
	v.Articles = []string{}
	what := "esta fonte, local e horário"
	if o.Source == "generic" && o.LAeq == nil {
		what = "estes fatos (fonte não especificada e sem nível medido: nada mostra ruído)"
	}
	return append(reasons, fmt.Sprintf("nenhuma disposição de %s sobre ruído se aplica a %s", c.Title(), what))
}

// generality orders undetermined provisions: specific rules first, general
// clauses and remissions to other laws last.
func generality(r *Rule) int {
	switch r.Kind {
	case KindQualitative, KindOutOfScope:
		return 1
	}
	return 0
}

// resolveCandidates decides level limits judged for an unclassified zone:
// when the level is above every candidate limit of the same article at that
// time, the article is violated; at or below every one, it is complied with;
// only in between is it undetermined (docs/codes-conventions.md "What the
// observation shows").
func resolveCandidates(outs []outcome, overridden []bool, laeq *float64) {
	for i := range outs {
		if !outs[i].candidate || outs[i].skip || overridden[i] {
			continue
		}
		art := outs[i].rule.Article
		group := []int{i}
		for j := i + 1; j < len(outs); j++ {
			if outs[j].candidate && !outs[j].skip && !overridden[j] && outs[j].rule.Article == art {
				group = append(group, j)
			}
		}
		lo, hi := group[0], group[0]
		exceed := 0
		for _, j := range group {
			l := *outs[j].rule.LimitDBA
			if l < *outs[lo].rule.LimitDBA {
				lo = j
			}
			if l > *outs[hi].rule.LimitDBA {
				hi = j
			}
			if outs[j].status == True {
				exceed++
			}
			outs[j].skip = true
			outs[j].candidate = false
		}
		limits := make([]string, len(group))
		for k, j := range group {
			limits[k] = fmtNum(*outs[j].rule.LimitDBA) + " dB"
		}
		all := joinPT(limits)
		keep := &outs[i]
		what := art
		if p := outs[i].rule.Period; p != "" {
			what = fmt.Sprintf("%s, %s", art, Label(LabelPeriod, p))
		}
		switch exceed {
		case len(group):
			keep = &outs[hi]
			keep.status = True
			keep.reason = fmt.Sprintf("%s: zona não classificada, mas %s dB excede todos os limites possíveis neste horário (%s)",
				what, fmtDec(*laeq), all)
		case 0:
			keep = &outs[lo]
			keep.status = False
			keep.reason = fmt.Sprintf("%s: zona não classificada, mas %s dB não excede nenhum dos limites possíveis neste horário (%s)",
				what, fmtDec(*laeq), all)
		default:
			keep.status = Undetermined
			keep.reason = fmt.Sprintf("%s: zona não classificada; %s dB excede %s dB mas não %s dB, e só a zona decide qual limite vale",
				what, fmtDec(*laeq), fmtNum(*outs[lo].rule.LimitDBA), fmtNum(*outs[hi].rule.LimitDBA))
		}
		keep.skip = false
	}
}

type evalCtx struct {
	local      time.Time
	date       Date
	minute     int
	levelScope []bool // level rules whose scope matched with a known zone (for limit_dba)
}

func (c *Code) newEvalCtx(o Observation) evalCtx {
	lt := o.At.In(c.loc)
	return evalCtx{local: lt, date: dateOf(lt), minute: lt.Hour()*60 + lt.Minute(), levelScope: make([]bool, len(c.Rules))}
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
	if k == "source" {
		got, ok = o.Source, true
	}
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

// noiseShown reports whether the observation shows a sound at all: a
// named source, or any source with a measured level. A generic source with
// no level shows none (docs/codes-conventions.md "What the observation
// shows").
func noiseShown(o *Observation) bool { return o.Source != "generic" || o.LAeq != nil }

func (c *Code) evalRule(i int, o *Observation, ctx *evalCtx) outcome {
	r := &c.Rules[i]
	out := outcome{rule: r, skip: true}
	sc, ok := c.scope(i, o, ctx)
	if !ok {
		return out
	}
	out.skip = false
	if pre, done := preVerdict(r, o, sc, out); done {
		return pre
	}
	out = c.verdict(r, o, ctx, sc.zoneUnknown, out)
	if out.status == True && r.ExemptUnknown {
		if facts := exemptPossible(r, o); facts != "" {
			return out.undetermined("a exceção do próprio artigo pode aplicar-se; informe " + facts)
		}
	}
	return out
}

// undetermined returns out as undetermined, saying why.
func (out outcome) undetermined(why string) outcome {
	out.skip = false
	out.status = Undetermined
	out.reason = fmt.Sprintf("%s (%s): %s", out.rule.Label, out.rule.Article, why)
	return out
}

// ruleScope is what deciding that an observation is in a rule's scope
// learnt that its verdict needs.
type ruleScope struct {
	zoneUnknown bool     // the rule names zones and the observation's is unclassified
	missing     []string // what the observation must state for a verdict
	whereWhy    string   // why the place cannot be decided ("": it can, or the rule names none)
}

// scope reports whether o is in rule i's scope, and notes in ctx the
// level rules whose scope matched with a known zone.
func (c *Code) scope(i int, o *Observation, ctx *evalCtx) (sc ruleScope, ok bool) {
	r := &c.Rules[i]
	m := &r.Match
	byEvent, ok := triggered(m, o)
	if !ok {
		return sc, false
	}
	if len(m.Zones) > 0 {
		if o.Zone == "unclassified" {
			sc.zoneUnknown = true
		} else if !slices.Contains(m.Zones, o.Zone) {
			return sc, false
		}
	}
	if r.Window != nil && r.Kind != KindPermittedHours && !c.inWindow(r.Window, ctx) {
		return sc, false
	}
	if sc.missing, ok = establishmentScope(r, o); !ok {
		return sc, false
	}
	if r.Kind == KindLevelLimit && !sc.zoneUnknown {
		ctx.levelScope[i] = true
	}
	// A limit or a general clause about a sound needs the observation to show
	// one; a clause about a stated fact (an establishment's special hours)
	// does not.
	soundRule := len(m.Sources) > 0 || len(m.Mechanisms) > 0
	if (r.Kind == KindLevelLimit || r.Kind == KindQualitative) && soundRule && !byEvent && !noiseShown(o) {
		return sc, false
	}
	if len(m.Content) > 0 {
		ct, ok := factString(o, "content")
		switch {
		case !ok:
			sc.missing = append(sc.missing, "o conteúdo da propaganda (facts.content)")
		case !slices.Contains(m.Content, ct):
			return sc, false
		}
	}
	if len(m.Places) > 0 || len(m.Near) > 0 {
		st, why := c.where(r, o)
		// A provision addressed to the administration is in scope only when
		// the stated facts put the observation inside its radius.
		if st == False || (st == Undetermined && r.Kind == KindLicensingReview) {
			return sc, false
		}
		if st == Undetermined {
			sc.whereWhy = why
		}
	}
	return sc, true
}

// triggered reports whether o shows the rule's trigger: a source or
// mechanism, and the facts the rule is about. byEvent is true when the
// trigger is a stated event (a desordem), which shows a disturbance by
// itself.
func triggered(m *Match, o *Observation) (byEvent, ok bool) {
	if len(m.Sources) > 0 || len(m.Mechanisms) > 0 || len(m.Events) > 0 {
		mech, _ := factString(o, "mechanism")
		ev, _ := factString(o, "event")
		byEvent = ev != "" && slices.Contains(m.Events, ev)
		if !slices.Contains(m.Sources, o.Source) && (mech == "" || !slices.Contains(m.Mechanisms, mech)) && !byEvent {
			return false, false
		}
	}
	for k, want := range m.Facts {
		if holds, _ := factHolds(o, k, want); !holds {
			return false, false
		}
	}
	return byEvent, true
}

// establishmentScope reports whether o's establishment is one the rule is
// about (ok), and what is missing to decide it.
func establishmentScope(r *Rule, o *Observation) (missing []string, ok bool) {
	m := &r.Match
	if len(m.Establishments) > 0 {
		est, ok := factString(o, "establishment_type")
		switch {
		case !ok:
			// A level limit whose scope is a list of establishments cannot be
			// decided without the type; any other rule about an establishment
			// is not triggered by an observation that names none.
			if r.Kind != KindLevelLimit {
				return nil, false
			}
			missing = append(missing, "o tipo de estabelecimento (facts.establishment_type)")
		case !slices.Contains(m.Establishments, est):
			return nil, false
		}
	}
	if m.AlcoholVenue {
		sold, present := factBool(o, "alcohol_sold")
		est, _ := factString(o, "establishment_type")
		if !(present && sold) && (present || (est != "bar" && est != "nightclub")) {
			return nil, false
		}
	}
	return missing, true
}

// preVerdict decides, before the rule's kind does, an observation in its
// scope that is exempt or lacks what the verdict needs (done).
func preVerdict(r *Rule, o *Observation, sc ruleScope, out outcome) (outcome, bool) {
	if ex := exemptEntry(r, o); ex != nil {
		out.status = False
		out.reason = fmt.Sprintf("%s (%s): caso isento (%s)", r.Label, r.Article, describeFacts(ex, o))
		return out, true
	}
	if r.Kind == KindLicensingReview {
		out = out.undetermined("dirige-se ao licenciamento, não ao observado: " + r.Why)
		out.warning = fmt.Sprintf("revisão do licenciamento (%s): %s", r.Article, r.Why)
		return out, true
	}
	if sc.zoneUnknown && r.Kind != KindLevelLimit {
		return out.undetermined("zona não classificada; a regra vale só em " + labelList(LabelZone, r.Match.Zones)), true
	}
	if sc.whereWhy != "" {
		return out.undetermined(sc.whereWhy), true
	}
	missing := sc.missing
	for _, k := range r.Match.Needs {
		if _, present := o.Facts[k]; !present {
			missing = append(missing, "facts."+k)
		}
	}
	if len(missing) > 0 {
		return out.undetermined("falta informar " + joinPT(missing)), true
	}
	return out, false
}

// verdict judges o by the rule's kind.
func (c *Code) verdict(r *Rule, o *Observation, ctx *evalCtx, zoneUnknown bool, out outcome) outcome {
	switch r.Kind {
	case KindLevelLimit:
		return levelVerdict(r, o, zoneUnknown, out)
	case KindProhibitedHours:
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): proibido às %s", r.Label, r.Article, fmtHM(ctx.minute))
	case KindConduct:
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): conduta proibida pelo código, declarada na observação", r.Label, r.Article)
	case KindPermittedHours:
		if !c.inWindow(r.Window, ctx) {
			out.status = True
			out.reason = fmt.Sprintf("%s (%s): permitido só %s; ocorreu às %s", r.Label, r.Article,
				windowText(r.Window), fmtHM(ctx.minute))
		} else if b, present := factBool(o, r.PermissionFact); r.PermissionFact != "" && present && !b {
			return out.undetermined("dentro do horário, mas a permissão depende de " + r.PermissionFact + ", informado como falso")
		} else {
			out.status = False
			out.reason = fmt.Sprintf("%s (%s): dentro do horário permitido", r.Label, r.Article)
		}
	case KindDuration:
		return durationVerdict(r, o, out)
	case KindSchedule:
		out.status, out.reason = c.evalSchedule(r, o, ctx)
	case KindLicence:
		return licenceVerdict(r, o, out)
	case KindLocationBan:
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): proibido neste local", r.Label, r.Article)
	case KindMinInterval:
		return intervalVerdict(r, o, out)
	case KindQualitative, KindOutOfScope:
		return out.undetermined(r.Why)
	case KindRequiredSignal:
		out.status = False
		out.reason = fmt.Sprintf("%s (%s): sinal exigido pela lei, não é infração", r.Label, r.Article)
	}
	return out
}

// levelVerdict judges a level limit: the measured LAeq against limit_dba.
func levelVerdict(r *Rule, o *Observation, zoneUnknown bool, out outcome) outcome {
	lim := *r.LimitDBA
	if o.LAeq == nil {
		if zoneUnknown {
			return out.undetermined("nível não medido, e a zona não está classificada")
		}
		return out.undetermined(fmt.Sprintf("o nível decide e não foi medido (máximo %s dB)", fmtNum(lim)))
	}
	out.candidate = zoneUnknown
	if *o.LAeq > lim {
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): máximo %s dB; %s dB excede", r.Label, r.Article, fmtNum(lim), fmtDec(*o.LAeq))
	} else {
		out.status = False
		out.reason = fmt.Sprintf("%s (%s): máximo %s dB; %s dB não excede", r.Label, r.Article, fmtNum(lim), fmtDec(*o.LAeq))
	}
	return out
}

// durationVerdict judges a duration limit: the measured duration against
// max_duration_s.
func durationVerdict(r *Rule, o *Observation, out outcome) outcome {
	lim := *r.MaxDurationS
	if o.DurationS == nil {
		return out.undetermined(fmt.Sprintf("duração não medida; o limite é mais de %s s", fmtNum(lim)))
	}
	if *o.DurationS > lim {
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): duração %s s excede %s s", r.Label, r.Article, fmtNum(*o.DurationS), fmtNum(lim))
	} else {
		out.status = False
		out.reason = fmt.Sprintf("%s (%s): duração %s s não excede %s s", r.Label, r.Article, fmtNum(*o.DurationS), fmtNum(lim))
	}
	return out
}

// licenceVerdict judges a rule that requires a licence: facts.licensed.
func licenceVerdict(r *Rule, o *Observation, out outcome) outcome {
	lic, present := factBool(o, "licensed")
	switch {
	case !present:
		return out.undetermined("exige licença prévia; informe facts.licensed")
	case lic:
		out.status = False
		out.reason = fmt.Sprintf("%s (%s): licenciado", r.Label, r.Article)
	default:
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): sem a licença exigida", r.Label, r.Article)
	}
	return out
}

// intervalVerdict judges a minimum interval between series:
// facts.interval_between_series_s against min_interval_s.
func intervalVerdict(r *Rule, o *Observation, out outcome) outcome {
	iv, ok := factNumber(o, "interval_between_series_s")
	lim := *r.MinIntervalS
	switch {
	case !ok:
		return out.undetermined("informe facts.interval_between_series_s")
	case iv < lim:
		out.status = True
		out.reason = fmt.Sprintf("%s (%s): intervalo de %s s menor que %s s", r.Label, r.Article, fmtNum(iv), fmtNum(lim))
	default:
		out.status = False
		out.reason = fmt.Sprintf("%s (%s): intervalo de %s s respeita o mínimo de %s s", r.Label, r.Article, fmtNum(iv), fmtNum(lim))
	}
	return out
}

// exemptEntry returns the exempt_if entry whose facts all hold, or nil.
func exemptEntry(r *Rule, o *Observation) map[string]any {
	for _, ex := range r.ExemptIf {
		all := true
		for k, want := range ex {
			if holds, _ := factHolds(o, k, want); !holds {
				all = false
				break
			}
		}
		if all {
			return ex
		}
	}
	return nil
}

// exemptPossible names the missing facts of an exempt_if entry that no
// stated fact contradicts, or "".
func exemptPossible(r *Rule, o *Observation) string {
	for _, ex := range r.ExemptIf {
		var miss []string
		contradicted := false
		for k, want := range ex {
			holds, present := factHolds(o, k, want)
			if !present {
				miss = append(miss, "facts."+k)
			} else if !holds {
				contradicted = true
				break
			}
		}
		if !contradicted && len(miss) > 0 {
			slices.Sort(miss)
			return joinPT(miss)
		}
	}
	return ""
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

// where decides a rule's places and protected surroundings: True when the
// observation is inside them, False when outside, Undetermined (with why)
// when the stated facts do not say.
func (c *Code) where(r *Rule, o *Observation) (Tri, string) {
	m := &r.Match
	place := False
	if len(m.Places) > 0 {
		place = inPlaces(m.Places, o)
		if place == True {
			return True, ""
		}
	}
	placeWhy := "local não classificado; informe a zona ou facts.location (" + strings.Join(m.Places, ", ") + ")"
	if len(m.Near) == 0 {
		if place == Undetermined {
			return Undetermined, placeWhy
		}
		return False, ""
	}
	near, why := proximity(r, o)
	switch {
	case near == True:
		return True, ""
	case near == Undetermined:
		return Undetermined, why
	case place == Undetermined:
		return Undetermined, placeWhy
	}
	return False, ""
}

func inPlaces(places []string, o *Observation) Tri {
	if slices.Contains(places, o.Zone) {
		return True
	}
	if loc, ok := factString(o, "location"); ok {
		if slices.Contains(places, loc) {
			return True
		}
		return False
	}
	if b, ok := factBool(o, "in_centro_historico"); ok && slices.Contains(places, "centro_historico") {
		if b {
			return True
		}
		if len(places) == 1 {
			return False
		}
	}
	if o.Zone == "unclassified" {
		return Undetermined
	}
	return False
}

// zoneImplies reports whether the zone itself says the observation is near a
// place of one of the listed types (a sensor classified "perto de escola" is
// near a school, a residential zone is among residences).
func zoneImplies(zone string, near []string) bool {
	switch zone {
	case "near_hospital", "hospital_surroundings":
		return slices.Contains(near, "hospital")
	case "near_school":
		return slices.Contains(near, "school")
	case "near_residence", "residential":
		return slices.Contains(near, "residence")
	}
	return false
}

// proximity decides a radius rule (RadiusM) or a "nas proximidades de" rule
// from the stated distance and type of the protected place and the code's
// own closed list (Match.Near). A zone label alone does not prove a
// distance.
func proximity(r *Rule, o *Observation) (Tri, string) {
	near := r.Match.Near
	pt, hasPT := factString(o, "poi_type")
	d, hasD := factNumber(o, "distance_m_to_sensitive_poi")
	listed := hasPT && slices.Contains(near, pt)
	implied := zoneImplies(o.Zone, near)
	list := labelList(LabelPOI, near)
	if r.RadiusM != nil {
		rad := *r.RadiusM
		switch {
		case listed && hasD:
			return triOf(d < rad), ""
		case listed:
			return Undetermined, fmt.Sprintf("%s sem distância informada; o artigo vale a menos de %s m de %s (informe facts.distance_m_to_sensitive_poi)",
				POILabel(pt), fmtNum(rad), list)
		case hasPT && !implied:
			return False, "" // a place the list does not name is not protected by this rule
		case hasD && !hasPT:
			if d >= rad {
				return False, ""
			}
			if implied {
				return True, ""
			}
			return Undetermined, fmt.Sprintf("a %s m de um local cujo tipo não foi informado; o artigo protege só %s (informe facts.poi_type)", fmtNum(d), list)
		case implied || o.Zone == "unclassified":
			return Undetermined, fmt.Sprintf("a zona (%s) não prova a distância; o artigo vale a menos de %s m de %s (informe facts.distance_m_to_sensitive_poi e facts.poi_type)",
				ZoneLabel(o.Zone), fmtNum(rad), list)
		}
		return False, ""
	}
	switch {
	case implied:
		return True, "" // the zone itself says the place is near a protected use
	case listed && hasD:
		switch {
		case d <= nearClearM:
			return True, ""
		case d > nearFarM:
			return False, ""
		}
		return Undetermined, fmt.Sprintf("a %s m de %s: o código não diz até onde vão as \"proximidades\"", fmtNum(d), POILabel(pt))
	case listed:
		return Undetermined, fmt.Sprintf("%s sem distância informada (informe facts.distance_m_to_sensitive_poi)", POILabel(pt))
	case hasPT:
		return False, "" // a place the list does not name is not protected by this rule
	case o.Zone == "unclassified":
		return Undetermined, "zona não classificada; o artigo protege as proximidades de " + list
	case hasD && d <= nearFarM:
		return Undetermined, fmt.Sprintf("a %s m de um local cujo tipo não foi informado; o artigo protege só %s (informe facts.poi_type)", fmtNum(d), list)
	}
	return False, ""
}

func triOf(b bool) Tri {
	if b {
		return True
	}
	return False
}

// evalSchedule judges an operating schedule (docs/codes-conventions.md
// "Time" and "Schedules, licences and favour"): a day the schedule does not
// mention is not restricted; where several lines fit a day, the most
// favourable prevails (a holiday line displaces the weekday lines);
// minutes before calendar.service_day_start continue the previous day's
// operation ("HH:MM do dia seguinte").
func (c *Code) evalSchedule(r *Rule, o *Observation, ctx *evalCtx) (Tri, string) {
	extended, _ := factBool(o, "hours_extension_granted")
	day, m := ctx.date, ctx.minute
	start := mustHM(c.Calendar.ServiceDayStart)
	permitted := false
	why := ""
	if m < start {
		prevDay := day.AddDays(-1)
		prev := c.linesFor(r, prevDay)
		for _, e := range prev {
			if ok, _ := c.linePermits(e, m+1440, extended); ok {
				permitted = true
			}
		}
		cur := c.linesFor(r, day)
		for _, e := range cur {
			if ok, _ := c.linePermits(e, m, extended); ok && e.Open != "" {
				permitted = true
			}
		}
		switch {
		case permitted:
		case len(prev) > 0:
			_, w := c.linePermits(prev[0], m+1440, extended)
			why = fmt.Sprintf("às %s de %s, %s do dia de funcionamento de %s (%s)", fmtHM(m), day.PT(), w,
				ptWeekday(prevDay.Weekday()), prevDay.PT())
		case len(cur) == 0:
			return False, fmt.Sprintf("%s (%s): o artigo não restringe %s (%s) nem a madrugada que o antecede", r.Label, r.Article,
				ptWeekday(day.Weekday()), day.PT())
		default:
			_, w := c.linePermits(cur[0], m, extended)
			why = fmt.Sprintf("às %s de %s (%s), %s", fmtHM(m), ptWeekday(day.Weekday()), day.PT(), w)
		}
	} else {
		cur := c.linesFor(r, day)
		if len(cur) == 0 {
			return False, fmt.Sprintf("%s (%s): o artigo não restringe %s (%s)", r.Label, r.Article, ptWeekday(day.Weekday()), day.PT())
		}
		for _, e := range cur {
			if ok, _ := c.linePermits(e, m, extended); ok {
				permitted = true
			}
		}
		if !permitted {
			_, w := c.linePermits(cur[0], m, extended)
			why = fmt.Sprintf("às %s de %s (%s), %s", fmtHM(m), ptWeekday(day.Weekday()), day.PT(), w)
		}
	}
	if !permitted {
		return True, fmt.Sprintf("%s (%s): %s", r.Label, r.Article, why)
	}
	if r.PermissionFact != "" {
		if b, present := factBool(o, r.PermissionFact); present && !b {
			return Undetermined, fmt.Sprintf("%s (%s): dentro do horário, mas a permissão exige %s, informado como falso", r.Label, r.Article, r.PermissionFact)
		}
	}
	return False, fmt.Sprintf("%s (%s): dentro do horário de funcionamento", r.Label, r.Article)
}

// linesFor returns the schedule lines that fit day d: the holiday lines
// when d is a holiday and the schedule has any, else every line whose days
// and season fit.
func (c *Code) linesFor(r *Rule, d Date) []*ScheduleEntry {
	_, hol := c.Holiday(d)
	var lines, holi []*ScheduleEntry
	for i := range r.Schedule {
		e := &r.Schedule[i]
		if !e.inSeason(d) {
			continue
		}
		for _, tok := range e.Days {
			if c.dayMatches(tok, d) {
				if tok == "holiday" {
					holi = append(holi, e)
				} else {
					lines = append(lines, e)
				}
				break
			}
		}
	}
	if hol && len(holi) > 0 {
		return holi
	}
	return lines
}

// linePermits judges service-day minute m (≥ 1440 for the early hours of
// the next calendar day) against one line; a line without an opening time
// opens at the service-day start.
func (c *Code) linePermits(e *ScheduleEntry, m int, extended bool) (bool, string) {
	if e.Closed {
		return false, "dia em que o estabelecimento permanece fechado"
	}
	open := mustHM(c.Calendar.ServiceDayStart)
	if e.Open != "" {
		open = mustHM(e.Open)
	}
	closeM := e.closeMinutes(extended)
	closeTxt := e.Close
	if extended && e.CloseIfExtended != "" {
		closeTxt = e.CloseIfExtended + " (horário prorrogado)"
	}
	if e.CloseNextDay {
		closeTxt += " do dia seguinte"
	}
	switch {
	case m < open:
		return false, "antes da abertura (" + fmtHM(open) + ")"
	case m >= closeM:
		return false, "depois do encerramento (" + closeTxt + ")"
	}
	return true, ""
}

func ptWeekday(w time.Weekday) string {
	return DayLabel(weekdayNames[w])
}

// describeFacts names the facts of an exemption as the observation states
// them ("emitter=ambulance, in_service=true").
func describeFacts(m map[string]any, o *Observation) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		v := o.Facts[k]
		if k == "source" {
			v = SourceLabel(o.Source)
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	return strings.Join(parts, ", ")
}

// fmtNum writes a limit or count as a Brazilian reader does: 45, 30,5.
func fmtNum(f float64) string {
	if f == math.Trunc(f) {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return fmtDec(f)
}

// fmtDec writes a measured value with one decimal and a decimal comma: 62,0.
func fmtDec(f float64) string {
	return strings.Replace(strconv.FormatFloat(f, 'f', 1, 64), ".", ",", 1)
}

// penaltySteps words the penalty of every violated provision, each from its
// own article or chapter; the first is the main provision's.
func (c *Code) penaltySteps(outs []outcome, decisive []int, o *Observation) string {
	var seen, arts, parts []string
	for _, i := range decisive {
		r := outs[i].rule
		if r.Penalty == "" || slices.Contains(seen, r.Penalty) {
			continue
		}
		if s := c.penaltyStep(r, o); s != "" {
			seen = append(seen, r.Penalty)
			arts = append(arts, r.Article)
			parts = append(parts, s)
		}
	}
	if len(parts) > 1 {
		for k := range parts {
			parts[k] = arts[k] + ": " + parts[k]
		}
	}
	return strings.Join(parts, " | ")
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
	var txt string
	switch p.Type {
	case "ladder":
		i := min(o.PriorInfractions, len(p.Steps)-1)
		s := p.Steps[i]
		txt = fmt.Sprintf("%dª infração: %s (%s)", o.PriorInfractions+1, s.Text, s.Item)
		if o.PriorInfractions >= len(p.Steps) {
			txt += fmt.Sprintf("; a escada do %s termina na %dª infração", p.Article, len(p.Steps))
		}
		if s.Percent != nil {
			txt += c.amount(*s.Percent, 1, unit)
		}
	case "fixed":
		f := 1.0
		txt = fmt.Sprintf("multa de %s%% %s (%s)", fmtNum(*p.Percent), unitName(unit, p.Unit), p.Article)
		if reinc {
			f = p.Doubling.Factor
			txt += fmt.Sprintf(", em dobro por reincidência (%s): %s%%", p.Doubling.Article, fmtNum(*p.Percent*f))
		}
		txt += c.amount(*p.Percent, f, unit)
	case "range":
		txt = fmt.Sprintf("multa de %s%% a %s%% %s (%s)", fmtNum(*p.PercentMin), fmtNum(*p.PercentMax), unitName(unit, p.Unit), p.Article)
		if reinc {
			txt += fmt.Sprintf(", em dobro por reincidência (%s): %s%% a %s%%", p.Doubling.Article,
				fmtNum(*p.PercentMin*p.Doubling.Factor), fmtNum(*p.PercentMax*p.Doubling.Factor))
		}
	default: // unmapped
		txt = fmt.Sprintf("multa (%s: %s; a faixa aplicável não está mapeada no código)", p.Article, strings.Join(p.Amounts, " / "))
		if reinc {
			txt += fmt.Sprintf(", em dobro por reincidência (%s)", p.Doubling.Article)
		}
	}
	return txt + p.accessoryText()
}

// accessoryText is the article's or chapter's accessory sanctions, "" if none.
func (p *Penalty) accessoryText() string {
	if len(p.Accessory) == 0 {
		return ""
	}
	return "; " + strings.Join(p.Accessory, "; ")
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
