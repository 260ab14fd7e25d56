package codes

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateREADME = flag.Bool("update", false, "rewrite the generated part of codes/README.md")

const (
	beginMark = "<!-- BEGIN GENERATED COVERAGE (go test ./codes -run TestREADME -update) -->"
	endMark   = "<!-- END GENERATED COVERAGE -->"
)

// TestREADMECoverage keeps codes/README.md's provision table in step with
// the YAML files: nothing encoded or left out goes unlisted.
func TestREADMECoverage(t *testing.T) {
	doc, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, beginMark), strings.Index(s, endMark)
	if i < 0 || j < i {
		t.Fatal("README.md lacks the generated-coverage markers")
	}
	want := s[:i+len(beginMark)] + "\n" + CoverageMarkdown(builtinSet(t)) + s[j:]
	if *updateREADME {
		if err := os.WriteFile("README.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != s {
		t.Error("codes/README.md is out of date: run go test ./codes -run TestREADME -update")
	}
}

// TestCoverageNamesEveryNoiseProvision: each noise provision of the five
// codes, as a reader of the laws lists them, is in the code's file either as
// a rule or as a provision deliberately left out, and so in the README's
// coverage list.
func TestCoverageNamesEveryNoiseProvision(t *testing.T) {
	s := builtinSet(t)
	for id, arts := range map[string][]string{
		"entre-rios-de-minas": {"Art. 35, parágrafo único", "Art. 36", "Art. 36, I", "Art. 36, II", "Art. 36, III", "Art. 36, IV", "Art. 36, V",
			"Art. 36, VI", "Art. 39", "Art. 43", "Art. 63, § 2º", "Art. 71, I", "Art. 82, II", "Art. 82, IV"},
		"conceicao-de-macabu": {"Art. 54, parágrafo único", "Art. 55", "Art. 55, II", "Art. 55, VI", "Art. 56", "Art. 57", "Art. 58", "Art. 61",
			"Art. 66", "Art. 73", "Art. 109, I", "Art. 124", "Art. 146, § 1º", "Art. 146, caput e § 3º"},
		"campos-altos": {"Art. 73, parágrafo único", "Art. 74, I", "Art. 74, I, a", "Art. 74, I, b", "Art. 74, I, c", "Art. 74, I, d",
			"Art. 74, I, e", "Art. 74, I, f", "Art. 74, II", "Art. 82", "Art. 160", "Art. 161", "Art. 162, II", "Art. 164, I",
			"Art. 199, I", "Art. 199, II", "Art. 202, VIII"},
		"campina-grande-do-sul": {"Art. 87, § 1º", "Art. 87, § 2º", "Art. 88", "Art. 88, I", "Art. 88, II", "Art. 88, III",
			"Art. 88, IV", "Art. 88, V", "Art. 88, VI", "Art. 88, VII", "Art. 89", "Art. 90", "Art. 91", "Art. 94", "Art. 100",
			"Art. 105", "Art. 106", "Art. 155, I", "Art. 171", "Art. 172, II", "Art. 208", "Art. 210, IV, a", "Art. 210, II e IV"},
		"lapa": {"Art. 95", "Art. 96", "Art. 97", "Art. 98", "Art. 99", "Art. 101", "Art. 109", "Art. 117", "Art. 125", "Art. 133",
			"Art. 134", "Art. 153", "Art. 294, I", "Art. 295, XIII", "Art. 295, XIV", "Art. 295, XV", "Art. 296"},
	} {
		c, ok := s.Code(id)
		if !ok {
			t.Fatalf("no code %s", id)
		}
		listed := map[string]bool{}
		for _, r := range c.Rules {
			listed[r.Article] = true
		}
		for _, n := range c.NotEncoded {
			if strings.TrimSpace(n.Reason) == "" {
				t.Errorf("%s: %s left out without a reason", id, n.Article)
			}
			listed[n.Article] = true
		}
		for _, a := range arts {
			if !listed[a] {
				t.Errorf("%s: %s is neither encoded nor listed as left out", id, a)
			}
		}
	}
}
