package stats

import (
	"math"
	"time"

	"github.com/sossego/sossego/internal/level"
)

// Agg is an energy-domain aggregate of level records: what the long-term
// tier keeps per minute and per hour, and what reports fold.
type Agg struct {
	DurMs  int64   // time covered by records
	Energy float64 // Σ dur_ms · 10^(LAeq/10)
	Max    float64 // LAFmax: the highest maximum
	Min    float64 // LAFmin: the lowest minimum
	// FastMs is the part of DurMs whose histogram came from the records'
	// own LAF histograms; for the rest the 1-s LAeq stood in.
	FastMs int64
	Hist   Hist
}

// Empty reports whether nothing was added.
func (a *Agg) Empty() bool { return a.DurMs <= 0 }

// LAeq is the equivalent level of what was added (ok false when empty).
func (a *Agg) LAeq() (float64, bool) {
	if a.DurMs <= 0 || a.Energy <= 0 {
		return 0, false
	}
	return level.FromEnergy(a.Energy / float64(a.DurMs)), true
}

// Merge adds b into a.
func (a *Agg) Merge(b *Agg) {
	if b.DurMs <= 0 {
		return
	}
	if a.DurMs <= 0 {
		a.Max, a.Min = b.Max, b.Min
	} else {
		a.Max, a.Min = max(a.Max, b.Max), min(a.Min, b.Min)
	}
	a.DurMs += b.DurMs
	a.Energy += b.Energy
	a.FastMs += b.FastMs
	a.Hist.Merge(&b.Hist)
}

// Second is one stored level record (usually 1 s).
type Second struct {
	T      time.Time
	DurMs  int64
	LAeq   float64
	LAFmax float64
	LAFmin float64
	Hist   *level.Histogram // LAF samples in 0.1 dB bins; nil when the record carried none
}

// AddSecond adds a record: its energy for its duration, its extremes, and
// its LAF histogram (or, without one, its LAeq for its whole duration).
func (a *Agg) AddSecond(s Second) {
	if s.DurMs <= 0 || math.IsNaN(s.LAeq) {
		return
	}
	b := Agg{DurMs: s.DurMs, Energy: float64(s.DurMs) * level.ToEnergy(s.LAeq), Max: s.LAFmax, Min: s.LAFmin}
	if s.Hist != nil && len(s.Hist.Bins) > 0 {
		b.FastMs = s.DurMs
		// The record's histogram holds its LAF samples' times; it is scaled
		// to the record's duration so that every second weighs what it
		// lasted, whatever its sampling.
		tot := s.Hist.Total()
		for bin, ms := range s.Hist.Bins {
			b.Hist.Add(bin, ms*float64(s.DurMs)/tot)
		}
	} else {
		b.Hist.AddLevel(s.LAeq, float64(s.DurMs))
	}
	a.Merge(&b)
}

// Minute is the aggregate of the records starting in one clock minute.
type Minute struct {
	Start time.Time // whole minute
	Agg
}

// Hour is the aggregate of one clock hour with its minutes' energies (for
// the minutes-above-the-limit count) but not their histograms.
type Hour struct {
	Start   time.Time // whole hour
	Agg               // the hour's total
	Minutes []MinuteLevel
}

// MinuteLevel is a minute's energy without its histogram.
type MinuteLevel struct {
	Start  time.Time
	DurMs  int64
	Energy float64
}

// LAeq of the minute (ok false when empty).
func (m MinuteLevel) LAeq() (float64, bool) {
	if m.DurMs <= 0 || m.Energy <= 0 {
		return 0, false
	}
	return level.FromEnergy(m.Energy / float64(m.DurMs)), true
}

// Minutes folds records (in time order) into per-minute aggregates, calling
// emit for each minute when the next one starts and at the end.
func Minutes(secs []Second, emit func(Minute)) {
	var cur Minute
	open := false
	for _, s := range secs {
		st := s.T.Truncate(time.Minute)
		if open && !st.Equal(cur.Start) {
			emit(cur)
			open = false
		}
		if !open {
			cur, open = Minute{Start: st}, true
		}
		cur.AddSecond(s)
	}
	if open {
		emit(cur)
	}
}

// RowPercentiles are the percentiles a MinuteRow carries: L10, L50, L90
// and L95.
var RowPercentiles = [4]float64{10, 50, 90, 95}

// MinuteRow is a minute as exports list it: its levels and its
// RowPercentiles, without its histogram (the long-term tier keeps them
// per minute, so a year of rows is read without decoding a histogram).
type MinuteRow struct {
	Start         time.Time
	DurMs, FastMs int64
	LAeq          float64 // dB
	Max, Min      float64 // LAFmax, LAFmin
	Pct           [4]float64
	HasPct        bool // false when the minute had no histogram
}
