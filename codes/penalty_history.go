package codes

import (
	"fmt"
	"strings"
)

// PriorInfraction is one earlier infraction of the same infractor, as the
// case store remembers it. It is what the penalty ladder and reincidência
// are computed from.
type PriorInfraction struct {
	PenaltyID string // the penalty provision it was counted under, e.g. "lapa-102"
	Ordinal   int    // the step it was counted as (1 = 1ª infração); informative
	// Punished is true when the infraction was "autuado e punido": an auto
	// de infração whose penalty was confirmed by a final decision. A notice,
	// a pending auto or an auto judged improcedente is not punished.
	Punished bool
	Ref      string // the document that recorded it, e.g. "NP-2026-000003"
}

// PenaltyOutcome is the penalty for the next infraction of an infractor
// with a given history, under one penalty provision.
type PenaltyOutcome struct {
	PenaltyID string `json:"penalty_id"`
	Article   string `json:"article"`
	Type      string `json:"type"` // ladder | fixed | range | unmapped
	// Ordinal is which infraction this is under a ladder (1 = 1ª infração):
	// prior infractions counted under the same provision, plus one. For the
	// other types it is 1 + the number of prior infractions, informative.
	Ordinal int `json:"ordinal"`
	// Step is the ladder rung applied (nil for the other types). Past the
	// end of the ladder the last rung applies and BeyondLadder is set.
	Step         *Step `json:"step,omitempty"`
	BeyondLadder bool  `json:"beyond_ladder,omitempty"`
	// Reincidence is true when the provision doubles on reincidência and
	// the history holds an infraction "autuado e punido" under it.
	Reincidence     bool    `json:"reincidence,omitempty"`
	DoublingArticle string  `json:"doubling_article,omitempty"`
	Factor          float64 `json:"factor"` // 1, or the doubling factor
	// Percent (fixed, ladder fine) or PercentMin..PercentMax (range) of
	// Unit, after doubling. Nil when the provision states no percentage.
	Percent    *float64 `json:"percent,omitempty"`
	PercentMin *float64 `json:"percent_min,omitempty"`
	PercentMax *float64 `json:"percent_max,omitempty"`
	Unit       string   `json:"unit,omitempty"`      // unit id as the code states it (VRM, VR, SM_REGIONAL, CRS, BRL)
	UnitName   string   `json:"unit_name,omitempty"` // the code's words for it
	// AmountBRL is computed only when the unit's value is configured
	// (monetary_units[].value_brl) and the percentage is a single number.
	AmountBRL *float64 `json:"amount_brl,omitempty"`
	Amounts   []string `json:"amounts,omitempty"` // literal amounts of an unmapped provision
	// Appeal: when the provision sets a minimum fine for an appeal
	// (Lapa Art. 346 § 1º) and this fine is below it, AppealAllowed is false.
	AppealAllowed bool   `json:"appeal_allowed"`
	AppealNote    string `json:"appeal_note,omitempty"`
	Text          string `json:"text"` // pt-BR, for the notice and the auto
}

// PenaltyForHistory returns the penalty for the next infraction under the
// penalty provision penaltyID, given the infractor's prior infractions (any
// order; entries under other provisions are ignored).
//
// Counting (docs/codes-conventions.md "Infractions and penalties"): a ladder counts every prior infraction
// under the same provision, punished or not (Lapa counts per chapter, with
// no reset); doubling applies only when a prior infraction under the same
// provision was "autuado e punido"; a code without doubling never doubles.
// Amounts are computed only where the unit's value is configured.
func (c *Code) PenaltyForHistory(penaltyID string, history []PriorInfraction) (PenaltyOutcome, error) {
	p := c.PenaltyByID(penaltyID)
	if p == nil {
		return PenaltyOutcome{}, fmt.Errorf("codes: penalidade %q não existe em %s", penaltyID, c.Title())
	}
	prior, punished := 0, false
	for _, h := range history {
		if h.PenaltyID != penaltyID {
			continue
		}
		prior++
		punished = punished || h.Punished
	}
	o := PenaltyOutcome{PenaltyID: p.ID, Article: p.Article, Type: p.Type, Ordinal: prior + 1, Factor: 1,
		Unit: p.Unit, AppealAllowed: true, Amounts: p.Amounts}
	u := c.unit(p.Unit)
	if u != nil {
		o.UnitName = u.Name
	}
	if p.Doubling != nil && punished {
		o.Reincidence = true
		o.DoublingArticle = p.Doubling.Article
		o.Factor = p.Doubling.Factor
	}
	unit := unitName(u, p.Unit)
	var txt string
	switch p.Type {
	case "ladder":
		i := min(prior, len(p.Steps)-1)
		s := p.Steps[i]
		o.Step = &s
		o.BeyondLadder = prior >= len(p.Steps)
		txt = fmt.Sprintf("%dª infração: %s (%s)", o.Ordinal, s.Text, s.Item)
		if o.BeyondLadder {
			txt += fmt.Sprintf("; a escada do %s termina na %dª infração", p.Article, len(p.Steps))
		}
		if s.Percent != nil {
			v := *s.Percent * o.Factor
			o.Percent = &v
		}
	case "fixed":
		v := *p.Percent * o.Factor
		o.Percent = &v
		txt = fmt.Sprintf("multa de %s%% %s (%s)", fmtNum(*p.Percent), unit, p.Article)
		if o.Reincidence {
			txt += fmt.Sprintf(", em dobro por reincidência (%s): %s%%", p.Doubling.Article, fmtNum(v))
		}
	case "range":
		lo, hi := *p.PercentMin*o.Factor, *p.PercentMax*o.Factor
		o.PercentMin, o.PercentMax = &lo, &hi
		txt = fmt.Sprintf("multa de %s%% a %s%% %s (%s)", fmtNum(*p.PercentMin), fmtNum(*p.PercentMax), unit, p.Article)
		if o.Reincidence {
			txt += fmt.Sprintf(", em dobro por reincidência (%s): %s%% a %s%%", p.Doubling.Article, fmtNum(lo), fmtNum(hi))
		}
	default: // unmapped
		txt = fmt.Sprintf("multa (%s: %s; a faixa aplicável não está mapeada no código)", p.Article, strings.Join(p.Amounts, " / "))
		if o.Reincidence {
			txt += fmt.Sprintf(", em dobro por reincidência (%s)", p.Doubling.Article)
		}
	}
	if o.Percent != nil && u != nil && u.ValueBRL != nil {
		v := *o.Percent / 100 * *u.ValueBRL
		o.AmountBRL = &v
		txt += " = R$ " + strings.Replace(fmt.Sprintf("%.2f", v), ".", ",", 1)
	} else if o.Percent != nil || o.PercentMin != nil {
		txt += fmt.Sprintf(" (valor em R$ não calculado: o valor de %s não está configurado)", unit)
	}
	txt += p.accessoryText()
	if p.AppealMinPct != nil && o.Percent != nil && *o.Percent < *p.AppealMinPct {
		o.AppealAllowed = false
		o.AppealNote = fmt.Sprintf("não cabe recurso: multa de %s%% %s, inferior a %s%% (%s)",
			fmtNum(*o.Percent), unit, fmtNum(*p.AppealMinPct), p.AppealArticle)
	}
	o.Text = txt
	return o, nil
}

// NextOnNonCompliance returns the penalty that follows outcome o when the
// infractor does not regularise: the next rung of a ladder. ok is false for
// provisions that are not ladders (the same fine applies).
func (c *Code) NextOnNonCompliance(o PenaltyOutcome, history []PriorInfraction) (PenaltyOutcome, bool, error) {
	if o.Type != "ladder" {
		return PenaltyOutcome{}, false, nil
	}
	h := append(append([]PriorInfraction(nil), history...), PriorInfraction{PenaltyID: o.PenaltyID, Ordinal: o.Ordinal})
	n, err := c.PenaltyForHistory(o.PenaltyID, h)
	return n, err == nil, err
}
