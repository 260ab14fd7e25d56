package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

var t0 = time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)

func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sossego.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func batch(gw string, seq uint64, start time.Time, levels ...float64) store.Batch {
	b := store.Batch{Gateway: gw, Municipality: "lapa", Sensor: gw + "-s", Kind: wire.KindLevels, Seq: seq,
		Topic: wire.LevelsTopic("lapa", gw, gw+"-s"), Body: []byte(`{"seq":1}`), Sig: []byte{1, 2}, Verified: true,
		ReceivedAt: start.Add(time.Minute), Device: wire.Device{Grade: "class2"}, Clock: wire.Clock{Synced: true}}
	for i, l := range levels {
		b.Records = append(b.Records, wire.Record{T: start.Add(time.Duration(i) * time.Second), DurMs: 1000,
			LAeq: l, LAFmax: l + 3, LAFmin: l - 3})
	}
	return b
}

func TestWatermarkWithGaps(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	steps := []struct {
		seqs      []uint64
		wantNew   []bool
		wantWM    uint64
		wantAbove int // seqs stored above the gap
	}{
		{[]uint64{1, 2}, []bool{true, true}, 2, 0},
		{[]uint64{4, 5}, []bool{true, true}, 2, 2}, // gap at 3
		{[]uint64{2}, []bool{false}, 2, 2},         // duplicate
		{[]uint64{7}, []bool{true}, 2, 3},
		{[]uint64{3}, []bool{true}, 5, 1}, // fills the gap: 3,4,5 contiguous
		{[]uint64{6, 6}, []bool{true, false}, 7, 0},
		{[]uint64{10, 9, 8}, []bool{true, true, true}, 10, 0}, // out of order within one group
	}
	// A group of 102 spans the insert's chunks (64 + 32 + 4 + 2): seqs
	// 11..110 are new; a stored seq (2) and a second copy of 50 are not.
	big := struct {
		seqs      []uint64
		wantNew   []bool
		wantWM    uint64
		wantAbove int
	}{wantWM: 110}
	for q := uint64(11); q <= 110; q++ {
		big.seqs, big.wantNew = append(big.seqs, q), append(big.wantNew, true)
	}
	big.seqs, big.wantNew = append(big.seqs, 2, 50), append(big.wantNew, false, false)
	steps = append(steps, big)
	// One chunk of 64 with a stored seq (5) and a second copy (125) in its
	// middle: the batches after them are still found new.
	mid := big
	mid.seqs, mid.wantNew, mid.wantWM = nil, nil, 172
	for q := uint64(111); q <= 140; q++ {
		mid.seqs, mid.wantNew = append(mid.seqs, q), append(mid.wantNew, true)
	}
	mid.seqs, mid.wantNew = append(mid.seqs, 5, 125), append(mid.wantNew, false, false)
	for q := uint64(141); q <= 172; q++ {
		mid.seqs, mid.wantNew = append(mid.seqs, q), append(mid.wantNew, true)
	}
	steps = append(steps, mid)
	for i, st := range steps {
		var w store.Write
		for _, q := range st.seqs {
			w.Batches = append(w.Batches, batch("gw", q, t0.Add(time.Duration(q)*10*time.Second), 60))
		}
		res, err := s.Apply(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		for j := range st.wantNew {
			if res.New[j] != st.wantNew[j] {
				t.Errorf("step %d: New[%d] = %v, want %v", i, j, res.New[j], st.wantNew[j])
			}
		}
		if res.Watermarks["gw"] != st.wantWM {
			t.Errorf("step %d: watermark %d, want %d", i, res.Watermarks["gw"], st.wantWM)
		}
		if got, _ := s.Watermark(ctx, "gw"); got != st.wantWM {
			t.Errorf("step %d: stored watermark %d, want %d", i, got, st.wantWM)
		}
		gs, err := s.GatewayStatuses(ctx)
		if err != nil || len(gs) != 1 {
			t.Fatalf("step %d: statuses = %+v %v", i, gs, err)
		}
		if gs[0].PendingAbove != st.wantAbove {
			t.Errorf("step %d: %d seqs stored above the gap, want %d", i, gs[0].PendingAbove, st.wantAbove)
		}
		if want := st.seqs[0]; gs[0].LastSeq < want {
			t.Errorf("step %d: last_seq %d, want ≥ %d", i, gs[0].LastSeq, want)
		}
	}
	n, _ := s.CountLevels(ctx, "")
	if n != 172 {
		t.Errorf("levels = %d, want 172 (one per unique seq)", n)
	}
}

// TestMigratesWithoutRowidBatches: a database whose batches table was
// created WITHOUT ROWID (before retention and Apply used rowids) is rebuilt
// as a rowid table on open, keeping its rows; duplicates of them are still
// recognised.
// oldDatabase creates a database file with an older schema; the test
// fills it, closes db and opens path with Open.
func oldDatabase(t *testing.T, schema string) (db *sql.DB, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	return db, path
}

// openMigrated closes the old database's handle and opens it with
// Open, which migrates it.
func openMigrated(t *testing.T, db *sql.DB, path string, opts Options) *Store {
	t.Helper()
	db.Close()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMigratesWithoutRowidBatches(t *testing.T) {
	db, path := oldDatabase(t, `CREATE TABLE batches (`+batchesColumns+`) WITHOUT ROWID`)
	for _, q := range []int{1, 2} {
		if _, err := db.Exec(`INSERT INTO batches VALUES ('gw', ?, 'levels', 'lapa', 'gw-s', 't', ?, NULL, 1, 0, 1)`,
			q, []byte(fmt.Sprintf(`{"old":%d}`, q))); err != nil {
			t.Fatal(err)
		}
	}
	s := openMigrated(t, db, path, Options{})
	var def string
	if err := s.w.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'batches'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToUpper(def), "WITHOUT ROWID") {
		t.Fatalf("batches still WITHOUT ROWID: %s", def)
	}
	ctx := context.Background()
	for q := uint64(1); q <= 2; q++ {
		body, _, _, err := s.RawBatch(ctx, "gw", q)
		if want := fmt.Sprintf(`{"old":%d}`, q); err != nil || string(body) != want {
			t.Errorf("batch %d after migration: %q %v, want %s", q, body, err, want)
		}
	}
	res, err := s.Apply(ctx, store.Write{Batches: []store.Batch{batch("gw", 2, t0, 60), batch("gw", 3, t0.Add(time.Minute), 61)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.New[0] || !res.New[1] {
		t.Errorf("New = %v, want [false true] (2 was stored before the migration)", res.New)
	}
	// Opening again leaves the migrated table alone.
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if body, _, _, err := s2.RawBatch(ctx, "gw", 1); err != nil || string(body) != `{"old":1}` {
		t.Errorf("batch 1 after reopening: %q %v", body, err)
	}
}

func TestPersistsAcrossReopen(t *testing.T) {
	s, path := openTest(t)
	ctx := context.Background()
	if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{batch("gw", 1, t0, 50, 60), batch("gw", 3, t0.Add(time.Hour), 70)}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(path, Options{Sync: SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	res, err := s2.Apply(ctx, store.Write{Batches: []store.Batch{batch("gw", 2, t0.Add(2*time.Hour), 55)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Watermarks["gw"] != 3 {
		t.Errorf("watermark after reopen = %d, want 3", res.Watermarks["gw"])
	}
	body, sig, verified, err := s2.RawBatch(ctx, "gw", 1)
	if err != nil || string(body) != `{"seq":1}` || len(sig) != 2 || !verified {
		t.Errorf("raw batch = %q %v %v %v", body, sig, verified, err)
	}
}

func TestAggregateEnergy(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	b := batch("gw", 1, t0, 50, 60, 70)
	for i := range b.Records {
		h := level.Histogram{}
		h.Add(b.Records[i].LAeq, 1000)
		b.Records[i].Hist = &h
	}
	b2 := batch("gw", 2, t0.Add(time.Minute), 80)
	if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{b, b2}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Buckets(ctx, "gw-s", t0, t0.Add(2*time.Minute), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("buckets = %+v", got)
	}
	want := 10 * math.Log10((math.Pow(10, 5)+math.Pow(10, 6)+math.Pow(10, 7))/3) // 65.68
	if math.Abs(got[0].LAeq-want) > 1e-9 || got[0].LAFmax != 73 || got[0].LAFmin != 47 || got[0].Count != 3 || got[0].DurMs != 3000 {
		t.Errorf("bucket 0 = %+v, want LAeq %.4f", got[0], want)
	}
	if got[0].L90 == nil || *got[0].L90 != 50 || got[0].L10 == nil || *got[0].L10 != 70 {
		t.Errorf("Ln = %v %v", got[0].L10, got[0].L90)
	}
	if got[1].L90 != nil {
		t.Error("L90 reported for a bucket without histograms")
	}
	if got[1].LAeq != 80 || !got[1].Start.Equal(t0.Add(time.Minute)) {
		t.Errorf("bucket 1 = %+v", got[1])
	}
	recs, _ := s.Records(ctx, "gw-s", t0, t0.Add(time.Hour), 2)
	if len(recs) != 2 || recs[0].LAeq != 50 || recs[1].LAeq != 60 || recs[0].Hist == nil || recs[0].Grade != "class2" {
		t.Errorf("records = %+v", recs)
	}
	latest, ok, _ := s.Latest(ctx, "gw-s")
	if !ok || latest.LAeq != 80 {
		t.Errorf("latest = %+v %v", latest, ok)
	}
}

func TestDeadLettersAndStatus(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	now := t0
	w := store.Write{
		DeadLetters: []store.DeadLetter{
			{ReceivedAt: now, Topic: "x", Reason: wire.ReasonJSON, Message: "m1", Payload: []byte("{")},
			{ReceivedAt: now, Topic: "y", Reason: wire.ReasonRange, Message: "m2", Gateway: "gw", Seq: 9, Payload: nil},
		},
		Statuses: []store.GatewayStatus{{Gateway: "gw", Municipality: "lapa", State: "online", At: now, ReceivedAt: now,
			Clock: &wire.Clock{Synced: true, OffsetMs: 1.5, Source: "ntp"}, Outbox: &wire.Outbox{Pending: 3, Capacity: 10}}},
	}
	if _, err := s.Apply(ctx, w); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{batch("gw", 2, t0, 60)}}); err != nil {
		t.Fatal(err)
	}
	dl, err := s.DeadLetters(ctx, store.DeadLetterFilter{})
	if err != nil || len(dl) != 2 || dl[0].Reason != wire.ReasonRange || dl[0].Seq != 9 || string(dl[1].Payload) != "{" {
		t.Fatalf("dead letters = %+v %v", dl, err)
	}
	dl, _ = s.DeadLetters(ctx, store.DeadLetterFilter{Reason: wire.ReasonJSON})
	if len(dl) != 1 || dl[0].Message != "m1" {
		t.Errorf("filtered = %+v", dl)
	}
	gs, err := s.GatewayStatuses(ctx)
	if err != nil || len(gs) != 1 {
		t.Fatalf("statuses = %+v %v", gs, err)
	}
	g := gs[0]
	if g.State != "online" || g.Clock == nil || !g.Clock.Synced || g.Outbox == nil || g.Outbox.Pending != 3 ||
		g.LastSeq != 2 || g.Watermark != 0 || g.PendingAbove != 1 || g.LastSeen.IsZero() {
		t.Errorf("status = %+v", g)
	}
}

// TestLevelRowsInChunks: level rows go in multi-row INSERTs of power-of-two
// sizes; every row lands with its own values in order, and rows whose
// (sensor, t) is already stored are ignored and counted, across chunk
// boundaries and within one group.
func TestLevelRowsInChunks(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	levels := func(n int, base float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = base + float64(i)/100
		}
		return out
	}
	steps := []struct {
		name        string
		batches     []store.Batch
		wantIgnored int
		wantTotal   int64
	}{
		{"one record", []store.Batch{batch("gw", 1, t0, 50)}, 0, 1},
		{"127 records: chunks 64+32+16+8+4+2+1", []store.Batch{batch("gw", 2, t0.Add(time.Hour), levels(127, 40)...)}, 0, 128},
		// 70 records starting 30 s before the end of the previous batch:
		// 30 already stored (kept with their first values), 40 new.
		{"overlap", []store.Batch{batch("gw", 3, t0.Add(time.Hour+97*time.Second), levels(70, 80)...)}, 30, 168},
		// Two batches of one group overlapping each other by 5 records.
		{"overlap within a group", []store.Batch{batch("gw", 4, t0.Add(2*time.Hour), levels(10, 60)...),
			batch("gw", 5, t0.Add(2*time.Hour+5*time.Second), levels(10, 70)...)}, 5, 183},
	}
	for _, st := range steps {
		res, err := s.Apply(ctx, store.Write{Batches: st.batches})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if res.RecordsIgnored != st.wantIgnored {
			t.Errorf("%s: %d records ignored, want %d", st.name, res.RecordsIgnored, st.wantIgnored)
		}
		if n, _ := s.CountLevels(ctx, "gw-s"); n != st.wantTotal {
			t.Errorf("%s: %d rows stored, want %d", st.name, n, st.wantTotal)
		}
	}
	recs, err := s.Records(ctx, "gw-s", t0.Add(time.Hour), t0.Add(time.Hour+200*time.Second), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 167 {
		t.Fatalf("%d records in the second batch's span, want 167", len(recs))
	}
	for i, r := range recs {
		want, seq := 40+float64(i)/100, uint64(2)
		if i >= 127 { // the overlap batch's new records
			want, seq = 80+float64(i-97)/100, 3
		}
		if !r.T.Equal(t0.Add(time.Hour+time.Duration(i)*time.Second)) || r.LAeq != want || r.Seq != seq ||
			r.LAFmax != want+3 || r.LAFmin != want-3 || r.Grade != "class2" || !r.Synced || r.Gateway != "gw" {
			t.Fatalf("record %d = %+v, want LAeq %v at +%d s from seq %d", i, r, want, i, seq)
		}
	}
}
