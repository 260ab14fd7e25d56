package sqlitestore

import (
	"context"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// rejected is a dead letter of gateway gw's batch seq; settles says whether
// the batch had authenticated (so that it counts for the ack watermark).
func rejected(gw string, seq uint64, payload string, settles bool) store.DeadLetter {
	return store.DeadLetter{ReceivedAt: t0, Topic: wire.LevelsTopic("lapa", gw, gw+"-s"), Reason: wire.ReasonRange,
		Message: "fora da faixa", Gateway: gw, Seq: seq, Payload: []byte(payload), Settles: settles}
}

// TestRejectedBatchesSettleTheWatermark: the ack watermark is the highest
// contiguous seq that is stored or dead-lettered after authenticating
// (docs/wire.md, Ack); unauthenticated rejections move nothing.
func TestRejectedBatchesSettleTheWatermark(t *testing.T) {
	s, path := openTest(t)
	ctx := context.Background()
	type step struct {
		name    string
		batches []uint64
		dead    []store.DeadLetter
		wantWM  uint64
		wantNew []bool // DeadLetterNew
	}
	steps := []step{
		{"accepted 1", []uint64{1}, nil, 1, nil},
		{"forged 2 does not settle", nil, []store.DeadLetter{rejected("gw", 2, "forged-2", false)}, 1, []bool{true}},
		{"accepted 3 above the gap", []uint64{3}, nil, 1, nil},
		{"authentic rejected 2 fills the gap", nil, []store.DeadLetter{rejected("gw", 2, "bad-2", true)}, 3, []bool{true}},
		{"replay of settled 2 is a duplicate", nil, []store.DeadLetter{rejected("gw", 2, "bad-2", true)}, 3, []bool{false}},
		{"other bytes under settled 2 are kept", nil, []store.DeadLetter{rejected("gw", 2, "other-2", true)}, 3, []bool{true}},
		{"rejected 5 above a gap", nil, []store.DeadLetter{rejected("gw", 5, "bad-5", true)}, 3, []bool{true}},
		{"same group: rejected 4 and accepted 6", []uint64{6}, []store.DeadLetter{rejected("gw", 4, "bad-4", true)}, 6, []bool{true}},
		{"accepted copy of settled 4 is stored", []uint64{4}, nil, 6, nil},
		{"rejected copy of accepted 6 is kept, nothing moves", nil, []store.DeadLetter{rejected("gw", 6, "bad-6", true)}, 6, []bool{true}},
		{"settling without a seq is ignored", nil, []store.DeadLetter{rejected("gw", 0, "no-seq", true)}, 6, []bool{true}},
		{"other gateway", []uint64{}, []store.DeadLetter{rejected("gw2", 1, "bad-1", true)}, 6, []bool{true}},
	}
	for _, st := range steps {
		var w store.Write
		for _, q := range st.batches {
			w.Batches = append(w.Batches, batch("gw", q, t0.Add(time.Duration(q)*10*time.Second), 60))
		}
		w.DeadLetters = st.dead
		res, err := s.Apply(ctx, w)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for j, b := range st.batches {
			if !res.New[j] {
				t.Errorf("%s: batch %d not stored", st.name, b)
			}
		}
		if got, _ := s.Watermark(ctx, "gw"); got != st.wantWM {
			t.Errorf("%s: watermark %d, want %d", st.name, got, st.wantWM)
		}
		if len(st.batches) > 0 && res.Watermarks["gw"] != st.wantWM {
			t.Errorf("%s: result watermark %d, want %d", st.name, res.Watermarks["gw"], st.wantWM)
		}
		for _, d := range st.dead {
			if d.Settles && d.Seq > 0 {
				if _, ok := res.Watermarks[d.Gateway]; !ok {
					t.Errorf("%s: no watermark reported for %s", st.name, d.Gateway)
				}
			}
		}
		if len(res.DeadLetterNew) != len(st.wantNew) {
			t.Fatalf("%s: DeadLetterNew = %v, want %v", st.name, res.DeadLetterNew, st.wantNew)
		}
		for j := range st.wantNew {
			if res.DeadLetterNew[j] != st.wantNew[j] {
				t.Errorf("%s: DeadLetterNew[%d] = %v, want %v", st.name, j, res.DeadLetterNew[j], st.wantNew[j])
			}
		}
	}
	if got, _ := s.Watermark(ctx, "gw2"); got != 1 {
		t.Errorf("gw2 watermark %d, want 1", got)
	}
	// Every rejected payload is kept once; Settled marks the dead letter
	// that moved the watermark over its seq.
	dls, err := s.DeadLetters(ctx, store.DeadLetterFilter{Gateway: "gw", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	settled := map[string]bool{}
	count := map[string]int{}
	for _, d := range dls {
		count[string(d.Payload)]++
		settled[string(d.Payload)] = d.Settled
	}
	wantSettled := map[string]bool{"forged-2": false, "bad-2": true, "other-2": false, "bad-5": true, "bad-4": true,
		"bad-6": false, "no-seq": false}
	if len(count) != len(wantSettled) {
		t.Errorf("dead letters %v, want one each of %v", count, wantSettled)
	}
	for p, want := range wantSettled {
		if count[p] != 1 {
			t.Errorf("dead letter %q stored %d times, want once", p, count[p])
		}
		if settled[p] != want {
			t.Errorf("dead letter %q settled = %v, want %v", p, settled[p], want)
		}
	}
	// The accepted copy of settled seq 4 is stored as a batch.
	if seqs, _ := s.StoredSeqs(ctx, "gw"); !seqs[4] || seqs[2] || seqs[5] {
		t.Errorf("stored seqs %v: want 4 (accepted after its rejection), not 2 or 5", seqs)
	}
	// The settlement survives a reopen: seq 7 continues from 6; a replay of
	// settled seq 5 is still a duplicate.
	s.Close()
	s2, err := Open(path, Options{Sync: SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	res, err := s2.Apply(ctx, store.Write{Batches: []store.Batch{batch("gw", 7, t0.Add(time.Hour), 60)},
		DeadLetters: []store.DeadLetter{rejected("gw", 5, "bad-5", true)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Watermarks["gw"] != 7 || res.DeadLetterNew[0] {
		t.Errorf("after reopen: watermark %d, replay stored %v; want 7, false", res.Watermarks["gw"], res.DeadLetterNew[0])
	}
}
