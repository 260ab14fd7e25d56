package gateway

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

// fakePub records what the gateway publishes (a broker that PUBACKs all).
type fakePub struct {
	mu   sync.Mutex
	msgs map[string][][]byte
}

func (f *fakePub) Publish(_ context.Context, topic string, payload []byte, _ bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.msgs == nil {
		f.msgs = map[string][][]byte{}
	}
	f.msgs[topic] = append(f.msgs[topic], payload)
	return nil
}

func (f *fakePub) batches(t *testing.T, topic string) []*wire.Batch {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*wire.Batch
	for _, p := range f.msgs[topic] {
		_, b, err := wire.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// stepMeter produces 1-s Leq samples, one per Sense, from start.
type stepMeter struct {
	mu    sync.Mutex
	start time.Time
	n     int
}

func (m *stepMeter) Sense(s *bridge.Sample) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	*s = bridge.Sample{At: m.start.Add(time.Duration(m.n) * time.Second), Duration: time.Second,
		Weighting: bridge.WeightingA, TimeWeighting: bridge.Leq, Level: 50, Device: dev}
	return nil
}
func (m *stepMeter) Halt() error    { return nil }
func (m *stepMeter) String() string { return "step" }

func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(60 * time.Second) // generous: a loaded 2-core CI machine under -race
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

func TestGatewayUnsyncedClockAndAckAhead(t *testing.T) {
	box, err := OpenOutbox(filepath.Join(t.TempDir(), "o.db"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	pub, priv, _ := ed25519.GenerateKey(nil)
	var syncMu sync.Mutex
	state := wire.Clock{Synced: false, OffsetMs: 16000, Source: "none"}
	src := SyncFunc(func() (wire.Clock, error) { syncMu.Lock(); defer syncMu.Unlock(); return state, nil })
	fp := &fakePub{}
	g, err := New(Options{Municipality: "lapa", Gateway: "gw", Sensor: "m1", SamplePeriod: 5 * time.Millisecond,
		BatchRecords: 5, ReplayRate: 1000, AckTimeout: time.Hour}, &stepMeter{start: time.Now().Add(-time.Hour).Truncate(time.Second)},
		src, box, priv, fp, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	g.OnConnect()
	topic := wire.LevelsTopic("lapa", "gw", "m1")
	wait(t, "unsynced batches", func() bool { return len(fp.batches(t, topic)) >= 2 })
	syncMu.Lock()
	state = wire.Clock{Synced: true, OffsetMs: 0.5, Source: "ntp"}
	syncMu.Unlock()
	wait(t, "synced batches", func() bool {
		bs := fp.batches(t, topic)
		return bs[len(bs)-1].Clock.Synced
	})
	// The central service claims seq 1000: this gateway's state was lost once.
	ack, _ := json.Marshal(wire.Ack{V: 1, Gateway: "gw", Seq: 1000})
	g.HandleAck(ack)
	g.HandleAck([]byte(`{"v":1,"gateway":"other","seq":5000}`)) // ignored
	wait(t, "renumbered batches", func() bool {
		bs := fp.batches(t, topic)
		return bs[len(bs)-1].Seq > 1000
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	bs := fp.batches(t, topic)
	sawUnsynced := false
	for _, b := range bs {
		if !b.Clock.Synced {
			sawUnsynced = true
			if b.Clock.OffsetMs != 16000 || b.Clock.Source != "none" {
				t.Errorf("unsynced batch clock %+v", b.Clock)
			}
		}
	}
	if !sawUnsynced {
		t.Error("no batch flagged unsynced")
	}
	// Every published payload verifies with the gateway's key.
	for _, p := range fp.msgs[topic] {
		env, _, _ := wire.Open(p)
		if err := signature.Verify(env, pub); err != nil {
			t.Fatalf("published batch does not verify: %v", err)
		}
	}
	if box.Acked() != 1000 || box.LastSeq() <= 1000 {
		t.Errorf("outbox acked %d last %d after ack-ahead", box.Acked(), box.LastSeq())
	}
	var st wire.Status
	fp.mu.Lock()
	sts := fp.msgs[wire.StatusTopic("lapa", "gw")]
	fp.mu.Unlock()
	if len(sts) == 0 || json.Unmarshal(sts[0], &st) != nil || st.State != "online" || st.Outbox == nil {
		t.Errorf("no online status published: %d", len(sts))
	}
}
