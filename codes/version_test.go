package codes

import "testing"

func TestVersionLabel(t *testing.T) {
	for in, want := range map[string]string{
		"lei-1783-2004/seed-004": "lei-1783-2004/v1",
		"lei-566-2002/seed-001":  "lei-566-2002/v1",
		"lei-566-2002/v2":        "lei-566-2002/v2",
		"lei-9-2020":             "lei-9-2020",
		"":                       "",
	} {
		if got := VersionLabel(in); got != want {
			t.Errorf("VersionLabel(%q) = %q, want %q", in, got, want)
		}
	}
	s := builtinSet(t)
	for _, id := range s.IDs() {
		c, _ := s.Code(id)
		if msg := checkVersion(c.Version); msg != "" || VersionLabel(c.Version) != c.Version {
			t.Errorf("%s: version %q: %s", id, c.Version, msg)
		}
	}
}
