package codes

import (
	"fmt"
	"strings"
)

// CoverageMarkdown lists, for each code, every encoded rule (file and rule
// id) and every noise provision deliberately left out, with the reason. It
// is the generated part of codes/README.md.
func CoverageMarkdown(s *Set) string {
	var b strings.Builder
	for _, id := range s.IDs() {
		c, _ := s.Code(id)
		status := "em vigor"
		if !c.Status.InForce {
			status = "revogada (" + c.Status.RevokedBy + "): vereditos undetermined salvo assume_in_force"
		}
		fmt.Fprintf(&b, "### %s — `data/%s.yaml`\n\n%s; versão `%s`; texto `seeds/%s`.\n\n", c.Title(), c.ID, status, c.Version, c.Law.Seed)
		b.WriteString("| article | encoded as | kind | what |\n|---|---|---|---|\n")
		for _, r := range c.Rules {
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", r.Article, r.ID, r.Kind, strings.ReplaceAll(r.Label, "|", "/"))
		}
		if len(c.NotEncoded) > 0 {
			b.WriteString("\nNot machine-evaluable (deliberately):\n\n| article | reason |\n|---|---|\n")
			for _, n := range c.NotEncoded {
				fmt.Fprintf(&b, "| %s | %s |\n", n.Article, strings.ReplaceAll(n.Reason, "|", "/"))
			}
		}
		if len(c.Assumptions) > 0 {
			b.WriteString("\nReadings applied to the whole code:\n\n")
			for _, a := range c.Assumptions {
				fmt.Fprintf(&b, "- %s\n", a)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
