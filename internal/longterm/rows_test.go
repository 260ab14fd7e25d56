package longterm

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/sqlitedb"
	"github.com/sossego/sossego/internal/stats"
)

// rowsFromHistograms is what EachMinuteRow must answer, computed the slow
// way: each minute's histogram decoded (EachMinute) and its percentiles
// read from it.
func rowsFromHistograms(t *testing.T, s *Store, sensor string, from, to time.Time) []stats.MinuteRow {
	t.Helper()
	var out []stats.MinuteRow
	if err := s.EachMinute(context.Background(), sensor, from, to, func(m stats.Minute) error {
		lv, _ := m.LAeq()
		r := stats.MinuteRow{Start: m.Start, DurMs: m.DurMs, FastMs: m.FastMs, LAeq: lv, Max: m.Max, Min: m.Min}
		r.HasPct = m.Hist.Percentiles(stats.RowPercentiles[:], r.Pct[:])
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func minuteRows(t *testing.T, s *Store, sensor string, from, to time.Time) []stats.MinuteRow {
	t.Helper()
	var out []stats.MinuteRow
	if err := s.EachMinuteRow(context.Background(), sensor, from, to, func(r *stats.MinuteRow) error {
		out = append(out, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameRows(t *testing.T, got, want []stats.MinuteRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.Start.Equal(w.Start) || g.DurMs != w.DurMs || g.FastMs != w.FastMs || g.Max != w.Max || g.Min != w.Min ||
			g.HasPct != w.HasPct || g.Pct != w.Pct || math.Abs(g.LAeq-w.LAeq) > 1e-9 {
			t.Fatalf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// TestMinuteRows: the percentiles kept with each minute equal those of its
// stored histogram, for minutes with LAF histograms, with 1-s LAeq only
// (no histogram in the record: the LAeq stands in) and clipped ranges.
func TestMinuteRows(t *testing.T) {
	s := openTier(t, t.TempDir())
	rng := rand.New(rand.NewPCG(7, 7))
	secs := seconds(rng, t0, 3*3600)
	for i := range secs {
		if i%7 == 0 {
			secs[i].Hist = nil // records without a histogram
		}
	}
	if err := s.Add(context.Background(), records("s1", secs[:5000]), "", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(context.Background(), records("s1", secs[5000:]), "", 0); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ from, to time.Time }{
		{t0, t0.Add(3 * time.Hour)},
		{t0.Add(17 * time.Minute), t0.Add(2*time.Hour + 3*time.Minute)},
	} {
		want := rowsFromHistograms(t, s, "s1", r.from, r.to)
		sameRows(t, minuteRows(t, s, "s1", r.from, r.to), want)
		if want[0].Pct[3] > want[0].Pct[2] || want[0].Pct[2] > want[0].Pct[1] || want[0].Pct[1] > want[0].Pct[0] || !want[0].HasPct {
			t.Errorf("percentiles out of order: %+v", want[0])
		}
	}
	// A minute without any histogram time has no percentiles.
	var empty hourData
	empty.mins[3] = &stats.Agg{DurMs: 1000, Energy: 1000 * 1e6, Max: 62, Min: 58}
	mins, _ := encodeMinutes(&empty)
	var got []minuteRec
	if err := eachMinute(mins, t0, func(i int, m *minuteRec) { got = append(got, *m) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].hasPct || math.Abs(got[0].laeq-60) > 1e-4 {
		t.Errorf("minute without histogram: %+v", got)
	}
}

// encodeMinutesV1 is the first release's minutes blob (no percentiles),
// to build a tier as that release wrote it.
func encodeMinutesV1(h *hourData) []byte {
	mins := []byte{minutesFormat1}
	for i, m := range h.mins {
		if m == nil || m.DurMs <= 0 {
			continue
		}
		lv, _ := m.LAeq()
		mins = append(mins, byte(i))
		mins = binary.AppendUvarint(mins, uint64(m.DurMs))
		mins = binary.LittleEndian.AppendUint32(mins, math.Float32bits(float32(lv)))
		mins = binary.LittleEndian.AppendUint16(mins, uint16(centi(m.Max)))
		mins = binary.LittleEndian.AppendUint16(mins, uint16(centi(m.Min)))
		mins = binary.AppendUvarint(mins, uint64(max(m.DurMs-m.FastMs, 0)))
	}
	return mins
}

// TestMigrateMinutesFormat1: a tier written by the first release (schema
// step 1, minutes without percentiles) opened by this one: step 2 rewrites
// every hour's minutes with their percentiles, step 3 numbers the rows; reports and minute reads
// find the same figures as before, and the rows the same as their
// histograms say.
func TestMigrateMinutesFormat1(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(8, 8))
	secs := seconds(rng, t0, 5*3600+600)

	// The first release's file: step 1 only, hours written with format 1.
	db, err := sqlitedb.Open(path, sqlitedb.Options{PageSize: 16384})
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitedb.Migrate(ctx, db, sqlitedb.Scheme{Table: "longterm_schema"}, steps[:1]); err != nil {
		t.Fatal(err)
	}
	byHour := map[int64]*hourData{}
	for _, sec := range secs {
		h := hourOf(sec.T)
		if byHour[h] == nil {
			byHour[h] = &hourData{}
		}
		mi := int(floorDiv(sec.T.Unix(), 60) - h*60)
		if byHour[h].mins[mi] == nil {
			byHour[h].mins[mi] = &stats.Agg{}
		}
		byHour[h].mins[mi].AddSecond(sec)
	}
	for hour, h := range byHour {
		tot := h.total()
		_, hists := encodeMinutes(h)
		var id int64
		if err := db.QueryRowContext(ctx, `INSERT INTO hours (sensor, hour, dur_ms, energy, lafmax, lafmin, fast_ms, hist, minutes)
			VALUES (?,?,?,?,?,?,?,?,?) RETURNING rowid`, "s1", hour, tot.DurMs, tot.Energy, tot.Max, tot.Min, tot.FastMs,
			appendHist(nil, &tot.Hist), encodeMinutesV1(h)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO mhists (id, data) VALUES (?, ?)`, id, deflate(hists)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := openTier(t, dir)
	var old int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM hours WHERE substr(minutes, 1, 1) <> x'02'`).Scan(&old); err != nil || old != 0 {
		t.Fatalf("%d hours left in the old format (%v)", old, err)
	}
	// Step 3 numbered the existing rows: a tier mirror started now sends
	// them all.
	if ch, err := s.TierChangesAfter(ctx, 0, 1000); err != nil || len(ch) != len(byHour) || ch[0].Seq <= 0 {
		t.Fatalf("changes after 0: %d rows (%v), want %d", len(ch), err, len(byHour))
	}
	from, to := t0, t0.Add(6*time.Hour)
	sameRows(t, minuteRows(t, s, "s1", from, to), rowsFromHistograms(t, s, "s1", from, to))
	compare(t, tierReport(t, s, "s1", from, to, limitAt), rawReport(t, secs, from, to, limitAt))
}
