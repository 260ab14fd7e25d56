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
