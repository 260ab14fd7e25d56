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
	"github.com/sossego/sossego/internal/store/sqlitestore"
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
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
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
	// With $SOSSEGO_SCREENSHOTS (relative to the repository root, as the
	// full-system test's) the README's picture of the page: its first
	// screen. Otherwise the whole page, for a person to look at.
	if d := os.Getenv("SOSSEGO_SCREENSHOTS"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(testenv.RepoRoot(t), d)
		}
		dashtest.ScreenshotTo(t, ctx, d, "reports", false)
	} else {
		dashtest.Screenshot(t, ctx, "reports")
	}

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
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "readings.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
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

// TestUILiveStates: the overview and the sensor page tell a live value from
// a late one (a replayed backlog: its own date and time, "atrasado"), a
// stale one (struck, "sem dados desde …") and one behind an offline
// gateway, colour only the live one, and grey everything when the
// connection to the server is lost.
func TestUILiveStates(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	u := newUIServer(t, false)
	ctx := dashtest.Browser(t, dashtest.Desktop)
	dashtest.Run(t, ctx, dashtest.Login(u.srv.URL, "op", testPassword),
		dashtest.WaitText(`[data-sensor="lapa-bar-01"]`, "dB(A)"))
	now := time.Now().UTC()
	card := func(id string) string { return `[data-sensor="` + id + `"]` }
	age := func(id string) string { return `document.querySelector('` + card(id) + `').dataset.age` }

	// Live: coloured by its margin.
	u.level("lapa-bar-01", 71.2)
	dashtest.Run(t, ctx, dashtest.WaitText(card("lapa-bar-01")+` [data-field="laeq"]`, "71,2"),
		dashtest.WaitJS(age("lapa-bar-01")+` === 'live'`, "live bar"),
		dashtest.WaitText(card("lapa-bar-01")+` [data-field="age"]`, "ao vivo"))
	if cls := evalJS[string](t, ctx, `document.querySelector('`+card("lapa-bar-01")+`').className`); !strings.Contains(cls, "over") {
		t.Errorf("live card class %q, want over", cls)
	}

	// Stale: the last record 71 h ago, nothing since.
	old := now.Add(-71 * time.Hour)
	u.hub.PublishLevel(Level{Sensor: "lapa-hospital-01", Gateway: "lapa-centro-01", T: old, ReceivedAt: old, LAeq: 48, LAFmax: 52})
	dashtest.Run(t, ctx, dashtest.WaitJS(age("lapa-hospital-01")+` === 'stale'`, "stale hospital"),
		dashtest.WaitText(card("lapa-hospital-01")+` [data-field="age"]`, "sem dados desde "+old.In(loc).Format("02/01/2006")))
	if deco := evalJS[string](t, ctx, `getComputedStyle(document.querySelector('`+card("lapa-hospital-01")+` .value')).textDecorationLine`); deco != "line-through" {
		t.Errorf("stale value decoration %q, want line-through", deco)
	}
	// Late: the backlog replayed after the outage arrives now, 70 h after
	// its own time.
	late := now.Add(-70 * time.Hour)
	u.hub.PublishLevel(Level{Sensor: "lapa-hospital-01", Gateway: "lapa-centro-01", T: late, ReceivedAt: now, LAeq: 63.4, LAFmax: 66})
	dashtest.Run(t, ctx, dashtest.WaitJS(age("lapa-hospital-01")+` === 'late'`, "late hospital"),
		dashtest.WaitText(card("lapa-hospital-01")+` [data-field="age"]`, "atrasado: registro de "+late.In(loc).Format("02/01/2006, 15:04")),
		dashtest.WaitText(card("lapa-hospital-01")+` [data-field="laeq"]`, "63,4"))
	if cls := evalJS[string](t, ctx, `document.querySelector('`+card("lapa-hospital-01")+`').className`); !strings.Contains(cls, "none") {
		t.Errorf("late card class %q: colours are for live values", cls)
	}

	// Offline gateway.
	u.hub.PublishGateway(GatewayStatus{Gateway: "macabu-praca-01", Municipality: "conceicao-de-macabu", State: "offline", At: now})
	dashtest.Run(t, ctx, dashtest.WaitJS(age("macabu-praca-01")+` === 'offline'`, "offline macabu"),
		dashtest.WaitText(card("macabu-praca-01")+` [data-field="age"]`, "gateway offline; sem dados desde"))
	dashtest.Screenshot(t, ctx, "overview-ages")

	// The sensor page says the same of its head.
	dashtest.Run(t, ctx, chromedp.Navigate(u.srv.URL+"/#/sensor/lapa-hospital-01"),
		dashtest.WaitText(`#detail-age`, "atrasado: registro de "+late.In(loc).Format("02/01/2006")),
		dashtest.WaitText(`.stats`, "média dos pontos do gráfico"))

	// The server goes away: everything grey, a banner says why.
	u.stop()
	dashtest.Run(t, ctx, dashtest.WaitJS(`document.body.classList.contains('disconnected')`, "greyed on disconnect"),
		dashtest.WaitText(`#banner`, "Sem conexão com o servidor"),
		dashtest.WaitText(`#detail-age`, "sem conexão com o servidor"))
	if f := evalJS[string](t, ctx, `getComputedStyle(document.querySelector('#view')).filter`); !strings.Contains(f, "grayscale") {
		t.Errorf("view filter %q, want grayscale", f)
	}
}
