package main

import (
	"context"
	"testing"
	"time"

	"path/filepath"

	"github.com/sossego/sossego/internal/longterm"
	"github.com/sossego/sossego/internal/stats"
)

// TestBackfillDemo: a week of every demo sensor's simulated minutes lands
// in the tier, the bar's nights louder than its afternoons; a second call
// (--keep) adds nothing.
func TestBackfillDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	end := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	t0 := time.Now()
	if err := backfillDemo(context.Background(), dir, end); err != nil {
		t.Fatal(err)
	}
	t.Logf("backfill of %d sensors × %d days: %v", len(demoGateways), demoHistoryDays, time.Since(t0))
	if err := backfillDemo(context.Background(), dir, end); err != nil {
		t.Fatal(err)
	}
	tier, err := longterm.Open(filepath.Join(dir, longterm.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer tier.Close()
	for _, d := range demoGateways {
		e := stats.New(stats.Options{From: end.Add(-7 * 24 * time.Hour), To: end})
		if err := tier.Fold(context.Background(), d.Sensor, e, end.Add(-7*24*time.Hour), end); err != nil {
			t.Fatal(err)
		}
		r := e.Result()
		if r.Coverage != 1 || r.LAeq == nil || r.L90 == nil || r.PercentileBasis != "laf" || len(r.Days) < 7 {
			t.Errorf("%s: coverage %v LAeq %v basis %q days %d", d.Sensor, r.Coverage, r.LAeq, r.PercentileBasis, len(r.Days))
		}
	}
}
