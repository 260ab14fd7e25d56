package longterm

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/codes"
	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/sim"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/tz"
)

// simSeconds returns the 1-s records of the simulated meter (scenario sc)
// over [from, from+n s), as the gateway makes them: eight 125-ms LAF
// samples a second, their energy mean, extremes and 0.1 dB histogram.
func simSeconds(tb testing.TB, sc sim.Scenario, from time.Time, n int, emit func([]stats.Second)) {
	tb.Helper()
	dev, err := sim.New(&sim.Opts{Scenario: sc, Seed: 1, Start: from, Now: func() time.Time { return from }, Grade: bridge.GradeClass2})
	if err != nil {
		tb.Fatal(err)
	}
	var smp bridge.Sample
	chunk := make([]stats.Second, 0, 600)
	for i := range n {
		t := from.Add(time.Duration(i) * time.Second)
		var acc level.Accumulator
		h := level.Histogram{Bins: make(map[int]float64, 8)}
		mx, mn := math.Inf(-1), math.Inf(1)
		for k := 1; k <= 8; k++ {
			dev.Measure(t.Add(time.Duration(k)*125*time.Millisecond), 125*time.Millisecond, &smp)
			acc.Add(smp.Level, 125)
			h.Add(smp.Level, 125)
			mx, mn = max(mx, smp.Level), min(mn, smp.Level)
		}
		leq, _ := acc.Leq()
		chunk = append(chunk, stats.Second{T: t, DurMs: 1000, LAeq: math.Round(leq*100) / 100, LAFmax: mx, LAFmin: mn, Hist: &h})
		if len(chunk) == cap(chunk) {
			emit(chunk)
			chunk = chunk[:0]
		}
	}
	if len(chunk) > 0 {
		emit(chunk)
	}
}

// monthStart is 1 November 2026, 00:00 in Brasília.
var monthStart = time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)

// writeMonth writes 30 days of one simulated sensor into a new tier at
// path through Add, ten minutes of records per transaction (the follower
// under a steady stream folds one to a few seconds per transaction; ten
// minutes keeps the benchmark to minutes while rewriting every hour row
// six times, as live folding rewrites it many times).
func writeMonth(tb testing.TB, path string, sc sim.Scenario) *Store {
	return writeDays(tb, path, sc, 30)
}

func writeDays(tb testing.TB, path string, sc sim.Scenario, days int) *Store {
	tb.Helper()
	s, err := Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	simSeconds(tb, sc, monthStart, days*86400, func(secs []stats.Second) {
		if err := s.Add(ctx, records("lapa-bar-01", secs), CursorLevels, 0); err != nil {
			tb.Fatal(err)
		}
	})
	return s
}

func fileSize(tb testing.TB, s *Store, path string) int64 {
	tb.Helper()
	if _, err := s.w.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// BenchmarkTierMonth writes a simulated month of one sensor (bar music
// with its nights: the most varied scenario, so the largest histograms)
// and reports the file's bytes, per minute and extrapolated to a year
// (× 365/30). Run with -benchtime=1x.
func BenchmarkTierMonth(b *testing.B) {
	for _, sc := range []sim.Scenario{sim.BarMusic, sim.QuietNight} {
		b.Run(string(sc), func(b *testing.B) {
			for range b.N {
				path := filepath.Join(b.TempDir(), FileName)
				s := writeMonth(b, path, sc)
				n := fileSize(b, s, path)
				s.Close()
				b.ReportMetric(float64(n)/(30*1440), "B/minute")
				b.ReportMetric(float64(n)*365/30/1e6, "MB/sensor-year")
			}
		})
	}
}

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

// benchTier is a tier holding a simulated month (November 2026) and,
// copied from it hour by hour, the eleven months before: a year of one
// sensor.
func benchTier(b *testing.B) *Store {
	b.Helper()
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "sossego-longterm-bench")
		if benchErr != nil {
			return
		}
		path := filepath.Join(benchDir, FileName)
		s := writeMonth(b, path, sim.BarMusic)
		defer s.Close()
		h0 := hourOf(monthStart)
		for k := int64(1); k <= 12; k++ {
			if _, benchErr = s.w.Exec(`INSERT INTO hours (sensor, hour, dur_ms, energy, lafmax, lafmin, fast_ms, hist, minutes)
				SELECT sensor, hour - ?, dur_ms, energy, lafmax, lafmin, fast_ms, hist, minutes FROM hours WHERE hour >= ? AND hour < ?`,
				k*720, h0, h0+720); benchErr != nil {
				return
			}
			if _, benchErr = s.w.Exec(`INSERT INTO mhists (id, data) SELECT c.rowid, m.data FROM hours c
				JOIN hours o ON o.sensor = c.sensor AND o.hour = c.hour + ? JOIN mhists m ON m.id = o.rowid
				WHERE c.hour >= ? AND c.hour < ?`, k*720, h0-k*720, h0-k*720+720); benchErr != nil {
				return
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	s, err := Open(filepath.Join(benchDir, FileName))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func lapaLimit(b *testing.B) stats.LimitFunc {
	set, err := codes.LoadDir("")
	if err != nil {
		b.Fatal(err)
	}
	c, _ := set.Code("lapa")
	return func(t time.Time) (codes.Limit, bool) { return c.ActiveLimitFor("other", "bar", "sound_system", t) }
}

func benchReport(b *testing.B, from, to time.Time) {
	s := benchTier(b)
	limit := lapaLimit(b)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		e := stats.New(stats.Options{From: from, To: to, Limit: limit, Loc: tz.Brasilia()})
		if err := s.Fold(ctx, "lapa-bar-01", e, from, to); err != nil {
			b.Fatal(err)
		}
		r := e.Result()
		if r.LAeq == nil || len(r.Days) < 28 {
			b.Fatalf("report: %d days", len(r.Days))
		}
	}
}

// BenchmarkReportMonth: a month's report of one sensor (Lapa's periods,
// every figure) from the tier.
func BenchmarkReportMonth(b *testing.B) {
	benchReport(b, monthStart, monthStart.AddDate(0, 1, 0))
}

// BenchmarkReportYear: a year's report of one sensor from the tier.
func BenchmarkReportYear(b *testing.B) {
	benchReport(b, monthStart.AddDate(0, -11, 0), monthStart.AddDate(0, 1, 0))
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}
