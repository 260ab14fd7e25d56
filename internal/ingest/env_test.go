package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

func mkEnv(seq uint64, readings ...wire.EnvRecord) *wire.Batch {
	return &wire.Batch{V: 1, Kind: wire.KindEnv, Municipality: "lapa", Gateway: "gw-a", Sensor: "gw-a-s1", Seq: seq, SentAt: now,
		Device: wire.Device{Model: "BME280", Serial: "76", Grade: "screening"}, Clock: wire.Clock{Synced: true}, Env: readings}
}

func ptr(v float64) *float64 { return &v }

// TestEnvRecordsValidatedAndStored: env batches (wire.KindEnv) go through
// the same checks as levels, are stored per sensor and read back with
// store.EnvRecords; bad ones are dead-lettered with their reason and, having
// authenticated, still advance the ack.
func TestEnvRecordsValidatedAndStored(t *testing.T) {
	h := newHarness(t, testRegistry(t, "gw-a"))
	key := loadgen.Key(seed, "gw-a")
	topic := wire.EnvTopic("lapa", "gw-a", "gw-a-s1")
	t0 := now.Add(-time.Hour).Truncate(time.Minute)
	cases := []struct {
		name   string
		batch  *wire.Batch
		reason string // "" = accepted
	}{
		{"all quantities", mkEnv(1, wire.EnvRecord{T: t0, TemperatureC: ptr(21.5), HumidityPct: ptr(63), PressureHPa: ptr(918.2)}), ""},
		{"temperature only", mkEnv(2, wire.EnvRecord{T: t0.Add(time.Minute), TemperatureC: ptr(-3.25)}), ""},
		{"humidity 150 %", mkEnv(3, wire.EnvRecord{T: t0.Add(2 * time.Minute), HumidityPct: ptr(150)}), wire.ReasonRange},
		{"no quantity", mkEnv(4, wire.EnvRecord{T: t0.Add(3 * time.Minute)}), wire.ReasonSchema},
		{"from next year", mkEnv(5, wire.EnvRecord{T: now.AddDate(1, 0, 0), PressureHPa: ptr(1000)}), wire.ReasonTime},
		{"levels records on the env topic", func() *wire.Batch {
			b := mkBatch("gw-a", "gw-a-s1", 6, t0, 60)
			b.Kind = wire.KindEnv
			return b
		}(), wire.ReasonSchema},
	}
	for _, tc := range cases {
		h.offer(t, topic, seal(t, tc.batch, key))
		h.waitDone(t)
	}
	ctx := context.Background()
	got, err := h.st.EnvRecords(ctx, "gw-a-s1", t0.Add(-time.Minute), now, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.EnvRecord{
		{Sensor: "gw-a-s1", Gateway: "gw-a", Seq: 1, T: t0, TemperatureC: ptr(21.5), HumidityPct: ptr(63), PressureHPa: ptr(918.2)},
		{Sensor: "gw-a-s1", Gateway: "gw-a", Seq: 2, T: t0.Add(time.Minute), TemperatureC: ptr(-3.25)},
	}
	if len(got) != len(want) {
		t.Fatalf("env records = %+v, want %+v", got, want)
	}
	eq := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	for i := range want {
		g, w := got[i], want[i]
		if g.Sensor != w.Sensor || g.Gateway != w.Gateway || g.Seq != w.Seq || !g.T.Equal(w.T) ||
			!eq(g.TemperatureC, w.TemperatureC) || !eq(g.HumidityPct, w.HumidityPct) || !eq(g.PressureHPa, w.PressureHPa) {
			t.Errorf("env record %d = %+v, want %+v", i, g, w)
		}
	}
	if lim, _ := h.st.EnvRecords(ctx, "gw-a-s1", t0.Add(-time.Minute), now, 1); len(lim) != 1 || lim[0].Seq != 1 {
		t.Errorf("limit 1: %+v", lim)
	}
	if none, _ := h.st.EnvRecords(ctx, "gw-a-s1", t0.Add(time.Hour), now.Add(time.Hour), 0); len(none) != 0 {
		t.Errorf("outside the window: %+v", none)
	}
	// Env records are not level records.
	if n, _ := h.st.CountLevels(ctx, "gw-a-s1"); n != 0 {
		t.Errorf("%d level records from env batches", n)
	}
	dls, _ := h.st.DeadLetters(ctx, store.DeadLetterFilter{Limit: 100})
	reasons := map[uint64]string{}
	for _, d := range dls {
		reasons[d.Seq] = d.Reason
	}
	for _, tc := range cases {
		if reasons[tc.batch.Seq] != tc.reason {
			t.Errorf("%s: dead-letter reason %q, want %q", tc.name, reasons[tc.batch.Seq], tc.reason)
		}
	}
	if got := h.acks.last("gw-a"); got != uint64(len(cases)) {
		t.Errorf("ack %d, want %d (rejected env batches authenticated, so they settle)", got, len(cases))
	}
}

// TestEnvObserved: every newly stored env record reaches the observers that
// implement EnvObserver, in store order, with its batch's facts; duplicates
// and rejected batches are not observed, and env records are never handed
// to Observe as level readings.
func TestEnvObserved(t *testing.T) {
	h := newHarness(t, testRegistry(t, "gw-a"))
	key := loadgen.Key(seed, "gw-a")
	topic := wire.EnvTopic("lapa", "gw-a", "gw-a-s1")
	t0 := now.Add(-time.Hour).Truncate(time.Minute)
	steps := []struct {
		name  string
		batch *wire.Batch
	}{
		{"two readings", mkEnv(1, wire.EnvRecord{T: t0, TemperatureC: ptr(18.25), HumidityPct: ptr(81)},
			wire.EnvRecord{T: t0.Add(time.Minute), PressureHPa: ptr(912.4)})},
		{"duplicate of seq 1", mkEnv(1, wire.EnvRecord{T: t0, TemperatureC: ptr(18.25), HumidityPct: ptr(81)},
			wire.EnvRecord{T: t0.Add(time.Minute), PressureHPa: ptr(912.4)})},
		{"out of range (rejected)", mkEnv(2, wire.EnvRecord{T: t0.Add(2 * time.Minute), HumidityPct: ptr(120)})},
		{"one more", mkEnv(3, wire.EnvRecord{T: t0.Add(3 * time.Minute), TemperatureC: ptr(17.5)})},
	}
	for _, st := range steps {
		h.offer(t, topic, seal(t, st.batch, key))
		h.waitDone(t) // one at a time: store order is send order
	}
	type obs struct {
		seq   uint64
		t     time.Time
		tempC float64
		press float64
	}
	val := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	want := []obs{{1, t0, 18.25, -1}, {1, t0.Add(time.Minute), -1, 912.4}, {3, t0.Add(3 * time.Minute), 17.5, -1}}
	h.obs.mu.Lock()
	defer h.obs.mu.Unlock()
	if len(h.obs.readings) != 0 {
		t.Errorf("env records observed as level readings: %+v", h.obs.readings)
	}
	if len(h.obs.env) != len(want) {
		t.Fatalf("observed %d env records, want %d: %+v", len(h.obs.env), len(want), h.obs.env)
	}
	for i, w := range want {
		e := h.obs.env[i]
		got := obs{e.Seq, e.Record.T, val(e.Record.TemperatureC), val(e.Record.PressureHPa)}
		if got != w {
			t.Errorf("env %d = %+v, want %+v", i, got, w)
		}
		if e.Sensor != "gw-a-s1" || e.Gateway != "gw-a" || e.Municipality != "lapa" || !e.Verified ||
			e.Device.Model != "BME280" || e.Device.Grade != "screening" || !e.ReceivedAt.Equal(now) {
			t.Errorf("env %d facts = %+v", i, e)
		}
	}
}
