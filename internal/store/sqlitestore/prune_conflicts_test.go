package sqlitestore

import (
	"context"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/store"
)

// TestPruneRecordConflicts: retention deletes record conflicts received
// before its cutoff, except those in a protected span (an alert's window),
// which it keeps for good and does not read again.
func TestPruneRecordConflicts(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	first := batch("gw", 1, t0, 60, 61, 62, 63)
	second := withSeq(batch("gw", 2, t0, 70, 71, 72, 73), 2, `{"seq":2}`)
	for _, b := range []store.Batch{first, second} {
		if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{b}}); err != nil {
			t.Fatal(err)
		}
	}
	protected := t0.Add(2 * time.Second)
	keep := func(sensor string, from, to time.Time) bool {
		return sensor == "gw-s" && to.After(protected) && from.Before(protected.Add(time.Second))
	}
	// Too early: nothing is old enough.
	r, err := s.PruneOldest(ctx, store.Prune{Before: t0, Keep: keep, Limit: 2})
	if err != nil || r.Conflicts != 0 {
		t.Fatalf("before the cutoff: %d deleted (%v)", r.Conflicts, err)
	}
	p := store.Prune{Before: t0.Add(24 * time.Hour), Keep: keep, Limit: 2}
	deleted := int64(0)
	for range 10 {
		r, err := s.PruneOldest(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		deleted += r.Conflicts
		if r.Done {
			break
		}
		p.After, p.AfterDeadLetter, p.AfterConflict = r.Next, r.NextDeadLetter, r.NextConflict
	}
	left, err := s.RecordConflicts(ctx, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if deleted != 3 || len(left) != 1 || !left[0].T.Equal(protected) {
		t.Errorf("deleted %d, left %+v; want 3 deleted and the protected second kept", deleted, left)
	}
}
