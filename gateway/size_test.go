package gateway

import (
	"crypto/ed25519"
	"math/rand/v2"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/sim"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/wire"
)

// sealedBatches runs a simulated 10 Hz meter for n seconds the way the
// gateway reads it — ticks 100 ms apart with a few ms of scheduling jitter,
// not aligned to the second, so samples straddle second boundaries — through
// the Aggregator and a Batcher of 10 records, and returns the sealed
// envelopes and the records.
func sealedBatches(t testing.TB, scenario sim.Scenario, n int) ([][]byte, []wire.Record) {
	t.Helper()
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	start := time.Date(2026, 3, 10, 22, 0, 0, 37_000_000, time.UTC) // 22:00 local: music in the bar
	now := start
	jit := rand.New(rand.NewPCG(5, 6))
	m, err := sim.New(&sim.Opts{Scenario: scenario, Seed: 7, Now: func() time.Time { return now }, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	agg := NewAggregator(100 * time.Millisecond)
	bat := &Batcher{MaxRecords: 10, MaxAge: 10 * time.Second}
	clk := wire.Clock{Synced: true, OffsetMs: 0.8, Source: "ntp"}
	var envs [][]byte
	var recs []wire.Record
	seq := uint64(0)
	seal := func(p Pending) {
		seq++
		b := wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: "gw-centro-01", Sensor: "m1",
			Seq: seq, SentAt: now.Truncate(time.Millisecond), Device: p.Device, Clock: p.Clock, Records: p.Records}
		e, err := wire.Seal(&b, key)
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, e)
		recs = append(recs, p.Records...)
	}
	for range n * 10 {
		now = now.Add(100*time.Millisecond + time.Duration(jit.IntN(7000)-3000)*time.Microsecond)
		s := mustSense(t, m)
		outs, err := agg.Add(s, clk)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			for _, p := range bat.Add(o, now) {
				seal(p)
			}
		}
	}
	return envs, recs
}

func mustSense(t testing.TB, m *sim.Dev) (s bridge.Sample) {
	t.Helper()
	if err := m.Sense(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBatchSizeAndWholeMsHistograms checks what a real gateway batch looks
// like on the wire: histogram bins are whole milliseconds that add up to
// exactly the record's dur_ms, and a batch of 10 records of bar music stays
// near its measured size (docs/wire.md, docs/gateway.md quote it).
func TestBatchSizeAndWholeMsHistograms(t *testing.T) {
	for _, sc := range []sim.Scenario{sim.BarMusic, sim.QuietNight, sim.Construction} {
		envs, recs := sealedBatches(t, sc, 600)
		total := 0
		for _, e := range envs {
			total += len(e)
		}
		for _, r := range recs {
			if r.Hist == nil {
				t.Fatalf("record %v without histogram", r.T)
			}
			var sum int64
			for b, ms := range r.Hist.Bins {
				if ms != float64(int64(ms)) || ms <= 0 {
					t.Fatalf("record %v bin %d = %v ms, want a positive whole number", r.T, b, ms)
				}
				sum += int64(ms)
			}
			if sum != r.DurMs {
				t.Fatalf("record %v: bins add up to %d ms, dur_ms %d", r.T, sum, r.DurMs)
			}
		}
		perBatch := total / len(envs)
		t.Logf("%s: %d batches of 10 records, %d bytes per batch (envelope, signed)", sc, len(envs), perBatch)
		// Measured: 2.9 kB with fractional-ms bins, 2.5–2.6 kB with whole ones.
		if perBatch > 2700 {
			t.Errorf("%s: %d bytes per batch of 10 records; with whole-ms bins it was 2.5–2.6 kB", sc, perBatch)
		}
	}
}

func TestWholeMs(t *testing.T) {
	tests := []struct {
		name  string
		in    map[int]float64
		total int64
		want  map[int]float64
	}{
		{"already whole", map[int]float64{500: 900, 700: 100}, 1000, map[int]float64{500: 900, 700: 100}},
		{"largest remainder", map[int]float64{500: 333.4, 501: 333.3, 502: 333.3}, 1000, map[int]float64{500: 334, 501: 333, 502: 333}},
		{"tie goes to the lower bin", map[int]float64{600: 0.5, 601: 0.5}, 1, map[int]float64{600: 1}},
		{"sub-ms bin dropped", map[int]float64{600: 999.6, 601: 0.4}, 1000, map[int]float64{600: 1000}},
		{"straddling samples", map[int]float64{573: 863.957, 574: 36.043, 580: 100}, 1000, map[int]float64{573: 864, 574: 36, 580: 100}},
		{"empty", map[int]float64{}, 0, map[int]float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := wholeMs(level.Histogram{Bins: tc.in}, tc.total)
			if len(got.Bins) != len(tc.want) {
				t.Fatalf("wholeMs = %v, want %v", got.Bins, tc.want)
			}
			for b, ms := range tc.want {
				if got.Bins[b] != ms {
					t.Fatalf("wholeMs = %v, want %v", got.Bins, tc.want)
				}
			}
		})
	}
}
