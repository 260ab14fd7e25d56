package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// TestRejectedAfterAuthenticationAdvancesTheAck follows docs/wire.md (Ack):
// a batch rejected after it authenticated is kept as a dead letter and
// counts for the ack watermark; a forged, unknown-source or undecodable one
// moves nothing. Each step is sent and stored before the next.
func TestRejectedAfterAuthenticationAdvancesTheAck(t *testing.T) {
	key := loadgen.Key(seed, "gw-a")
	other := loadgen.Key(seed, "gw-b")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	at := func(seq uint64) time.Time { return now.Add(-time.Hour).Add(time.Duration(seq) * time.Minute) }
	good := func(seq uint64) []byte { return seal(t, mkBatch("gw-a", "gw-a-s1", seq, at(seq), 60), key) }
	loud := seal(t, mkBatch("gw-a", "gw-a-s1", 2, at(2), 900), key)
	type msg struct {
		topic   string
		payload []byte
	}
	levels := func(p []byte) msg { return msg{topic, p} }
	cases := []struct {
		name      string
		steps     [][]msg
		wantAcks  []uint64 // the ack after each step (0: none expected)
		wantDead  int      // dead letters stored in the end
		settledOf []byte   // payload that must be the dead letter settling seq 2
	}{
		{
			name:      "900 dB between good batches",
			steps:     [][]msg{{levels(good(1))}, {levels(loud)}, {levels(good(3))}},
			wantAcks:  []uint64{1, 2, 3},
			wantDead:  1,
			settledOf: loud,
		},
		{
			name: "forged seq 2 before the genuine one",
			steps: [][]msg{{levels(good(1))}, {levels(seal(t, mkBatch("gw-a", "gw-a-s1", 2, at(2), 60), other))},
				{levels(good(3))}, {levels(loud)}},
			wantAcks:  []uint64{1, 0, 1, 3},
			wantDead:  2,
			settledOf: loud,
		},
		{
			name: "unsigned, truncated and unknown-gateway seq 2 move nothing",
			steps: [][]msg{{levels(good(1))}, {levels(seal(t, mkBatch("gw-a", "gw-a-s1", 2, at(2), 60), nil))},
				{levels(loud[:len(loud)-20])},
				{msg{wire.LevelsTopic("lapa", "gw-x", "gw-a-s1"), seal(t, mkBatch("gw-x", "gw-a-s1", 2, at(2), 60), key)}},
				{levels(good(3))}},
			wantAcks: []uint64{1, 0, 0, 0, 1},
			wantDead: 3,
		},
		{
			name:      "replay of a settled rejection is idempotent",
			steps:     [][]msg{{levels(good(1))}, {levels(loud)}, {levels(loud)}, {levels(loud), levels(good(3)), levels(loud)}},
			wantAcks:  []uint64{1, 2, 2, 3},
			wantDead:  1,
			settledOf: loud,
		},
		{
			name: "unknown sensor, timestamp and schema settle",
			steps: [][]msg{{levels(good(1))},
				{msg{wire.LevelsTopic("lapa", "gw-a", "nope"), seal(t, mkBatch("gw-a", "nope", 2, at(2), 60), key)}},
				{levels(seal(t, mkBatch("gw-a", "gw-a-s1", 3, time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), 60), key))},
				{levels(seal(t, func() *wire.Batch { b := mkBatch("gw-a", "gw-a-s1", 4, at(4), 60); b.Device.Grade = "pro"; return b }(), key))},
				{levels(good(5))}},
			wantAcks: []uint64{1, 2, 3, 4, 5},
			wantDead: 3,
		},
		{
			name: "a batch naming another gateway does not settle",
			steps: [][]msg{{levels(good(1))},
				{levels(seal(t, mkBatch("gw-b", "gw-a-s1", 2, at(2), 60), key))},
				{levels(good(3))}},
			wantAcks: []uint64{1, 0, 1},
			wantDead: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testRegistry(t, "gw-a", "gw-b"))
			for i, step := range tc.steps {
				before := len(h.acks.all("gw-a"))
				for _, m := range step {
					h.offer(t, m.topic, m.payload)
				}
				h.waitDone(t)
				got := h.acks.all("gw-a")[before:]
				switch {
				case tc.wantAcks[i] == 0 && len(got) > 0:
					t.Errorf("step %d: acks %v, want none", i, got)
				case tc.wantAcks[i] != 0 && (len(got) == 0 || got[len(got)-1] != tc.wantAcks[i]):
					t.Errorf("step %d: acks %v, want last %d", i, got, tc.wantAcks[i])
				}
			}
			ctx := context.Background()
			dls, err := h.st.DeadLetters(ctx, store.DeadLetterFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(dls) != tc.wantDead {
				t.Errorf("%d dead letters, want %d: %+v", len(dls), tc.wantDead, dls)
			}
			for _, d := range dls {
				if d.Reason == "" || d.Message == "" || len(d.Payload) == 0 {
					t.Errorf("dead letter without reason or payload: %+v", d)
				}
				if tc.settledOf != nil && d.Seq == 2 && d.Settled != (string(d.Payload) == string(tc.settledOf)) {
					t.Errorf("dead letter %s settled = %v", d.Payload, d.Settled)
				}
			}
			if wm, _ := h.st.Watermark(ctx, "gw-a"); wm != tc.wantAcks[len(tc.wantAcks)-1] {
				t.Errorf("stored watermark %d, want %d", wm, tc.wantAcks[len(tc.wantAcks)-1])
			}
			if wm, _ := h.st.Watermark(ctx, "gw-x"); wm != 0 {
				t.Errorf("unknown gateway has watermark %d", wm)
			}
		})
	}
}
