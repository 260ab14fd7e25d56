package dashboard

// End-to-end test of the web UI in a real browser (Debian chromium through
// chromedp, see package dashtest). The dashboard runs on an httptest server
// with the real auth, hub, codes routes and JSON API (api.go) over fake
// stores; the notice workflow routes are faked to the contract the UI codes
// against, so that the full-system test can replace them with the real ones.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/dashboard/dashtest"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/users"
)

// uiReadings is an in-memory APIStore + APIReadings + APIEnv.
type uiReadings struct {
	mu   sync.Mutex
	recs map[string][]store.Record
	env  map[string][]store.EnvRecord
	gws  []store.GatewayStatus
}

func (f *uiReadings) EnvRecords(_ context.Context, sensor string, from, to time.Time, limit int) ([]store.EnvRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.EnvRecord
	for _, r := range f.env[sensor] {
		if !r.T.Before(from) && r.T.Before(to) && (limit <= 0 || len(out) < limit) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *uiReadings) add(r store.Record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recs[r.Sensor] = append(f.recs[r.Sensor], r)
}

func (f *uiReadings) Latest(_ context.Context, sensor string) (store.Record, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rs := f.recs[sensor]
	if len(rs) == 0 {
		return store.Record{}, false, nil
	}
	return rs[len(rs)-1], true, nil
}

func (f *uiReadings) GatewayStatuses(context.Context) ([]store.GatewayStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]store.GatewayStatus(nil), f.gws...), nil
}

func (f *uiReadings) DeadLetters(context.Context, store.DeadLetterFilter) ([]store.DeadLetter, error) {
	return nil, nil
}

func (f *uiReadings) Records(_ context.Context, sensor string, from, to time.Time, limit int) ([]store.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.Record
	for _, r := range f.recs[sensor] {
		if !r.T.Before(from) && r.T.Before(to) && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *uiReadings) Buckets(ctx context.Context, sensor string, from, to time.Time, step time.Duration) ([]store.Bucket, error) {
	recs, _ := f.Records(ctx, sensor, from, to, 1<<30)
	return store.Aggregate(recs, step), nil
}

// uiAlerts lists the alerts the test published.
type uiAlerts struct {
	mu   sync.Mutex
	list []alerts.Alert
}

func (f *uiAlerts) ListAlerts(context.Context, AlertFilter) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]alerts.Alert{}, f.list...), nil
}

// uiServer is a fixture with the API mounted and the demo registry.
type uiServer struct {
	*fixture
	readings *uiReadings
	alerts   *uiAlerts
	work     *uiWorkflow
	sensors  int // in the demo registry
	limits   func(sensor string) (Limit, bool)
}

func newUIServer(t *testing.T, workflow bool) *uiServer {
	f := newFixture(t, HubOptions{Tick: 100 * time.Millisecond}, AuthOptions{})
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	u := &uiServer{fixture: f, readings: &uiReadings{recs: map[string][]store.Record{}}, alerts: &uiAlerts{}, sensors: len(reg.Sensors())}
	now := time.Now().UTC().Truncate(time.Second)
	for _, g := range reg.Gateways() {
		u.readings.gws = append(u.readings.gws, store.GatewayStatus{Gateway: g.ID, Municipality: g.Municipality, State: "online", LastSeen: now})
	}
	// 20 minutes of history for every sensor.
	for _, s := range reg.Sensors() {
		for i := 1200; i > 0; i-- {
			l := 48 + 6*float64(i%60)/60
			u.readings.add(store.Record{Sensor: s.ID, Gateway: s.Gateway, T: now.Add(-time.Duration(i) * time.Second), DurMs: 1000,
				LAeq: l, LAFmax: l + 7, LAFmin: l - 4, Grade: s.Meter.Grade, Synced: true})
		}
	}
	// 24 h of environmental readings of the bar, every 10 min; the newest
	// (a minute ago) is 18.3 °C.
	u.readings.env = map[string][]store.EnvRecord{}
	for i := 143; i >= 0; i-- {
		at := now.Add(-time.Minute - time.Duration(i)*10*time.Minute)
		u.readings.env["lapa-bar-01"] = append(u.readings.env["lapa-bar-01"], store.EnvRecord{Sensor: "lapa-bar-01",
			Gateway: "lapa-centro-01", T: at, TemperatureC: ptr(18.3 - float64(i%72)/10), HumidityPct: ptr(70 + float64(i%72)/4),
			PressureHPa: ptr(912.0)})
	}
	limits := func(s registry.Sensor, at time.Time) (Limit, bool, error) {
		code := s.Code
		if code == "" {
			code = s.Municipality()
		}
		c, ok := set.Code(code)
		if !ok {
			return Limit{}, false, nil
		}
		est := ""
		if len(s.Establishments) > 0 {
			est = s.Establishments[0].Type
		}
		l, ok := c.ActiveLimit(s.Zone, est, at)
		if !ok {
			return Limit{}, false, nil
		}
		lim := Limit{LimitDBA: l.DBA, Code: l.CodeID, Version: l.CodeVersion, Article: l.Article, Period: l.Period}
		if !l.End.IsZero() {
			lim.Until = l.End.Format(time.RFC3339)
		}
		return lim, true, nil
	}
	u.limits = func(sensor string) (Limit, bool) {
		s, _ := reg.Sensor(sensor)
		l, ok, _ := limits(s, time.Now())
		return l, ok
	}
	api := NewAPI(APIOptions{Registry: registry.NewLive(reg), Store: u.readings, Limits: limits, Alerts: u.alerts,
		LimitSeries: NewReports(ReportsOptions{Registry: registry.NewLive(reg), Codes: set}).LimitSeries})
	apiMux := http.NewServeMux()
	api.Register(apiMux)
	f.mux.Handle("/api/v1/", f.auth.Protect(f.auth.RequireRole(users.Roles...)(apiMux)))
	if workflow {
		u.work = newUIWorkflow(t, u) // the real workflow API (e2e_test.go)
	}
	return u
}

// level publishes a live level judged against the codes engine's limit now.
func (u *uiServer) level(sensor string, laeq float64) {
	l := Level{Sensor: sensor, T: time.Now().UTC(), LAeq: DB(laeq), LAFmax: DB(laeq + 5)}
	if lim, ok := u.limits(sensor); ok {
		db, margin := DB(lim.LimitDBA), DB(laeq-lim.LimitDBA)
		l.Limit, l.Margin, l.Period = &db, &margin, lim.Period
		l.PeriodEnd, _ = time.Parse(time.RFC3339, lim.Until)
	}
	u.hub.PublishLevel(l)
}

func (u *uiServer) fire(t *testing.T, id, sensor string, laeq float64) {
	u.fireLate(t, id, sensor, laeq, 0, 0)
}

// fireLate publishes a firing alert the service detected late after it
// fired in stream time (readings replayed after an outage), with unsynced
// records stamped by an unsynchronised gateway clock.
func (u *uiServer) fireLate(t *testing.T, id, sensor string, laeq float64, late time.Duration, unsynced int) {
	a := exceedance(t, id, sensor, laeq) // e2e_test.go: the rule in force now
	a.DetectedAt, a.UnsyncedRecords = a.FiringAt, unsynced
	for _, p := range []*time.Time{&a.PendingAt, &a.FiringAt, &a.WindowStart, &a.WindowEnd} {
		*p = p.Add(-late) // the readings are that much older than their arrival
	}
	u.alerts.mu.Lock()
	u.alerts.list = append(u.alerts.list, a)
	u.alerts.mu.Unlock()
	u.hub.PublishAlert(alerts.Event{Kind: alerts.EventFiring, At: a.FiringAt, Alert: a})
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// chartDrawn: the sensor page's uPlot chart is on the page with LAeq readings,
// a limit in force and the legend naming the series (it draws on a canvas;
// #chart's data attributes say what it drew).
const chartDrawn = `!!document.querySelector('#chart .uplot canvas') && ` + chartReadings + ` > 0 && ` +
	`document.querySelector('#chart').dataset.limit !== '' && ` +
	`[...document.querySelectorAll('#chart .u-legend .u-label')].map((e) => e.textContent).join('|').startsWith('Horário|LAeq (') && ` +
	`[...document.querySelectorAll('#chart .u-legend .u-label')].some((e) => e.textContent === 'limite em vigor')`

// chartLimitInLegend: with the cursor off the plot the legend shows the
// newest reading, and the limit in force at it — a number, not "—".
const chartLimitInLegend = `[...document.querySelectorAll('#chart .u-legend .u-series')].some((r) => ` +
	`r.querySelector('.u-label') && r.querySelector('.u-label').textContent === 'limite em vigor' && ` +
	`/^\d+,\d$/.test(r.querySelector('.u-value').textContent))`

// chartReadings is the number of LAeq readings the chart drew.
const chartReadings = `Number(document.querySelector('#chart') && document.querySelector('#chart').dataset.laeq || 0)`

// chartLastT is the time (ms) of the newest reading the chart drew. A live
// reading must move it forward; the count alone can stay flat while the
// window slides and an old reading leaves it.
const chartLastT = `Number(document.querySelector('#chart') && document.querySelector('#chart').dataset.lastT || 0)`

func TestUIDesktopFiscal(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	u := newUIServer(t, true)
	ctx := dashtest.Browser(t, dashtest.Desktop)
	dashtest.Run(t, ctx, dashtest.Login(u.srv.URL, "fis", testPassword),
		dashtest.WaitText(`[data-sensor="lapa-bar-01"]`, "dB(A)"),
		chromedp.Evaluate[chromedp.Void](`window.__noReload = 1`))

	// A live value changes without a reload.
	u.level("lapa-bar-01", 58.3)
	lim, _ := u.limits("lapa-bar-01")
	// Below the limit, the distance is said without a minus sign.
	dashtest.Run(t, ctx, dashtest.WaitText(`[data-sensor="lapa-bar-01"] [data-field="laeq"]`, "58,3"),
		dashtest.WaitText(`[data-sensor="lapa-bar-01"] [data-field="margin"]`,
			fmt.Sprintf("%s dB abaixo do limite", strings.Replace(fmt.Sprintf("%.1f", lim.LimitDBA-58.3), ".", ",", 1))))
	if got := evalJS[string](t, ctx, `document.querySelector('[data-sensor="lapa-bar-01"] [data-field="margin"]').textContent`); strings.Contains(got, "-") {
		t.Errorf("margin below the limit %q carries a minus sign", got)
	}
	u.level("lapa-bar-01", 71.2)
	dashtest.Run(t, ctx, dashtest.WaitText(`[data-sensor="lapa-bar-01"] [data-field="margin"]`,
		fmt.Sprintf("+%s dB acima do limite", strings.Replace(fmt.Sprintf("%.1f", 71.2-lim.LimitDBA), ".", ",", 1))))
	if got := evalJS[string](t, ctx, `document.querySelector('[data-sensor="lapa-bar-01"]').className`); !strings.Contains(got, "over") {
		t.Errorf("card class %q, want over", got)
	}
	if evalJS[int](t, ctx, `window.__noReload`) != 1 {
		t.Fatal("the page reloaded")
	}
	// Municipality filter.
	dashtest.Run(t, ctx, chromedp.SetValue(chromedp.CSS(`#filter`), "conceicao-de-macabu"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#filter').dispatchEvent(new Event('change'))`),
		dashtest.WaitJS(`document.querySelectorAll('[data-sensor]').length === 1 && !!document.querySelector('[data-sensor="macabu-praca-01"]')`, "only Macabu"),
		chromedp.SetValue(chromedp.CSS(`#filter`), ""),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#filter').dispatchEvent(new Event('change'))`),
		dashtest.WaitJS(fmt.Sprintf(`document.querySelectorAll('[data-sensor]').length === %d`, u.sensors), "every sensor"))
	if got := evalJS[string](t, ctx, `document.querySelector('[data-sensor="lapa-bar-01"] [data-field="establishments"]').textContent`); got != "Bar Exemplo da Lapa Ltda (fictício)" {
		t.Errorf("lapa-bar-01's card names %q as its establishment", got)
	}
	dashtest.Screenshot(t, ctx, "overview-desktop")

	// Sensor detail: chart from the readings API, live updates.
	dashtest.Run(t, ctx, dashtest.Click(`[data-sensor="lapa-bar-01"]`),
		dashtest.WaitJS(chartDrawn+" && "+chartLimitInLegend, "chart with LAeq and limit, the limit in the legend"))
	// Environment: the last 24 h from the env API, latest values,
	// sparklines and the hourly table.
	dashtest.Run(t, ctx, dashtest.WaitText(`[data-env="temp"]`, "18,3 °C"), dashtest.WaitText(`[data-env="p"]`, "912,0 hPa"),
		dashtest.WaitJS(`document.querySelectorAll('[data-env-table] tbody tr').length === 6 && document.querySelectorAll('#env svg.spark polyline').length === 3`, "env table and sparklines"))
	if got := evalJS[string](t, ctx, `document.querySelector('[data-env-table] tbody td:nth-child(2)').textContent`); got != "18,3" {
		t.Errorf("newest temperature in the table %q, want 18,3", got)
	}
	drawn := evalJS[int64](t, ctx, chartLastT)
	u.level("lapa-bar-01", 66.6)
	u.hub.PublishEnv(Env{Sensor: "lapa-bar-01", T: time.Now().UTC(), TempC: ptr(21.5), RH: ptr(80.0)})
	dashtest.Run(t, ctx, dashtest.WaitText(`#detail-laeq`, "66,6"), dashtest.WaitText(`[data-env="temp"]`, "21,5 °C"),
		dashtest.WaitText(`[data-env-table] tbody td:nth-child(2)`, "21,5"),
		dashtest.WaitJS(fmt.Sprintf(`%s > %d`, chartLastT, drawn), "the live reading in the chart"))
	// The legend reads the reading under the cursor, and the newest one
	// again once the cursor leaves the plot (not "—").
	const legendLAeq = `document.querySelector('#chart .u-legend .u-series:nth-child(2) .u-value').textContent`
	dashtest.Run(t, ctx, dashtest.WaitJS(legendLAeq+` === '66,6'`, "legend with the newest reading"))
	dashtest.Run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const o = document.querySelector('#chart .u-over'), r = o.getBoundingClientRect();
		o.dispatchEvent(new MouseEvent('mousemove', { clientX: r.left + 5, clientY: r.top + r.height / 2, bubbles: true })); })()`))
	if got := evalJS[string](t, ctx, legendLAeq); got == "66,6" {
		t.Errorf("legend under the cursor at the left edge still shows the newest reading %q", got)
	}
	dashtest.Run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('#chart .u-over').dispatchEvent(new MouseEvent('mouseleave'))`))
	if got := evalJS[string](t, ctx, legendLAeq); got != "66,6" {
		t.Errorf("legend after the cursor left the plot = %q, want the newest reading 66,6", got)
	}
	// Whom the sensor watches, from the register.
	if got := evalJS[string](t, ctx, `document.querySelector('#detail-establishments').textContent`); !strings.Contains(got, "Estabelecimento monitorado") ||
		!strings.Contains(got, "Bar Exemplo da Lapa Ltda") || !strings.Contains(got, "CNPJ/CPF 12.345.678/0001-95") || !strings.Contains(got, "(bar") {
		t.Errorf("the sensor page's establishment: %q", got)
	}
	dashtest.Screenshot(t, ctx, "sensor-desktop")
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(`[data-range="24h"]`)),
		dashtest.WaitJS(chartDrawn+` && document.querySelector('#chart .u-legend').textContent.includes('LAeq (2 min)')`, "24 h chart"))

	// Alerts inbox: a new alert arrives live with sound and notification.
	dashtest.Run(t, ctx, chromedp.Navigate(u.srv.URL+"/#/alertas"), dashtest.WaitText(`#view h1`, "Alertas"), dashtest.StubAlarms())
	u.fire(t, "lapa-bar-01/1", "lapa-bar-01", 71.2)
	dashtest.Run(t, ctx, dashtest.WaitText(`[data-alert="lapa-bar-01/1"]`, "Art. 96"),
		dashtest.WaitJS(`window.__beeps === 1 && window.__notifications.length === 1`, "one beep and one notification"),
		dashtest.WaitText(`#alert-count`, "1"))
	// The notification names whom the fiscal will visit first.
	if got := evalJS[string](t, ctx, `window.__notifications[0]`); got != "Alerta: Bar Exemplo da Lapa Ltda (fictício) (sensor lapa-bar-01) acima do limite" {
		t.Errorf("notification title %q", got)
	}
	if evalJS[bool](t, ctx, `!!document.querySelector('[data-alert="lapa-bar-01/1"] [data-late], [data-alert="lapa-bar-01/1"] [data-unsynced]')`) {
		t.Error("a live alert from a synchronised gateway is marked late or unsynced")
	}
	// Acknowledge; the document draft → stored → issued → ciente; evidence download.
	const al, nb = `[data-alert="lapa-bar-01/1"]`, `[data-notice="lapa-bar-01/1"]`
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(al+` [data-action="ack"]`)),
		dashtest.WaitText(`[data-triage="lapa-bar-01/1"]`, "Reconhecido por Ana Paula Ferreira"),
		chromedp.Click(chromedp.CSS(al+` [data-action="notice"]`)),
		dashtest.WaitText(nb+` h3`, "Notificação Preliminar — rascunho"),
		dashtest.WaitText(nb, "a preencher pelo fiscal"),
		dashtest.WaitText(nb, "Art. 334, VI"))
	dashtest.Screenshot(t, ctx, "alerts-desktop")
	dashtest.Run(t, ctx, constatacaoViaUI(nb), chromedp.Click(chromedp.CSS(nb+` [data-step="store"]`)),
		dashtest.WaitText(nb+` h3`, "nº lapa-NP-"),
		chromedp.Click(chromedp.CSS(nb+` [data-step="issue"]`)),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="issue"]`)),
		// The prazo the code leaves to the fiscal (Art. 334, III) is required.
		dashtest.WaitText(nb+` [data-form="issue"] .error`, "Preencha: Prazo"),
		chromedp.SendKeys(chromedp.CSS(nb+` [data-form="issue"] [name="prazo_days"]`), "5"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="issue"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "emitida"),
		chromedp.Click(chromedp.CSS(nb+` [data-step="ciente"]`)),
		chromedp.SendKeys(chromedp.CSS(nb+` [data-form="ciente"] [name="signed_by"]`), "José Proprietário"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="ciente"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "ciente do notificado"),
		dashtest.WaitText(nb+` [data-deadline="regularizacao"]`, "correndo"),
		chromedp.Click(chromedp.CSS(nb+` [data-step="regularize"]`)),
		chromedp.SendKeys(chromedp.CSS(nb+` [data-form="regularize"] [name="note"]`), "som desligado; isolamento acústico instalado"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="regularize"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "regularizada"),
		chromedp.Click(chromedp.CSS(al+` [data-action="evidence"]`)),
		dashtest.WaitText(`[data-result="lapa-bar-01/1"]`, "Pacote de evidências baixado"))
	if got, want := u.work.actions(), "ack:fis,constatacao:fis,draft:fis,issue:fis,ciente:fis,regularize:fis"; got != want {
		t.Errorf("workflow changes %q, want %q", got, want)
	}

	// Codes page.
	dashtest.Run(t, ctx, chromedp.Navigate(u.srv.URL+"/#/codigos/lapa"),
		dashtest.WaitText(`#limits`, "dB(A)"), dashtest.WaitText(`#view`, "Procedimento"))
	dashtest.Screenshot(t, ctx, "codes-desktop")

	// Logout closes the live feed and shows the login form.
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(`#logout`)), chromedp.WaitVisible(chromedp.CSS(`#login-user`)))
	u.waitClients(t, 0)
}

func TestUIPhoneOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	u := newUIServer(t, false)
	ctx := dashtest.Browser(t, dashtest.Phone)
	dashtest.Run(t, ctx, dashtest.Login(u.srv.URL, "op", testPassword),
		dashtest.WaitText(`[data-sensor="lapa-hospital-01"]`, "dB(A)"))
	u.level("lapa-hospital-01", 52.4)
	dashtest.Run(t, ctx, dashtest.WaitText(`[data-sensor="lapa-hospital-01"] [data-field="laeq"]`, "52,4"))
	noOverflow := `document.documentElement.scrollWidth <= window.innerWidth`
	if !evalJS[bool](t, ctx, noOverflow) {
		t.Errorf("overview wider than the phone: %d px", evalJS[int](t, ctx, `document.documentElement.scrollWidth`))
	}
	dashtest.Screenshot(t, ctx, "overview-phone")

	// The hospital sensor watches no establishment, and Art. 96's limits
	// apply to the establishments they list: the codes engine (the
	// server's limit series the chart draws) sets no numeric limit here.
	dashtest.Run(t, ctx, chromedp.Navigate(u.srv.URL+"/#/sensor/lapa-hospital-01"),
		dashtest.WaitJS(strings.Replace(chartDrawn, `document.querySelector('#chart').dataset.limit !== ''`, `document.querySelector('#chart').dataset.limit === ''`, 1), "chart"))
	if !evalJS[bool](t, ctx, noOverflow) {
		t.Errorf("sensor page wider than the phone")
	}
	dashtest.Screenshot(t, ctx, "sensor-phone")

	dashtest.Run(t, ctx, chromedp.Navigate(u.srv.URL+"/#/alertas"), dashtest.WaitText(`#view h1`, "Alertas"), dashtest.StubAlarms())
	u.fireLate(t, "lapa-hospital-01/1", "lapa-hospital-01", 58, 47*time.Minute, 120)
	dashtest.Run(t, ctx, dashtest.WaitText(`[data-alert="lapa-hospital-01/1"]`, "58,0 dB(A)"),
		dashtest.WaitJS(`window.__beeps === 1`, "beep"),
		dashtest.WaitText(`[data-alert="lapa-hospital-01/1"] [data-late]`, "com atraso (leituras reenviadas pelo gateway)"),
		dashtest.WaitText(`[data-alert="lapa-hospital-01/1"] [data-unsynced]`, "relógio do gateway não sincronizado em 120 leituras"))
	if n := evalJS[int](t, ctx, `document.querySelectorAll('[data-action]').length`); n != 0 {
		t.Errorf("operador sees %d action buttons, want none", n)
	}
	if !evalJS[bool](t, ctx, noOverflow) {
		t.Errorf("alerts page wider than the phone")
	}
	dashtest.Screenshot(t, ctx, "alerts-phone")

	dashtest.Run(t, ctx, chromedp.Navigate(u.srv.URL+"/#/codigos/conceicao-de-macabu"), dashtest.WaitText(`#limits`, "dB(A)"))
	dashtest.Screenshot(t, ctx, "codes-phone")
}

func ptr[T any](v T) *T { return &v }
