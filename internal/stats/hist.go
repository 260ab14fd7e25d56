package stats

import "math"

// MaxBin is the highest 0.1 dB bin (200.0 dB), as in internal/level.
const MaxBin = 2000

// Bin returns the 0.1 dB bin of a level: round(L·10), clamped to 0..MaxBin
// (internal/level's Histogram uses the same bins).
func Bin(db float64) int {
	b := int(math.Round(db * 10))
	if b < 0 {
		return 0
	}
	if b > MaxBin {
		return MaxBin
	}
	return b
}

// Hist is a 0.1 dB histogram of time (ms per bin) kept dense over the bins
// it has seen: merging is a slice addition, which is what folding months of
// minutes needs. The zero value is empty and ready to use.
type Hist struct {
	lo int       // bin of ms[0]
	ms []float64 // ms[i]: time at bin lo+i
}

// Add records ms milliseconds at bin b (clamped to 0..MaxBin).
func (h *Hist) Add(b int, ms float64) {
	if ms <= 0 || math.IsNaN(ms) {
		return
	}
	b = min(max(b, 0), MaxBin)
	h.grow(b, b)
	h.ms[b-h.lo] += ms
}

// AddLevel records ms milliseconds at level db.
func (h *Hist) AddLevel(db, ms float64) {
	if math.IsNaN(db) {
		return
	}
	h.Add(Bin(db), ms)
}

// grow makes bins lo..hi addressable.
func (h *Hist) grow(lo, hi int) {
	if len(h.ms) == 0 {
		h.lo = lo
		h.ms = make([]float64, hi-lo+1, hi-lo+1+16)
		return
	}
	curHi := h.lo + len(h.ms) - 1
	if lo < h.lo {
		n := make([]float64, curHi-lo+1, curHi-lo+1+16)
		copy(n[h.lo-lo:], h.ms)
		h.ms, h.lo = n, lo
	}
	if hi > h.lo+len(h.ms)-1 {
		h.ms = append(h.ms, make([]float64, hi-(h.lo+len(h.ms)-1))...)
	}
}

// Merge adds o's time into h.
func (h *Hist) Merge(o *Hist) {
	if o == nil || len(o.ms) == 0 {
		return
	}
	h.grow(o.lo, o.lo+len(o.ms)-1)
	d := h.ms[o.lo-h.lo:]
	for i, v := range o.ms {
		d[i] += v
	}
}

// Empty reports whether nothing was added.
func (h *Hist) Empty() bool { return h == nil || h.Total() <= 0 }

// Total is the time recorded, in ms.
func (h *Hist) Total() float64 {
	if h == nil {
		return 0
	}
	var t float64
	for _, v := range h.ms {
		t += v
	}
	return t
}

// Each calls f for every bin with time, from the lowest bin up.
func (h *Hist) Each(f func(bin int, ms float64)) {
	if h == nil {
		return
	}
	for i, v := range h.ms {
		if v > 0 {
			f(h.lo+i, v)
		}
	}
}

// Percentile returns Ln, the level exceeded n percent of the time, to the
// histogram's resolution: walking down from the loudest bin, the first bin
// at which the time at or above it reaches n % of the total (the rule of
// internal/level.Histogram.Percentile). ok is false for an empty histogram
// or n outside (0, 100).
func (h *Hist) Percentile(n float64) (db float64, ok bool) {
	total := h.Total()
	if total <= 0 || n <= 0 || n >= 100 {
		return 0, false
	}
	limit := total * n / 100
	var above float64
	for i := len(h.ms) - 1; i >= 0; i-- {
		if h.ms[i] <= 0 {
			continue
		}
		above += h.ms[i]
		if above >= limit-1e-9 {
			return float64(h.lo+i) / 10, true
		}
	}
	return 0, false
}

// Clone returns an independent copy.
func (h *Hist) Clone() *Hist {
	if h == nil {
		return nil
	}
	return &Hist{lo: h.lo, ms: append([]float64(nil), h.ms...)}
}

// Reset empties h and makes it span bins lo..lo+n-1 (clamped to
// 0..MaxBin), returning the zeroed times to fill in: decoding a stored
// histogram without growing it bin by bin.
func (h *Hist) Reset(lo, n int) []float64 {
	lo = min(max(lo, 0), MaxBin)
	n = min(max(n, 0), MaxBin+1-lo)
	if cap(h.ms) < n {
		h.ms = make([]float64, n)
	} else {
		h.ms = h.ms[:n]
		clear(h.ms)
	}
	h.lo = lo
	return h.ms
}

// Percentiles reads several Ln at once (ns in increasing order, each in
// (0, 100)) into out, as Percentile would, in one walk; ok is false for an
// empty histogram.
func (h *Hist) Percentiles(ns []float64, out []float64) (ok bool) {
	total := h.Total()
	if total <= 0 {
		return false
	}
	// Walking down, the smallest n is reached first.
	k := 0
	var above float64
	for i := len(h.ms) - 1; i >= 0 && k < len(ns); i-- {
		if h.ms[i] <= 0 {
			continue
		}
		above += h.ms[i]
		for k < len(ns) && above >= total*ns[k]/100-1e-9 {
			out[k] = float64(h.lo+i) / 10
			k++
		}
	}
	return k == len(ns)
}
