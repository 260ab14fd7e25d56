package longterm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/tz"
	"github.com/sossego/sossego/internal/wire"
)

var t0 = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC) // 00:00 in Brasília

func openTier(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openReadings(t testing.TB, dir string) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// seconds makes n 1-s records from start with levels from rng, each with an
// LAF histogram of eight 125-ms samples.
func seconds(rng *rand.Rand, start time.Time, n int) []stats.Second {
	out := make([]stats.Second, n)
	for i := range out {
		var acc level.Accumulator
		h := level.Histogram{}
		mx, mn := -1.0, 1000.0
		base := 50 + 15*rng.Float64()
		for range 8 {
			l := math.Round((base+3*rng.NormFloat64())*100) / 100
			acc.Add(l, 125)
			h.Add(l, 125)
			mx, mn = max(mx, l), min(mn, l)
		}
		leq, _ := acc.Leq()
		out[i] = stats.Second{T: start.Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: math.Round(leq*100) / 100,
			LAFmax: mx, LAFmin: mn, Hist: &h}
	}
	return out
}

func records(sensor string, secs []stats.Second) []Record {
	out := make([]Record, len(secs))
	for i, s := range secs {
		out[i] = Record{Sensor: sensor, Second: s}
	}
	return out
}

// rawReport is the engine fed the records' own minutes.
func rawReport(t *testing.T, secs []stats.Second, from, to time.Time, limit stats.LimitFunc) stats.Report {
	t.Helper()
	e := stats.New(stats.Options{From: from, To: to, Limit: limit})
	stats.Minutes(secs, func(m stats.Minute) {
		if err := e.AddMinute(m); err != nil {
			t.Fatal(err)
		}
	})
	return e.Result()
}

func tierReport(t *testing.T, s *Store, sensor string, from, to time.Time, limit stats.LimitFunc) stats.Report {
	t.Helper()
	e := stats.New(stats.Options{From: from, To: to, Limit: limit})
	if err := s.Fold(context.Background(), sensor, e, from, to); err != nil {
		t.Fatal(err)
	}
	return e.Result()
}

func same(t *testing.T, name string, a, b *float64, tol float64) {
	t.Helper()
	if (a == nil) != (b == nil) || (a != nil && math.Abs(*a-*b) > tol) {
		t.Errorf("%s: tier %v, records %v", name, deref(a), deref(b))
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func compare(t *testing.T, tier, raw stats.Report) {
	t.Helper()
	same(t, "LAeq", tier.LAeq, raw.LAeq, 0.001)
	same(t, "Lden", tier.Lden, raw.Lden, 0.001)
	for _, p := range []struct {
		name string
		a, b *float64
	}{{"L10", tier.L10, raw.L10}, {"L50", tier.L50, raw.L50}, {"L90", tier.L90, raw.L90}, {"L95", tier.L95, raw.L95},
		{"LAFmax", tier.LAFmax, raw.LAFmax}, {"LAFmin", tier.LAFmin, raw.LAFmin}} {
		same(t, p.name, p.a, p.b, 1e-9)
	}
	if tier.SecondsPresent != raw.SecondsPresent || tier.MinutesAbove != raw.MinutesAbove || tier.EpisodesAbove != raw.EpisodesAbove {
		t.Errorf("present %v/%v above %d/%d episodes %d/%d", tier.SecondsPresent, raw.SecondsPresent,
			tier.MinutesAbove, raw.MinutesAbove, tier.EpisodesAbove, raw.EpisodesAbove)
	}
	for i := range min(len(tier.Occurrences), len(raw.Occurrences)) {
		same(t, "occurrence LAeq", tier.Occurrences[i].LAeq, raw.Occurrences[i].LAeq, 0.001)
		same(t, "occurrence L90", tier.Occurrences[i].L90, raw.Occurrences[i].L90, 1e-9)
	}
}

// limitAt: 60 dB from 22:00 to 07:00, 55 dB from 07:00 to 20:01 (a window
// that splits an hour) and none between 20:01 and 22:00, Brasília time.
func limitAt(t time.Time) (codes.Limit, bool) {
	lt := t.In(tz.Brasilia())
	y, mo, d := lt.Date()
	day := func(h, m int) time.Time { return time.Date(y, mo, d, h, m, 0, 0, tz.Brasilia()) }
	switch m := lt.Hour()*60 + lt.Minute(); {
	case m < 7*60:
		return codes.Limit{DBA: 60, Period: "noturno", RuleID: "n", Start: day(-2, 0), End: day(7, 0)}, true
	case m < 20*60+1:
		return codes.Limit{DBA: 55, Period: "diurno", RuleID: "d", Start: day(7, 0), End: day(20, 1)}, true
	case m >= 22*60:
		return codes.Limit{DBA: 60, Period: "noturno", RuleID: "n", Start: day(22, 0), End: day(31, 0)}, true
	}
	return codes.Limit{}, false
}

func TestTierEqualsRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	secs := seconds(rng, t0, 26*3600)
	// Gaps: a missing hour and a missing half minute.
	secs = append(secs[:3600*5], secs[3600*6:]...)
	secs = append(secs[:1000], secs[1030:]...)
	s := openTier(t, t.TempDir())
	// In shuffled batches: the tier does not depend on arrival order.
	recs := records("s1", secs)
	rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	for i := 0; i < len(recs); i += 20000 {
		if err := s.Add(context.Background(), recs[i:min(i+20000, len(recs))], "", 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []struct {
		name     string
		from, to time.Time
	}{
		{"a day and two hours", t0, t0.Add(26 * time.Hour)},
		{"unaligned hours", t0.Add(90 * time.Minute), t0.Add(25*time.Hour + 17*time.Minute)},
	} {
		t.Run(r.name, func(t *testing.T) {
			compare(t, tierReport(t, s, "s1", r.from, r.to, limitAt), rawReport(t, secs, r.from, r.to, limitAt))
		})
	}
	// Minutes read back equal the records' minutes.
	var want []stats.Minute
	stats.Minutes(secs[:7200], func(m stats.Minute) {
		if m.Start.Before(t0.Add(2 * time.Hour)) {
			want = append(want, m)
		}
	})
	var got []stats.Minute
	if err := s.EachMinute(context.Background(), "s1", t0, t0.Add(2*time.Hour), func(m stats.Minute) error {
		m.Hist = *m.Hist.Clone() // reused after f returns
		got = append(got, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d minutes, want %d", len(got), len(want))
	}
	for i := range got {
		a, _ := got[i].LAeq()
		b, _ := want[i].LAeq()
		p, _ := got[i].Hist.Percentile(90)
		q, _ := want[i].Hist.Percentile(90)
		if !got[i].Start.Equal(want[i].Start) || got[i].DurMs != want[i].DurMs || math.Abs(a-b) > 1e-4 || p != q {
			t.Fatalf("minute %d: %v %d %.5f L90 %v, want %v %d %.5f L90 %v", i, got[i].Start, got[i].DurMs, a, p, want[i].Start, want[i].DurMs, b, q)
		}
	}
	var hours int
	if err := s.EachHour(context.Background(), "s1", t0, t0.Add(26*time.Hour), func(stats.Hour) error { hours++; return nil }); err != nil {
		t.Fatal(err)
	}
	if hours != 25 {
		t.Errorf("%d hours, want 25 (one missing)", hours)
	}
}

func lapaBatch(gw, sensor string, seq uint64, secs []stats.Second) store.Batch {
	b := store.Batch{Gateway: gw, Municipality: "lapa", Sensor: sensor, Kind: wire.KindLevels, Seq: seq,
		Topic: wire.LevelsTopic("lapa", gw, sensor), Body: []byte(`{}`), Verified: true, ReceivedAt: secs[0].T,
		Device: wire.Device{Grade: "class2"}, Clock: wire.Clock{Synced: true}}
	for _, s := range secs {
		b.Records = append(b.Records, wire.Record{T: s.T, DurMs: s.DurMs, LAeq: s.LAeq, LAFmax: s.LAFmax, LAFmin: s.LAFmin, Hist: s.Hist})
	}
	return b
}

// apply stores secs in the readings store in 10-record batches.
func apply(t *testing.T, st *sqlitestore.Store, gw, sensor string, seq0 uint64, secs []stats.Second) {
	t.Helper()
	var w store.Write
	for i := 0; i < len(secs); i += 10 {
		w.Batches = append(w.Batches, lapaBatch(gw, sensor, seq0+uint64(i/10), secs[i:min(i+10, len(secs))]))
	}
	if _, err := st.Apply(context.Background(), w); err != nil {
		t.Fatal(err)
	}
}

func drain(t *testing.T, f *Follower) int {
	t.Helper()
	total := 0
	for {
		n, err := f.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
}

// TestFollowerCrashSafe: records stored before the tier folded them (a
// crash between the readings commit and the aggregation) are folded after a
// restart; a failed tier transaction leaves the cursor and the rows as they
// were, and nothing is counted twice.
func TestFollowerCrashSafe(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st := openReadings(t, dir)
	rng := rand.New(rand.NewPCG(9, 10))
	secs := seconds(rng, t0, 3*3600)
	apply(t, st, "gw", "s1", 1, secs[:3600])

	tier := openTier(t, dir)
	f := NewFollower(st, tier, FollowerOptions{Batch: 1000})
	if err := f.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if n := drain(t, f); n != 3600 {
		t.Fatalf("folded %d, want 3600", n)
	}
	// "Crash": the readings store commits more, the tier process is gone.
	apply(t, st, "gw", "s1", 1000, secs[3600:7200])
	tier.Close()
	tier = openTier(t, dir)
	f = NewFollower(st, tier, FollowerOptions{Batch: 1000})
	if err := f.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	// A tier transaction that fails after writing its rows changes nothing.
	boom := errors.New("disco cheio")
	fails := 2
	tier.beforeCommit = func() error {
		if fails > 0 {
			fails--
			return boom
		}
		return nil
	}
	for range 2 {
		if _, err := f.Step(ctx); !errors.Is(err, boom) {
			t.Fatalf("step: %v, want the injected failure", err)
		}
	}
	if n := drain(t, f); n != 3600 {
		t.Fatalf("after restart folded %d, want 3600", n)
	}
	apply(t, st, "gw", "s1", 2000, secs[7200:])
	if n := drain(t, f); n != 3600 {
		t.Fatalf("live folded %d, want 3600", n)
	}
	if b, err := f.Backlog(ctx); err != nil || b != 0 {
		t.Errorf("backlog %d %v", b, err)
	}
	compare(t, tierReport(t, tier, "s1", t0, t0.Add(3*time.Hour), limitAt), rawReport(t, secs, t0, t0.Add(3*time.Hour), limitAt))
	r := tierReport(t, tier, "s1", t0, t0.Add(3*time.Hour), nil)
	if r.SecondsPresent != 3*3600 {
		t.Errorf("seconds present %v, want %d (each record once)", r.SecondsPresent, 3*3600)
	}
}

// TestFollowerFloorsIDs: a readings database created anew beside a kept
// tier gets its ids raised above the tier's cursor, so its records are
// folded in rather than skipped.
func TestFollowerFloorsIDs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 12))
	secs := seconds(rng, t0, 1200)
	st := openReadings(t, dir)
	apply(t, st, "gw", "s1", 1, secs[:600])
	tier := openTier(t, dir)
	f := NewFollower(st, tier, FollowerOptions{})
	if err := f.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	drain(t, f)
	cur, _ := tier.Cursor(ctx, CursorLevels)
	if cur != 600 {
		t.Fatalf("cursor %d, want 600", cur)
	}
	st.Close()

	fresh := t.TempDir() // the readings database lost; the tier kept
	st2 := openReadings(t, fresh)
	f = NewFollower(st2, tier, FollowerOptions{})
	if err := f.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	apply(t, st2, "gw", "s1", 1, secs[600:])
	if n := drain(t, f); n != 600 {
		t.Fatalf("folded %d records of the new database, want 600", n)
	}
	if id, _ := st2.MaxLevelID(ctx); id != 1200 {
		t.Errorf("new ids end at %d, want 1200 (above the cursor 600)", id)
	}
	r := tierReport(t, tier, "s1", t0, t0.Add(time.Hour), nil)
	if r.SecondsPresent != 1200 {
		t.Errorf("seconds present %v, want 1200", r.SecondsPresent)
	}
}

func TestAddMinutes(t *testing.T) {
	s := openTier(t, t.TempDir())
	rng := rand.New(rand.NewPCG(13, 14))
	secs := seconds(rng, t0, 7200)
	var mins []stats.Minute
	stats.Minutes(secs, func(m stats.Minute) { mins = append(mins, m) })
	if err := s.AddMinutes(context.Background(), "s1", mins); err != nil {
		t.Fatal(err)
	}
	compare(t, tierReport(t, s, "s1", t0, t0.Add(2*time.Hour), limitAt), rawReport(t, secs, t0, t0.Add(2*time.Hour), limitAt))
	var page int
	if err := s.w.QueryRow(`PRAGMA page_size`).Scan(&page); err != nil || page != 16384 {
		t.Errorf("page size %d %v, want 16384 (set before WAL mode)", page, err)
	}
	first, last, ok, err := s.Span(context.Background(), "s1")
	if err != nil || !ok || !first.Equal(t0) || !last.Equal(t0.Add(time.Hour)) {
		t.Errorf("span %v %v %v %v", first, last, ok, err)
	}
}

func FuzzDecodeHour(f *testing.F) {
	h := &hourData{}
	h.mins[3] = &stats.Agg{}
	h.mins[3].AddSecond(stats.Second{T: t0, DurMs: 1000, LAeq: 60, LAFmax: 62, LAFmin: 58, Hist: &level.Histogram{Bins: map[int]float64{600: 1000}}})
	mins, hists := encodeMinutes(h)
	f.Add(mins, deflate(hists))
	f.Add([]byte{1, 70}, []byte{})
	f.Fuzz(func(t *testing.T, mins, mhists []byte) {
		decodeHour(t0, mins, mhists) //nolint:errcheck // must not panic
		decodeHist(mins)             //nolint:errcheck // must not panic
	})
}
