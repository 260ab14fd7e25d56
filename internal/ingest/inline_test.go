package ingest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/gateway/gatewaytest"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

// fakeBroker is an in-process broker with topic filters reduced to the
// three ingest subscribes to, and a record of what the service published.
type fakeBroker struct {
	mu       sync.Mutex
	handlers map[string]func(topic string, payload []byte)
	acks     map[string]wire.Ack // topic → last ack
}

func (b *fakeBroker) Subscribe(filter string, _ int, h func(topic string, payload []byte)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.handlers[filter] = h
	return nil
}

func (b *fakeBroker) Publish(topic string, payload []byte) error {
	var a wire.Ack
	if err := json.Unmarshal(payload, &a); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acks[topic] = a
	return nil
}

func (b *fakeBroker) deliver(filter, topic string, payload []byte) {
	b.mu.Lock()
	h := b.handlers[filter]
	b.mu.Unlock()
	h(topic, payload)
}

func (b *fakeBroker) lastAck(topic string) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.acks[topic].Seq
}

// gatedStore holds every write until the gate opens.
type gatedStore struct {
	Store
	gate chan struct{}
}

func (g gatedStore) Apply(ctx context.Context, w store.Write) (store.Result, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return store.Result{}, ctx.Err()
	}
	return g.Store.Apply(ctx, w)
}

// TestInlineBackPressure: with the store stalled, the embedded broker's
// handler blocks once the ingest queue is full (holding back that
// gateway's connection) instead of dropping; when the store resumes every
// batch is stored once and acknowledged through the broker.
func TestInlineBackPressure(t *testing.T) {
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	gate := make(chan struct{})
	in := New(Options{Store: gatedStore{Store: st, gate: gate}, Registry: testRegistry(t, "gw-a"),
		Now: func() time.Time { return now }, Workers: 1, QueueSize: 4, MaxGroup: 2})
	fb := &fakeBroker{handlers: map[string]func(string, []byte){}, acks: map[string]wire.Ack{}}
	link, err := NewInline(in, fb)
	if err != nil {
		t.Fatal(err)
	}
	in.SetAcker(link)
	for _, f := range []string{wire.SubLevels, wire.SubEnv, wire.SubStatus} {
		if fb.handlers[f] == nil {
			t.Fatalf("no subscription on %s", f)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 2)
	go func() { runErr <- in.Run(ctx) }()
	go func() { runErr <- link.Run(ctx) }()

	const n = 40
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	delivered := make(chan int, n)
	go func() { // the gateway's connection goroutine in the broker
		for s := 1; s <= n; s++ {
			fb.deliver(wire.SubLevels, topic, seal(t, mkBatch("gw-a", "gw-a-s1", uint64(s), now.Add(-time.Hour).Add(time.Duration(s)*time.Second), 60), key))
			delivered <- s
		}
	}()
	// Queue (4) + worker + items channel (2) + the group held at the gate:
	// far fewer than n can be taken while the store is stalled. Once the
	// queue is full, the handler must be held there.
	if !gatewaytest.WaitFor(30*time.Second, func() bool { return in.QueueLen() == 4 || len(delivered) == n }) {
		t.Fatalf("the queue never filled with the store stalled (%d queued, %d delivered)", in.QueueLen(), len(delivered))
	}
	if got := len(delivered); got >= n {
		t.Fatalf("all %d messages were taken with the store stalled: nothing held back", got)
	}
	close(gate)
	ackTopic := wire.AckTopic("lapa", "gw-a")
	if !gatewaytest.WaitFor(20*time.Second, func() bool { return fb.lastAck(ackTopic) == n }) {
		t.Fatalf("ack %d after the store resumed, want %d", fb.lastAck(ackTopic), n)
	}
	if c, _ := st.CountLevels(context.Background(), "gw-a-s1"); c != n {
		t.Errorf("stored %d records, want %d", c, n)
	}
	if dl, err := st.DeadLetters(context.Background(), store.DeadLetterFilter{}); err != nil || len(dl) != 0 {
		t.Errorf("dead letters = %+v %v, want none", dl, err)
	}
	if !link.Connected() {
		t.Error("Connected() = false while running")
	}
	cancel()
	for range 2 {
		if err := <-runErr; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	if link.Connected() {
		t.Error("Connected() = true after Run ended")
	}
	if err := link.Ack("lapa", "gw-a", 1); err == nil {
		t.Error("Ack after Run ended: want an error")
	}
}

// TestInlineHandlerReleasedOnShutdown: a handler blocked on a full queue
// returns when the service stops (the gateway replays the batch later).
func TestInlineHandlerReleasedOnShutdown(t *testing.T) {
	in := New(Options{Store: gatedStore{gate: make(chan struct{})}, Registry: testRegistry(t, "gw-a"), QueueSize: 1})
	fb := &fakeBroker{handlers: map[string]func(string, []byte){}, acks: map[string]wire.Ack{}}
	link, err := NewInline(in, fb)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- link.Run(ctx) }() // no Ingester.Run: nothing drains the queue
	topic := wire.StatusTopic("lapa", "gw-a")
	fb.deliver(wire.SubStatus, topic, []byte(`{"v":1,"state":"online"}`)) // fills the queue
	returned := make(chan struct{})
	go func() {
		fb.deliver(wire.SubStatus, topic, []byte(`{"v":1,"state":"online"}`))
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("handler returned with the queue full")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("handler still blocked after shutdown")
	}
	if err := <-runDone; err != nil {
		t.Fatal(err)
	}
}
