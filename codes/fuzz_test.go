package codes

import (
	"encoding/json"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, name := range []string{"lapa", "conceicao-de-macabu", "entre-rios-de-minas", "campos-altos", "campina-grande-do-sul"} {
		b, err := builtin.ReadFile("data/" + name + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("id: x\n"))
	f.Add([]byte("rules: [{id: a, kind: level_limit, window: {from: '25:00', to: '07:00'}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		// An accepted code must be usable by both engines without panicking.
		c.ActiveLimit("other", "bar", c.Law.dateTime())
		s := &Set{byID: map[string]*Code{c.ID: c}}
		line, _ := json.Marshal(map[string]any{"code": c.ID, "at": "2026-03-10T23:00:00-03:00", "zone": "other", "source": "amplified_music", "laeq_dba": 70})
		_ = s.EvalLine(line)
	})
}

func FuzzEvalLine(f *testing.F) {
	s, err := Builtin()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"id":"a","code":"lapa","at":"2026-03-10T21:59:00-03:00","zone":"other","source":"amplified_music","laeq_dba":65.0,"facts":{"establishment_type":"bar"}}`))
	f.Add([]byte(`{"code":"conceicao-de-macabu","at":"2026-03-10T22:01:00-03:00","zone":"other","source":"siren","duration_s":31}`))
	f.Add([]byte(`{"code":"campina-grande-do-sul","at":"2026-03-14T00:10:00-03:00","zone":"other","source":"generic","assume_in_force":true,"facts":{"establishment_type":"bar","operating":true}}`))
	f.Add([]byte(`{"id":`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r := s.EvalLine(line)
		if r.Error == "" {
			switch v := r.Violation.(type) {
			case bool:
			case string:
				if v != "undetermined" {
					t.Fatalf("violation %q", v)
				}
			default:
				t.Fatalf("violation of type %T", r.Violation)
			}
			if r.Reason == "" {
				t.Fatal("verdict without reason")
			}
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	})
}
