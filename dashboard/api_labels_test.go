package dashboard

import (
	"strings"
	"testing"
)

func TestAPILabels(t *testing.T) {
	api, _, _ := newTestAPI(t)
	code, body := get(t, api, "/api/v1/labels")
	if code != 200 {
		t.Fatalf("labels: %d %v", code, body)
	}
	for _, tc := range []struct{ kind, value, want string }{
		{"zone", "near_school", "perto de escola"},
		{"zone", "other", "outras áreas"},
		{"zone", "unclassified", "zona não classificada"},
		{"source", "crowd_shouting", "algazarra"},
		{"day", "mon", "segunda-feira"},
		{"day", "holiday_eve", "vésperas de feriado"},
		{"establishment", "nightclub", "boate ou danceteria"},
		{"poi", "funeral_chapel", "capela mortuária"},
		{"verdict", "undetermined", "indeterminado"},
	} {
		m, _ := body[tc.kind].(map[string]any)
		if got, _ := m[tc.value].(string); got != tc.want {
			t.Errorf("%s %s = %q, want %q", tc.kind, tc.value, got, tc.want)
		}
	}
	// No label is an identifier: no underscores, nothing left in English.
	for kind, vals := range body {
		for v, l := range vals.(map[string]any) {
			if s := l.(string); s == "" || strings.Contains(s, "_") {
				t.Errorf("%s %s has label %q", kind, v, s)
			}
		}
	}
}
