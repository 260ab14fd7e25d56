package sqlitestore

import (
	"slices"
	"testing"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// step is one operation on a seqWindow: settle seq, or skip to upto.
type step struct {
	settle uint64
	skip   uint64
}

func TestSeqWindow(t *testing.T) {
	for _, tc := range []struct {
		name         string
		mark         uint64
		above        []uint64
		steps        []step
		wantMark     uint64
		wantAbove    []uint64 // sorted
		wantMoved    bool
		wantSkips    []store.SeqRange
		wantSkipped  uint64 // summed over the skips that applied
		wantRemoved  []uint64
		wantAdded    []uint64
		wantLowest   uint64
		wantHasLower bool
	}{
		{name: "nothing", mark: 5, wantMark: 5},
		{name: "next seq moves", mark: 5, steps: []step{{settle: 6}}, wantMark: 6, wantMoved: true},
		{name: "first seq of a new gateway", steps: []step{{settle: 1}}, wantMark: 1, wantMoved: true},
		{name: "contiguous run", steps: []step{{settle: 1}, {settle: 2}, {settle: 3}}, wantMark: 3, wantMoved: true},
		{name: "at or below the watermark changes nothing", mark: 5,
			steps: []step{{settle: 5}, {settle: 3}, {settle: 0}}, wantMark: 5},
		{name: "above a gap waits", mark: 5, steps: []step{{settle: 8}, {settle: 7}},
			wantMark: 5, wantAbove: []uint64{7, 8}, wantAdded: []uint64{7, 8}, wantLowest: 7, wantHasLower: true},
		{name: "gap closes over the waiting seqs", mark: 5, steps: []step{{settle: 8}, {settle: 7}, {settle: 6}},
			wantMark: 8, wantMoved: true},
		{name: "gap closes partly", mark: 5, steps: []step{{settle: 7}, {settle: 10}, {settle: 6}},
			wantMark: 7, wantMoved: true, wantAbove: []uint64{10}, wantAdded: []uint64{10}, wantLowest: 10, wantHasLower: true},
		{name: "loaded seqs above a gap, gap closes", mark: 5, above: []uint64{7, 8, 11},
			steps: []step{{settle: 6}}, wantMark: 8, wantMoved: true, wantAbove: []uint64{11},
			wantRemoved: []uint64{7, 8}, wantLowest: 11, wantHasLower: true},
		{name: "settling a waiting seq again changes nothing", mark: 5, above: []uint64{7},
			steps: []step{{settle: 7}}, wantMark: 5, wantAbove: []uint64{7}, wantLowest: 7, wantHasLower: true},
		{name: "skip over a gap with nothing above", mark: 5, steps: []step{{skip: 9}},
			wantMark: 9, wantMoved: true, wantSkips: []store.SeqRange{{First: 6, Last: 9}}, wantSkipped: 4},
		{name: "skip from nothing", steps: []step{{skip: 3}},
			wantMark: 3, wantMoved: true, wantSkips: []store.SeqRange{{First: 1, Last: 3}}, wantSkipped: 3},
		{name: "skip counts only the seqs not settled", mark: 5, above: []uint64{7, 9},
			steps: []step{{skip: 9}}, wantMark: 9, wantMoved: true, wantSkips: []store.SeqRange{{First: 6, Last: 9}},
			wantSkipped: 2, wantRemoved: []uint64{7, 9}},
		{name: "skip then moves over the settled seqs contiguous with it", mark: 5, above: []uint64{7, 10, 11, 13},
			steps: []step{{skip: 9}}, wantMark: 11, wantMoved: true, wantSkips: []store.SeqRange{{First: 6, Last: 9}},
			wantSkipped: 3, wantAbove: []uint64{13}, wantRemoved: []uint64{7, 10, 11}, wantLowest: 13, wantHasLower: true},
		{name: "skip not above the watermark is ignored", mark: 5, above: []uint64{8},
			steps: []step{{skip: 5}, {skip: 2}}, wantMark: 5, wantAbove: []uint64{8}, wantLowest: 8, wantHasLower: true},
		{name: "skip past the highest seq is ignored", mark: 5, steps: []step{{skip: wire.MaxSeq + 1}}, wantMark: 5},
		{name: "skip to the highest seq", mark: wire.MaxSeq - 2, steps: []step{{skip: wire.MaxSeq}},
			wantMark: wire.MaxSeq, wantMoved: true, wantSkips: []store.SeqRange{{First: wire.MaxSeq - 1, Last: wire.MaxSeq}}, wantSkipped: 2},
		{name: "skip then the next seq", mark: 5, steps: []step{{skip: 9}, {settle: 10}, {settle: 12}},
			wantMark: 10, wantMoved: true, wantSkips: []store.SeqRange{{First: 6, Last: 9}}, wantSkipped: 4,
			wantAbove: []uint64{12}, wantAdded: []uint64{12}, wantLowest: 12, wantHasLower: true},
		{name: "two skips", mark: 1, steps: []step{{skip: 3}, {skip: 2}, {skip: 6}},
			wantMark: 6, wantMoved: true, wantSkips: []store.SeqRange{{First: 2, Last: 3}, {First: 4, Last: 6}}, wantSkipped: 5},
		{name: "a seq waiting and then skipped over is neither added nor removed", mark: 5,
			steps: []step{{settle: 7}, {skip: 8}}, wantMark: 8, wantMoved: true,
			wantSkips: []store.SeqRange{{First: 6, Last: 8}}, wantSkipped: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSeqWindow(tc.mark, tc.above)
			var skips []store.SeqRange
			var skipped uint64
			for _, s := range tc.steps {
				if s.skip != 0 {
					if r, n, ok := w.skip(s.skip); ok {
						skips = append(skips, r)
						skipped += n
					} else if n != 0 || r != (store.SeqRange{}) {
						t.Errorf("skip(%d) not applied but reported %v, %d", s.skip, r, n)
					}
					continue
				}
				w.settle(s.settle)
			}
			if w.mark != tc.wantMark {
				t.Errorf("mark = %d, want %d", w.mark, tc.wantMark)
			}
			if w.moved != tc.wantMoved {
				t.Errorf("moved = %v, want %v", w.moved, tc.wantMoved)
			}
			above := make([]uint64, 0, len(w.above))
			for q := range w.above {
				above = append(above, q)
				if q <= w.mark+1 {
					t.Errorf("seq %d waits above the gap but the watermark is %d", q, w.mark)
				}
			}
			slices.Sort(above)
			if !slices.Equal(above, tc.wantAbove) && (len(above) != 0 || len(tc.wantAbove) != 0) {
				t.Errorf("above = %v, want %v", above, tc.wantAbove)
			}
			if !slices.Equal(skips, tc.wantSkips) {
				t.Errorf("skips = %v, want %v", skips, tc.wantSkips)
			}
			if skipped != tc.wantSkipped {
				t.Errorf("skipped = %d, want %d", skipped, tc.wantSkipped)
			}
			removed, added := w.changes()
			if !slices.Equal(removed, tc.wantRemoved) {
				t.Errorf("removed = %v, want %v", removed, tc.wantRemoved)
			}
			if !slices.Equal(added, tc.wantAdded) {
				t.Errorf("added = %v, want %v", added, tc.wantAdded)
			}
			low, ok := w.lowestAbove()
			if low != tc.wantLowest || ok != tc.wantHasLower {
				t.Errorf("lowestAbove = %d, %v; want %d, %v", low, ok, tc.wantLowest, tc.wantHasLower)
			}
		})
	}
}
