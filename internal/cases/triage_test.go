package cases_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/cases"
)

func TestCheckAssignee(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{"  fiscal.ana ", "fiscal.ana", false},
		{"", "", true},
		{"   ", "", true},
		{strings.Repeat("a", cases.MaxAssigneeLen), strings.Repeat("a", cases.MaxAssigneeLen), false},
		{strings.Repeat("a", cases.MaxAssigneeLen+1), "", true},
	} {
		got, err := cases.CheckAssignee(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("CheckAssignee(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.bad)
		}
		if err != nil && !errors.Is(err, notice.ErrInput) {
			t.Errorf("CheckAssignee(%q): %v does not wrap notice.ErrInput", tc.in, err)
		}
	}
}

func TestTriageTransitions(t *testing.T) {
	ana := notice.Actor{ID: "u-ana", Name: "Ana"}
	bia := notice.Actor{ID: "u-bia", Name: "Bia"}
	t1, t2 := time.Date(2026, 3, 9, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 11, 0, 0, 0, time.UTC)
	fresh := cases.Triage{AlertID: "s1/a"}

	acked, changed := fresh.WithAck(ana, t1)
	if !changed || !acked.Acked() || acked.AckedBy != "u-ana" || acked.AckedName != "Ana" || !acked.AckedAt.Equal(t1) || !acked.UpdatedAt.Equal(t1) {
		t.Fatalf("first ack: %+v changed=%v", acked, changed)
	}
	if again, changed := acked.WithAck(bia, t2); changed || again != acked {
		t.Errorf("second ack changed the first: %+v changed=%v", again, changed)
	}

	for _, tc := range []struct {
		name    string
		from    cases.Triage
		who     string
		changed bool
	}{
		{"first assignee", acked, "u-ana", true},
		{"same assignee", cases.Triage{AlertID: "s1/a", Assignee: "u-ana", AssignedBy: "u-bia", AssignedAt: t1, UpdatedAt: t1}, "u-ana", false},
		{"another assignee", cases.Triage{AlertID: "s1/a", Assignee: "u-ana", AssignedBy: "u-bia", AssignedAt: t1, UpdatedAt: t1}, "u-carla", true},
	} {
		got, changed := tc.from.WithAssignee(tc.who, bia, t2)
		if changed != tc.changed {
			t.Errorf("%s: changed=%v, want %v", tc.name, changed, tc.changed)
		}
		if !changed {
			if got != tc.from {
				t.Errorf("%s: unchanged triage became %+v", tc.name, got)
			}
			continue
		}
		if got.Assignee != tc.who || got.AssignedBy != "u-bia" || !got.AssignedAt.Equal(t2) || !got.UpdatedAt.Equal(t2) || got.AckedBy != tc.from.AckedBy {
			t.Errorf("%s: %+v", tc.name, got)
		}
	}
}
