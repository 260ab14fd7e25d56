package dashboard

import (
	"context"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/dashboard/dashtest"
	"github.com/sossego/sossego/internal/longterm"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/wire"
)

func wireRecord(t time.Time, db float64) wire.Record {
	return wire.Record{T: t, DurMs: 1000, LAeq: db, LAFmax: db + 3, LAFmin: db - 3}
}

// TestUIReports: the "Relatórios" page in chromium reports yesterday of the
// Lapa bar from a real long-term tier (tables, the chart drawn) and
// downloads the PDF (its text read with pdftotext) and the CSV.
func TestUIReports(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	pdftotext := filepath.Join(filepath.Dir(testenv.Pdftoppm(t)), "pdftotext")
	f := newFixture(t, HubOptions{Tick: 100 * time.Millisecond}, AuthOptions{})
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tier, err := longterm.Open(filepath.Join(dir, longterm.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer tier.Close()
	st, err := store.OpenSQLite(filepath.Join(dir, "readings.db"), store.SQLiteOptions{Sync: store.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	y, m, d := time.Now().In(loc).AddDate(0, 0, -1).Date()
	yesterday := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if err := tier.AddMinutes(context.Background(), "lapa-bar-01", synthMinutes(yesterday, yesterday.AddDate(0, 0, 1), rand.New(rand.NewPCG(5, 5)))); err != nil {
		t.Fatal(err)
	}
	set, err := codes.LoadDir("")
	if err != nil {
		t.Fatal(err)
	}
	live := registry.NewLive(reg)
	apiMux := http.NewServeMux()
	NewAPI(APIOptions{Registry: live, Store: st}).Register(apiMux)
	NewReports(ReportsOptions{Registry: live, Tier: tier, Records: st, Codes: set}).Register(apiMux)
	f.mux.Handle("/api/v1/", f.auth.Protect(f.auth.RequireRole(users.Roles...)(apiMux)))

	ctx := dashtest.Browser(t, dashtest.Desktop)
	downloads := dashtest.AllowDownloads(t, ctx)
	dashtest.Run(t, ctx, dashtest.Login(f.srv.URL, "op", testPassword),
		dashtest.WaitText(`nav`, "Relatórios"),
		chromedp.Navigate(f.srv.URL+"/#/relatorios?sensor=lapa-bar-01"),
		dashtest.WaitJS(`document.querySelector('#report-target') && document.querySelector('#report-target').value === 'sensor=lapa-bar-01'`, "the sensor chosen from the link"),
		chromedp.Evaluate[chromedp.Void](`(() => { const p = document.querySelector('#report-preset'); p.value = 'ontem'; p.dispatchEvent(new Event('change')); })()`),
		chromedp.Click(`#report-go`),
		dashtest.WaitText(`[data-report-sensor="lapa-bar-01"] [data-table="report-periods"]`, "período noturno (22:00–07:00), outras áreas"),
		dashtest.WaitJS(`Number(document.querySelector('[data-report-sensor="lapa-bar-01"] canvas').dataset.points) > 1000`, "the chart drew the day's minutes"),
		dashtest.WaitText(`[data-report-sensor="lapa-bar-01"] .stats`, "cobertura 100,0 %"),
		dashtest.WaitText(`[data-report-sensor="lapa-bar-01"] .stats`, "L90 do período, dos histogramas"),
		dashtest.WaitText(`[data-report-sensor="lapa-bar-01"] [data-table="report-occurrences"]`, "120"),
		dashtest.WaitText(`#report-msg`, "horário de Brasília"),
	)
	dashtest.Screenshot(t, ctx, "reports")

	dashtest.Run(t, ctx, chromedp.Click(`#dl-pdf`))
	dl := downloads.Next(t)
	if !strings.HasSuffix(dl.Name, ".pdf") {
		t.Errorf("download named %q", dl.Name)
	}
	body, err := os.ReadFile(dl.Path)
	if err != nil || !strings.HasPrefix(string(body), "%PDF") {
		t.Fatalf("PDF download: %v, %d bytes", err, len(body))
	}
	text, err := exec.Command(pdftotext, dl.Path, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v %s", err, text)
	}
	for _, want := range []string{"RELATÓRIO DE NÍVEIS SONOROS", "Sensor lapa-bar-01", yesterday.Format("02/01/2006")} {
		if !strings.Contains(string(text), want) {
			t.Errorf("PDF lacks %q", want)
		}
	}
	dashtest.Run(t, ctx, chromedp.Click(`#dl-csv`))
	dl = downloads.Next(t)
	body, err = os.ReadFile(dl.Path)
	if err != nil || !strings.Contains(string(body), "sensor;linha;inicio") || !strings.HasSuffix(dl.Name, ".csv") {
		t.Errorf("CSV download %q: %v %.80q", dl.Name, err, body)
	}
}

// TestUISensorLimitFromServer: the sensor chart draws the limit series the
// server returns with /readings — here a made-up 42.5 dB night from a fake
// series, which no rule in the page could have computed — and shades it.
func TestUISensorLimitFromServer(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	f := newFixture(t, HubOptions{Tick: 100 * time.Millisecond}, AuthOptions{})
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "readings.db"), store.SQLiteOptions{Sync: store.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Second)
	b := store.Batch{Gateway: "lapa-centro-01", Municipality: "lapa", Sensor: "lapa-bar-01", Kind: "levels", Seq: 1, Topic: "t",
		Body: []byte("{}"), ReceivedAt: now}
	for i := 600; i > 0; i-- {
		b.Records = append(b.Records, wireRecord(now.Add(-time.Duration(i)*time.Second), 50))
	}
	if _, err := st.Apply(context.Background(), store.Write{Batches: []store.Batch{b}}); err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	series := func(s registry.Sensor, from, to time.Time) ([]stats.LimitStep, error) {
		asked.Add(1)
		v := 42.5
		mid := from.Add(to.Sub(from) / 2)
		return []stats.LimitStep{{Start: from, End: mid}, {Start: mid, End: to, LimitDBA: &v, Period: "noturno", PeriodLabel: "noite de teste"}}, nil
	}
	apiMux := http.NewServeMux()
	NewAPI(APIOptions{Registry: registry.NewLive(reg), Store: st, LimitSeries: series}).Register(apiMux)
	f.mux.Handle("/api/v1/", f.auth.Protect(f.auth.RequireRole(users.Roles...)(apiMux)))
	ctx := dashtest.Browser(t, dashtest.Desktop)
	dashtest.Run(t, ctx, dashtest.Login(f.srv.URL, "op", testPassword),
		chromedp.Navigate(f.srv.URL+"/#/sensor/lapa-bar-01"),
		dashtest.WaitJS(`document.querySelector('#chart') && document.querySelector('#chart').dataset.limit === '42.5' && document.querySelector('#chart').dataset.nights === '1'`,
			"the chart's limit line and night band from the server's series"))
	if asked.Load() == 0 {
		t.Error("the page never asked for the series")
	}
}
