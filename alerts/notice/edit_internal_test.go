package notice

import (
	"strings"
	"testing"
)

func TestCheckLength(t *testing.T) {
	for _, tc := range []struct {
		v       string
		max     int
		wantErr string
	}{
		{"", 3, ""},
		{"abc", 3, ""},
		{"ção", 3, ""}, // characters, not bytes
		{"abcd", 3, "party.name: no máximo 3 caracteres"},
		{strings.Repeat("á", MaxLine+1), MaxLine, "party.name: no máximo 300 caracteres"},
	} {
		err := checkLength("party.name", tc.v, tc.max)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.wantErr {
			t.Errorf("checkLength(%q, %d) = %q, want %q", tc.v, tc.max, got, tc.wantErr)
		}
	}
}
