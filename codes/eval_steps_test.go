package codes

import (
	"slices"
	"testing"
)

func TestClassifyAndDecide(t *testing.T) {
	level := &Rule{ID: "nivel", Kind: KindLevelLimit}
	general := &Rule{ID: "geral", Kind: KindQualitative}
	remit := &Rule{ID: "remissao", Kind: KindOutOfScope}
	conduct := &Rule{ID: "conduta", Kind: KindConduct}
	for _, tc := range []struct {
		name         string
		outs         []outcome
		overridden   []bool
		wantWarnings []string
		want         Tri
		wantIdx      []int
	}{
		{
			name:    "nothing applies",
			outs:    []outcome{{rule: level, skip: true}},
			want:    False,
			wantIdx: nil,
		},
		{
			name:         "violation wins over undetermined",
			outs:         []outcome{{rule: general, status: Undetermined}, {rule: level, status: True, warning: "a"}, {rule: conduct, status: True}},
			wantWarnings: []string{"a"},
			want:         True,
			wantIdx:      []int{1, 2},
		},
		{
			name:    "specific undetermined before a general clause",
			outs:    []outcome{{rule: remit, status: Undetermined}, {rule: general, status: Undetermined}, {rule: level, status: Undetermined}, {rule: conduct, status: Undetermined}},
			want:    Undetermined,
			wantIdx: []int{2, 3, 0, 1},
		},
		{
			name:         "compliance when every rule complies",
			outs:         []outcome{{rule: level, status: False, warning: "w1"}, {rule: conduct, status: False, warning: "w2"}},
			wantWarnings: []string{"w1", "w2"},
			want:         False,
			wantIdx:      []int{0, 1},
		},
		{
			name:       "overridden and skipped outcomes do not count",
			outs:       []outcome{{rule: level, status: True, warning: "gone"}, {rule: conduct, status: True, skip: true}, {rule: general, status: False}},
			overridden: []bool{true, false, false},
			want:       False,
			wantIdx:    []int{2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.overridden == nil {
				tc.overridden = make([]bool, len(tc.outs))
			}
			viol, und, ok, warnings := classify(tc.outs, tc.overridden)
			if !slices.Equal(warnings, tc.wantWarnings) {
				t.Errorf("warnings = %q, want %q", warnings, tc.wantWarnings)
			}
			got, idx := decide(tc.outs, viol, und, ok)
			if got != tc.want || !slices.Equal(idx, tc.wantIdx) {
				t.Errorf("decide = %v %v, want %v %v", got, idx, tc.want, tc.wantIdx)
			}
		})
	}
}
