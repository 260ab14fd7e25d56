package codes

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Schedule renders the code as a pt-BR table: zone × period → limit, hour
// rules, the penalty ladders and the procedure. It is what
// `sossego codes show` prints and the dashboard's codes page mirrors.
func Schedule(c *Code) string {
	var b strings.Builder
	st := "em vigor"
	if !c.Status.InForce {
		st = "REVOGADA por " + c.Status.RevokedBy + " — avaliada só com assume_in_force"
	}
	fmt.Fprintf(&b, "%s — %s\nversão %s — %s\n\n", c.Title(), c.Law.Title, c.Version, st)

	b.WriteString("Limites de nível (LAeq; infração só acima do limite)\n")
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  zonas\tperíodo\tlimite\tartigo\tregra")
	n := 0
	for _, r := range c.Rules {
		if r.Kind != KindLevelLimit {
			continue
		}
		n++
		win := "24 h"
		if r.Window != nil {
			win = r.Window.From + "–" + r.Window.To
		}
		fmt.Fprintf(tw, "  %s\t%s %s\t%s dB\t%s\t%s\n", strings.Join(r.Match.Zones, ", "), r.Period, win, fmtNum(*r.LimitDBA), r.Article, r.ID)
	}
	tw.Flush()
	if n == 0 {
		b.WriteString("  (o código não fixa nenhum limite numérico)\n")
	}

	b.WriteString("\nHorários, proibições e demais regras\n")
	for _, r := range c.Rules {
		if r.Kind == KindLevelLimit {
			continue
		}
		fmt.Fprintf(&b, "  - %s (%s) [%s]: %s\n", r.Label, r.Article, r.ID, describeRule(&r))
	}

	b.WriteString("\nPenalidades\n")
	for _, p := range c.Penalties {
		fmt.Fprintf(&b, "  %s (%s):", p.ID, p.Article)
		switch p.Type {
		case "ladder":
			b.WriteString("\n")
			for _, s := range p.Steps {
				fmt.Fprintf(&b, "    %dª infração: %s\n", s.Ordinal, s.Text)
			}
		case "fixed":
			fmt.Fprintf(&b, " multa de %s%% %s\n", fmtNum(*p.Percent), p.Unit)
		case "range":
			fmt.Fprintf(&b, " multa de %s%% a %s%% %s\n", fmtNum(*p.PercentMin), fmtNum(*p.PercentMax), p.Unit)
		default:
			fmt.Fprintf(&b, " %s\n", strings.Join(p.Amounts, " / "))
		}
		if p.Doubling != nil {
			fmt.Fprintf(&b, "    reincidência (%s): multa em dobro se já %s\n", p.Doubling.Article, p.Doubling.Requires)
		}
	}

	b.WriteString("\nProcedimento\n")
	if n := c.Procedure.Notice; n != nil {
		fmt.Fprintf(&b, "  %s (%s)", n.Title, n.Article)
		if n.PrazoDaysMax > 0 {
			fmt.Fprintf(&b, ", prazo de até %d dias fixado pelo fiscal", n.PrazoDaysMax)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("  sem notificação preliminar: lavra-se diretamente o auto de infração\n")
	}
	if a := c.Procedure.Auto; a != nil {
		fmt.Fprintf(&b, "  %s (%s)\n", a.Title, a.Article)
	}
	for _, d := range c.Procedure.Deadlines {
		kind := "dias"
		if d.Business {
			kind = "dias úteis"
		}
		fmt.Fprintf(&b, "  prazo de %s: %d %s (%s)\n", d.ID, d.Days, kind, d.Article)
	}
	if len(c.Calendar.Holidays) > 0 {
		b.WriteString("\nFeriados municipais\n")
		for _, h := range c.Calendar.Holidays {
			fmt.Fprintf(&b, "  %s %s (%s)\n", h.MonthDay, h.Name, h.Article)
		}
	}
	return b.String()
}

func describeRule(r *Rule) string {
	var parts []string
	if len(r.Match.Sources) > 0 {
		parts = append(parts, "fontes "+strings.Join(r.Match.Sources, ", "))
	}
	if len(r.Match.Establishments) > 0 {
		parts = append(parts, "estabelecimentos "+strings.Join(r.Match.Establishments, ", "))
	}
	switch r.Kind {
	case KindProhibitedHours:
		parts = append(parts, fmt.Sprintf("proibido %s–%s%s", r.Window.From, r.Window.To, days(r.Window.Days)))
	case KindPermittedHours:
		parts = append(parts, fmt.Sprintf("permitido só %s–%s%s", r.Window.From, r.Window.To, days(r.Window.Days)))
	case KindDuration:
		s := fmt.Sprintf("proibido por mais de %s s", fmtNum(*r.MaxDurationS))
		if r.Window != nil {
			s += fmt.Sprintf(" entre %s e %s", r.Window.From, r.Window.To)
		}
		parts = append(parts, s)
	case KindSchedule:
		for _, e := range r.Schedule {
			s := strings.Join(e.Days, "/") + ":"
			if e.Closed {
				parts = append(parts, s+" fechado")
				continue
			}
			if e.Open != "" {
				s += " abre " + e.Open
			}
			s += " encerra " + e.Close
			if e.CloseNextDay {
				s += " do dia seguinte"
			}
			parts = append(parts, s)
		}
	case KindLicence:
		parts = append(parts, "exige licença prévia")
	case KindLocationBan:
		s := "proibido em " + strings.Join(r.Match.Zones, ", ")
		if r.RadiusM != nil {
			s += fmt.Sprintf(" ou a menos de %s m", fmtNum(*r.RadiusM))
		}
		parts = append(parts, s)
	case KindMinInterval:
		parts = append(parts, fmt.Sprintf("intervalo mínimo de %s s", fmtNum(*r.MinIntervalS)))
	case KindQualitative, KindOutOfScope:
		parts = append(parts, "sem critério objetivo → undetermined: "+r.Why)
	case KindRequiredSignal:
		parts = append(parts, "sinal exigido por lei (nunca infração)")
	}
	return strings.Join(parts, "; ")
}

func days(d []string) string {
	if len(d) == 0 {
		return ""
	}
	return " (" + strings.Join(d, ", ") + ")"
}
