package sqlitestore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// pruneFixture stores, for gateways a and b, six hourly batches of ten
// 1-s records each (applied a1, b1, a2, b2, …, so level ids 1–10 are a1's,
// 11–20 b1's and so on), one old env batch of a (seq 7) and three dead
// letters: an old one, an old one that settled b's seq 8, a recent one.
// It returns the instant between batch 4's and batch 5's reception.
func pruneFixture(t *testing.T, s *Store) time.Time {
	t.Helper()
	ctx := context.Background()
	day0 := time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)
	temp := 21.5
	env := store.Batch{Gateway: "a", Municipality: "lapa", Sensor: "a-s", Kind: wire.KindEnv, Seq: 7, Topic: "x",
		ReceivedAt: day0.Add(90 * time.Minute), Env: []wire.EnvRecord{{T: day0.Add(80 * time.Minute), TemperatureC: &temp},
			{T: day0.Add(85 * time.Minute), TemperatureC: &temp}}}
	env.Body = mustJSON(t, wire.Batch{V: 1, Kind: wire.KindEnv, Gateway: "a", Sensor: "a-s", Seq: 7, Env: env.Env})
	dead := []store.DeadLetter{
		{ReceivedAt: day0.Add(time.Hour), Topic: "x", Reason: wire.ReasonSchema, Message: "m", Payload: []byte("old")},
		{ReceivedAt: day0.Add(2 * time.Hour), Topic: "x", Reason: wire.ReasonRange, Message: "m", Payload: []byte("settles"),
			Gateway: "b", Seq: 7, Settles: true},
		{ReceivedAt: day0.Add(30 * 24 * time.Hour), Topic: "x", Reason: wire.ReasonSchema, Message: "m", Payload: []byte("new")},
	}
	for seq := uint64(1); seq <= 6; seq++ {
		for _, gw := range []string{"a", "b"} {
			b := batch(gw, seq, day0.Add(time.Duration(seq)*time.Hour), 60, 61, 62, 63, 64, 65, 66, 67, 68, 69)
			b.Body = mustJSON(t, wire.Batch{V: 1, Kind: wire.KindLevels, Gateway: gw, Sensor: b.Sensor, Seq: seq, Records: b.Records})
			if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{b}}); err != nil {
				t.Fatal(err)
			}
		}
		if seq == 1 { // in reception order
			if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{env}, DeadLetters: dead}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return day0.Add(4*time.Hour + 30*time.Minute)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	p, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPruneOldest(t *testing.T) {
	day0 := time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)
	// a's third batch holds records 03:00:00–03:00:09; an alert window over
	// 03:00:05–03:00:06 protects the whole batch.
	protectA3 := func(sensor string, from, to time.Time) bool {
		w0, w1 := day0.Add(3*time.Hour+5*time.Second), day0.Add(3*time.Hour+6*time.Second)
		return sensor == "a-s" && from.Before(w1) && w0.Before(to)
	}
	for _, tc := range []struct {
		name        string
		keep        func(string, time.Time, time.Time) bool
		mirror      bool
		mirrored    int64 // MirroredLevelID
		mirroredEnv int64
		limit       int
		gone        map[string][]uint64 // deleted batches per gateway
		env         int64
		// decided: the rowid a next pass may start after (batch rowids in
		// reception order: a1 1, b1 2, env 3, a2 4, b2 5, a3 6, b3 7, a4 8,
		// b4 9).
		decided int64
	}{
		{name: "everything before the cut", gone: map[string][]uint64{"a": {1, 2, 3, 4, 7}, "b": {1, 2, 3, 4}}, env: 2, decided: 9},
		{name: "an alert window keeps its batch", keep: protectA3,
			gone: map[string][]uint64{"a": {1, 2, 4, 7}, "b": {1, 2, 3, 4}}, env: 2, decided: 9},
		{name: "pages of two", keep: protectA3, limit: 2,
			gone: map[string][]uint64{"a": {1, 2, 4, 7}, "b": {1, 2, 3, 4}}, env: 2, decided: 9},
		{name: "the InfluxDB mirror is behind", mirror: true, mirrored: 40, mirroredEnv: 2,
			gone: map[string][]uint64{"a": {1, 2, 7}, "b": {1, 2}}, env: 2, decided: 5},
		{name: "behind, in pages of two", mirror: true, mirrored: 40, mirroredEnv: 2, limit: 2,
			gone: map[string][]uint64{"a": {1, 2, 7}, "b": {1, 2}}, env: 2, decided: 5},
		{name: "env not mirrored yet", mirror: true, mirrored: 1000, mirroredEnv: 1, keep: protectA3,
			gone: map[string][]uint64{"a": {1, 2, 4}, "b": {1, 2, 3, 4}}, decided: 2},
		{name: "nothing mirrored yet", mirror: true, gone: map[string][]uint64{}, decided: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t)
			ctx := context.Background()
			cut := pruneFixture(t, s)
			wmBefore := map[string]uint64{}
			for _, gw := range []string{"a", "b"} {
				wmBefore[gw], _ = s.Watermark(ctx, gw)
			}
			var total store.PruneResult
			p := store.Prune{Before: cut, Keep: tc.keep, Mirror: tc.mirror, MirroredLevelID: tc.mirrored, MirroredEnvID: tc.mirroredEnv, Limit: tc.limit}
			decided, open := int64(0), true // as retention.Pass follows Decided over the calls
			for i := 0; ; i++ {
				if i > 20 {
					t.Fatal("the pass never ends")
				}
				r, err := s.PruneOldest(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				total.Batches += r.Batches
				total.Levels += r.Levels
				total.Env += r.Env
				total.DeadLetters += r.DeadLetters
				if r.Decided < p.After || r.Decided > r.Next {
					t.Fatalf("Decided %d outside this call's walk (%d, %d]", r.Decided, p.After, r.Next)
				}
				if open {
					decided, open = r.Decided, r.Decided == r.Next
				}
				p.After, p.AfterDeadLetter = r.Next, r.NextDeadLetter
				if r.Done {
					break
				}
			}
			if decided != tc.decided {
				t.Errorf("decided up to rowid %d, want %d", decided, tc.decided)
			}
			wantBatches := int64(len(tc.gone["a"]) + len(tc.gone["b"]))
			wantLevels := (wantBatches - tc.env/2) * 10
			if total.Batches != wantBatches || total.Levels != wantLevels || total.Env != tc.env || total.DeadLetters != 1 {
				t.Errorf("deleted %+v, want %d batches, %d levels, %d env, 1 dead letter", total, wantBatches, wantLevels, tc.env)
			}
			for _, gw := range []string{"a", "b"} {
				gone := map[uint64]bool{}
				for _, q := range tc.gone[gw] {
					gone[q] = true
				}
				seqs, err := s.StoredSeqs(ctx, gw)
				if err != nil {
					t.Fatal(err)
				}
				last := uint64(6)
				if gw == "a" {
					last = 7
				}
				for q := uint64(1); q <= last; q++ {
					if seqs[q] == gone[q] {
						t.Errorf("%s/%d: stored %v, want deleted %v", gw, q, seqs[q], gone[q])
					}
					if q == 7 {
						continue
					}
					from := day0.Add(time.Duration(q) * time.Hour)
					recs, err := s.Records(ctx, gw+"-s", from, from.Add(time.Minute), 0)
					if err != nil {
						t.Fatal(err)
					}
					if want := map[bool]int{true: 0, false: 10}[gone[q]]; len(recs) != want {
						t.Errorf("%s/%d: %d records left, want %d", gw, q, len(recs), want)
					}
				}
				if wm, _ := s.Watermark(ctx, gw); wm != wmBefore[gw] {
					t.Errorf("%s: watermark %d after pruning, was %d", gw, wm, wmBefore[gw])
				}
			}
			envLeft, err := s.EnvRecords(ctx, "a-s", day0, day0.Add(2*time.Hour), 0)
			if err != nil {
				t.Fatal(err)
			}
			if want := 2 - int(tc.env); len(envLeft) != want {
				t.Errorf("%d env records left, want %d", len(envLeft), want)
			}
			dls, err := s.DeadLetters(ctx, store.DeadLetterFilter{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			left := map[string]bool{}
			for _, d := range dls {
				left[string(d.Payload)] = true
			}
			if len(dls) != 2 || !left["settles"] || !left["new"] {
				t.Errorf("dead letters left %v, want the one that settled a seq and the recent one", left)
			}
		})
	}
}

// A batch whose body cannot be read back is never deleted blind.
func TestPruneKeepsUnreadableBody(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	start := time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)
	b := batch("a", 1, start, 60)
	b.Body = []byte("not json")
	if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{b}}); err != nil {
		t.Fatal(err)
	}
	r, err := s.PruneOldest(ctx, store.Prune{Before: start.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Batches != 0 || r.Kept != 1 || !r.Done {
		t.Errorf("result %+v, want the batch kept and the pass done", r)
	}
	if n, _ := s.CountLevels(ctx, ""); n != 1 {
		t.Errorf("%d level records, want 1", n)
	}
}
