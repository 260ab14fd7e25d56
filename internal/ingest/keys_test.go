package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// TestKeyInForceWhenReceived: a batch is checked with the gateway key in
// force when it was received, so a rotation mid-stream neither rejects the
// batches received before it nor accepts the old key after it.
func TestKeyInForceWhenReceived(t *testing.T) {
	rot := now.Add(-30 * time.Minute)
	yaml := strings.Replace(testRegistryYAML("gw-a"), "public_key: "+loadgen.PublicKeyBase64(seed, "gw-a")+"}",
		fmt.Sprintf("public_key: %s, previous_keys: [{public_key: %s, valid_until: %s}]}",
			loadgen.PublicKeyBase64(seed, "gw-a"), loadgen.PublicKeyBase64(seed+"-old", "gw-a"), rot.Format(time.RFC3339)), 1)
	r, err := registry.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, registry.NewLive(r))
	oldKey, newKey := loadgen.Key(seed+"-old", "gw-a"), loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	cases := []struct {
		seq      uint64
		received time.Time
		old      bool
		ok       bool
	}{
		{1, rot.Add(-time.Second), true, true},
		{2, rot.Add(-time.Second), false, false},
		{3, rot, true, false},
		{4, rot, false, true},
		{5, rot.Add(time.Minute), true, false},
	}
	for _, tc := range cases {
		key := newKey
		if tc.old {
			key = oldKey
		}
		p := seal(t, mkBatch("gw-a", "gw-a-s1", tc.seq, rot.Add(-time.Hour).Add(time.Duration(tc.seq)*time.Second), 60), key)
		h.mu.Lock()
		h.total++
		h.mu.Unlock()
		if !h.in.Offer(Message{Topic: topic, Payload: p, ReceivedAt: tc.received, Done: func() {
			h.mu.Lock()
			h.done[topic]++
			h.mu.Unlock()
		}}) {
			t.Fatal("queue full")
		}
	}
	h.waitDone(t)
	ctx := context.Background()
	dls, err := h.st.DeadLetters(ctx, store.DeadLetterFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	rejected := map[uint64]string{}
	for _, d := range dls {
		rejected[d.Seq] = d.Reason
	}
	for _, tc := range cases {
		_, _, verified, err := h.st.RawBatch(ctx, "gw-a", tc.seq)
		if tc.ok && (err != nil || !verified) {
			t.Errorf("seq %d (old key %v, received %s): not stored verified: %v", tc.seq, tc.old, tc.received, err)
		}
		if !tc.ok && rejected[tc.seq] != wire.ReasonSignature {
			t.Errorf("seq %d (old key %v, received %s): want a signature dead letter, got %q", tc.seq, tc.old, tc.received, rejected[tc.seq])
		}
	}
}
