package gateway

import (
	"math"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/wire"
)

var (
	t0     = time.Date(2026, 3, 10, 22, 0, 0, 0, time.UTC)
	synced = wire.Clock{Synced: true, OffsetMs: 2, Source: "ntp"}
	dev    = bridge.Device{Model: "fake", Serial: "1", Grade: bridge.GradeClass1}
)

func laf(at time.Time, db float64) bridge.Sample {
	return bridge.Sample{At: at, Weighting: bridge.WeightingA, TimeWeighting: bridge.Fast, Level: db, Device: dev}
}

func feed(t *testing.T, a *Aggregator, ss []bridge.Sample, clk wire.Clock) []Output {
	t.Helper()
	var out []Output
	for _, s := range ss {
		o, err := a.Add(s, clk)
		if err != nil {
			t.Fatalf("Add(%v): %v", s, err)
		}
		out = append(out, o...)
	}
	return append(out, a.Flush()...)
}

func TestAggregatorTenHz(t *testing.T) {
	// Two seconds at 10 Hz: first second 9×50 dB + 1×70 dB, second 10×60 dB.
	var ss []bridge.Sample
	for i := 1; i <= 20; i++ {
		db := 50.0
		if i == 5 {
			db = 70
		}
		if i > 10 {
			db = 60
		}
		ss = append(ss, laf(t0.Add(time.Duration(i)*100*time.Millisecond), db))
	}
	out := feed(t, NewAggregator(100*time.Millisecond), ss, synced)
	if len(out) != 2 {
		t.Fatalf("%d records, want 2", len(out))
	}
	want0 := 10 * math.Log10((9*math.Pow(10, 5)+math.Pow(10, 7))/10)
	r := out[0].Record
	if !r.T.Equal(t0) || r.DurMs != 1000 || math.Abs(r.LAeq-want0) > 0.006 || r.LAFmax != 70 || r.LAFmin != 50 {
		t.Errorf("record 0 = %+v, want t=%v dur=1000 laeq=%.2f max 70 min 50", r, t0, want0)
	}
	if r.LCpeak != nil {
		t.Errorf("LCpeak %v without peak samples", *r.LCpeak)
	}
	if r.Hist == nil || r.Hist.Bins[500] != 900 || r.Hist.Bins[700] != 100 {
		t.Errorf("hist = %+v", r.Hist)
	}
	r1 := out[1].Record
	if !r1.T.Equal(t0.Add(time.Second)) || r1.LAeq != 60 || r1.DurMs != 1000 {
		t.Errorf("record 1 = %+v", r1)
	}
	if out[0].Device != dev || out[0].Clock != synced {
		t.Errorf("device/clock = %+v %+v", out[0].Device, out[0].Clock)
	}
	// Every record must pass the receiver's validation.
	for _, o := range out {
		b := wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "m", Gateway: "g", Sensor: "s", Seq: 1,
			Device: wireDevice(o.Device), Records: []wire.Record{o.Record}}
		if err := wire.Validate(wire.Topic{Municipality: "m", Gateway: "g", Sensor: "s", Kind: wire.KindLevels},
			nil, &b, t0, wire.DefaultSkew, wire.DefaultStale); err != nil {
			t.Errorf("record rejected by wire.Validate: %v", err)
		}
	}
}

func TestAggregatorSplitsUnalignedLeqSamples(t *testing.T) {
	// A meter reporting Leq,1s ending at .5 s: each sample spans two seconds.
	mk := func(end time.Time, db, peak float64) bridge.Sample {
		return bridge.Sample{At: end, Duration: time.Second, Weighting: bridge.WeightingA, TimeWeighting: bridge.Leq,
			Level: db, Max: db + 3, Min: db - 3, HasMax: true, HasMin: true, PeakC: peak, HasPeakC: true, Device: dev}
	}
	ss := []bridge.Sample{
		mk(t0.Add(1500*time.Millisecond), 60, 80),
		mk(t0.Add(2500*time.Millisecond), 70, 90),
	}
	out := feed(t, NewAggregator(time.Second), ss, synced)
	if len(out) != 3 {
		t.Fatalf("%d records, want 3", len(out))
	}
	wantMid, _ := level.Leq(60, 70)
	tests := []struct {
		start         time.Duration
		dur           int64
		leq, max, min float64
		peak          float64
	}{
		{0, 500, 60, 63, 57, 80},
		{time.Second, 1000, wantMid, 73, 57, 90},
		{2 * time.Second, 500, 70, 73, 67, 90},
	}
	for i, tc := range tests {
		r := out[i].Record
		if !r.T.Equal(t0.Add(tc.start)) || r.DurMs != tc.dur || math.Abs(r.LAeq-tc.leq) > 0.006 ||
			r.LAFmax != tc.max || r.LAFmin != tc.min || r.LCpeak == nil || *r.LCpeak != tc.peak {
			t.Errorf("record %d = %+v (peak %v), want %+v", i, r, r.LCpeak, tc)
		}
	}
}

func TestAggregatorMissedSamplesShortenDuration(t *testing.T) {
	var ss []bridge.Sample
	for i := 1; i <= 10; i++ {
		if i == 3 || i == 4 || i == 8 {
			continue // meter read failed
		}
		ss = append(ss, laf(t0.Add(time.Duration(i)*100*time.Millisecond), 55))
	}
	out := feed(t, NewAggregator(100*time.Millisecond), ss, synced)
	if len(out) != 1 || out[0].Record.DurMs != 700 || out[0].Record.LAeq != 55 {
		t.Fatalf("got %+v, want one record of 700 ms at 55 dB", out)
	}
}

func TestAggregatorFlagsUnsyncedAndClockStepBack(t *testing.T) {
	a := NewAggregator(100 * time.Millisecond)
	unsynced := wire.Clock{Synced: false, OffsetMs: 16000, Source: "none"}
	var out []Output
	add := func(s bridge.Sample, c wire.Clock) {
		o, err := a.Add(s, c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o...)
	}
	add(laf(t0.Add(100*time.Millisecond), 50), synced)
	add(laf(t0.Add(200*time.Millisecond), 50), unsynced) // state changes inside the second
	add(laf(t0.Add(1100*time.Millisecond), 50), synced)
	// NTP steps the clock back 10 s: the open record closes, a new one starts; nothing is re-dated.
	add(laf(t0.Add(-9*time.Second), 52), synced)
	out = append(out, a.Flush()...)
	if len(out) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(out), out)
	}
	if out[0].Clock.Synced || out[0].Clock.OffsetMs != 16000 {
		t.Errorf("record with an unsynced sample has clock %+v", out[0].Clock)
	}
	if !out[1].Clock.Synced {
		t.Errorf("synced record flagged: %+v", out[1].Clock)
	}
	if !out[2].Record.T.Equal(t0.Add(-10*time.Second)) || out[2].Record.LAeq != 52 {
		t.Errorf("record after step back = %+v", out[2].Record)
	}
}

func TestAggregatorRejects(t *testing.T) {
	a := NewAggregator(0)
	s := laf(t0, 50)
	s.Weighting = bridge.WeightingC
	if _, err := a.Add(s, synced); err == nil {
		t.Error("C-weighted sample accepted")
	}
	if _, err := a.Add(bridge.Sample{Level: 50}, synced); err == nil {
		t.Error("sample without time accepted")
	}
	if out := a.Flush(); len(out) != 0 {
		t.Errorf("rejected samples produced %v", out)
	}
}

func TestAggregatorMinutes(t *testing.T) {
	a := NewAggregator(100 * time.Millisecond)
	// 61 s: levels 40.0 … 45.9 dB cycling (one level per second), then one sample in the next minute.
	var ss []bridge.Sample
	for sec := 0; sec < 60; sec++ {
		for k := 1; k <= 10; k++ {
			ss = append(ss, laf(t0.Add(time.Duration(sec)*time.Second+time.Duration(k)*100*time.Millisecond), 40+float64(sec)/10))
		}
	}
	ss = append(ss, laf(t0.Add(60*time.Second+100*time.Millisecond), 80))
	feed(t, a, ss, synced)
	ms := a.Minutes()
	if len(ms) != 1 {
		t.Fatalf("%d minutes, want 1", len(ms))
	}
	m := ms[0]
	var ref level.Histogram
	var acc level.Accumulator
	for sec := 0; sec < 60; sec++ {
		ref.Add(40+float64(sec)/10, 1000)
		acc.Add(40+float64(sec)/10, 1000)
	}
	wantLeq, _ := acc.Leq()
	w10, _ := ref.Percentile(10)
	w90, _ := ref.Percentile(90)
	if m.NumRecords != 60 || m.DurMs != 60000 || math.Abs(m.LAeq-wantLeq) > 0.01 || m.L10 != w10 || m.L90 != w90 ||
		m.LAFmax != 45.9 || m.LAFmin != 40 {
		t.Errorf("minute = %+v; want leq %.2f L10 %v L90 %v", m, wantLeq, w10, w90)
	}
	if len(a.Minutes()) != 0 {
		t.Error("Minutes returned the same minute twice")
	}
}
