package dashboard

// The UI tests run against the real fiscal's workflow API
// (the workflow API over a real SQLite case store and the demo
// registry), mounted on the test server exactly as internal/central mounts
// it, with the change feed published to the hub. The full-system test
// (internal/central/e2e_test.go) drives the same UI against the whole
// central service.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/dashboard/dashtest"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/workflow"
)

// GetAlert makes the test's alert list the workflow's alert store.
func (f *uiAlerts) GetAlert(_ context.Context, id string) (alerts.Alert, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.list {
		if a.ID == id {
			return a, nil
		}
	}
	return alerts.Alert{}, fmt.Errorf("%w: %s", alerts.ErrNotFound, id)
}

// allRecords adapts the in-memory readings (whose limit is strict) to the
// workflow's Readings, where limit 0 means every record.
type allRecords struct{ r *uiReadings }

func (a allRecords) Records(ctx context.Context, sensor string, from, to time.Time, limit int) ([]store.Record, error) {
	if limit <= 0 {
		limit = 1 << 30
	}
	return a.r.Records(ctx, sensor, from, to, limit)
}

// uiWorkflow is the real workflow API plus a record of its change feed.
type uiWorkflow struct {
	svc     *workflow.Service
	cases   *casesdb.Store
	mu      sync.Mutex
	changes []WorkflowChange
	ahead   time.Duration // the service's clock runs this far ahead of the real one
	units   []notice.UnitValue
}

// setUnits replaces the monetary units' values the fines are computed
// with, as an admin does on the Administração page.
func (w *uiWorkflow) setUnits(vs []notice.UnitValue) {
	w.mu.Lock()
	w.units = vs
	w.mu.Unlock()
}

func (w *uiWorkflow) unitValues(context.Context) ([]notice.UnitValue, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]notice.UnitValue(nil), w.units...), nil
}

// now is the workflow service's clock.
func (w *uiWorkflow) now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Now().Add(w.ahead)
}

// advance moves the workflow service's clock forward by d.
func (w *uiWorkflow) advance(d time.Duration) {
	w.mu.Lock()
	w.ahead += d
	w.mu.Unlock()
}

// profiles are the user register's full names and matrículas of the test
// users, as the dashboard's session lookup gives them to the workflow API.
var profiles = map[string][2]string{"fis": {"Ana Paula Ferreira", "F-1234"}, "fis2": {"Bruno Costa Lima", "F-5678"}}

// actions lists the change feed as "action:by" items.
func (w *uiWorkflow) actions() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var s []string
	for _, c := range w.changes {
		s = append(s, c.Action+":"+c.By)
	}
	return strings.Join(s, ",")
}

func newUIWorkflow(t *testing.T, u *uiServer) *uiWorkflow {
	t.Helper()
	cs, err := casesdb.Open(context.Background(), filepath.Join(t.TempDir(), "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	w := &uiWorkflow{}
	cs.UnitValues = w.unitValues
	w.cases = cs
	w.svc = workflow.New(workflow.Config{Cases: caseStores(cs), Alerts: u.alerts, Registry: reg, Readings: allRecords{u.readings}, Codes: set, Key: key,
		Log: slog.New(slog.DiscardHandler), Now: w.now, UnitValues: w.unitValues,
		Assignees: func(context.Context) ([]string, error) { return []string{"fis", "fis2"}, nil },
		OnChange: func(c WorkflowChange) {
			w.mu.Lock()
			w.changes = append(w.changes, c)
			w.mu.Unlock()
			u.hub.PublishCase(CaseUpdate(c))
		}})
	h := NewWorkflowAPI(w.svc, func(r *http.Request) (WorkflowUser, bool) {
		s, ok := SessionFrom(r.Context())
		if !ok {
			return WorkflowUser{}, false
		}
		p := profiles[s.User.Name]
		return WorkflowUser{ID: s.User.Name, Name: s.User.Name, Role: string(s.User.Role), FullName: p[0], Matricula: p[1]}, true
	})
	for _, p := range WorkflowRoutes() {
		u.mux.Handle(p, u.auth.Protect(u.auth.RequireRole(users.Roles...)(h)))
	}
	return w
}

// exceedance builds a firing alert for sensor under the rule in force now,
// as the alerts monitor would: the last three minutes at laeq.
func exceedance(t *testing.T, id, sensor string, laeq float64) alerts.Alert {
	t.Helper()
	reg, _ := registry.Parse(registry.DemoYAML())
	s, ok := reg.Sensor(sensor)
	if !ok {
		t.Fatalf("sensor %s not in the demo registry", sensor)
	}
	set, _ := codes.Builtin()
	code := s.Code
	if code == "" {
		code = s.Municipality()
	}
	c, _ := set.Code(code)
	est, estName := "", ""
	if len(s.Establishments) > 0 {
		est, estName = s.Establishments[0].Type, s.Establishments[0].Name
	}
	now := time.Now().UTC().Truncate(time.Second)
	l, ok := c.ActiveLimit(s.Zone, est, now)
	if !ok { // none now (e.g. a mechanism override): any level limit of the zone
		for _, r := range c.Rules {
			if r.Kind == codes.KindLevelLimit && r.LimitDBA != nil && slices.Contains(r.Match.Zones, s.Zone) {
				l = codes.Limit{DBA: *r.LimitDBA, Period: r.Period, PeriodLabel: r.Label, RuleID: r.ID, Article: r.Article, Quote: r.Quote}
				ok = true
				break
			}
		}
	}
	if !ok {
		t.Fatalf("no level limit for %s", sensor)
	}
	return alerts.Alert{ID: id, Kind: alerts.KindExceedance, State: alerts.StateFiring,
		SensorInfo: alerts.SensorInfo{Sensor: sensor, Gateway: s.Gateway, Municipality: s.Municipality(), Code: code, Zone: s.Zone,
			Grade: s.Meter.Grade, EstablishmentType: est, Establishment: estName},
		CodeID: c.ID, CodeVersion: c.Version, RuleID: l.RuleID, Article: l.Article, Quote: l.Quote, Period: l.Period,
		PeriodLabel: l.PeriodLabel, LimitDB: l.DBA, MarginDB: alerts.DefaultConfig().MarginDB[s.Meter.Grade], LAeqDB: laeq, LAFmaxDB: laeq + 5,
		WindowStart: now.Add(-3 * time.Minute), WindowEnd: now, PendingAt: now.Add(-3 * time.Minute), FiringAt: now.Add(-time.Minute)}
}

// TestUIImminentRiskAuto: in Conceição de Macabu the intimação preliminar
// has a prazo of at most 30 days (the API's refusal of 45 is shown in the
// form) and is not due when there is imminent risk (Art. 171): the fiscal
// then draws the auto de infração straight from the draft; the UI links to
// the auto, which is issued (no prazo), acknowledged and judged. The same
// documents read on a phone do not overflow its width.
func TestUIImminentRiskAuto(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	u := newUIServer(t, true)
	ctx := dashtest.Browser(t, dashtest.Desktop)
	const id = "macabu-praca-01/1"
	al, nb := fmt.Sprintf(`[data-alert=%q]`, id), fmt.Sprintf(`[data-notice=%q]`, id)
	dashtest.Run(t, ctx, dashtest.Login(u.srv.URL, "fis", testPassword), chromedp.Navigate(u.srv.URL+"/#/alertas"),
		dashtest.WaitText(`#view h1`, "Alertas"), dashtest.StubAlarms())
	u.fire(t, id, "macabu-praca-01", 58)
	dashtest.Run(t, ctx, dashtest.WaitText(al, "58,0 dB(A)"),
		chromedp.Click(chromedp.CSS(al+` [data-action="notice"]`)),
		dashtest.WaitText(nb+` h3`, "Intimação Preliminar — rascunho"),
		constatacaoViaUI(nb),
		chromedp.Click(chromedp.CSS(nb+` [data-step="store"]`)),
		dashtest.WaitText(nb+` h3`, "nº "),
		// The prazo is capped by the code: the API refuses 45 days and the form says why.
		chromedp.Click(chromedp.CSS(nb+` [data-step="issue"]`)),
		chromedp.SendKeys(chromedp.CSS(nb+` [data-form="issue"] [name="prazo_days"]`), "45"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="issue"]`)),
		dashtest.WaitText(nb+` [data-form="issue"] .error`, "excede o máximo de 30 dias"),
		dashtest.WaitText(nb+` [data-doc-state]`, "rascunho"),
		// Imminent risk: the auto straight from the draft.
		chromedp.Click(chromedp.CSS(nb+` [data-step="auto"]`)),
		dashtest.WaitText(nb+` [data-form="auto"]`, "Risco iminente"),
		// The signing fiscal is the logged-in user: no agent to type.
		dashtest.WaitText(nb+` [data-form="auto"]`, "Assina o fiscal logado"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="auto"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "auto de infração lavrado"),
		dashtest.WaitText(nb+` [data-doc-result]`, "Auto de infração"),
		chromedp.Click(chromedp.CSS(nb+` [data-open-doc]`)),
		dashtest.WaitText(nb+` h3`, "Auto de Infração nº "),
		dashtest.WaitText(nb, "Refere-se a Intimação Preliminar"),
		// The auto: issue (no prazo field), ciente, judgement.
		chromedp.Click(chromedp.CSS(nb+` [data-step="issue"]`)),
		dashtest.WaitJS(`!document.querySelector('`+nb+` [data-form="issue"] [name="prazo_days"]')`, "no prazo on an auto"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="issue"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "emitido"),
		dashtest.WaitText(nb+` [data-field-id="autoridade"]`, "Ana Paula Ferreira, matrícula F-1234 "),
		chromedp.Click(chromedp.CSS(nb+` [data-step="ciente"]`)),
		chromedp.SendKeys(chromedp.CSS(nb+` [data-form="ciente"] [name="signed_by"]`), "Dona Maria"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="ciente"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "ciente do autuado"),
		dashtest.WaitText(nb+` [data-deadlines]`, "correndo"),
		chromedp.Click(chromedp.CSS(nb+` [data-step="decide"]`)),
		chromedp.SetValue(chromedp.CSS(nb+` [data-form="decide"] [name="punished"]`), "true"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="decide"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "julgado"),
		dashtest.WaitText(nb, "Nenhuma ação cabe agora"))
	if got, want := u.work.actions(), "constatacao:fis,draft:fis,auto:fis,draft:fis,issue:fis,ciente:fis,decide:fis"; got != want {
		t.Errorf("workflow changes %q, want %q", got, want)
	}

	phone := dashtest.Browser(t, dashtest.Phone)
	dashtest.Run(t, phone, dashtest.Login(u.srv.URL, "fis", testPassword), chromedp.Navigate(u.srv.URL+"/#/alertas"),
		chromedp.Click(chromedp.CSS(al+` [data-action="notice"]`)),
		dashtest.WaitText(nb+` h3`, "Intimação Preliminar nº "),
		chromedp.Click(chromedp.CSS(al+` [data-action="assign"]`)),
		dashtest.WaitJS(`!!document.querySelector('`+al+` [data-form="assign"] select')`, "the assign form"))
	if w := evalJS[int](t, phone, `document.documentElement.scrollWidth`); w > evalJS[int](t, phone, `window.innerWidth`) {
		t.Errorf("document view wider than the phone: %d px", w)
	}
}

// constatacaoViaUI records, in the open document box nb, the fiscal's
// constatação on the sensor's own window with the source attested (the
// demo register's meters are class 1/2 and calibrated).
func constatacaoViaUI(nb string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Click(chromedp.CSS(nb+` [data-step="constatacao"]`)),
		chromedp.SendKeys(chromedp.CSS(nb+` [data-form="constatacao"] [name="heard"]`), "música amplificada audível da calçada"),
		chromedp.SetValue(chromedp.CSS(nb+` [data-form="constatacao"] [name="attested"]`), "yes"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="constatacao"]`)),
		dashtest.WaitText(nb+` [data-constatacoes]`, "sustenta o documento"),
	)
}

// caseStores is the case store as every store of the workflow service.
func caseStores(cs *casesdb.Store) workflow.CaseStores {
	return workflow.CaseStores{Documents: cs, Steps: cs, Constatacoes: cs, PDFs: cs, Triage: cs}
}
