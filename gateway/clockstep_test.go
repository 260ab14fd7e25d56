package gateway

import (
	"context"
	"crypto/ed25519"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/wire"
)

func TestAggregatorClockSteps(t *testing.T) {
	// at returns a 100 ms LAF sample ending at ms after t0.
	at := func(ms int, db float64) bridge.Sample {
		s := laf(t0.Add(time.Duration(ms)*time.Millisecond), db)
		s.Duration = 100 * time.Millisecond
		return s
	}
	lafAt := func(ms int) bridge.Sample { return laf(t0.Add(time.Duration(ms)*time.Millisecond), 50) }
	seq := func(from, to, step int, db float64) []bridge.Sample {
		var ss []bridge.Sample
		for ms := from; ms <= to; ms += step {
			ss = append(ss, at(ms, db))
		}
		return ss
	}
	type rec struct {
		sec   int // t − t0 in seconds
		dur   int64
		step  bool
		minMs float64 // offset_ms at least
	}
	tests := []struct {
		name  string
		seed  time.Duration // Seed(t0+seed) when > 0
		in    []bridge.Sample
		want  []rec
		steps int
	}{
		{
			name: "step back 10 s between seconds",
			in:   append(seq(100, 3000, 100, 50), seq(-6900, -5000, 100, 52)...),
			want: []rec{{0, 1000, false, 0}, {1, 1000, false, 0}, {2, 1000, false, 0},
				{-7, 1000, true, 10000}, {-6, 1000, true, 8100}},
			steps: 1,
		},
		{
			name: "step back 0.35 s inside a second: the second is measured twice",
			in:   append(seq(100, 1700, 100, 50), seq(1450, 2500, 100, 52)...),
			// 1.35–1.70 is re-measured (the first sample after the step covers
			// 1.35–1.45), so the second record for second 1 is marked; second 2
			// (2.00–2.45) is new time.
			want:  []rec{{0, 1000, false, 0}, {1, 700, false, 0}, {1, 650, true, 350}, {2, 450, false, 0}},
			steps: 1,
		},
		{
			name: "jitter: overlaps not counted twice, late ticks leave no hole",
			in: []bridge.Sample{lafAt(100), lafAt(197), lafAt(300), lafAt(395), lafAt(500), lafAt(603),
				lafAt(700), lafAt(800), lafAt(899), lafAt(1000), lafAt(1100)},
			want: []rec{{0, 1000, false, 0}, {1, 100, false, 0}},
		},
		{
			name: "overlapping Leq samples are clipped, gaps stay",
			in:   []bridge.Sample{at(100, 50), at(190, 50), at(300, 50), at(400, 50)},
			want: []rec{{0, 390, false, 0}},
		},
		{
			name: "restart with the clock behind the stored records",
			seed: 2500 * time.Millisecond,
			in:   seq(1100, 3500, 100, 50),
			want: []rec{{1, 1000, true, 1400}, {2, 1000, true, 0}, {3, 500, false, 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAggregator(100 * time.Millisecond)
			if tc.seed > 0 {
				a.Seed(t0.Add(tc.seed))
			}
			out := feed(t, a, tc.in, synced)
			if len(out) != len(tc.want) {
				t.Fatalf("%d records, want %d: %+v", len(out), len(tc.want), out)
			}
			for i, w := range tc.want {
				o := out[i]
				isStep := o.Clock.Source == StepSource
				if !o.Record.T.Equal(t0.Add(time.Duration(w.sec)*time.Second)) || o.Record.DurMs != w.dur || isStep != w.step {
					t.Errorf("record %d: t=%v dur=%d clock=%+v; want sec %d dur %d step %v", i, o.Record.T, o.Record.DurMs, o.Clock, w.sec, w.dur, w.step)
				}
				if isStep && (o.Clock.Synced || o.Clock.OffsetMs < w.minMs) {
					t.Errorf("record %d: step clock %+v, want unsynced with offset ≥ %v", i, o.Clock, w.minMs)
				}
				if !isStep && o.Clock != synced {
					t.Errorf("record %d: clock %+v, want %+v", i, o.Clock, synced)
				}
				var sum float64
				for _, ms := range o.Record.Hist.Bins {
					sum += ms
				}
				if int64(sum) != o.Record.DurMs {
					t.Errorf("record %d: histogram %v ms for dur_ms %d", i, sum, o.Record.DurMs)
				}
			}
			if got := len(a.Steps()); got != tc.steps {
				t.Errorf("%d steps reported, want %d", got, tc.steps)
			}
		})
	}
}

func TestBatcherCutsOnStepAndOrder(t *testing.T) {
	step := StepClock(synced, 5*time.Second)
	b := &Batcher{MaxRecords: 100, MaxAge: time.Hour}
	var got []Pending
	for _, o := range []Output{out(0, dev, synced), out(1, dev, synced), out(2, dev, synced),
		out(1, dev, step), out(2, dev, step), out(3, dev, synced), out(1, dev, synced)} {
		got = append(got, b.Add(o, o.Record.T)...)
	}
	if p, ok := b.Flush(); ok {
		got = append(got, p)
	}
	want := []struct {
		n    int
		step bool
	}{{3, false}, {2, true}, {1, false}, {1, false}}
	if len(got) != len(want) {
		t.Fatalf("%d batches, want %d", len(got), len(want))
	}
	for i, w := range want {
		if len(got[i].Records) != w.n || (got[i].Clock.Source == StepSource) != w.step {
			t.Errorf("batch %d: %d records, clock %+v; want %d, step %v", i, len(got[i].Records), got[i].Clock, w.n, w.step)
		}
		for j := 1; j < len(got[i].Records); j++ {
			if !got[i].Records[j].T.After(got[i].Records[j-1].T) {
				t.Errorf("batch %d out of time order", i)
			}
		}
	}
}

// fakeClock is a wall clock the test moves: every Sense of clockMeter
// advances it by 100 ms, and Step moves it (back) at once.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// clockMeter reads the fake clock: 100 ms LAF samples, n of them, with a
// step of the clock before sample stepAt (0: none).
type clockMeter struct {
	clk     *fakeClock
	n       int
	stepAt  int
	step    time.Duration
	taken   int
	stopped bool
	mu      sync.Mutex
}

func (m *clockMeter) Sense(s *bridge.Sample) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.taken >= m.n {
		m.stopped = true
		return errors.New("clockMeter: done")
	}
	m.taken++
	if m.taken == m.stepAt {
		m.clk.advance(m.step)
	}
	at := m.clk.advance(100 * time.Millisecond)
	*s = bridge.Sample{At: at, Duration: 100 * time.Millisecond, Weighting: bridge.WeightingA, TimeWeighting: bridge.Fast,
		Level: 50 + float64(m.taken%50)/10, Device: dev}
	return nil
}
func (m *clockMeter) Halt() error    { return nil }
func (m *clockMeter) String() string { return "clockMeter" }
func (m *clockMeter) done() bool     { m.mu.Lock(); defer m.mu.Unlock(); return m.stopped }

// TestGatewayBackwardClockStep runs the gateway on an injected clock that
// steps back 12.35 s in the middle of a run and then, across a restart, is
// restored 8 s before the last stored record (a Pi without RTC after a
// power cut). Every batch must be in time order; the re-measured seconds
// must be there, in batches marked as after a step; and no measured time
// may be lost: the records' dur_ms add up to what the meter sampled.
func TestGatewayBackwardClockStep(t *testing.T) {
	dir := t.TempDir()
	_, key, _ := ed25519.GenerateKey(nil)
	clk := &fakeClock{now: time.Now().Add(-3 * time.Hour).Truncate(time.Second)}
	opts := Options{Municipality: "lapa", Gateway: "gw", Sensor: "m1", SamplePeriod: time.Millisecond,
		BatchRecords: 10, BatchMaxAge: time.Hour}
	run := func(m *clockMeter) {
		t.Helper()
		box, err := OpenOutbox(filepath.Join(dir, "outbox.db"), 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		defer box.Close()
		g, err := New(opts, m, FixedSync(synced), box, key, &fakePub{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		g.now = func() time.Time { clk.mu.Lock(); defer clk.mu.Unlock(); return clk.now }
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- g.Run(ctx) }()
		wait(t, "the meter's samples", m.done)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// 60 s of samples; before the 301st the clock steps back 12.35 s.
	run(&clockMeter{clk: clk, n: 600, stepAt: 301, step: -12350 * time.Millisecond})
	// A restart with the clock put back 8 s before where it stopped (a Pi
	// without RTC after a power cut), 20 s of samples.
	clk.advance(-8 * time.Second)
	run(&clockMeter{clk: clk, n: 200})

	box, err := OpenOutbox(filepath.Join(dir, "outbox.db"), 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	es, err := box.After(context.Background(), 0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	seen := map[time.Time]int{}
	stepBatches, stepRecords := 0, 0
	for _, e := range es {
		_, b, err := wire.Open(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		isStep := b.Clock.Source == StepSource
		if isStep {
			stepBatches++
			stepRecords += len(b.Records)
			if b.Clock.Synced {
				t.Errorf("seq %d: step batch flagged synced", b.Seq)
			}
		} else if b.Clock != synced {
			t.Errorf("seq %d: clock %+v", b.Seq, b.Clock)
		}
		for i, r := range b.Records {
			if i > 0 && !r.T.After(b.Records[i-1].T) {
				t.Fatalf("seq %d: record %v after %v: out of time order", b.Seq, r.T, b.Records[i-1].T)
			}
			if seen[r.T] > 0 && !isStep {
				t.Errorf("seq %d: second %v measured again without the step mark", b.Seq, r.T)
			}
			seen[r.T]++
			total += r.DurMs
		}
	}
	twice := 0
	for _, n := range seen {
		if n > 1 {
			twice++
		}
	}
	// 800 samples of 100 ms: 80 000 ms measured, all of it in records.
	if total != 80_000 {
		t.Errorf("records hold %d ms; the meter sampled 80000 ms", total)
	}
	// 12.35 s and 8 s re-measured: 13 + 9 seconds (whole or in part) appear twice.
	if twice != 22 || stepRecords < twice {
		t.Errorf("%d seconds measured twice, %d records in %d step batches", twice, stepRecords, stepBatches)
	}
	t.Logf("%d batches, %d ms measured = 80000 sampled; %d seconds re-measured, sent in %d batches marked source=step (%d records)",
		len(es), total, twice, stepBatches, stepRecords)
}

func TestEnvBatcherStepBack(t *testing.T) {
	b := &EnvBatcher{MaxRecords: 10, MaxAge: time.Hour}
	rd := func(sec int) wire.EnvRecord {
		v := 20.0
		return wire.EnvRecord{T: t0.Add(time.Duration(sec) * time.Second), TemperatureC: &v}
	}
	var got []PendingEnv
	for _, sec := range []int{0, 60, 120, 30, 90, 180} {
		got = append(got, b.Add(rd(sec), dev, synced, t0)...)
	}
	if p, ok := b.Flush(); ok {
		got = append(got, p)
	}
	// 0 60 120 | 30 90 (after the step, before 120: marked) | 180
	if len(got) != 3 || len(got[0].Env) != 3 || len(got[1].Env) != 2 || len(got[2].Env) != 1 {
		t.Fatalf("batches %+v", got)
	}
	if got[0].Clock != synced || got[1].Clock.Source != StepSource || got[1].Clock.Synced || got[1].Clock.OffsetMs < 90_000 || got[2].Clock != synced {
		t.Errorf("clocks %+v / %+v / %+v", got[0].Clock, got[1].Clock, got[2].Clock)
	}
}
