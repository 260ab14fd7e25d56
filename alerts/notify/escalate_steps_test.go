package notify

import (
	"testing"
	"time"
)

func TestNextStep(t *testing.T) {
	all := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	m := Municipality{ID: "lapa", Coordinator: "coord", Weekly: []Shift{
		{Days: all, From: "07:00", To: "19:00", User: "fiscal-a"},
		{Days: all, From: "19:00", To: "07:00", User: "fiscal-b"},
	}}
	noCoord := m
	noCoord.Coordinator = ""
	nobody := Municipality{ID: "lapa", Coordinator: "coord"}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, saoPaulo) // fiscal-a on duty
	for _, tc := range []struct {
		name     string
		m        Municipality
		p        Page
		wantStep int
		wantTo   string
		wantWhy  string
	}{
		{"next on duty", m, Page{Step: 0, Called: []string{"fiscal-a"}}, 1, "fiscal-b", "próximo da escala"},
		{"first on duty not yet called", m, Page{Step: 0, Called: []string{"x"}}, 1, "fiscal-a", "próximo da escala"},
		{"nobody else on duty: coordinator", m, Page{Step: 0, Called: []string{"fiscal-a", "fiscal-b"}}, 2, "coord", "coordenação"},
		{"no schedule: coordinator", nobody, Page{Step: 0, Called: []string{"fiscal-a"}}, 2, "coord", "coordenação"},
		{"after the next on duty: coordinator", m, Page{Step: 1, Called: []string{"fiscal-a", "fiscal-b"}}, 2, "coord", "coordenação"},
		{"coordinator already called", m, Page{Step: 1, Called: []string{"fiscal-a", "coord"}}, 2, "", ""},
		{"no coordinator", noCoord, Page{Step: 0, Called: []string{"fiscal-a", "fiscal-b"}}, 2, "", ""},
		{"past the coordinator", m, Page{Step: 2, Called: []string{"fiscal-a", "fiscal-b", "coord"}}, 3, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step, to, why := nextStep(tc.m, saoPaulo, now, tc.p)
			if step != tc.wantStep || to != tc.wantTo || why != tc.wantWhy {
				t.Errorf("nextStep = %d, %q, %q; want %d, %q, %q", step, to, why, tc.wantStep, tc.wantTo, tc.wantWhy)
			}
		})
	}
}

func TestSplitDue(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	pages := []Page{
		{Notification: "a", Deadline: now.Add(-time.Minute)},
		{Notification: "b", Deadline: now.Add(time.Minute)},
		{Notification: "c", Deadline: now},
		{Notification: "d", Deadline: now.Add(time.Second)},
	}
	due, keep := splitDue(pages, now)
	ids := func(ps []Page) (s string) {
		for _, p := range ps {
			s += p.Notification
		}
		return s
	}
	if ids(due) != "ac" || ids(keep) != "bd" {
		t.Errorf("due %q, keep %q; want ac, bd", ids(due), ids(keep))
	}
	if due, keep := splitDue(nil, now); due != nil || keep != nil {
		t.Errorf("no pages: due %v, keep %v", due, keep)
	}
}
