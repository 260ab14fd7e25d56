package mqttconn_test

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/gateway/gatewaytest"
	"github.com/sossego/sossego/gateway/mqttconn"
	"github.com/sossego/sossego/internal/wire"
)

// TestEnvThroughOutbox runs a gateway with a meter and an environmental
// sensor through RunNode: env batches travel on the env topic in the same
// seq space as the levels, interleaved with them, across a broker outage;
// the test central service stores and acks them like levels, and after a
// drain every env reading the sensor gave is stored once, in order, and the
// outbox is empty.
func TestEnvThroughOutbox(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts brokers")
	}
	for name, start := range brokers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := start(t)
			id := "gw-env-" + name
			dir := t.TempDir()
			key, _, err := gateway.LoadOrCreateKey(dir)
			if err != nil {
				t.Fatal(err)
			}
			box, err := gateway.OpenOutbox(filepath.Join(dir, "outbox.db"), 1_000_000)
			if err != nil {
				t.Fatal(err)
			}
			defer box.Close()
			c := gatewaytest.StartCentral(t, b.url(), "central-"+id, map[string]ed25519.PublicKey{id: key.Public().(ed25519.PublicKey)})

			base := time.Now().Add(-24 * time.Hour).Truncate(time.Second)
			meter := &gatewaytest.Meter{Start: base}
			sensor := &gatewaytest.EnvSensor{Start: base, FailEvery: 7}
			opts := testOptions(id, gwOpts{period: 10 * time.Millisecond}) // 10 levels batches/s
			opts.Env = gateway.EnvOptions{Interval: 25 * time.Millisecond, BatchRecords: 4, BatchMaxAge: 10 * time.Second}
			run := func(m bridge.Meter, env gateway.EnvSensor) (stop func()) {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				// RunNode fills in the status and ack topics.
				tr := mqttconn.Options{Broker: b.url(), KeepAlive: 2 * time.Second, ConnectTimeout: 2 * time.Second,
					ConnectRetryInterval: 200 * time.Millisecond, MaxReconnectInterval: 500 * time.Millisecond}
				go func() {
					done <- mqttconn.RunNode(ctx, mqttconn.NodeOptions{Gateway: opts, MQTT: tr, Meter: m, Env: env,
						Sync: gateway.FixedSync(wire.Clock{Synced: true, OffsetMs: 1, Source: "ntp"}), Outbox: box, Key: key,
						Log: slog.New(slog.DiscardHandler)})
				}()
				return func() {
					cancel()
					if err := <-done; err != nil {
						t.Fatal(err)
					}
				}
			}
			envBatches := func() int {
				n := 0
				for _, s := range c.Batches(id) {
					if s.Kind == wire.KindEnv {
						n++
					}
				}
				return n
			}

			stop := run(meter, sensor)
			if !gatewaytest.WaitFor(30*time.Second, func() bool { return envBatches() >= 5 && c.Contiguous(id) >= 20 }) {
				stop()
				t.Fatalf("no env traffic: %d env batches, contiguous %d", envBatches(), c.Contiguous(id))
			}
			b.down()
			before := box.LastSeq()
			// Both loops keep filling the outbox (about 20 batches a second).
			if !gatewaytest.WaitFor(30*time.Second, func() bool { return box.LastSeq() >= before+20 }) {
				stop()
				t.Fatalf("the outbox stopped filling while the broker was down: %d batches queued", box.LastSeq()-before)
			}
			queued := box.LastSeq() - before
			b.up(t)
			after := envBatches()
			if !gatewaytest.WaitFor(30*time.Second, func() bool { return envBatches() >= after+5 }) {
				stop()
				t.Fatalf("env batches did not resume after the outage: %d", envBatches())
			}
			stop() // flushes the open levels and env batches into the outbox

			// A node with a silent meter and no env sensor delivers the rest.
			stop = run(deadMeter{}, nil)
			ok := gatewaytest.WaitFor(60*time.Second, func() bool {
				return c.Contiguous(id) == box.LastSeq() && box.Stats().Pending == 0 && box.Acked() == box.LastSeq()
			})
			stop()
			last := box.LastSeq()
			if !ok {
				t.Fatalf("not drained: central contiguous %d, last seq %d, acked %d, outbox %+v",
					c.Contiguous(id), last, box.Acked(), box.Stats())
			}

			// 1..last stored once, levels records once and in order, nothing rejected.
			levels := checkStore(t, c, id, last)
			if int64(levels) != meter.Count() {
				t.Errorf("stored %d level records, meter produced %d", levels, meter.Count())
			}
			var got []time.Time
			nEnv, switches := 0, 0
			bs := c.Batches(id)
			for i, s := range bs {
				if i > 0 && s.Kind != bs[i-1].Kind {
					switches++
				}
				if s.Kind != wire.KindEnv {
					continue
				}
				nEnv++
				if s.Sensor != sens || s.Device.Grade != "screening" || s.Device.Model != "Bosch BME280" || len(s.Records) != 0 {
					t.Fatalf("seq %d: env batch sensor %q device %+v", s.Seq, s.Sensor, s.Device)
				}
				for _, r := range s.Env {
					got = append(got, r.T)
				}
			}
			want := sensor.Taken()
			if len(got) != len(want) {
				t.Fatalf("stored %d env readings, the sensor gave %d (%d attempts)", len(got), len(want), sensor.Attempts())
			}
			for i := range want {
				if !got[i].Equal(want[i]) {
					t.Fatalf("env reading %d at %s, want %s: lost, duplicated or out of order", i, got[i], want[i])
				}
			}
			if switches < 4 {
				t.Errorf("env and levels batches not interleaved in the seq space: %d kind switches", switches)
			}
			t.Logf("%d batches (%d env, %d levels; %d kind switches), %d during the outage; %d env readings and %d level records stored once in order; %d redeliveries ignored",
				last, nEnv, int(last)-nEnv, switches, queued, len(got), levels, c.Duplicates())
		})
	}
}
