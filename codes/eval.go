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
	// miss marks a skipped rule the observation triggered but whose hours or
	// places left it out: a false verdict cites it.
	miss missKind
	// exemptBy is the article that grants the exemption applied, when it is
	// not the rule's own (Lapa Art. 100 for the whole chapter).
	exemptBy string
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
	if v.Violation == False {
		decisive = c.appendMisses(outs, overridden, decisive)
	}
	reasons := c.explain(&v, outs, decisive, &o, &ctx)
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
func (c *Code) explain(v *Verdict, outs []outcome, decisive []int, o *Observation, ctx *evalCtx) []string {
	reasons := make([]string, 0, len(decisive)+1)
	for _, i := range decisive {
		r := outs[i].rule
		if !slices.Contains(v.Articles, r.Article) {
			v.Articles = append(v.Articles, r.Article)
		}
		if a := outs[i].exemptBy; a != "" && !slices.Contains(v.Articles, a) {
			v.Articles = append(v.Articles, a)
		}
		v.RuleIDs = append(v.RuleIDs, r.ID)
		if outs[i].skip {
			reasons = append(reasons, c.missText(r, o, ctx))
			continue
		}
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
		out.miss = sc.miss
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
	out.reason += supersededText(r)
	return out
}

// undetermined returns out as undetermined, saying why.
func (out outcome) undetermined(why string) outcome {
	out.skip = false
	out.status = Undetermined
	out.reason = fmt.Sprintf("%s (%s): %s", out.rule.Label, out.rule.Article, why)
	return out
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

// supersededText says which earlier provisions the rule displaces and why
// ("", when none): part of every reason the rule gives.
func supersededText(r *Rule) string {
	var b strings.Builder
	for _, x := range r.Supersedes {
		fmt.Fprintf(&b, "; prevalece sobre o %s: %s", x.Article, x.Why)
	}
	return b.String()
}

// appendMisses adds to a false verdict's provisions the rules the
// observation triggered but whose hours or places left it out, one per
// article not cited yet: the verdict turns on them.
// A special rule that missed still displaces the general rules it overrides
// (a vehicle's horn is not cited as a factory whistle).
func (c *Code) appendMisses(outs []outcome, overridden []bool, decisive []int) []int {
	var displaced []int
	for i := range outs {
		if outs[i].miss != missNone {
			displaced = append(displaced, c.overrideIdx[i]...)
		}
	}
	for i := range outs {
		if outs[i].miss == missNone || overridden[i] || slices.Contains(displaced, i) ||
			citedArticle(outs, decisive, outs[i].rule.Article) {
			continue
		}
		decisive = append(decisive, i)
	}
	return decisive
}

func citedArticle(outs []outcome, idx []int, art string) bool {
	for _, i := range idx {
		if outs[i].rule.Article == art {
			return true
		}
	}
	return false
}
