package gateway

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

func TestEnvRecordOf(t *testing.T) {
	now := t0.Add(time.Minute)
	full := bridge.Env{At: t0.Add(1500 * time.Microsecond), TemperatureC: 21.456, HumidityPct: 55.554, PressureHPa: 1013.255,
		HasTemperature: true, HasHumidity: true, HasPressure: true}
	with := func(f func(e *bridge.Env)) bridge.Env { e := full; f(&e); return e }
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		in   bridge.Env
		want *wire.EnvRecord // nil: refused
	}{
		{"all three, rounded, ms UTC", full, &wire.EnvRecord{T: t0.Add(time.Millisecond), TemperatureC: f(21.46), HumidityPct: f(55.55), PressureHPa: f(1013.26)}},
		{"BMP280: no humidity", with(func(e *bridge.Env) { e.HasHumidity = false }), &wire.EnvRecord{T: t0.Add(time.Millisecond), TemperatureC: f(21.46), PressureHPa: f(1013.26)}},
		{"temperature only", with(func(e *bridge.Env) { e.HasHumidity, e.HasPressure = false, false }), &wire.EnvRecord{T: t0.Add(time.Millisecond), TemperatureC: f(21.46)}},
		{"no time: gateway now", with(func(e *bridge.Env) { e.At = time.Time{} }), &wire.EnvRecord{T: now, TemperatureC: f(21.46), HumidityPct: f(55.55), PressureHPa: f(1013.26)}},
		{"local zone to UTC", with(func(e *bridge.Env) { e.At = t0.In(time.FixedZone("BRT", -3*3600)) }), &wire.EnvRecord{T: t0, TemperatureC: f(21.46), HumidityPct: f(55.55), PressureHPa: f(1013.26)}},
		{"edges", with(func(e *bridge.Env) { e.TemperatureC, e.HumidityPct, e.PressureHPa = -60, 100, 300 }), &wire.EnvRecord{T: t0.Add(time.Millisecond), TemperatureC: f(-60), HumidityPct: f(100), PressureHPa: f(300)}},
		{"other edges", with(func(e *bridge.Env) { e.TemperatureC, e.HumidityPct, e.PressureHPa = 90, 0, 1100 }), &wire.EnvRecord{T: t0.Add(time.Millisecond), TemperatureC: f(90), HumidityPct: f(0), PressureHPa: f(1100)}},
		{"unmeasured value ignored", with(func(e *bridge.Env) { e.HasPressure, e.PressureHPa = false, -5 }), &wire.EnvRecord{T: t0.Add(time.Millisecond), TemperatureC: f(21.46), HumidityPct: f(55.55)}},
		{"nothing measured", bridge.Env{At: t0, TemperatureC: 20}, nil},
		{"temperature NaN", with(func(e *bridge.Env) { e.TemperatureC = math.NaN() }), nil},
		{"humidity +Inf", with(func(e *bridge.Env) { e.HumidityPct = math.Inf(1) }), nil},
		{"too cold", with(func(e *bridge.Env) { e.TemperatureC = -60.01 }), nil},
		{"too hot", with(func(e *bridge.Env) { e.TemperatureC = 90.5 }), nil},
		{"humidity over 100", with(func(e *bridge.Env) { e.HumidityPct = 100.2 }), nil},
		{"negative humidity", with(func(e *bridge.Env) { e.HumidityPct = -1 }), nil},
		{"pressure low", with(func(e *bridge.Env) { e.PressureHPa = 299.9 }), nil},
		{"pressure high", with(func(e *bridge.Env) { e.PressureHPa = 1100.1 }), nil},
	}
	topic, _ := wire.ParseTopic(wire.EnvTopic("lapa", "gw", "m1"))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EnvRecordOf(tc.in, now)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("accepted %+v", got)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(tc.want)
				if string(gj) != string(wj) {
					t.Fatalf("got %s, want %s", gj, wj)
				}
			}
			// The gateway and the wire contract agree on every finite value:
			// what the gateway sends, the central service accepts; what it
			// refuses, the central service would reject.
			if !finite(tc.in) {
				return
			}
			rec := got
			if err != nil {
				rec = rawRecord(tc.in)
			}
			b := &wire.Batch{V: 1, Kind: wire.KindEnv, Municipality: "lapa", Gateway: "gw", Sensor: "m1", Seq: 1,
				Device: wire.Device{Model: "Bosch BME280", Serial: "x", Grade: "screening"}, Env: []wire.EnvRecord{rec}}
			verr := wire.Validate(topic, nil, b, now, wire.DefaultSkew, wire.DefaultStale)
			if (verr == nil) != (err == nil) {
				t.Fatalf("gateway error %v but wire.Validate %v", err, verr)
			}
		})
	}
}

func finite(e bridge.Env) bool {
	for _, v := range []float64{e.TemperatureC, e.HumidityPct, e.PressureHPa} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// rawRecord is e on the wire without the gateway's checks.
func rawRecord(e bridge.Env) wire.EnvRecord {
	r := wire.EnvRecord{T: e.At}
	if e.HasTemperature {
		r.TemperatureC = &e.TemperatureC
	}
	if e.HasHumidity {
		r.HumidityPct = &e.HumidityPct
	}
	if e.HasPressure {
		r.PressureHPa = &e.PressureHPa
	}
	return r
}

func TestEnvBatcher(t *testing.T) {
	rec := func(min int) wire.EnvRecord {
		v := 20.0
		return wire.EnvRecord{T: t0.Add(time.Duration(min) * time.Minute), TemperatureC: &v}
	}
	bme := bridge.Device{Model: "Bosch BME280", Serial: "a", Grade: bridge.GradeScreening}
	other := bme
	other.Serial = "b"
	unsynced := wire.Clock{Source: "none", OffsetMs: 16000}
	worse := synced
	worse.OffsetMs = 30
	type in struct {
		min int
		dev bridge.Device
		clk wire.Clock
	}
	tests := []struct {
		name   string
		max    int
		age    time.Duration
		in     []in
		sizes  []int
		remain int
	}{
		{"by count", 3, time.Hour, []in{{0, bme, synced}, {1, bme, synced}, {2, bme, synced}, {3, bme, synced}}, []int{3}, 1},
		{"by reading-time span", 100, 10 * time.Minute, []in{{0, bme, synced}, {5, bme, synced}, {10, bme, synced}, {11, bme, synced}}, []int{2}, 2},
		{"device change", 100, time.Hour, []in{{0, bme, synced}, {1, other, synced}}, []int{1}, 1},
		{"sync change", 100, time.Hour, []in{{0, bme, synced}, {1, bme, unsynced}, {2, bme, unsynced}, {3, bme, synced}}, []int{1, 2}, 1},
		{"offset change keeps the batch", 100, time.Hour, []in{{0, bme, synced}, {1, bme, worse}}, nil, 2},
		{"one-reading batches", 1, time.Hour, []in{{0, bme, synced}, {1, bme, synced}}, []int{1, 1}, 0},
		{"zero max means one", 0, time.Hour, []in{{0, bme, synced}}, []int{1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &EnvBatcher{MaxRecords: tc.max, MaxAge: tc.age}
			var sizes []int
			var all []PendingEnv
			for _, x := range tc.in {
				r := rec(x.min)
				for _, p := range b.Add(r, x.dev, x.clk, r.T) {
					sizes = append(sizes, len(p.Env))
					all = append(all, p)
				}
			}
			if len(sizes) != len(tc.sizes) {
				t.Fatalf("batch sizes %v, want %v", sizes, tc.sizes)
			}
			for i := range sizes {
				if sizes[i] != tc.sizes[i] {
					t.Fatalf("batch sizes %v, want %v", sizes, tc.sizes)
				}
			}
			if b.Len() != tc.remain {
				t.Fatalf("%d readings left open, want %d", b.Len(), tc.remain)
			}
			for _, p := range all {
				if p.Device.Model != "Bosch BME280" || p.Device.Grade != "screening" {
					t.Errorf("device %+v", p.Device)
				}
			}
		})
	}
	t.Run("worst offset and due by wall time", func(t *testing.T) {
		b := &EnvBatcher{MaxRecords: 10, MaxAge: 10 * time.Minute}
		b.Add(rec(0), bme, synced, t0)
		b.Add(rec(1), bme, worse, t0.Add(time.Minute))
		b.Add(rec(2), bme, synced, t0.Add(2*time.Minute))
		if _, ok := b.Due(t0.Add(10*time.Minute - time.Millisecond)); ok {
			t.Fatal("due before MaxAge")
		}
		p, ok := b.Due(t0.Add(10 * time.Minute))
		if !ok || len(p.Env) != 3 || p.Clock.OffsetMs != 30 || !p.Clock.Synced {
			t.Fatalf("due batch %+v %v", p, ok)
		}
		if _, ok := b.Flush(); ok {
			t.Fatal("flush after due returned a batch")
		}
	})
}

// envFake is a scripted environmental sensor: readings[i] answers call
// i+1 (the last one repeats), stamped start + (i+1) s; a nil entry is a
// bus error.
type envFake struct {
	mu       sync.Mutex
	start    time.Time
	readings []*bridge.Env
	n        int
}

func (f *envFake) SenseEnv(e *bridge.Env) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.readings[min(f.n, len(f.readings)-1)]
	f.n++
	if r == nil {
		return errors.New("i2c: NACK")
	}
	*e = *r
	e.At = f.start.Add(time.Duration(f.n) * time.Second)
	return nil
}
func (f *envFake) String() string { return "envFake" }
func (f *envFake) calls() int     { f.mu.Lock(); defer f.mu.Unlock(); return f.n }

// ackPub is a broker plus central service that stores every batch and
// acks it at once (batches arrive in seq order here).
type ackPub struct {
	fakePub
	g *Gateway
}

func (a *ackPub) Publish(ctx context.Context, topic string, payload []byte, retained bool) error {
	if err := a.fakePub.Publish(ctx, topic, payload, retained); err != nil {
		return err
	}
	if _, b, err := wire.Open(payload); err == nil {
		ack, _ := json.Marshal(wire.Ack{V: 1, Gateway: b.Gateway, Seq: b.Seq})
		a.g.HandleAck(ack)
	}
	return nil
}

// TestGatewayEnv runs levels and env together: env batches use the env
// topic and the shared seq space, bad readings are counted and left out,
// the rest all arrive (or wait in the outbox after the stop), in order.
func TestGatewayEnv(t *testing.T) {
	box, err := OpenOutbox(filepath.Join(t.TempDir(), "o.db"), 100000)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	pub, priv, _ := ed25519.GenerateKey(nil)
	good := &bridge.Env{TemperatureC: 24.5, HumidityPct: 61, PressureHPa: 1009.8, HasTemperature: true, HasHumidity: true,
		HasPressure: true, Device: bridge.Device{Model: "Bosch BME280", Serial: "bme280-0x76"}}
	nan := *good
	nan.TemperatureC = math.NaN()
	hot := *good
	hot.TemperatureC = 120
	anon := *good
	anon.Device = bridge.Device{}
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	sensor := &envFake{start: start, readings: []*bridge.Env{good, nil, good, &nan, good, &hot, &anon, good}}
	ap := &ackPub{}
	g, err := New(Options{Municipality: "lapa", Gateway: "gw", Sensor: "m1", SamplePeriod: 5 * time.Millisecond,
		BatchRecords: 5, ReplayRate: 10000, AckTimeout: time.Hour,
		Env: EnvOptions{Sensor: "amb-1", Interval: 3 * time.Millisecond, BatchRecords: 4, BatchMaxAge: time.Hour}},
		&stepMeter{start: start}, FixedSync(synced), box, priv, ap, nil)
	if err != nil {
		t.Fatal(err)
	}
	ap.g = g
	g.SetEnvSensor(sensor)
	envTopic := wire.EnvTopic("lapa", "gw", "amb-1")
	if g.EnvTopic() != envTopic {
		t.Fatalf("env topic %s", g.EnvTopic())
	}
	levelsTopic := wire.LevelsTopic("lapa", "gw", "m1")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	g.OnConnect()
	wait(t, "env and levels batches", func() bool {
		return len(ap.batches(t, envTopic)) >= 6 && len(ap.batches(t, levelsTopic)) >= 6
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := g.EnvErrors(); n != 4 {
		t.Errorf("env errors %d, want 4 (NACK, NaN, out of range, no serial)", n)
	}

	// Published batches and what the stop left in the outbox cover
	// 1..LastSeq once each.
	seen := map[uint64]*wire.Batch{}
	sent := map[uint64]string{}
	for _, topic := range []string{envTopic, levelsTopic} {
		ap.mu.Lock()
		payloads := append([][]byte(nil), ap.msgs[topic]...)
		ap.mu.Unlock()
		for _, p := range payloads {
			env, b, err := wire.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := signature.Verify(env, pub); err != nil {
				t.Fatalf("seq %d: %v", b.Seq, err)
			}
			tp, _ := wire.ParseTopic(topic)
			if err := wire.Validate(tp, env, b, time.Now(), wire.DefaultSkew, wire.DefaultStale); err != nil {
				t.Fatalf("seq %d on %s invalid: %v", b.Seq, topic, err)
			}
			if seen[b.Seq] != nil {
				t.Fatalf("seq %d published twice", b.Seq)
			}
			seen[b.Seq], sent[b.Seq] = b, string(p)
		}
	}
	rest, err := box.After(context.Background(), box.Acked(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rest {
		_, b, err := wire.Open(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := sent[e.Seq]; ok { // published, its ack not yet applied
			if p != string(e.Payload) || b.Seq != e.Seq {
				t.Fatalf("seq %d: outbox holds other bytes than were published", e.Seq)
			}
			continue
		}
		seen[b.Seq] = b
	}
	var envTimes []time.Time
	kinds := map[string]int{}
	for seq := uint64(1); seq <= box.LastSeq(); seq++ {
		b := seen[seq]
		if b == nil {
			t.Fatalf("seq %d missing (last %d)", seq, box.LastSeq())
		}
		kinds[b.Kind]++
		if b.Kind != wire.KindEnv {
			continue
		}
		if b.Sensor != "amb-1" || len(b.Records) != 0 || len(b.Env) == 0 || len(b.Env) > 4 {
			t.Fatalf("env batch %+v", b)
		}
		if b.Device.Grade != "screening" || b.Device.Model != "Bosch BME280" || !b.Clock.Synced {
			t.Errorf("env batch device %+v clock %+v", b.Device, b.Clock)
		}
		for _, r := range b.Env {
			envTimes = append(envTimes, r.T)
		}
	}
	// Calls 2 (NACK), 4 (NaN), 6 (120 °C) and 7 (no model/serial) give
	// nothing; every other call's reading is delivered or pending.
	var want []time.Time
	for n := 1; n <= sensor.calls(); n++ {
		if n != 2 && n != 4 && n != 6 && n != 7 {
			want = append(want, start.Add(time.Duration(n)*time.Second))
		}
	}
	if len(envTimes) != len(want) {
		t.Fatalf("%d env readings delivered or pending, sensor gave %d good ones", len(envTimes), len(want))
	}
	for i := range want {
		if !envTimes[i].Equal(want[i].UTC()) {
			t.Fatalf("env reading %d at %s, want %s", i, envTimes[i], want[i])
		}
	}
	if kinds[wire.KindEnv] < 6 || kinds[wire.KindLevels] < 6 {
		t.Errorf("kinds %v", kinds)
	}
}

// errMeter never answers: only the environmental sensor fills the outbox.
type errMeter struct{}

func (errMeter) Sense(*bridge.Sample) error { return errors.New("no meter") }
func (errMeter) Halt() error                { return nil }
func (errMeter) String() string             { return "err" }

// TestEnvFullOutbox: nothing is acked, the outbox fills with env readings;
// drop-new keeps reading and counts refused readings, stop-sampling stops
// reading and counts each reading not taken.
func TestEnvFullOutbox(t *testing.T) {
	for _, policy := range []FullPolicy{DropNew, StopSampling} {
		t.Run(string(policy), func(t *testing.T) {
			box, err := OpenOutbox(filepath.Join(t.TempDir(), "o.db"), 6)
			if err != nil {
				t.Fatal(err)
			}
			defer box.Close()
			_, priv, _ := ed25519.GenerateKey(nil)
			good := &bridge.Env{TemperatureC: 20, HasTemperature: true, Device: bridge.Device{Model: "m", Serial: "s"}}
			sensor := &envFake{start: time.Now().Add(-time.Hour), readings: []*bridge.Env{good}}
			g, err := New(Options{Municipality: "lapa", Gateway: "gw", Sensor: "m1", FullPolicy: policy,
				Env: EnvOptions{Interval: 2 * time.Millisecond, BatchRecords: 3}}, errMeter{}, FixedSync(synced), box, priv, &fakePub{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			g.SetEnvSensor(sensor)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- g.Run(ctx) }()
			wait(t, "dropped readings", func() bool { return box.Stats().Dropped >= 9 })
			calls := sensor.calls()
			if policy == DropNew {
				wait(t, "drop-new to keep reading", func() bool { return sensor.calls() >= calls+20 })
			} else {
				wait(t, "more drops", func() bool { return box.Stats().Dropped >= 30 })
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			st := box.Stats()
			if !st.Full || st.Pending != 6 || box.LastSeq() != 2 {
				t.Errorf("outbox %+v last seq %d, want full with two batches of 3", st, box.LastSeq())
			}
			if policy == StopSampling {
				// The sensor is not read while the outbox is full: the two
				// stored batches took all the readings there were.
				if n := sensor.calls(); n != 6 {
					t.Errorf("stop-sampling read the sensor %d times, want 6 (two batches of 3)", n)
				}
			}
		})
	}
}

func TestEnvOptions(t *testing.T) {
	o := Options{Municipality: "lapa", Gateway: "gw", Sensor: "m1"}
	o.fill()
	if o.Env.Sensor != "m1" || o.Env.Interval != time.Minute || o.Env.BatchRecords != 10 || o.Env.BatchMaxAge != 10*time.Minute {
		t.Errorf("env defaults %+v", o.Env)
	}
	for _, e := range []EnvOptions{{Sensor: "Amb"}, {BatchRecords: wire.MaxRecords + 1}} {
		o := Options{Municipality: "lapa", Gateway: "gw", Sensor: "m1", Env: e}
		if err := o.Validate(); err == nil {
			t.Errorf("env options %+v accepted", e)
		}
	}
}
