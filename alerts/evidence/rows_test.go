package evidence

import (
	"strings"
	"testing"
)

func TestCSVFields14(t *testing.T) {
	cases := []struct {
		line string
		ok   bool
	}{
		{strings.Repeat("a,", 13) + "z", true},
		{strings.Repeat(",", 13), true},
		{strings.Repeat("a,", 12) + "z", false},
		{strings.Repeat("a,", 14) + "z", false},
		{"", false},
	}
	for _, c := range cases {
		var off [15]int
		got := csvFields14([]byte(c.line), &off)
		if got != c.ok {
			t.Errorf("%q: %v, want %v", c.line, got, c.ok)
			continue
		}
		if !got {
			continue
		}
		want := strings.Split(c.line, ",")
		for i := range 14 {
			if f := c.line[off[i] : off[i+1]-1]; f != want[i] {
				t.Errorf("%q: field %d is %q, want %q", c.line, i, f, want[i])
			}
		}
	}
}

// TestNextRec: the hint is taken only when it is the first record at t,
// as the search would find it.
func TestNextRec(t *testing.T) {
	recs := []recLine{{t: []byte("01")}, {t: []byte("02")}, {t: []byte("02")}, {t: []byte("04")}}
	cases := []struct {
		t    string
		hint int
		want int
	}{
		{"01", 0, 0},
		{"02", 1, 1},
		{"02", 2, 1}, // the second of two equal: the first, as the search finds
		{"04", 3, 3},
		{"04", 0, 3}, // a wrong hint: searched
		{"03", 2, 3}, // absent: where it would be
		{"05", 4, 4}, // past the end
	}
	for _, c := range cases {
		if got := nextRec(recs, []byte(c.t), c.hint); got != c.want {
			t.Errorf("nextRec(%s, hint %d) = %d, want %d", c.t, c.hint, got, c.want)
		}
	}
}
