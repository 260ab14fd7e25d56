package sqlitestore

import (
	"maps"
	"slices"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// seqWindow is one gateway's ack arithmetic, with no I/O: the watermark
// (the highest seq such that it and every seq below it are settled) and
// the seqs settled above a gap, waiting for it to close. Apply loads one
// per gateway at the start of a transaction, moves it in memory and
// writes what changed at the end.
type seqWindow struct {
	mark   uint64          // highest contiguous settled seq (0: none)
	above  map[uint64]bool // settled seqs above mark+1, never contiguous with mark
	loaded map[uint64]bool // above as loaded, to write only the difference
	moved  bool            // mark changed since loaded
}

// newSeqWindow returns the window of a gateway whose stored watermark is
// mark and whose stored settled seqs above it are above.
func newSeqWindow(mark uint64, above []uint64) *seqWindow {
	w := &seqWindow{mark: mark, above: make(map[uint64]bool, len(above)), loaded: make(map[uint64]bool, len(above))}
	for _, q := range above {
		w.above[q], w.loaded[q] = true, true
	}
	return w
}

// settle records that seq is settled: the watermark moves over it and over
// the seqs above it that were waiting, or seq is remembered above the gap.
// A seq at or below the watermark changes nothing.
func (w *seqWindow) settle(seq uint64) {
	switch {
	case seq == w.mark+1:
		w.mark = seq
		w.closeUp()
		w.moved = true
	case seq > w.mark+1:
		w.above[seq] = true
	}
}

// skip moves the watermark over the seqs up to upto that will not arrive
// (and then over the settled seqs contiguous with upto). It reports the
// range moved over and how many of its seqs were not settled; ok is false,
// and nothing changes, when upto is not above the watermark or is past
// wire.MaxSeq.
func (w *seqWindow) skip(upto uint64) (r store.SeqRange, skipped uint64, ok bool) {
	if upto <= w.mark || upto > wire.MaxSeq {
		return store.SeqRange{}, 0, false
	}
	skipped = upto - w.mark
	for q := range w.above {
		if q <= upto {
			delete(w.above, q)
			skipped--
		}
	}
	r = store.SeqRange{First: w.mark + 1, Last: upto}
	w.mark = upto
	w.closeUp()
	w.moved = true
	return r, skipped, true
}

// closeUp moves the watermark over the settled seqs contiguous with it.
func (w *seqWindow) closeUp() {
	for w.above[w.mark+1] {
		delete(w.above, w.mark+1)
		w.mark++
	}
}

// lowestAbove returns the lowest seq settled above the gap (ok false: none).
func (w *seqWindow) lowestAbove() (uint64, bool) {
	if len(w.above) == 0 {
		return 0, false
	}
	return slices.Min(slices.Collect(maps.Keys(w.above))), true
}

// changes returns the seqs to remove from and add to the stored set above
// the gap, sorted, for it to match the window.
func (w *seqWindow) changes() (removed, added []uint64) {
	for q := range w.loaded {
		if !w.above[q] {
			removed = append(removed, q)
		}
	}
	for q := range w.above {
		if !w.loaded[q] {
			added = append(added, q)
		}
	}
	slices.Sort(removed)
	slices.Sort(added)
	return removed, added
}
