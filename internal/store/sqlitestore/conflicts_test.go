package sqlitestore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

func gatewayRow(t *testing.T, s *Store, gw string) store.GatewayStatus {
	t.Helper()
	sts, err := s.GatewayStatuses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range sts {
		if g.Gateway == gw {
			return g
		}
	}
	t.Fatalf("no gateway %s", gw)
	return store.GatewayStatus{}
}

// TestRecordConflictsKept: records measured again over seconds already
// stored (a clock stepped back; or records dated ahead by a key holder,
// before the real ones arrive) no longer vanish: the stored record stays
// in the readings, the new one is kept beside it with the batch it came
// in, counted on the gateway. Identical records are plain duplicates. The
// same holds within one group commit, across commits, and for seconds older
// than what the store remembers between commits.
func TestRecordConflictsKept(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		together bool          // both batches in one Write
		old      time.Duration // how far before the newest record the second batch lands
	}{
		{"across commits", false, 0},
		{"in one commit", true, 0},
		{"behind the remembered packs", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t)
			first := batch("gw", 1, t0, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69)
			// The clock stepped back 5 s: seconds 5–9 measured again (one of
			// them identical by chance), then 10–14 new.
			second := batch("gw", 2, t0.Add(5*time.Second), 80, 81, 82, 83, 69, 90, 91, 92, 93, 94)
			second.Body = []byte(`{"seq":2}`)
			var writes []store.Write
			if tc.together {
				writes = []store.Write{{Batches: []store.Batch{first, second}}}
			} else {
				writes = []store.Write{{Batches: []store.Batch{first}}}
				if tc.name == "behind the remembered packs" {
					// Push seconds 0–9 out of the store's memory of recent packs.
					for i := range recentPacks + 1 {
						b := batch("gw", uint64(3+i), t0.Add(time.Hour+time.Duration(i)*time.Minute), 50)
						b.Body = []byte(`{"filler":true}`)
						writes = append(writes, store.Write{Batches: []store.Batch{b}})
					}
				}
				writes = append(writes, store.Write{Batches: []store.Batch{second}})
			}
			var conflicts []store.RecordConflict
			ignored := 0
			for _, w := range writes {
				res, err := s.Apply(ctx, w)
				if err != nil {
					t.Fatal(err)
				}
				conflicts = append(conflicts, res.RecordConflicts...)
				ignored += res.RecordsIgnored
			}
			if len(conflicts) != 4 || ignored != 5 {
				t.Fatalf("%d conflicts reported, %d records ignored; want 4 and 5 (one identical)", len(conflicts), ignored)
			}
			stored, err := s.Records(ctx, "gw-s", t0, t0.Add(15*time.Second), 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(stored) != 15 || stored[5].LAeq != 65 || stored[10].LAeq != 90 {
				t.Fatalf("readings: %d records, [5]=%v [10]=%v; want 15, the first batch's 65 kept, 90 new",
					len(stored), stored[5].LAeq, stored[10].LAeq)
			}
			kept, err := s.RecordConflicts(ctx, "gw-s", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(kept) != 4 {
				t.Fatalf("%d conflicts kept, want 4", len(kept))
			}
			c := kept[len(kept)-1] // oldest: second 5
			var k, n wire.Record
			if err := json.Unmarshal(c.Kept.Record, &k); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(c.New.Record, &n); err != nil {
				t.Fatal(err)
			}
			if !c.T.Equal(t0.Add(5*time.Second)) || c.Kept.Seq != 1 || c.New.Seq != 2 || k.LAeq != 65 || n.LAeq != 80 || c.Kind != wire.KindLevels {
				t.Errorf("conflict %+v: kept %v, new %v", c, k.LAeq, n.LAeq)
			}
			if g := gatewayRow(t, s, "gw"); g.Conflicts != 4 {
				t.Errorf("gateway conflicts %d, want 4", g.Conflicts)
			}
		})
	}
}

// TestEnvConflictsKept: the same for environmental readings.
func TestEnvConflictsKept(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	v := func(x float64) *float64 { return &x }
	env := func(seq uint64, temp float64) store.Batch {
		return store.Batch{Gateway: "gw", Municipality: "lapa", Sensor: "gw-s", Kind: wire.KindEnv, Seq: seq,
			Topic: wire.EnvTopic("lapa", "gw", "gw-s"), Body: []byte{byte('0' + seq)}, ReceivedAt: t0,
			Env: []wire.EnvRecord{{T: t0, TemperatureC: v(temp), HumidityPct: v(50)}}}
	}
	for _, b := range []store.Batch{env(1, 20), env(2, 20), env(3, 25)} {
		if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{b}}); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := s.RecordConflicts(ctx, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || kept[0].Kind != wire.KindEnv || kept[0].Kept.Seq != 1 || kept[0].New.Seq != 3 {
		t.Fatalf("env conflicts: %+v (want one: seq 3's 25 °C against seq 1's 20 °C)", kept)
	}
}

// TestSeqConflictKept: a second batch under a stored (gateway, seq) with a
// different body (a key holder reusing a seq to make the gateway drop an
// undelivered batch) is kept as a dead letter and flagged; the stored batch
// stays. The same body again is a plain duplicate, with nothing kept.
func TestSeqConflictKept(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	orig := batch("gw", 1, t0, 60)
	orig.Body = []byte(`{"real":1}`)
	forged := batch("gw", 1, t0.Add(time.Hour), 99)
	forged.Body, forged.Raw = []byte(`{"forged":1}`), []byte(`{"v":1,"kid":"gw","body":{"forged":1},"sig":"AA=="}`)
	steps := []struct {
		name         string
		batches      []store.Batch
		new, clash   []bool
		deadLetters  int
		gwConflicts  int64
		wantRealBody bool
	}{
		{"original", []store.Batch{orig}, []bool{true}, []bool{false}, 0, 0, true},
		{"same body again", []store.Batch{orig}, []bool{false}, []bool{false}, 0, 0, true},
		{"different body", []store.Batch{forged}, []bool{false}, []bool{true}, 1, 1, true},
		{"in one group", []store.Batch{withSeq(orig, 2, `{"a":2}`), withSeq(forged, 2, `{"b":2}`), withSeq(orig, 2, `{"a":2}`)},
			[]bool{true, false, false}, []bool{false, true, false}, 2, 2, true},
	}
	for _, st := range steps {
		res, err := s.Apply(ctx, store.Write{Batches: st.batches})
		if err != nil {
			t.Fatal(err)
		}
		for i := range st.batches {
			if res.New[i] != st.new[i] || res.SeqConflict[i] != st.clash[i] {
				t.Errorf("%s: batch %d new=%v conflict=%v, want %v %v", st.name, i, res.New[i], res.SeqConflict[i], st.new[i], st.clash[i])
			}
		}
		dls, _ := s.DeadLetters(ctx, store.DeadLetterFilter{Reason: wire.ReasonSeqConflict})
		if len(dls) != st.deadLetters {
			t.Errorf("%s: %d seq-conflict dead letters, want %d", st.name, len(dls), st.deadLetters)
		}
		if g := gatewayRow(t, s, "gw"); g.Conflicts != st.gwConflicts {
			t.Errorf("%s: gateway conflicts %d, want %d", st.name, g.Conflicts, st.gwConflicts)
		}
	}
	if body, _, _, _ := s.RawBatch(ctx, "gw", 1); string(body) != `{"real":1}` {
		t.Errorf("stored batch 1 is %s, want the original", body)
	}
	dls, _ := s.DeadLetters(ctx, store.DeadLetterFilter{Reason: wire.ReasonSeqConflict})
	if len(dls) == 0 || string(dls[len(dls)-1].Payload) != string(forged.Raw) || dls[len(dls)-1].Seq != 1 || dls[len(dls)-1].Message == "" {
		t.Errorf("the conflicting message is not kept verbatim: %+v", dls)
	}
	if wm, _ := s.Watermark(ctx, "gw"); wm != 2 {
		t.Errorf("watermark %d, want 2", wm)
	}
}

func withSeq(b store.Batch, seq uint64, body string) store.Batch {
	b.Seq, b.Body = seq, []byte(body)
	return b
}

// TestSeqSkipMovesTheWatermark: a skip moves the watermark over seqs that
// never arrived and on over the seqs held above them, and is recorded.
func TestSeqSkipMovesTheWatermark(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	var w store.Write
	for _, q := range []uint64{1, 2, 3, 10, 11, 12, 20} {
		w.Batches = append(w.Batches, withSeq(batch("gw", q, t0.Add(time.Duration(q)*10*time.Second), 60), q, "x"))
	}
	res, err := s.Apply(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if res.Watermarks["gw"] != 3 || res.LowestAbove["gw"] != 10 {
		t.Fatalf("watermark %d, lowest above %d; want 3 and 10", res.Watermarks["gw"], res.LowestAbove["gw"])
	}
	res, err = s.Apply(ctx, store.Write{Skips: []store.SeqSkip{{Gateway: "gw", Upto: 9, Reason: "teste"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Watermarks["gw"] != 12 || res.Skipped["gw"] != (store.SeqRange{First: 4, Last: 9}) || res.LowestAbove["gw"] != 20 {
		t.Errorf("after the skip: watermark %d, skipped %v, lowest above %d; want 12, 4–9, 20",
			res.Watermarks["gw"], res.Skipped["gw"], res.LowestAbove["gw"])
	}
	// A skip at or below the watermark does nothing.
	if res, err = s.Apply(ctx, store.Write{Skips: []store.SeqSkip{{Gateway: "gw", Upto: 5}}}); err != nil || res.Skipped != nil {
		t.Errorf("skip below the watermark: %v %v", res.Skipped, err)
	}
	g := gatewayRow(t, s, "gw")
	if g.Watermark != 12 || g.SkippedSeqs != 6 || g.PendingAbove != 1 {
		t.Errorf("gateway row: watermark %d, skipped %d, pending above %d; want 12, 6, 1", g.Watermark, g.SkippedSeqs, g.PendingAbove)
	}
	skips, err := s.SeqSkips(ctx, "gw")
	if err != nil || len(skips) != 1 || skips[0].First != 4 || skips[0].Last != 9 || skips[0].Reason != "teste" {
		t.Errorf("recorded skips %+v %v", skips, err)
	}
}

// TestConflictTablesMigrated: a database made by the schema before
// conflicts (no record_conflicts, seq_skips, nor the gateways counters)
// opens, keeps its data and records conflicts from then on.
func TestConflictTablesMigrated(t *testing.T) {
	db, path := oldDatabase(t, schema+packsSchema)
	if _, err := db.Exec(`INSERT INTO gateways (gateway, municipality, watermark, last_seq) VALUES ('gw', 'lapa', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO batches VALUES ('gw', 1, 'levels', 'lapa', 'gw-s', 't', ?, NULL, 1, 0, 1)`, []byte(`{"old":1}`)); err != nil {
		t.Fatal(err)
	}
	s := openMigrated(t, db, path, Options{})
	ctx := context.Background()
	if g := gatewayRow(t, s, "gw"); g.Watermark != 1 || g.Conflicts != 0 {
		t.Fatalf("migrated gateway row %+v", g)
	}
	res, err := s.Apply(ctx, store.Write{Batches: []store.Batch{withSeq(batch("gw", 1, t0, 60), 1, `{"new":1}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.SeqConflict[0] {
		t.Error("a different body under the migrated seq 1 is not a conflict")
	}
	if g := gatewayRow(t, s, "gw"); g.Conflicts != 1 {
		t.Errorf("conflicts %d after migration, want 1", g.Conflicts)
	}
	// Opening again changes nothing.
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if g := gatewayRow(t, s2, "gw"); g.Conflicts != 1 {
		t.Errorf("conflicts %d after reopening, want 1", g.Conflicts)
	}
}
