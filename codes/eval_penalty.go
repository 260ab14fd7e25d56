package codes

import (
	"fmt"
	"slices"
	"strings"
)

// The penalty of a violated provision, worded for this infractor.

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
