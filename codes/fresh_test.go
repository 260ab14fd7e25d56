package codes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// freshExpect is the verdict a careful reading of the seed text gives for
// one situation of testdata/fresh.jsonl, written from the law before the
// engine was run on it.
type freshExpect struct {
	Violation  any      `json:"violation"` // true, false or "undetermined"
	Article    string   `json:"article"`   // main article; "" = not checked
	PenaltyHas []string `json:"penalty_has"`
	PenaltyNot []string `json:"penalty_lacks"`
	WarningHas string   `json:"warning_has"`
	Reading    string   `json:"reading"`
}

// TestFreshSituations evaluates the situations of testdata/fresh.jsonl and
// requires every verdict, main article and penalty wording to match the
// expected reading. It logs the agreement figures.
func TestFreshSituations(t *testing.T) {
	f, err := os.Open("testdata/fresh.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := builtinSet(t)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	total, verdicts, articles := 0, 0, 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(line, &raw); err != nil {
			t.Fatalf("testdata/fresh.jsonl: %v", err)
		}
		var exp freshExpect
		if err := json.Unmarshal(raw["expect"], &exp); err != nil {
			t.Fatalf("testdata/fresh.jsonl: expect: %v", err)
		}
		delete(raw, "expect")
		req, _ := json.Marshal(raw)
		var id string
		_ = json.Unmarshal(raw["id"], &id)
		total++
		r := s.EvalLine(req)
		if r.Error != "" {
			t.Errorf("%s: error %s", id, r.Error)
			continue
		}
		ok := true
		if r.Violation == exp.Violation {
			verdicts++
		} else {
			ok = false
			t.Errorf("%s: violation %v, want %v (%s)\n\treason: %s", id, r.Violation, exp.Violation, exp.Reading, r.Reason)
		}
		if exp.Article != "" {
			got := ""
			if r.Article != nil {
				got = *r.Article
			}
			if got == exp.Article {
				articles++
			} else {
				ok = false
				t.Errorf("%s: article %q, want %q (%s)", id, got, exp.Article, exp.Reading)
			}
		} else {
			articles++
		}
		pen := ""
		if r.PenaltyStep != nil {
			pen = *r.PenaltyStep
		}
		for _, w := range exp.PenaltyHas {
			if !strings.Contains(pen, w) {
				ok = false
				t.Errorf("%s: penalty %q lacks %q", id, pen, w)
			}
		}
		for _, w := range exp.PenaltyNot {
			if strings.Contains(pen, w) {
				ok = false
				t.Errorf("%s: penalty %q must not contain %q", id, pen, w)
			}
		}
		if exp.WarningHas != "" && !strings.Contains(strings.Join(r.Warnings, " | "), exp.WarningHas) {
			ok = false
			t.Errorf("%s: warnings %q lack %q", id, r.Warnings, exp.WarningHas)
		}
		_ = ok
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if total < 60 {
		t.Fatalf("only %d fresh situations; keep at least 60", total)
	}
	t.Logf("fresh situations: %d; verdicts agree %d (%.1f%%); main articles agree %d (%.1f%%)",
		total, verdicts, 100*float64(verdicts)/float64(total), articles, 100*float64(articles)/float64(total))
}
