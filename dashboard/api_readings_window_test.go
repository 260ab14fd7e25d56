package dashboard

import (
	"testing"
	"time"
)

func TestReadingsWindow(t *testing.T) {
	now := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	badTime := "use RFC 3339, ex.: 2026-11-30T22:00:00-03:00"
	badStep := "step inválido: use uma duração em segundos inteiros ≥ 1s, ex.: 1s, 1m, 15m, 1h"
	for _, tc := range []struct {
		name             string
		from, to, step   string
		wantFrom, wantTo time.Time
		wantStep         time.Duration
		wantMsg          string
	}{
		{name: "defaults", wantFrom: now.Add(-time.Hour), wantTo: now, wantStep: time.Second},
		{name: "hour before to", to: "2026-11-30T10:00:00Z", wantFrom: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), wantTo: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), wantStep: time.Second},
		{name: "from given", from: "2026-11-30T20:00:00Z", wantFrom: now.Add(-2 * time.Hour), wantTo: now, wantStep: time.Second},
		{name: "step", step: "15m", wantFrom: now.Add(-time.Hour), wantTo: now, wantStep: 15 * time.Minute},
		{name: "bad to", to: "ontem", from: "also bad", wantMsg: "to inválido: " + badTime},
		{name: "bad from", from: "ontem", wantMsg: "from inválido: " + badTime},
		{name: "empty window", from: "2026-11-30T22:00:00Z", wantMsg: "from deve ser anterior a to"},
		{name: "reversed", from: "2026-11-30T23:00:00Z", wantMsg: "from deve ser anterior a to"},
		{name: "over a year", from: "2025-11-29T21:59:59Z", wantMsg: "janela maior que um ano; divida a consulta"},
		{name: "exactly 366 days", from: "2025-11-29T22:00:00Z", wantFrom: now.Add(-366 * 24 * time.Hour), wantTo: now, wantStep: time.Second},
		{name: "step unparsable", step: "x", wantMsg: badStep},
		{name: "step under 1s", step: "500ms", wantMsg: badStep},
		{name: "step fractional", step: "1500ms", wantMsg: badStep},
		{name: "range checked before step", from: "2026-11-30T23:00:00Z", step: "x", wantMsg: "from deve ser anterior a to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to, step, msg := readingsWindow(tc.from, tc.to, tc.step, now)
			if msg != tc.wantMsg {
				t.Fatalf("msg = %q, want %q", msg, tc.wantMsg)
			}
			if msg != "" {
				return
			}
			if !from.Equal(tc.wantFrom) || !to.Equal(tc.wantTo) || step != tc.wantStep {
				t.Errorf("got %v, %v, %v; want %v, %v, %v", from, to, step, tc.wantFrom, tc.wantTo, tc.wantStep)
			}
		})
	}
}
