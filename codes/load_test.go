package codes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func lapaYAML(t testing.TB) string {
	t.Helper()
	b, err := builtin.ReadFile("data/lapa.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseRejects(t *testing.T) {
	base := lapaYAML(t)
	for _, tc := range []struct {
		name     string
		edit     func(string) string
		wantLine bool
		want     string
	}{
		{"unknown top-level key", func(s string) string { return s + "\nlimite_extra: 3\n" }, true, "limite_extra"},
		{"unknown rule key", func(s string) string {
			return strings.Replace(s, "    limit_dba: 40\n", "    limit_dba: 40\n    limite: 40\n", 1)
		}, true, "limite"},
		{"rule without quote", func(s string) string {
			return strings.Replace(s, `    quote: "Será considerado atentatório à tranqüilidade pública qualquer ato, individual ou de grupo que perturbe o sossego da população."
    match:
      sources: [amplified_music, live_music, karaoke]`, `    quote: ""
    match:
      sources: [amplified_music, live_music, karaoke]`, 1)
		}, true, "quote"},
		{"bad time", func(s string) string {
			return strings.Replace(s, `window: {from: "10:00", to: "17:00"}`, `window: {from: "10h", to: "17:00"}`, 1)
		}, true, "HH:MM"},
		{"dangling penalty", func(s string) string { return strings.Replace(s, "penalty: lapa-299", "penalty: lapa-999", 1) }, true, "lapa-999"},
		{"unknown zone", func(s string) string {
			return strings.Replace(s, "zones: [hospital_surroundings, near_hospital]", "zones: [hospital]", 1)
		}, true, "hospital"},
		{"changing one limit alone is no contradiction", func(s string) string {
			return strings.Replace(s, "    limit_dba: 60\n", "    limit_dba: 61\n", 1)
		}, false, ""},
		{"overlapping limits for the same zone", func(s string) string {
			return strings.Replace(s, `    window: {from: "07:00", to: "22:00"}
    limit_dba: 65`, `    window: {from: "06:00", to: "22:00"}
    limit_dba: 65`, 1)
		}, true, "contradiz"},
		{"ladder out of order", func(s string) string {
			return strings.Replace(s, "{ordinal: 3, action: fine, percent: 50", "{ordinal: 5, action: fine, percent: 50", 1)
		}, true, "fora de ordem"},
		{"revoked without revoked_by", func(s string) string { return strings.Replace(s, "in_force: true", "in_force: false", 1) }, false, "revoked_by"},
		{"not yaml", func(string) string { return "id: [unterminated\n" }, true, ""},
		{"internal word in the version", func(s string) string {
			return strings.Replace(s, `version: "lei-1783-2004/v2"`, `version: "lei-1783-2004/seed-004"`, 1)
		}, false, "mostrado ao usuário"},
		{"version with spaces", func(s string) string {
			return strings.Replace(s, `version: "lei-1783-2004/v2"`, `version: "Lei 1783 de 2004"`, 1)
		}, false, "ex.: \"lei-1783-2004/v2\""},
		{"any_facts entry empty", func(s string) string {
			return strings.Replace(s, "        - {establishment_type: bar}\n", "        - {}\n", 1)
		}, true, "entrada vazia"},
		{"exempt_by not parallel to exempt_if", func(s string) string {
			return strings.Replace(s, "    exempt_by: [*art100, ", "    exempt_by: [", 1)
		}, true, "uma citação por exceção"},
		{"supersedes without why", func(s string) string {
			return strings.Replace(s, "    penalty: lapa-157\n", "    supersedes: [{article: \"Art. 1\", quote: \"x\"}]\n    penalty: lapa-157\n", 1)
		}, true, "supersedes precisa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("lapa.yaml", []byte(tc.edit(base)))
			if tc.want == "" && !tc.wantLine {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted a bad file")
			}
			msg := err.Error()
			if tc.want != "" && !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not mention %q", msg, tc.want)
			}
			if !strings.HasPrefix(msg, "lapa.yaml") {
				t.Errorf("error %q does not name the file", msg)
			}
			if tc.wantLine {
				var e *Error
				var es Errors
				line := 0
				switch {
				case errors.As(err, &es) && len(es) > 0:
					line = es[0].Line
				case errors.As(err, &e):
					line = e.Line
				}
				if line == 0 {
					t.Errorf("error %q carries no line number", msg)
				}
			}
		})
	}
}

func TestBuiltinCodesCiteEverything(t *testing.T) {
	s := builtinSet(t)
	if got := len(s.IDs()); got != 5 {
		t.Fatalf("%d builtin codes, want 5", got)
	}
	for _, id := range s.IDs() {
		c, _ := s.Code(id)
		seed, err := os.ReadFile(filepath.Join("seeds", c.Law.Seed))
		if err != nil {
			t.Fatalf("%s: the law's text must be in codes/seeds: %v", id, err)
		}
		text := normalize(string(seed))
		checked := 0
		defer func() {
			if checked < len(c.Rules) {
				t.Errorf("%s: only %d quote fragments checked for %d rules", id, checked, len(c.Rules))
			}
		}()
		quotes := []struct{ where, q string }{}
		for _, r := range c.Rules {
			quotes = append(quotes, struct{ where, q string }{"rule " + r.ID, r.Quote})
			for _, x := range r.Supersedes {
				quotes = append(quotes, struct{ where, q string }{"superseded by " + r.ID, x.Quote})
			}
			for _, x := range r.ExemptBy {
				if x.Quote != "" {
					quotes = append(quotes, struct{ where, q string }{"exemption of " + r.ID, x.Quote})
				}
			}
		}
		for _, p := range c.Penalties {
			quotes = append(quotes, struct{ where, q string }{"penalty " + p.ID, p.Quote})
			if p.Chapter != nil {
				quotes = append(quotes, struct{ where, q string }{"chapter of " + p.ID, p.Chapter.Quote})
			}
			if p.Doubling != nil {
				quotes = append(quotes, struct{ where, q string }{"doubling of " + p.ID, p.Doubling.Quote})
			}
		}
		for _, h := range c.Calendar.Holidays {
			quotes = append(quotes, struct{ where, q string }{"holiday " + h.Name, h.Quote})
		}
		for _, u := range c.Units {
			quotes = append(quotes, struct{ where, q string }{"unit " + u.ID, u.Quote})
		}
		for _, d := range []*Document{c.Procedure.Notice, c.Procedure.Auto} {
			if d != nil {
				quotes = append(quotes, struct{ where, q string }{"document " + d.Kind, d.Quote})
			}
		}
		for _, d := range c.Procedure.Deadlines {
			quotes = append(quotes, struct{ where, q string }{"deadline " + d.ID, d.Quote})
		}
		for _, n := range c.NotEncoded {
			quotes = append(quotes, struct{ where, q string }{"not_encoded " + n.Article, n.Quote})
		}
		quotes = append(quotes, struct{ where, q string }{"status", c.Status.Quote})
		for _, qt := range quotes {
			r := struct{ ID string }{qt.where}
			for _, frag := range strings.Split(qt.q, "[...]") {
				frag = strings.TrimSpace(frag)
				if len(frag) < 12 {
					continue
				}
				checked++
				if !strings.Contains(text, normalize(frag)) {
					t.Errorf("%s %s: quote not found verbatim in seed %s: %q", id, r.ID, c.Law.Seed, frag)
				}
			}
		}
	}
}

// normalize folds whitespace and line breaks so that a quote spanning lines
// of the seed matches.
func normalize(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func TestLoadDirOverridesAndAdds(t *testing.T) {
	dir := t.TempDir()
	custom := strings.Replace(lapaYAML(t), "id: lapa\n", "id: lapa-2030\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "lapa-2030.yaml"), []byte(custom), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Code("lapa-2030"); !ok {
		t.Error("code from directory not loaded")
	}
	if len(s.IDs()) != 6 {
		t.Errorf("ids = %v", s.IDs())
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("id: x\nbogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "bad.yaml:2") {
		t.Errorf("bad file in dir: err = %v, want bad.yaml:2", err)
	}
}

func TestEvalLineErrors(t *testing.T) {
	s := builtinSet(t)
	for _, tc := range []struct{ line, want string }{
		{`{"id":"x","code":"nowhere","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic"}`, "\"nowhere\" desconhecido"},
		{`{"id":"x","code":"lapa","at":"2026-03-10 22:00","zone":"other","source":"generic"}`, "RFC 3339"},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"moon","source":"generic"}`, "zone \"moon\""},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"ufo"}`, "source \"ufo\""},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic","laeq_dba":-3}`, "laeq_dba"},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic","prior_infractions":-1}`, "prior_infractions"},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic","facts":{"licensed":"yes"}}`, "facts.licensed"},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic","colour":"red"}`, "colour"},
		{`{"id":"x",`, "JSON incompleto"},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic","establishment_type":"bar"}`,
			`campo "establishment_type" desconhecido; os campos de uma linha são id, code, at`},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic","laeq_dba":"60"}`,
			`o campo "laeq_dba" deve ser um número, não texto`},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic","prior_infractions":1.5}`,
			`"prior_infractions" deve ser um número inteiro`},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic","assume_in_force":"sim"}`,
			`"assume_in_force" deve ser true ou false, não texto`},
		{`{"id":"x","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic","facts":[1]}`, "facts deve ser um objeto JSON"},
		{`{"id":"x", "code": lapa}`, "JSON malformado perto do caractere"},
		{`[1, 2]`, "a linha deve ser um objeto JSON"},
	} {
		r := s.EvalLine([]byte(tc.line))
		if !strings.Contains(r.Error, tc.want) {
			t.Errorf("%s: error %q, want mention of %q", tc.line, r.Error, tc.want)
		}
		for _, en := range []string{"json:", "unknown field", "cannot unmarshal", "invalid character", "unexpected end"} {
			if strings.Contains(r.Error, en) {
				t.Errorf("%s: error %q carries Go's English %q", tc.line, r.Error, en)
			}
		}
		if strings.HasPrefix(tc.line, `{"id":"x","code"`) && (r.ID == nil || *r.ID != "x") {
			t.Errorf("%s: id not echoed on error", tc.line)
		}
	}
	r := s.EvalLine([]byte(`{"id":"w","code":"lapa","at":"2026-03-10T22:00:00-03:00","zone":"other","source":"generic","facts":{"colour":"red"}}`))
	if r.Error != "" || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "colour") {
		t.Errorf("unknown fact should be a warning: %+v", r)
	}
}
