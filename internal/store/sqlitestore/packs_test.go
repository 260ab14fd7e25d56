package sqlitestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

func ptr[T any](v T) *T { return &v }

func histOf(levels ...float64) *level.Histogram {
	var h level.Histogram
	for _, l := range levels {
		h.Add(l, 125)
	}
	return &h
}

func TestPackRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		recs []wire.Record
	}{
		{"one plain record", []wire.Record{{T: t0, DurMs: 1000, LAeq: 61.3, LAFmax: 65, LAFmin: 58.1}}},
		{"every optional part", []wire.Record{
			{T: t0, DurMs: 1000, LAeq: 61.3, LAFmax: 65, LAFmin: 58.1, LCpeak: ptr(97.25), Overload: true,
				Hist: histOf(60, 61.3, 65)},
			{T: t0.Add(1500 * time.Millisecond), DurMs: 500, LAeq: 0, LAFmax: 160, LAFmin: -3},
			{T: t0.Add(59 * time.Minute), DurMs: 3600000, LAeq: math.SmallestNonzeroFloat64, LAFmax: 1e-300, LAFmin: 0,
				Hist: &level.Histogram{}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := encodePack(nil, tc.recs, tc.recs[0].T.UnixMilli())
			if err != nil {
				t.Fatal(err)
			}
			m := packMeta{id: 40, n: int64(len(tc.recs)), t0: tc.recs[0].T.UnixMilli(), sensor: "s", gw: "g", seq: 7,
				grade: "class1", synced: true}
			got, err := decodePack(nil, m, data)
			if err != nil {
				t.Fatal(err)
			}
			var want []store.Record
			for i, r := range tc.recs {
				want = append(want, store.Record{ID: 40 - int64(len(tc.recs)) + 1 + int64(i), Sensor: "s", Gateway: "g", Seq: 7,
					T: r.T.UTC(), DurMs: r.DurMs, LAeq: r.LAeq, LAFmax: r.LAFmax, LAFmin: r.LAFmin, LCpeak: r.LCpeak,
					Overload: r.Overload, Grade: "class1", Synced: true, Hist: r.Hist})
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("decoded records differ (-want +got):\n%s", d)
			}
			// Every truncation and a record count that does not match are
			// errors, never a short or padded read.
			for k := range len(data) {
				if _, err := decodePack(nil, m, data[:k]); !errors.Is(err, errPack) {
					t.Fatalf("data cut at %d of %d: err %v, want a malformed pack", k, len(data), err)
				}
			}
			for _, n := range []int64{m.n - 1, m.n + 1} {
				mm := m
				mm.n = n
				if _, err := decodePack(nil, mm, data); !errors.Is(err, errPack) {
					t.Errorf("n=%d for %d records: err %v, want a malformed pack", n, m.n, err)
				}
			}
		})
	}
}

// FuzzDecodePack: any bytes decode to at most n records or a malformed
// pack error, and never panic; what decodes re-encodes to the same bytes.
func FuzzDecodePack(f *testing.F) {
	recs := []wire.Record{{T: t0, DurMs: 1000, LAeq: 61.3, LAFmax: 65, LAFmin: 58.1, LCpeak: ptr(90.0), Hist: histOf(60)},
		{T: t0.Add(time.Second), DurMs: 1000, LAeq: 50, LAFmax: 55, LAFmin: 45, Overload: true}}
	data, err := encodePack(nil, recs, t0.UnixMilli())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, int64(2))
	f.Add(data[:10], int64(1))
	f.Add([]byte{packFormat, 0, 0}, int64(1))
	f.Fuzz(func(t *testing.T, data []byte, n int64) {
		if n < 0 || n > 1<<12 {
			return
		}
		m := packMeta{id: 1 << 20, n: n, t0: t0.UnixMilli()}
		got, err := decodePack(nil, m, data)
		if err != nil {
			if !errors.Is(err, errPack) {
				t.Fatalf("error %v is not a malformed pack", err)
			}
			return
		}
		if int64(len(got)) != n {
			t.Fatalf("%d records from a pack of %d", len(got), n)
		}
		var back []wire.Record
		for _, r := range got {
			back = append(back, wire.Record{T: r.T, DurMs: r.DurMs, LAeq: r.LAeq, LAFmax: r.LAFmax, LAFmin: r.LAFmin,
				LCpeak: r.LCpeak, Hist: r.Hist, Overload: r.Overload})
		}
		if _, err := encodePack(nil, back, m.t0); err != nil {
			t.Fatalf("decoded records do not encode: %v", err)
		}
	})
}

// TestMigratesLevelsTable: a database with one levels row per record (before
// packs) is moved into one-record packs under the same ids on open, so the
// InfluxDB mirror's cursor keeps its place; new records get higher ids and
// (sensor, t) stays unique across old and new.
func TestMigratesLevelsTable(t *testing.T) {
	db, path := oldDatabase(t, `CREATE TABLE levels (
	id INTEGER PRIMARY KEY, sensor TEXT NOT NULL, t INTEGER NOT NULL, dur_ms INTEGER NOT NULL,
	laeq REAL NOT NULL, lafmax REAL NOT NULL, lafmin REAL NOT NULL, lcpeak REAL, energy REAL NOT NULL,
	overload INTEGER NOT NULL, hist BLOB, gateway TEXT NOT NULL, seq INTEGER NOT NULL, grade TEXT NOT NULL,
	synced INTEGER NOT NULL);
CREATE UNIQUE INDEX levels_sensor_t ON levels (sensor, t);
CREATE TABLE cursors (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
INSERT INTO cursors VALUES ('influx:levels', 5);`)
	// Ids with a gap (a pruned row), one with LCpeak and a histogram.
	old := []struct {
		id     int64
		sec    int
		lcpeak any
		hist   any
	}{{3, 0, nil, nil}, {4, 1, 99.5, `{"bins":{"600":1000}}`}, {5, 2, nil, nil}, {9, 3, nil, nil}}
	for _, o := range old {
		if _, err := db.Exec(`INSERT INTO levels VALUES (?, 'gw-s', ?, 1000, 60, 63, 57, ?, 0, 0, ?, 'gw', 1, 'class2', 1)`,
			o.id, t0.Add(time.Duration(o.sec)*time.Second).UnixMilli(), o.lcpeak, o.hist); err != nil {
			t.Fatal(err)
		}
	}
	var logged bytes.Buffer
	s := openMigrated(t, db, path, Options{Log: slog.New(slog.NewTextHandler(&logged, nil))})
	// The operator sees the migration start with its size and end.
	for _, want := range []string{`msg="convertendo leituras para o formato compacto; o serviço inicia ao terminar" leituras=4`,
		`msg="leituras convertidas" leituras=4 duracao=`} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("migration log lacks %q:\n%s", want, logged.String())
		}
	}
	ctx := context.Background()
	recs, err := s.Records(ctx, "gw-s", t0, t0.Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	if d := cmp.Diff([]int64{3, 4, 5, 9}, ids); d != "" {
		t.Errorf("ids after migration (-want +got):\n%s", d)
	}
	if len(recs) == 4 && (recs[1].LCpeak == nil || *recs[1].LCpeak != 99.5 || recs[1].Hist == nil || recs[1].Hist.Bins[600] != 1000) {
		t.Errorf("record 4 lost its LCpeak or histogram: %+v", recs[1])
	}
	after, err := s.LevelsAfter(ctx, 5, 10)
	if err != nil || len(after) != 1 || after[0].ID != 9 {
		t.Errorf("LevelsAfter(5) = %+v, %v; want record 9", after, err)
	}
	// Seconds 3 and 4: 3 was stored before, 4 is new and gets id 10.
	res, err := s.Apply(ctx, store.Write{Batches: []store.Batch{batch("gw", 2, t0.Add(3*time.Second), 70, 71)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RecordsIgnored != 1 {
		t.Errorf("RecordsIgnored = %d, want 1 (second 3 was migrated)", res.RecordsIgnored)
	}
	if top, _ := s.MaxLevelID(ctx); top != 10 {
		t.Errorf("MaxLevelID = %d, want 10", top)
	}
	var n int
	if err := s.r.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name IN ('levels', 'levels_sensor_t')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("old table or index left: %d, %v", n, err)
	}
}

// TestPacksWindowQueries: packs that overlap in time (records of one
// sensor sent twice under different seqs), records out of order in a
// batch, a batch spanning more than packSpan; Records in time order with
// limits, Latest, LevelsAfter from inside a pack.
func TestPacksWindowQueries(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	rec := func(sec int, l float64) wire.Record {
		return wire.Record{T: at(sec), DurMs: 1000, LAeq: l, LAFmax: l + 3, LAFmin: l - 3}
	}
	b1 := batch("gw", 1, t0)
	b1.Records = []wire.Record{rec(4, 64), rec(0, 60), rec(2, 62), rec(2, 99)} // out of order, 2 twice
	b2 := batch("gw", 2, t0)
	b2.Records = []wire.Record{rec(1, 61), rec(2, 98), rec(3, 63), rec(5, 65)} // interleaves b1; 2 stored
	b3 := batch("gw", 3, t0)
	b3.Records = []wire.Record{rec(7400, 70), rec(300, 30), rec(10, 50)} // spans over packSpan: two packs
	res, err := s.Apply(ctx, store.Write{Batches: []store.Batch{b1}})
	if err != nil {
		t.Fatal(err)
	}
	b2Records := slices.Clone(b2.Records)
	res2, err := s.Apply(ctx, store.Write{Batches: []store.Batch{b2, b3}})
	if err != nil {
		t.Fatal(err)
	}
	// The observers get the batch's records after Apply: a skipped one is
	// skipped in the store only.
	if d := cmp.Diff(b2Records, b2.Records); d != "" {
		t.Errorf("Apply changed the batch's records (-before +after):\n%s", d)
	}
	if res.RecordsIgnored != 1 || res2.RecordsIgnored != 1 {
		t.Errorf("ignored %d and %d, want 1 and 1", res.RecordsIgnored, res2.RecordsIgnored)
	}
	var packs int
	if err := s.r.QueryRow(`SELECT COUNT(*) FROM level_packs`).Scan(&packs); err != nil || packs != 4 {
		t.Errorf("%d packs (%v), want 4", packs, err)
	}
	secs := func(recs []store.Record) (out []int) {
		for _, r := range recs {
			out = append(out, int(r.T.Sub(t0)/time.Second)*1000+int(r.LAeq))
		}
		return out
	}
	for _, q := range []struct {
		name     string
		from, to int
		limit    int
		want     []int // second*1000 + LAeq
	}{
		{"all", 0, 8000, 0, []int{60, 1061, 2062, 3063, 4064, 5065, 10050, 300030, 7400070}},
		{"limit inside interleaved packs", 0, 8000, 4, []int{60, 1061, 2062, 3063}},
		{"limit reached in the first of interleaved packs", 0, 8000, 2, []int{60, 1061}},
		{"from inside a pack", 3, 6, 0, []int{3063, 4064, 5065}},
		{"to excludes its second", 1, 4, 2, []int{1061, 2062}},
		{"a pack starting before from", 200, 7401, 0, []int{300030, 7400070}},
		{"limit with a long gap", 200, 7401, 1, []int{300030}},
		{"nothing", 6, 10, 0, nil},
	} {
		got, err := s.Records(ctx, "gw-s", at(q.from), at(q.to), q.limit)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(q.want, secs(got)); d != "" {
			t.Errorf("%s (-want +got):\n%s", q.name, d)
		}
	}
	if r, ok, err := s.Latest(ctx, "gw-s"); err != nil || !ok || !r.T.Equal(at(7400)) {
		t.Errorf("Latest = %v %v %v, want second 7400", r.T, ok, err)
	}
	all, err := s.LevelsAfter(ctx, 0, 100)
	if err != nil || len(all) != 9 {
		t.Fatalf("LevelsAfter(0) = %d records, %v; want 9", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID != all[i-1].ID+1 {
			t.Fatalf("record ids not consecutive: %d then %d", all[i-1].ID, all[i].ID)
		}
	}
	// From the middle of b1's pack (ids 1..3), two at a time.
	var walked []int64
	for after := all[1].ID; ; {
		page, err := s.LevelsAfter(ctx, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 2 {
			t.Fatalf("page of %d, limit 2", len(page))
		}
		for _, r := range page {
			walked = append(walked, r.ID)
		}
		after = page[len(page)-1].ID
	}
	var want []int64
	for _, r := range all[2:] {
		want = append(want, r.ID)
	}
	if d := cmp.Diff(want, walked); d != "" {
		t.Errorf("cursor walk (-want +got):\n%s", d)
	}
	if n, _ := s.CountLevels(ctx, "gw-s"); n != 9 {
		t.Errorf("CountLevels = %d, want 9", n)
	}
}

// TestRecentPacksMemory: Apply remembers the spans of each sensor's last
// packs between transactions, to tell without asking SQLite that a batch
// starting before the latest stored record overlaps nothing. Records in
// remembered packs and in packs it no longer remembers are still found (in
// SQLite), and a retention pass makes it forget, so a record whose pack was
// deleted is stored again.
func TestRecentPacksMemory(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	apply := func(b store.Batch) store.Result {
		t.Helper()
		b.Body = mustJSON(t, wire.Batch{V: 1, Kind: wire.KindLevels, Gateway: b.Gateway, Sensor: b.Sensor, Seq: b.Seq, Records: b.Records})
		res, err := s.Apply(ctx, store.Write{Batches: []store.Batch{b}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	n := recentPacks + 8 // < 1000, the seqs of the batches below
	for i := range n {   // one pack per transaction, second i; the first 8 are forgotten
		apply(batch("gw", uint64(i+1), at(i), 60))
	}
	steps := []struct {
		name        string
		b           store.Batch
		wantIgnored int
	}{
		{"a forgotten pack and a remembered one", batch("gw", 1000, at(0), 70), 1},
		{"a gap between remembered packs", batch("gw", 1001, at(n-3), 70, 71, 72), 3},
		{"between remembered packs, overlapping none", batch("gw", 1006, at(n-5).Add(500*time.Millisecond), 70), 0},
		{"after the last", batch("gw", 1002, at(n), 70, 71), 0},
		{"the same again, in a later transaction", batch("gw", 1003, at(n), 70, 71), 2},
	}
	for _, st := range steps {
		if res := apply(st.b); res.RecordsIgnored != st.wantIgnored {
			t.Errorf("%s: %d records ignored, want %d", st.name, res.RecordsIgnored, st.wantIgnored)
		}
	}
	// Seconds 1 and 2 of a forgotten pack, alone.
	if res := apply(batch("gw", 1004, at(1), 70, 71)); res.RecordsIgnored != 2 {
		t.Errorf("forgotten packs: %d records ignored, want 2", res.RecordsIgnored)
	}
	if _, err := s.PruneOldest(ctx, store.Prune{Before: t0.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.CountLevels(ctx, "gw-s"); c != 0 {
		t.Fatalf("%d records left after pruning everything", c)
	}
	if res := apply(batch("gw", 1005, at(n), 80, 81)); res.RecordsIgnored != 0 {
		t.Errorf("after retention deleted them: %d records ignored, want 0", res.RecordsIgnored)
	}
}

// FuzzDecodeHist: a stored histogram decodes as json.Unmarshal decodes
// it, whether the one-pass reader takes it or not.
func FuzzDecodeHist(f *testing.F) {
	for _, s := range []string{`{"bins":{"612":100,"613":250.5,"0":0}}`, `{"bins":{}}`, `{"bins":{"612":1,"612":2}}`,
		`{"bins":{"0612":1}}`, `{"bins":{"1":1e3}}`, `{"bins":{"1":-1}}`, `{"bins":{"1":1.}}`, `{"bins":{"1":01}}`,
		`{"bins":{"1":1,}}`, `{"bins": {"1":1}}`, `{"bins":null}`, `{"bins":{"1":{}}}`, `{"bins":{"12345678":1}}`,
		`{"bins":{"1":1234567890123456}}`, `{"bins":{"1":0.1000000000000000055511151231257827}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeHist(b)
		var want level.Histogram
		werr := json.Unmarshal(b, &want)
		if (err == nil) != (werr == nil) || (err == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%s: decodeHist %v %v, json.Unmarshal %v %v", b, got, err, want, werr)
		}
	})
}

func TestDecodeHistPlain(t *testing.T) {
	for _, c := range []struct {
		in    string
		plain bool
	}{
		{`{"bins":{"612":100,"613":250.5}}`, true},
		{`{"bins":{}}`, true},
		{`{"bins":{"1":1e3}}`, false},
		{`{"bins": {"1":1}}`, false},
		{`{"bins":{"1":1,}}`, false},
	} {
		_, ok := plainHist([]byte(c.in))
		if ok != c.plain {
			t.Errorf("%s: plain %v, want %v", c.in, ok, c.plain)
		}
	}
}
