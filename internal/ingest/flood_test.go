package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/wire"
)

// TestFloodOfBadMessages is the malformed-input goal's stall check (a
// consumer must not stop after N parse errors): 10,000 bad messages of five
// kinds, then 100 good ones. Nothing blocks: every message is acknowledged
// to the broker, every bad one is kept as a dead letter with its reason, the
// good ones are stored and acked, and the seqs of the authenticated but
// invalid batches (900 dB, signed by gw-b) are settled so that gw-b's outbox
// does not wait for them forever.
func TestFloodOfBadMessages(t *testing.T) {
	t.Parallel() // its own store and ingester; overlaps the tests that wait on brokers
	h := newHarness(t, testRegistry(t, "gw-a", "gw-b"))
	keyA, keyB := loadgen.Key(seed, "gw-a"), loadgen.Key(seed, "gw-b")
	topicA, topicB := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), wire.LevelsTopic("lapa", "gw-b", "gw-b-s1")
	t0 := now.Add(-2 * time.Hour)
	truncated := seal(t, mkBatch("gw-a", "gw-a-s1", 1, t0, 60), keyA)
	truncated = truncated[:len(truncated)/2]
	const bad, good = 10000, 100
	wantReason := map[string]int{}
	seqB := uint64(0)
	offer := func(topic string, payload []byte) {
		h.mu.Lock()
		h.total++
		h.mu.Unlock()
		h.in.offerWait(Message{Topic: topic, Payload: payload, ReceivedAt: now, Done: func() {
			h.mu.Lock()
			h.done[topic]++
			h.mu.Unlock()
		}}, nil)
	}
	for i := range bad {
		switch i % 5 {
		case 0:
			offer(topicA, []byte("\x00\xffnot json"))
			wantReason[wire.ReasonJSON]++
		case 1:
			offer(topicA, truncated)
			wantReason[wire.ReasonJSON]++
		case 2: // signed with the other gateway's key
			offer(topicA, seal(t, mkBatch("gw-a", "gw-a-s1", uint64(i), t0, 60), keyB))
			wantReason[wire.ReasonSignature]++
		case 3:
			offer(wire.LevelsTopic("lapa", "gw-x", "s"), seal(t, mkBatch("gw-x", "s", uint64(i), t0, 60), keyA))
			wantReason[wire.ReasonUnknown]++
		case 4: // authenticated, out of range: settles gw-b's seq
			seqB++
			offer(topicB, seal(t, mkBatch("gw-b", "gw-b-s1", seqB, t0.Add(time.Duration(seqB)*time.Second), 900), keyB))
			wantReason[wire.ReasonRange]++
		}
	}
	for i := range good {
		seq := uint64(i + 1)
		offer(topicA, seal(t, mkBatch("gw-a", "gw-a-s1", seq, t0.Add(time.Duration(seq)*time.Second), 60), keyA))
	}
	h.waitDone(t)

	ctx := context.Background()
	counts, err := h.st.CountDeadLetters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for reason, want := range wantReason {
		if counts[reason] != int64(want) {
			t.Errorf("%d dead letters with reason %q, want %d (all: %v)", counts[reason], reason, want, counts)
		}
	}
	if n, _ := h.st.CountLevels(ctx, "gw-a-s1"); n != good {
		t.Errorf("%d good records stored, want %d", n, good)
	}
	if got := h.acks.last("gw-a"); got != good {
		t.Errorf("gw-a ack %d, want %d", got, good)
	}
	if got := h.acks.last("gw-b"); got != seqB {
		t.Errorf("gw-b ack %d, want %d (its rejected batches settle their seqs)", got, seqB)
	}
	if n, _ := h.st.CountLevels(ctx, "gw-b-s1"); n != 0 {
		t.Errorf("%d records of the 900 dB batches stored", n)
	}
}
