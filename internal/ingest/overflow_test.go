package ingest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sossego/sossego/gateway/gatewaytest"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

// metric is the first sample of the metric family called name in reg.
func metric(t *testing.T, reg *prometheus.Registry, name string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0]
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

// counter is the value of the counter called name in reg.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	return metric(t, reg, name).GetCounter().GetValue()
}

// TestSubscriberFullQueueWaits: with an external broker and the store
// stalled, the subscriber's handler waits for room once the ingest queue
// is full — back-pressure into paho and the broker — instead of refusing
// messages and reconnecting to have them redelivered (which, under a
// backlog, fed on itself). Counted at the store and the broker: every
// batch published (QoS 1, by a plain paho publisher, no gateway outbox to
// fall back on) is stored once and acknowledged, over the one connection.
func TestSubscriberFullQueueWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts brokers")
	}
	for _, name := range []string{"mosquitto", "mochi"} {
		start := restartableBrokers()[name]
		t.Run(name, func(t *testing.T) {
			b := start(t)
			st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			gate := make(chan struct{})
			reg := prometheus.NewRegistry()
			waits := func() float64 { return counter(t, reg, "sossego_ingest_queue_overflow_total") }
			acks := observeAcks(t, b.url)
			sub := runSubscriber(t, b.url, "central-overflow", Options{Store: gatedStore{Store: st, gate: gate},
				Registry: testRegistry(t, "gw-a"), Workers: 1, QueueSize: 4, MaxGroup: 2, Metrics: NewMetrics(reg)})
			// What the stalled ingest can hold (queue 4, the worker's one,
			// 2 waiting for the writer, the writer's group of at most 2: 9)
			// is well under the broker's in-flight window (Mosquitto's
			// max_inflight_messages, 20): the queue fills whatever share of
			// that window the broker has sent when the test looks.
			const n = 300
			pub := paho.NewClient(paho.NewClientOptions().AddBroker(b.url).SetClientID("plain-publisher"))
			if tok := pub.Connect(); tok.Wait() && tok.Error() != nil {
				t.Fatal(tok.Error())
			}
			defer pub.Disconnect(100)
			key := loadgen.Key(seed, "gw-a")
			topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
			start := time.Now().Add(-time.Hour).Truncate(time.Second)
			for s := 1; s <= n; s++ {
				p := seal(t, mkBatch("gw-a", "gw-a-s1", uint64(s), start.Add(time.Duration(s)*time.Second), 60), key)
				if tok := pub.Publish(topic, 1, false, p); tok.Wait() && tok.Error() != nil {
					t.Fatalf("publish %d: %v", s, tok.Error())
				}
			}
			// The store is stalled: the queue must have filled.
			if !gatewaytest.WaitFor(30*time.Second, func() bool { return waits() > 0 }) {
				t.Fatalf("the ingest queue never filled: %d queued, %d decoded waiting for the writer, %v broker connections",
					sub.in.QueueLen(), len(sub.in.items), counter(t, reg, "sossego_ingest_mqtt_connects_total"))
			}
			close(gate)
			if !gatewaytest.WaitFor(60*time.Second, func() bool { return acks.get("gw-a") == n }) {
				c, _ := st.CountLevels(context.Background(), "gw-a-s1")
				t.Fatalf("ack %d, want %d; %d records stored; %v waits", acks.get("gw-a"), n, c, waits())
			}
			if c, _ := st.CountLevels(context.Background(), "gw-a-s1"); c != n {
				t.Errorf("stored %d records, want %d", c, n)
			}
			if c := counter(t, reg, "sossego_ingest_mqtt_connects_total"); c != 1 {
				t.Errorf("%v connections to the broker, want 1 (no reconnect)", c)
			}
			t.Logf("%s: %v messages waited for room in the full queue, all %d stored over one connection", name, waits(), n)
		})
	}
}

// TestSubscriberStopsWhileWaiting: Run returns when its context ends even
// with the handler waiting for room in a queue that never drains.
func TestSubscriberStopsWhileWaiting(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts brokers")
	}
	b := restartableBrokers()["mochi"](t)
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg := prometheus.NewRegistry()
	in := New(Options{Store: gatedStore{Store: st, gate: make(chan struct{})}, Registry: testRegistry(t, "gw-a"),
		Workers: 1, QueueSize: 2, MaxGroup: 1, Metrics: NewMetrics(reg)})
	sub := NewSubscriber(in, SubscriberOptions{URL: b.url, ClientID: "central-stop"})
	in.SetAcker(sub)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inDone, subDone := make(chan error, 1), make(chan error, 1)
	go func() { inDone <- in.Run(ctx) }()
	go func() { subDone <- sub.Run(ctx) }()
	if !gatewaytest.WaitFor(20*time.Second, sub.Connected) {
		t.Fatal("subscriber did not connect")
	}
	pub := paho.NewClient(paho.NewClientOptions().AddBroker(b.url).SetClientID("plain-publisher"))
	if tok := pub.Connect(); tok.Wait() && tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer pub.Disconnect(100)
	key := loadgen.Key(seed, "gw-a")
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	for s := 1; s <= 20; s++ {
		p := seal(t, mkBatch("gw-a", "gw-a-s1", uint64(s), start.Add(time.Duration(s)*time.Second), 60), key)
		pub.Publish(wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), 1, false, p).Wait()
	}
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return counter(t, reg, "sossego_ingest_queue_overflow_total") > 0 }) {
		t.Fatal("the ingest queue never filled")
	}
	cancel()
	for name, done := range map[string]chan error{"subscriber": subDone, "ingester": inDone} {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s Run: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s Run did not return after its context ended", name)
		}
	}
}
