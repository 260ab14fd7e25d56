package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/wire"
)

// Aggregator turns meter samples into 1-s records. It is pure: every sample
// carries its own time, and records are produced as soon as a sample shows
// that their second is over.
//
// A sample covers the interval (At−Duration, At]; an instantaneous sample
// (Duration 0, e.g. an LAF reading) covers one nominal sample period before
// At, or the time since the previous sample when a late tick made that up
// to half a period longer. The interval is split at whole seconds and each part adds the sample's
// level for its duration to that second's energy, so an unaligned meter never
// moves energy between seconds. Max, min and peak count in every second the
// sample touches. A record's dur_ms is the measured time inside its second:
// less than 1000 when samples were missed (never padded).
//
// Samples arrive in time order, overlapping a little (a sample read 97 ms
// after the previous one at a 100 ms period): a sample never counts time
// that the previous one already covered, so a record's dur_ms never exceeds
// its second. When the clock steps backwards (a sample ends before the
// previous one did: chrony stepping, or a Pi without RTC that restored an
// older time after a power cut) the current record is closed and new ones
// start: records follow the order of sampling and nothing is re-dated.
// Every record that holds time already measured before the step — a
// re-measured second, the same t as a record already made — carries the
// step in its clock state (StepClock: synced false, source "step"), so the
// Batcher puts it in a batch of its own and the central service sees why
// the second comes twice. Seed tells a fresh aggregator where the previous
// run stopped (Outbox.High), so a clock restored to an older time across a
// restart is seen too. Steps lists the steps seen.
type Aggregator struct {
	period time.Duration

	cur    *open // second being filled, nil when none
	minute minuteAcc
	last   time.Time // end of the previous sample
	high   time.Time // latest instant measured (or seeded)
	steps  []ClockStep
}

// ClockStep is a backward clock step seen by the Aggregator: at sample time
// At the clock was Back behind the latest instant already measured.
type ClockStep struct {
	At   time.Time
	Back time.Duration
}

// StepSource is the clock source of records that hold re-measured time
// after a backward clock step (see Aggregator); such records are also
// flagged unsynced, and their offset_ms is at least how far the clock went
// back.
const StepSource = "step"

// StepClock returns clk marked as after a backward step of back.
func StepClock(clk wire.Clock, back time.Duration) wire.Clock {
	clk.Synced = false
	clk.Source = StepSource
	clk.OffsetMs = max(clk.OffsetMs, float64(back)/float64(time.Millisecond))
	return clk
}

// mergeClock is the clock state of a record holding samples taken in acc
// and clk: unsynced if either was, the worse offset, and a step stays a
// step.
func mergeClock(acc, clk wire.Clock) wire.Clock {
	out := acc
	if !clk.Synced {
		out.Synced = false
		if acc.Source != StepSource {
			out.Source = clk.Source
		}
	}
	if clk.Source == StepSource {
		out.Source = StepSource
	}
	out.OffsetMs = max(acc.OffsetMs, clk.OffsetMs)
	return out
}

// Seed tells the aggregator that time up to high was already measured
// (the end of the latest record stored by an earlier run): samples before
// it are re-measured time. A zero high changes nothing.
func (a *Aggregator) Seed(high time.Time) {
	if high.After(a.high) {
		a.high = high.UTC()
	}
}

// Steps returns the backward clock steps seen since the last call.
func (a *Aggregator) Steps() []ClockStep {
	s := a.steps
	a.steps = nil
	return s
}

type open struct {
	start   time.Time // whole second, UTC
	acc     level.Accumulator
	hist    level.Histogram
	peak    float64
	hasPeak bool
	max     float64
	min     float64
	dev     bridge.Device
	sync    wire.Clock
}

// ErrWeighting is returned for a sample that is not A-weighted.
var ErrWeighting = errors.New("gateway: sample is not A-weighted")

// NewAggregator returns an aggregator for a meter sampled every period.
func NewAggregator(period time.Duration) *Aggregator {
	if period <= 0 {
		period = 100 * time.Millisecond
	}
	return &Aggregator{period: period}
}

// Output is one finished 1-s record with the device that measured it and the
// clock state when its second was sampled.
type Output struct {
	Record wire.Record
	Device bridge.Device
	Clock  wire.Clock
}

// Add feeds one sample taken with the clock in state clk; it returns the
// records that the sample closed (usually none, one per new second).
func (a *Aggregator) Add(s bridge.Sample, clk wire.Clock) ([]Output, error) {
	if s.Weighting != "" && s.Weighting != bridge.WeightingA {
		return nil, fmt.Errorf("%w: got %q", ErrWeighting, s.Weighting)
	}
	if s.At.IsZero() {
		return nil, errors.New("gateway: sample without a time")
	}
	end := s.At.UTC()
	dur := s.Duration
	if dur <= 0 {
		// An instantaneous reading stands for one period before it, or for
		// the time since the previous reading when that is up to half a
		// period longer (a late tick leaves no hole; a missed read does).
		dur = a.period
		if gap := end.Sub(a.last); !a.last.IsZero() && gap > dur && gap <= dur+dur/2 {
			dur = gap
		}
	}
	start := end.Add(-dur)
	var out []Output
	switch {
	case a.last.IsZero():
	case end.Before(a.last):
		// The clock stepped back: the record being filled ends here.
		a.steps = append(a.steps, ClockStep{At: end, Back: a.high.Sub(end)})
		if o, ok := a.close(); ok {
			out = append(out, o)
		}
	case !end.After(a.last):
		return nil, nil // no time of its own
	case start.Before(a.last):
		start = a.last // only the time the previous sample did not cover
	}
	if start.Before(a.high) {
		// Part of this sample is time already measured: a re-measure.
		clk = StepClock(clk, a.high.Sub(start))
	}
	a.last = end
	if end.After(a.high) {
		a.high = end
	}
	for start.Before(end) {
		sec := start.Truncate(time.Second)
		pieceEnd := sec.Add(time.Second)
		if pieceEnd.After(end) {
			pieceEnd = end
		}
		if a.cur != nil && !a.cur.start.Equal(sec) {
			if o, ok := a.close(); ok {
				out = append(out, o)
			}
		}
		if a.cur == nil {
			a.cur = &open{start: sec, dev: s.Device, sync: clk}
		}
		a.cur.add(s, float64(pieceEnd.Sub(start))/float64(time.Millisecond), clk)
		start = pieceEnd
	}
	return out, nil
}

// Flush closes the record being filled, if any.
func (a *Aggregator) Flush() []Output {
	if o, ok := a.close(); ok {
		return []Output{o}
	}
	return nil
}

func (o *open) add(s bridge.Sample, ms float64, clk wire.Clock) {
	mx, mn := s.Level, s.Level
	if s.HasMax {
		mx = s.Max
	}
	if s.HasMin {
		mn = s.Min
	}
	if o.acc.Count() == 0 || mx > o.max {
		o.max = mx
	}
	if o.acc.Count() == 0 || mn < o.min {
		o.min = mn
	}
	o.acc.Add(s.Level, ms)
	o.hist.Add(s.Level, ms)
	if s.HasPeakC && (!o.hasPeak || s.PeakC > o.peak) {
		o.peak, o.hasPeak = s.PeakC, true
	}
	// The record is only as honest as the worst clock state seen in it.
	o.sync = mergeClock(o.sync, clk)
}

func (a *Aggregator) close() (Output, bool) {
	o := a.cur
	a.cur = nil
	if o == nil {
		return Output{}, false
	}
	leq, ok := o.acc.Leq()
	if !ok {
		return Output{}, false
	}
	durMs := int64(o.acc.DurationMs() + 0.5)
	if durMs < 1 {
		durMs = 1
	}
	rec := wire.Record{
		T: o.start, DurMs: durMs, LAeq: round2(leq), LAFmax: round2(o.max), LAFmin: round2(o.min),
	}
	// Rounding may not break lafmin ≤ laeq ≤ lafmax.
	if rec.LAeq > rec.LAFmax {
		rec.LAeq = rec.LAFmax
	}
	if rec.LAeq < rec.LAFmin {
		rec.LAeq = rec.LAFmin
	}
	if o.hasPeak {
		p := round2(o.peak)
		rec.LCpeak = &p
	}
	h := wholeMs(o.hist, durMs)
	rec.Hist = &h
	a.minute.add(rec)
	return Output{Record: rec, Device: o.dev, Clock: o.sync}, true
}

// wholeMs rounds a histogram's bins to whole milliseconds that add up to
// exactly total (the record's dur_ms), by largest remainder: every bin gets
// the floor of its time, and the milliseconds still missing go one each to
// the bins with the largest fractional parts (ties to the lower bin, so the
// result is deterministic). Bins left at 0 ms are dropped. Samples that
// straddle a second boundary give bins like 863.957 ms; on the wire those
// digits were more than half of a batch, and they carry no information at a
// meter's resolution.
func wholeMs(h level.Histogram, total int64) level.Histogram {
	type part struct {
		bin  int
		frac float64
	}
	out := level.Histogram{Bins: make(map[int]float64, len(h.Bins))}
	parts := make([]part, 0, len(h.Bins))
	var sum int64
	for b, ms := range h.Bins {
		f := math.Floor(ms)
		out.Bins[b] = f
		sum += int64(f)
		parts = append(parts, part{b, ms - f})
	}
	slices.SortFunc(parts, func(x, y part) int {
		if c := cmp.Compare(y.frac, x.frac); c != 0 {
			return c
		}
		return cmp.Compare(x.bin, y.bin)
	})
	for i := 0; sum < total && len(parts) > 0; i = (i + 1) % len(parts) {
		out.Bins[parts[i].bin]++
		sum++
	}
	// Never more than total: only possible when total was clamped below the
	// measured time, which close does not do, but a histogram must not claim
	// more time than its record.
	for i := len(parts) - 1; sum > total && i >= 0; i-- {
		if out.Bins[parts[i].bin] > 0 {
			out.Bins[parts[i].bin]--
			sum--
		}
	}
	for b, ms := range out.Bins {
		if ms <= 0 {
			delete(out.Bins, b)
		}
	}
	return out
}

func round2(v float64) float64 {
	// Two decimals are far below any meter's resolution and keep payloads short.
	if v >= 0 {
		return float64(int64(v*100+0.5)) / 100
	}
	return -float64(int64(-v*100+0.5)) / 100
}

// Minute is the energy-domain summary of the records of one clock minute.
type Minute struct {
	Start      time.Time
	DurMs      float64
	LAeq       float64
	LAFmax     float64
	LAFmin     float64
	L10        float64
	L50        float64
	L90        float64
	Hist       level.Histogram
	NumRecords int
}

type minuteAcc struct {
	start time.Time
	acc   level.Accumulator
	hist  level.Histogram
	max   float64
	min   float64
	n     int
	done  []Minute
}

func (m *minuteAcc) add(r wire.Record) {
	st := r.T.Truncate(time.Minute)
	if m.n > 0 && !st.Equal(m.start) {
		m.finish()
	}
	if m.n == 0 {
		m.start = st
		m.max, m.min = r.LAFmax, r.LAFmin
	}
	m.acc.Add(r.LAeq, float64(r.DurMs))
	if r.Hist != nil {
		m.hist.Merge(*r.Hist)
	}
	m.max = max(m.max, r.LAFmax)
	m.min = min(m.min, r.LAFmin)
	m.n++
}

func (m *minuteAcc) finish() {
	if m.n == 0 {
		return
	}
	leq, _ := m.acc.Leq()
	mi := Minute{Start: m.start, DurMs: m.acc.DurationMs(), LAeq: leq, LAFmax: m.max, LAFmin: m.min,
		Hist: m.hist, NumRecords: m.n}
	mi.L10, _ = m.hist.Percentile(10)
	mi.L50, _ = m.hist.Percentile(50)
	mi.L90, _ = m.hist.Percentile(90)
	m.done = append(m.done, mi)
	*m = minuteAcc{done: m.done}
}

// Minutes returns the per-minute summaries completed since the last call
// (a minute completes when a record of a later minute is produced).
func (a *Aggregator) Minutes() []Minute {
	d := a.minute.done
	a.minute.done = nil
	return d
}
