package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/longterm"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/reports"
	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/tz"
	"github.com/sossego/sossego/internal/wire"
)

// loc is the product's time zone, as the handlers show times.
var loc = tz.Brasilia()

// reportDay is Monday 30 November 2026 in Lapa; the tests' clock is the
// next day at noon.
var (
	reportDay = time.Date(2026, 11, 30, 0, 0, 0, 0, loc)
	reportNow = time.Date(2026, 12, 1, 12, 0, 0, 0, loc)
)

// synthMinutes makes minutes of a sensor over [from, to): 64 dB by day and
// 61 dB from 22:00 (above Lapa's 60 dB), each with a histogram of four
// levels around the mean.
func synthMinutes(from, to time.Time, rng *rand.Rand) []stats.Minute {
	var out []stats.Minute
	for t := from; t.Before(to); t = t.Add(time.Minute) {
		h := t.In(loc).Hour()
		base := 64.0
		if h >= 22 || h < 7 {
			base = 61
			if h < 7 {
				base = 50
			}
		}
		m := stats.Minute{Start: t}
		for s := range 60 {
			db := base + rng.Float64() - 0.5
			m.AddSecond(stats.Second{T: t.Add(time.Duration(s) * time.Second), DurMs: 1000, LAeq: db, LAFmax: db + 4, LAFmin: db - 4,
				Hist: &level.Histogram{Bins: map[int]float64{stats.Bin(db - 2): 250, stats.Bin(db - 1): 250, stats.Bin(db + 1): 250, stats.Bin(db + 2): 250}}})
		}
		out = append(out, m)
	}
	return out
}

type reportsEnv struct {
	h     http.Handler
	tier  *longterm.Store
	st    *sqlitestore.Store
	codes *codes.Set
	rp    *Reports
}

func newReportsEnv(t testing.TB) *reportsEnv {
	t.Helper()
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tier, err := longterm.Open(filepath.Join(dir, longterm.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tier.Close() })
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	set, err := codes.LoadDir("")
	if err != nil {
		t.Fatal(err)
	}
	rp := NewReports(ReportsOptions{Registry: registry.NewLive(reg), Tier: tier, Records: st, Codes: set,
		Now: func() time.Time { return reportNow }})
	mux := http.NewServeMux()
	rp.Register(mux)
	return &reportsEnv{h: mux, tier: tier, st: st, codes: set, rp: rp}
}

func (e *reportsEnv) fillDay(t testing.TB) []stats.Minute {
	t.Helper()
	mins := synthMinutes(reportDay, reportDay.AddDate(0, 0, 1), rand.New(rand.NewPCG(1, 1)))
	if err := e.tier.AddMinutes(context.Background(), "lapa-bar-01", mins); err != nil {
		t.Fatal(err)
	}
	return mins
}

func do(t testing.TB, h http.Handler, url string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
	return rec
}

func TestReportJSON(t *testing.T) {
	e := newReportsEnv(t)
	mins := e.fillDay(t)
	rec := do(t, e.h, "/api/v1/reports?sensor=lapa-bar-01&from=2026-11-30&to=2026-11-30")
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var out struct {
		From, To time.Time
		Sensors  []SensorReport
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"from":`, `"sensors":[{"sensor":"lapa-bar-01"`, `"periods":[`, `"occurrences":[`, `"days":[`, `"limits":[`, `"lden_db":`, `"l95_db":`} {
		if !strings.Contains(rec.Body.String(), k) {
			t.Errorf("JSON lacks %s", k)
		}
	}
	if !out.From.Equal(reportDay) || !out.To.Equal(reportDay.AddDate(0, 0, 1)) || len(out.Sensors) != 1 {
		t.Fatalf("range %s–%s, %d sensors", out.From, out.To, len(out.Sensors))
	}
	r := out.Sensors[0]
	// The same minutes through the engine directly.
	c, _ := e.codes.Code("lapa")
	eng := stats.New(stats.Options{From: reportDay, To: reportDay.AddDate(0, 0, 1), Loc: loc,
		Limit: func(t time.Time) (codes.Limit, bool) { return c.ActiveLimitFor("other", "bar", "sound_system", t) }})
	for _, m := range mins {
		if err := eng.AddMinute(m); err != nil {
			t.Fatal(err)
		}
	}
	want := eng.Result()
	if math.Abs(*r.LAeq-*want.LAeq) > 0.001 || math.Abs(*r.Lden-*want.Lden) > 0.001 || *r.L90 != *want.L90 {
		t.Errorf("LAeq %v Lden %v L90 %v, want %v %v %v", *r.LAeq, *r.Lden, *r.L90, *want.LAeq, *want.Lden, *want.L90)
	}
	// 22:00–24:00 at 61 dB against 60: 120 minutes in one episode.
	if r.MinutesAbove != 120 || r.EpisodesAbove != 1 || r.Coverage != 1 {
		t.Errorf("above %d in %d episodes, coverage %v", r.MinutesAbove, r.EpisodesAbove, r.Coverage)
	}
	if len(r.Periods) != 2 || len(r.Occurrences) != 3 || len(r.Days) != 1 || len(r.Limits) != 3 || r.Code != "lapa" {
		t.Errorf("periods %d occurrences %d days %d limits %d code %q", len(r.Periods), len(r.Occurrences), len(r.Days), len(r.Limits), r.Code)
	}
	// A municipality's report has every sensor of it.
	rec = do(t, e.h, "/api/v1/reports?municipality=lapa&from=2026-11-30&to=2026-11-30")
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Sensors) != 2 {
		t.Errorf("municipality: %d %v", len(out.Sensors), err)
	}
}

func TestReportCSV(t *testing.T) {
	e := newReportsEnv(t)
	e.fillDay(t)
	rec := do(t, e.h, "/api/v1/reports?sensor=lapa-bar-01&from=2026-11-30&to=2026-11-30&format=csv")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") ||
		!strings.Contains(rec.Header().Get("Content-Disposition"), "relatorio-lapa-bar-01-20261130-0000-a-20261201-0000.csv") {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	lines := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "\ufeffsensor;linha;inicio;fim;periodo;limite_dba;laeq_db") {
		t.Errorf("header %q", lines[0])
	}
	// total, 2 legal periods, 3 occurrences, 1 day.
	if len(lines) != 1+1+2+3+1 {
		t.Fatalf("%d lines:\n%s", len(lines), rec.Body)
	}
	cols := strings.Split(lines[1], ";")
	if cols[0] != "lapa-bar-01" || cols[1] != "total" || cols[2] != "2026-11-30T00:00:00-03:00" || !strings.Contains(cols[6], ",") ||
		cols[17] != "100,0" || cols[18] != "120" || cols[19] != "1" {
		t.Errorf("total row %q", cols)
	}
	for _, l := range lines[1:] {
		if n := len(strings.Split(l, ";")); n != 20 {
			t.Errorf("row with %d columns: %q", n, l)
		}
	}
}

func TestReportPDF(t *testing.T) {
	pdftoppm := testenv.Pdftoppm(t)
	pdftotext := filepath.Join(filepath.Dir(pdftoppm), "pdftotext")
	if _, err := os.Stat(pdftotext); err != nil {
		testenv.Missing(t, "pdftotext", "apt-get install poppler-utils")
	}
	e := newReportsEnv(t)
	e.fillDay(t)
	rec := do(t, e.h, "/api/v1/reports?sensor=lapa-bar-01&from=2026-11-30&to=2026-11-30&format=pdf")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/pdf" || !strings.HasPrefix(rec.Body.String(), "%PDF") {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	p := filepath.Join(t.TempDir(), "r.pdf")
	if err := os.WriteFile(p, rec.Body.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pdftotext, "-layout", p, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v %s", err, out)
	}
	text := string(out)
	for _, want := range []string{"PREFEITURA MUNICIPAL DE LAPA", "Estado do Paraná", "RELATÓRIO DE NÍVEIS SONOROS",
		"30/11/2026 00:00 a 01/12/2026 00:00", "Sensor lapa-bar-01", "período noturno (22:00–07:00), outras áreas",
		"Por período legal", "Por ocorrência de período legal", "120 minutos acima do limite em 1 episódio(s)", "Lden", "Método"} {
		if !strings.Contains(text, want) {
			t.Errorf("PDF text lacks %q", want)
		}
	}
	if dir := os.Getenv("SOSSEGO_SCREENSHOTS"); dir != "" {
		os.WriteFile(filepath.Join(dir, "relatorio.pdf"), rec.Body.Bytes(), 0o644) //nolint:errcheck // a sample, best effort
	}
}

func TestReportBadRequests(t *testing.T) {
	e := newReportsEnv(t)
	for _, tc := range []struct {
		url    string
		status int
		inErr  string
	}{
		{"/api/v1/reports?sensor=nao-existe", 404, "não está cadastrado"},
		{"/api/v1/reports?municipality=atlantida", 404, "nenhum sensor cadastrado"},
		{"/api/v1/reports", 400, "informe sensor ou municipality"},
		{"/api/v1/reports?sensor=lapa-bar-01&from=2026-11-30&to=2026-11-01", 400, "deve ser anterior"},
		{"/api/v1/reports?sensor=lapa-bar-01&from=30/11/2026", 400, "from inválido"},
		{"/api/v1/reports?sensor=lapa-bar-01&from=2016-01-01&to=2026-01-01", 400, "maior que o máximo de 366 dias"},
		{"/api/v1/reports?sensor=lapa-bar-01&format=xls", 400, "use json, csv ou pdf"},
		{"/api/v1/reports?sensor=lapa-bar-01&from=2027-01-01&to=2027-01-02", 400, "no futuro"},
		{"/api/v1/sensors/lapa-bar-01/export?res=1s&from=2016-01-01&to=2026-01-01", 400, "exportação de 1 s"},
		{"/api/v1/sensors/lapa-bar-01/export?res=1h", 400, "res \"1h\" inválido"},
		{"/api/v1/sensors/lapa-bar-01/export?format=xml", 400, "use csv ou json"},
		{"/api/v1/sensors/nao-existe/export", 404, "não está cadastrado"},
		{"/api/v1/sensors/lapa-bar-01/export?from=2026-12-01&to=2026-11-01", 400, "deve ser anterior"},
		{"/api/v1/sensors/nao-existe/limits", 404, "não está cadastrado"},
		{"/api/v1/sensors/lapa-bar-01/limits?from=ontem", 400, "from inválido"},
	} {
		rec := do(t, e.h, tc.url)
		var body map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Errorf("%s: %d %q is not JSON", tc.url, rec.Code, rec.Body)
			continue
		}
		if rec.Code != tc.status || !strings.Contains(body["erro"], tc.inErr) {
			t.Errorf("%s: %d %q, want %d with %q", tc.url, rec.Code, body["erro"], tc.status, tc.inErr)
		}
	}
	// Every slot taken: 503 at once, not a wait.
	for range cap(e.rp.sema) {
		e.rp.sema <- struct{}{}
	}
	if rec := do(t, e.h, "/api/v1/reports?sensor=lapa-bar-01"); rec.Code != 503 || rec.Header().Get("Retry-After") == "" {
		t.Errorf("busy: %d %v", rec.Code, rec.Header())
	}
}

func TestExportMinutes(t *testing.T) {
	e := newReportsEnv(t)
	mins := e.fillDay(t)
	rec := do(t, e.h, "/api/v1/sensors/lapa-bar-01/export?from=2026-11-30&to=2026-11-30&res=1min")
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	lines := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n"), "\n")
	if len(lines) != 1+len(mins) || !strings.HasPrefix(lines[0], "\ufeffinicio;segundos_presentes;laeq_db") {
		t.Fatalf("%d lines, header %q", len(lines), lines[0])
	}
	if cols := strings.Split(lines[1], ";"); cols[0] != "2026-11-30T00:00:00-03:00" || cols[1] != "60" || cols[9] != "laf" {
		t.Errorf("first row %q", cols)
	}
	// Every row's levels and percentiles are those of the minute written
	// (its histogram's L10…L95, to the 0.1 dB bin).
	for i, m := range mins {
		cols := strings.Split(lines[1+i], ";")
		var pct [4]float64
		if !m.Hist.Percentiles(stats.RowPercentiles[:], pct[:]) {
			t.Fatalf("minute %d without percentiles", i)
		}
		lv, _ := m.LAeq()
		want := []string{fmt.Sprintf("%.2f", lv), fmt.Sprintf("%.2f", m.Max), fmt.Sprintf("%.2f", m.Min),
			fmt.Sprintf("%.1f", pct[0]), fmt.Sprintf("%.1f", pct[1]), fmt.Sprintf("%.1f", pct[2]), fmt.Sprintf("%.1f", pct[3])}
		for k, w := range want {
			if got := cols[2+k]; got != strings.ReplaceAll(w, ".", ",") {
				t.Fatalf("row %d column %d = %q, want %q (%q)", i, 2+k, got, w, lines[1+i])
			}
		}
	}
	rec = do(t, e.h, "/api/v1/sensors/lapa-bar-01/export?from=2026-11-30T22:00:00-03:00&to=2026-11-30T23:00:00-03:00&res=1min&format=json")
	var out struct {
		Sensor, Res string
		Records     []struct {
			Start          time.Time `json:"start"`
			SecondsPresent float64   `json:"seconds_present"`
			LAeq           float64   `json:"laeq_db"`
			L90            *float64  `json:"l90_db"`
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("JSON: %v\n%s", err, rec.Body)
	}
	if out.Sensor != "lapa-bar-01" || out.Res != "1min" || len(out.Records) != 60 || out.Records[0].L90 == nil ||
		math.Abs(out.Records[0].LAeq-61) > 0.6 || !out.Records[0].Start.Equal(time.Date(2026, 11, 30, 22, 0, 0, 0, loc)) {
		t.Errorf("json export: %s %s %d records %+v", out.Sensor, out.Res, len(out.Records), out.Records[:1])
	}
}

func TestExportSeconds(t *testing.T) {
	e := newReportsEnv(t)
	start := time.Date(2026, 11, 30, 21, 59, 30, 0, loc)
	b := store.Batch{Gateway: "lapa-centro-01", Municipality: "lapa", Sensor: "lapa-bar-01", Kind: wire.KindLevels, Seq: 1,
		Topic: "t", Body: []byte("{}"), ReceivedAt: start, Device: wire.Device{Grade: "class2"}, Clock: wire.Clock{Synced: true}}
	for i := range 90 { // across an hour boundary of the export's chunks
		b.Records = append(b.Records, wire.Record{T: start.Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: 60.25, LAFmax: 62, LAFmin: 58})
	}
	if _, err := e.st.Apply(context.Background(), store.Write{Batches: []store.Batch{b}}); err != nil {
		t.Fatal(err)
	}
	rec := do(t, e.h, "/api/v1/sensors/lapa-bar-01/export?from=2026-11-30T21:00:00-03:00&to=2026-11-30T23:00:00-03:00&res=1s")
	lines := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n"), "\n")
	if rec.Code != 200 || len(lines) != 91 {
		t.Fatalf("%d, %d lines", rec.Code, len(lines))
	}
	if lines[1] != "2026-11-30T21:59:30.000-03:00;1000;60,25;62,00;58,00;;não;sim;lapa-centro-01;1" {
		t.Errorf("first row %q", lines[1])
	}
	rec = do(t, e.h, "/api/v1/sensors/lapa-bar-01/export?from=2026-11-30T21:00:00-03:00&to=2026-11-30T23:00:00-03:00&res=1s&format=json")
	var out struct{ Records []store.Record }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Records) != 90 || out.Records[0].LAeq != 60.25 {
		t.Errorf("json: %v %d", err, len(out.Records))
	}
}

// failingTier fails after n minutes.
type failingTier struct {
	ReportTier
	n int
}

func (f failingTier) EachMinuteRow(ctx context.Context, sensor string, from, to time.Time, fn func(*stats.MinuteRow) error) error {
	for i := range f.n {
		if err := fn(&stats.MinuteRow{Start: from.Add(time.Duration(i) * time.Minute), DurMs: 60000, FastMs: 60000, LAeq: 60}); err != nil {
			return err
		}
	}
	return errors.New("longterm.db: disk I/O error")
}

// TestExportAbortsOnError: an error after the first bytes breaks the
// download instead of ending it as if complete.
func TestExportAbortsOnError(t *testing.T) {
	e := newReportsEnv(t)
	e.rp.eng = reports.New(failingTier{ReportTier: e.tier, n: 5000}, e.rp.o.Records, e.rp.o.Codes)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/sensors/lapa-bar-01/export?from=2026-11-01&to=2026-11-30")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || err == nil {
		t.Errorf("status %d, read error %v: want a broken body", resp.StatusCode, err)
	}
	// The server is still there.
	if rec := do(t, e.h, "/api/v1/sensors/lapa-bar-01/limits?from=2026-11-30&to=2026-11-30"); rec.Code != 200 {
		t.Errorf("after the abort: %d", rec.Code)
	}
}

func TestLimitsEndpoint(t *testing.T) {
	e := newReportsEnv(t)
	rec := do(t, e.h, "/api/v1/sensors/lapa-bar-01/limits?from=2026-11-30&to=2026-11-30")
	var out struct{ Limits []stats.LimitStep }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Limits) != 3 || *out.Limits[0].LimitDBA != 60 || *out.Limits[1].LimitDBA != 65 || out.Limits[1].Article != "Art. 96" {
		t.Errorf("limits %+v", out.Limits)
	}
}

// BenchmarkExportYearOfMinutes streams a year of one sensor's minutes
// (525 600 rows) as CSV from a real tier over HTTP; reports MB/s, MB per
// CPU-second of the process (server and client) and the peak heap
// in use while it runs, sampled every 20 ms (flat memory: it does
// not grow with the range).
func BenchmarkExportYearOfMinutes(b *testing.B) {
	e := newReportsEnv(b)
	from := time.Date(2025, 12, 1, 0, 0, 0, 0, loc)
	to := from.AddDate(1, 0, 0)
	rng := rand.New(rand.NewPCG(2, 2))
	day := synthMinutes(from, from.AddDate(0, 0, 1), rng)
	ctx := context.Background()
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		shift := d.Sub(from)
		mins := make([]stats.Minute, len(day))
		for i, m := range day {
			mins[i] = m
			mins[i].Start = m.Start.Add(shift)
		}
		if err := e.tier.AddMinutes(ctx, "lapa-bar-01", mins); err != nil {
			b.Fatal(err)
		}
	}
	e.rp.o.Now = func() time.Time { return to.Add(time.Hour) }
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	url := srv.URL + "/api/v1/sensors/lapa-bar-01/export?res=1min&from=" + from.Format(time.RFC3339) + "&to=" + to.Format(time.RFC3339)
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}()
	b.ResetTimer()
	var n int64
	cpu0 := testenv.SelfCPU()
	for i := range b.N {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		lines := 0
		cr := &countingReader{r: resp.Body}
		if i == 0 { // count the rows once; afterwards only read
			sc := bufio.NewScanner(cr)
			for sc.Scan() {
				lines++
			}
			if lines != 1+365*1440 {
				b.Fatalf("%d lines", lines)
			}
		} else if _, err := io.Copy(io.Discard, cr); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		n += cr.n
	}
	b.StopTimer()
	cpu := testenv.SelfCPU() - cpu0
	close(stop)
	b.SetBytes(n / int64(b.N))
	// On a shared machine the wall-clock rate depends on the neighbours;
	// the bytes per CPU-second of this process (server and client) do not.
	if cpu > 0 {
		b.ReportMetric(float64(n)/1e6/cpu.Seconds(), "MB/CPU-s")
	}
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestReadingsCarryLimits: /readings returns the limit in force over its
// window from the codes engine, holidays included.
func TestReadingsCarryLimits(t *testing.T) {
	e := newReportsEnv(t)
	reg, _ := registry.Parse(registry.DemoYAML())
	api := NewAPI(APIOptions{Registry: registry.NewLive(reg), Store: e.st, LimitSeries: e.rp.LimitSeries, Now: func() time.Time { return reportNow }})
	rec := do(t, api, "/api/v1/readings?sensor=lapa-bar-01&from=2026-11-30T20:00:00-03:00&to=2026-11-30T23:00:00-03:00&step=1m")
	var out struct{ Limits []stats.LimitStep }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != 200 {
		t.Fatalf("%d %v %s", rec.Code, err, rec.Body)
	}
	if len(out.Limits) != 2 || *out.Limits[0].LimitDBA != 65 || *out.Limits[1].LimitDBA != 60 ||
		!out.Limits[1].Start.Equal(time.Date(2026, 11, 30, 22, 0, 0, 0, loc)) || out.Limits[1].Period != "noturno" {
		t.Errorf("limits %+v", out.Limits)
	}
	// The hospital sensor without an establishment: Art. 96 lists the
	// establishments it applies to, so no numeric limit (null steps).
	rec = do(t, api, "/api/v1/readings?sensor=lapa-hospital-01&from=2026-11-30T20:00:00-03:00&to=2026-11-30T23:00:00-03:00&step=1m")
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Limits) != 1 || out.Limits[0].LimitDBA != nil {
		t.Errorf("hospital limits %+v %v", out.Limits, err)
	}
}

// TestReadingsCarryWindow: /readings returns the window's figures from the
// tier, rounded in to whole minutes.
func TestReadingsCarryWindow(t *testing.T) {
	e := newReportsEnv(t)
	e.fillDay(t)
	reg, _ := registry.Parse(registry.DemoYAML())
	api := NewAPI(APIOptions{Registry: registry.NewLive(reg), Store: e.st, Window: e.rp.Window, Now: func() time.Time { return reportNow }})
	rec := do(t, api, "/api/v1/readings?sensor=lapa-bar-01&from=2026-11-30T21:59:30-03:00&to=2026-11-30T22:15:30-03:00&step=1m")
	var out struct {
		Window stats.Figures `json:"window"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != 200 {
		t.Fatalf("%d %v", rec.Code, err)
	}
	// [22:00, 22:15): 15 whole minutes at 61 dB.
	w := out.Window
	if w.SecondsInRange != 900 || w.Coverage != 1 || w.LAeq == nil || math.Abs(*w.LAeq-61) > 0.3 || w.L90 == nil || w.PercentileBasis != "laf" {
		t.Errorf("window %+v", w)
	}
}
