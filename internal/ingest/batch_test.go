package ingest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

// process is processAll for one message (verified on its own).
func (in *Ingester) process(m Message) item {
	var bv signature.BatchVerifier
	return in.processAll([]Message{m}, &bv)[0]
}

// outcome summarises an item for comparison.
func outcome(it item) string {
	switch {
	case it.batch != nil:
		if it.batch.Verified {
			return "stored verified"
		}
		return "stored unverified"
	case it.status != nil:
		return "status"
	case it.dead != nil:
		s := "dead " + it.dead.Reason
		if it.dead.Settles {
			s += " settles"
		}
		return s
	}
	return "nothing"
}

// TestBatchedVerdictsMatchOneByOne: messages processed together (their
// signatures checked in one batch) get exactly the outcome each gets
// alone — valid, forged, unsigned, undecodable and out-of-range messages
// mixed, in every position of the batch.
func TestBatchedVerdictsMatchOneByOne(t *testing.T) {
	reg := testRegistry(t, "gw-a", "gw-b")
	keyA, keyB := loadgen.Key(seed, "gw-a"), loadgen.Key(seed, "gw-b")
	at := now.Add(-time.Hour)
	topicA, topicB := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), wire.LevelsTopic("lapa", "gw-b", "gw-b-s1")
	msgs := []struct {
		name, topic string
		payload     []byte
		want        string
	}{
		{"gw-a valid", topicA, seal(t, mkBatch("gw-a", "gw-a-s1", 1, at, 60), keyA), "stored verified"},
		{"gw-b valid", topicB, seal(t, mkBatch("gw-b", "gw-b-s1", 1, at, 61), keyB), "stored verified"},
		{"gw-a signed by gw-b", topicA, seal(t, mkBatch("gw-a", "gw-a-s1", 2, at, 60), keyB), "dead signature"},
		{"gw-a 900 dB, signed", topicA, seal(t, mkBatch("gw-a", "gw-a-s1", 3, at, 900), keyA), "dead range settles"},
		{"unsigned gateway", wire.LevelsTopic("lapa", "gw-unsigned", "gw-unsigned-s1"),
			seal(t, mkBatch("gw-unsigned", "gw-unsigned-s1", 1, at, 55), nil), "stored unverified"},
		{"truncated", topicA, seal(t, mkBatch("gw-a", "gw-a-s1", 4, at, 60), keyA)[:50], "dead json"},
		{"status", wire.StatusTopic("lapa", "gw-a"), wire.OfflinePayload, "status"},
		{"gw-b unsigned", topicB, seal(t, mkBatch("gw-b", "gw-b-s1", 2, at, 60), nil), "dead signature"},
		{"gw-a valid again", topicA, seal(t, mkBatch("gw-a", "gw-a-s1", 5, at, 62), keyA), "stored verified"},
	}
	in := New(Options{Registry: reg, Now: func() time.Time { return now }})
	all := make([]Message, len(msgs))
	for i, m := range msgs {
		all[i] = Message{Topic: m.topic, Payload: m.payload, ReceivedAt: now}
		if got := outcome(in.process(all[i])); got != m.want {
			t.Fatalf("%s alone: %s, the case expects %s", m.name, got, m.want)
		}
	}
	var bv signature.BatchVerifier
	// The whole list, then every rotation of it (each message first, last
	// and in between), then only the valid ones (the batch equation holds).
	for r := range all {
		batch := append(append([]Message{}, all[r:]...), all[:r]...)
		items := in.processAll(batch, &bv)
		if len(items) != len(batch) {
			t.Fatalf("%d items for %d messages", len(items), len(batch))
		}
		for i, it := range items {
			m := msgs[(r+i)%len(msgs)]
			if got := outcome(it); got != m.want {
				t.Errorf("rotation %d, %s at %d: %s, want %s", r, m.name, i, got, m.want)
			}
			if it.msg.Topic != m.topic {
				t.Errorf("rotation %d: item %d is for %s, not %s", r, i, it.msg.Topic, m.topic)
			}
		}
	}
	valid := []Message{all[0], all[1], all[8], all[4]}
	for i, it := range in.processAll(valid, &bv) {
		if got := outcome(it); got != "stored verified" && got != "stored unverified" {
			t.Errorf("valid message %d: %s", i, got)
		}
	}
}

// TestQueuedMessagesVerifiedInBatches: messages that are already queued
// when a worker looks are verified together — fewer verification rounds
// than messages — and a forged message among them is still rejected alone
// while its neighbours are stored.
func TestQueuedMessagesVerifiedInBatches(t *testing.T) {
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg := prometheus.NewRegistry()
	in := New(Options{Store: st, Registry: testRegistry(t, "gw-a", "gw-b"), Metrics: NewMetrics(reg),
		Now: func() time.Time { return now }, Workers: 2, QueueSize: 1024})
	keyA, keyB := loadgen.Key(seed, "gw-a"), loadgen.Key(seed, "gw-b")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	const n = 600
	var done sync.WaitGroup
	for s := 1; s <= n; s++ {
		key := keyA
		if s%50 == 0 {
			key = keyB // forged: gw-a's topic and body, gw-b's key
		}
		done.Add(1)
		p := seal(t, mkBatch("gw-a", "gw-a-s1", uint64(s), now.Add(-time.Hour).Add(time.Duration(s)*time.Second), 60), key)
		if !in.Offer(Message{Topic: topic, Payload: p, ReceivedAt: now, Done: done.Done}) {
			t.Fatal("queue full")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- in.Run(ctx) }()
	done.Wait()
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if c, _ := st.CountLevels(context.Background(), "gw-a-s1"); c != n-n/50 {
		t.Errorf("stored %d records, want %d", c, n-n/50)
	}
	dls, err := st.DeadLetters(context.Background(), store.DeadLetterFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != n/50 {
		t.Fatalf("%d dead letters, want %d", len(dls), n/50)
	}
	for _, d := range dls {
		if d.Reason != wire.ReasonSignature || d.Seq%50 != 0 {
			t.Errorf("dead letter %+v", d)
		}
	}
	h := metric(t, reg, "sossego_ingest_verify_batch_messages").GetHistogram()
	if h.GetSampleSum() != n || h.GetSampleCount() >= n/4 {
		t.Errorf("%d messages in %d verification rounds; want all %d in under %d", int(h.GetSampleSum()), h.GetSampleCount(), n, n/4)
	}
	t.Logf("%d messages in %d verification rounds", int(h.GetSampleSum()), h.GetSampleCount())
}
