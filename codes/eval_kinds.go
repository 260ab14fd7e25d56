package codes

import (
	"fmt"
	"slices"
)

// A rule's verdict once the observation is in its scope: exemptions, what
// is missing, and the verdict of each rule kind.

// preVerdict decides, before the rule's kind does, an observation in its
// scope that is exempt or lacks what the verdict needs (done).
func preVerdict(r *Rule, o *Observation, sc ruleScope, out outcome) (outcome, bool) {
	if k := firstHolding(r.ExemptIf, o); k >= 0 {
		out.status = False
		out.reason = fmt.Sprintf("%s (%s): caso isento (%s)", r.Label, r.Article, describeFacts(r.ExemptIf[k], o))
		if k < len(r.ExemptBy) && r.ExemptBy[k].Article != "" {
			by := r.ExemptBy[k]
			out.exemptBy = by.Article
			out.reason += fmt.Sprintf(", pelo %s: \"%s\"", by.Article, by.Quote)
		}
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
		return out.undetermined(observedSource(o) + r.Why)
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

// firstHolding returns the index of the first entry whose facts all hold,
// or -1.
func firstHolding(entries []map[string]any, o *Observation) int {
	for k, ex := range entries {
		all := true
		for k, want := range ex {
			if holds, _ := factHolds(o, k, want); !holds {
				all = false
				break
			}
		}
		if all {
			return k
		}
	}
	return -1
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

// observedSource names the source a general clause is judging ("fonte
// observada: sirene ou apito; "), or "" for an unnamed one.
func observedSource(o *Observation) string {
	if o.Source == "generic" {
		return ""
	}
	return "fonte observada: " + SourceLabel(o.Source) + "; "
}
