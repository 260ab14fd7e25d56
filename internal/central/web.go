package central

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/holidays"
	"github.com/sossego/sossego/internal/holidays/holidaysdb"
	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/monetary/monetarydb"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
	"github.com/sossego/sossego/internal/workflow"
)

// web is the operator-facing side: users and sessions, the live hub, the
// embedded UI and the fiscal's workflow.
type web struct {
	users *usersdb.Store
	units *monetarydb.Store // values of the codes' monetary units
	auth  *dashboard.Auth
	hub   *dashboard.Hub
	ui    *dashboard.Web // the page, its files and the live feed
	cases *casesdb.Store
	index *cases.Index // the case list ("Casos")
	svc   *workflow.Service
	// onChange are told of every stored workflow change: the live feed,
	// then the notifications' acknowledgements (notifyAcks).
	onChange []func(workflow.Change)
	keys     *evidence.KeyRing // the evidence packages' signing key and its history
	// reports: reports, exports and limit series (nil: not served).
	reports *dashboard.Reports

	// hols is the register of the municipalities' decreed days; holWatch
	// keeps the code set's calendar in step with it.
	hols     *holidaysdb.Store
	holWatch *holidays.Watch
}

// The stores wired here are what the dashboard's consumer-side interfaces
// ask for.
var (
	_ dashboard.UserStore    = (*usersdb.Store)(nil)
	_ dashboard.AdminUsers   = (*usersdb.Store)(nil)
	_ dashboard.UnitStore    = (*monetarydb.Store)(nil)
	_ dashboard.HolidayStore = (*holidaysdb.Store)(nil)
)

func openWeb(ctx context.Context, o Options, log *slog.Logger) (*web, error) {
	us, err := usersdb.OpenDir(ctx, o.DataDir, users.Options{})
	if err != nil {
		return nil, fmt.Errorf("central: users: %w", err)
	}
	origins, err := dashboard.NewOrigins(o.Origins...)
	if err != nil {
		us.Close()
		return nil, fmt.Errorf("central: --origin: %w", err)
	}
	proxies, err := dashboard.NewProxies(o.TrustedProxies...)
	if err != nil {
		us.Close()
		return nil, fmt.Errorf("central: --trusted-proxy: %w", err)
	}
	units, err := monetarydb.OpenDir(ctx, o.DataDir)
	if err != nil {
		us.Close()
		return nil, fmt.Errorf("central: monetary units: %w", err)
	}
	hols, err := holidaysdb.OpenDir(ctx, o.DataDir)
	if err != nil {
		us.Close()
		units.Close()
		return nil, fmt.Errorf("central: municipal holidays: %w", err)
	}
	auth := dashboard.NewAuth(us, dashboard.AuthOptions{Origins: origins, SecureCookies: o.SecureCookies, TrustedProxies: proxies},
		log.With("componente", "acesso"))
	hub := dashboard.NewHub(auth, dashboard.HubOptions{Origins: origins}, log.With("componente", "painel"))
	auth.SetOnLogout(hub.EndSession)
	return &web{users: us, units: units, hols: hols, auth: auth, hub: hub}, nil
}

func (w *web) close() {
	if w.cases != nil {
		w.cases.Close()
	}
	w.users.Close()
	w.units.Close()
	w.hols.Close()
}

// decreedDays hands the register of municipal holidays to set before
// anything reads it, so alert limits, reports, limit series and deadlines
// share one calendar from the start; holWatch then follows the register.
func (w *web) decreedDays(ctx context.Context, set *codes.Set, log *slog.Logger) error {
	log = log.With("componente", "feriados")
	n, err := holidays.Apply(ctx, w.hols, set, log)
	if err != nil {
		return fmt.Errorf("central: municipal holidays: %w", err)
	}
	if n > 0 {
		log.Info("feriados municipais cadastrados aplicados ao calendário dos códigos", "dias", n)
	}
	w.holWatch = holidays.NewWatch(w.hols, set, 0, log)
	return nil
}

// workflow opens the case store of notices and autos (tables prefixed
// cases_ in cases.db, beside the alerts) and the evidence key.
func (w *web) workflow(ctx context.Context, o Options, cs *alertstore.Store, reg *registry.Live, st *sqlitestore.Store,
	set *codes.Set, cal *calibrationdb.Register, log *slog.Logger) error {
	c, err := casesdb.Open(ctx, filepath.Join(o.DataDir, "cases.db"))
	if err != nil {
		return fmt.Errorf("central: cases: %w", err)
	}
	c.UnitValues = w.unitValues
	w.cases = c
	if w.index, err = cases.NewIndex(ctx, c, set.Code); err != nil {
		return fmt.Errorf("central: cases: %w", err)
	}
	w.index.Alerts = openAlerts(cs, reg.Current, set)
	go func() {
		if err := w.index.Warm(ctx); err != nil && ctx.Err() == nil {
			log.Warn("casos: leitura inicial dos documentos falhou; a lista tenta de novo no primeiro pedido", "erro", err)
		}
	}()
	kr, err := evidence.LoadOrCreateKeyRing(o.DataDir, time.Now())
	if err != nil {
		return fmt.Errorf("central: evidence key: %w", err)
	}
	w.keys = kr
	w.onChange = append(w.onChange, w.publishChange)
	w.svc = workflow.New(workflow.Config{Cases: caseStores(c), Alerts: cs, Registry: workflow.SensorRegistryFunc(reg.Current),
		Readings: st, Batches: st, Codes: set, Key: kr.Signer, Log: log.With("componente", "fiscalização"),
		OnChange: w.changed, Assignees: w.fiscais, UnitValues: w.unitValues, Calibrations: cal,
		Evidence: workflow.EvidenceSources{Keys: kr, Env: st, Ledger: &evidence.FileLedger{Dir: filepath.Join(o.DataDir, evidence.LedgerDir)},
			Meters: EvidenceMeters{Register: cal, Registry: reg.Current}}})
	return nil
}

// caseStores is the case store as every store of the workflow service.
func caseStores(c *casesdb.Store) workflow.CaseStores {
	return workflow.CaseStores{Documents: c, Steps: c, Constatacoes: c, PDFs: c, Triage: c}
}

// changed tells every listener of a stored workflow change.
func (w *web) changed(c workflow.Change) {
	for _, f := range w.onChange {
		f(c)
	}
}

// unitValues is the table of the monetary units' values a fine is
// computed with.
func (w *web) unitValues(ctx context.Context) ([]notice.UnitValue, error) {
	ps, err := w.units.Periods(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]notice.UnitValue, len(ps))
	for i, p := range ps {
		out[i] = notice.UnitValue{CodeID: p.CodeID, Unit: p.Unit, From: p.From, To: p.To, ValueBRL: p.Value.Reais(), Act: p.Act}
	}
	return out, nil
}

// publishChange sends a stored workflow change to the fiscais' live feed.
func (w *web) publishChange(c workflow.Change) {
	w.hub.PublishCase(dashboard.CaseUpdate(c))
}

// fiscais lists the active fiscais: who an alert may be assigned to.
func (w *web) fiscais(ctx context.Context) ([]string, error) {
	all, err := w.users.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range all {
		if u.Role == users.Fiscal && !u.Disabled {
			out = append(out, u.Name)
		}
	}
	return out, nil
}

// routes is every /api/v1 route of the service but the notifications' and
// the calibration register's (which their own files add): the JSON API,
// reports, the fiscal's workflow, the register, administration, holidays,
// the case list, the evidence key, login and the codes.
func (w *web) routes(d dashboard.Deps, api *dashboard.API, reg *registry.Live, set *codes.Set, log *slog.Logger) dashboard.Deps {
	w.ui = dashboard.NewWeb(w.auth, w.hub, set, log)
	d.Auth, d.Web, d.API, d.Reports = w.auth, w.ui, api, w.reports
	d.Registry = dashboard.NewRegistryAPI(reg, log.With("componente", "cadastro"))
	d.Admin = dashboard.NewAdminAPI(dashboard.AdminOptions{Users: w.users, Units: w.units, Codes: set,
		Log: log.With("componente", "administração")})
	d.Holidays = dashboard.NewHolidaysAPI(dashboard.HolidaysOptions{Store: w.hols, Codes: set, Log: log.With("componente", "feriados"),
		OnChange: func(ctx context.Context) error { _, err := holidays.Apply(ctx, w.hols, set, nil); return err }})
	if w.svc != nil {
		d.Workflow = dashboard.NewWorkflowAPI(w.svc, sessionUser)
	}
	if w.keys != nil {
		d.EvidenceKey = dashboard.EvidenceKeyHandler(w.publishedKey, log.With("componente", "evidências"))
	}
	if w.index != nil {
		d.Cases = dashboard.NewCasesAPI(dashboard.CasesOptions{Source: caseSource{w.index}, States: caseStates(), Municipalities: set.IDs,
			Log: log.With("componente", "casos")})
	}
	return d
}

// publishedKey is the evidence key as GET /api/v1/evidence/key serves it.
func (w *web) publishedKey() (dashboard.EvidenceKey, error) {
	var out dashboard.EvidenceKey
	b, err := json.Marshal(evidence.PublishedKey(w.keys))
	if err != nil {
		return out, err
	}
	return out, json.Unmarshal(b, &out)
}

func sessionUser(r *http.Request) (dashboard.WorkflowUser, bool) {
	s, ok := dashboard.SessionFrom(r.Context())
	if !ok {
		return dashboard.WorkflowUser{}, false
	}
	u := s.User
	name := u.Name
	if u.FullName != "" {
		name = u.FullName
	}
	return dashboard.WorkflowUser{ID: u.Name, Name: name, Role: string(u.Role),
		FullName: u.FullName, Matricula: u.Matricula, Email: u.Email, Phone: u.Phone}, true
}

// hubFeed publishes stored readings, environmental records and gateway
// statuses to the live hub (non-blocking: the hub coalesces and drops slow
// browsers).
type hubFeed struct {
	hub    hubPublisher
	limits alerts.Limits
}

// hubPublisher is what hubFeed needs of the dashboard hub.
type hubPublisher interface {
	PublishLevel(dashboard.Level)
	PublishEnv(dashboard.Env)
	PublishGateway(dashboard.GatewayStatus)
	PublishIngest(dashboard.IngestEvent)
}

// ObserveEvent shows what ingest kept instead of applying (conflicts, seq
// skips, quota refusals) on every open dashboard at once.
func (f hubFeed) ObserveEvent(_ context.Context, e ingest.Event) {
	f.hub.PublishIngest(dashboard.IngestEvent{Kind: e.Kind, Gateway: e.Gateway, Municipality: e.Municipality,
		Sensor: e.Sensor, Seq: e.Seq, T: e.T, At: e.At, Message: e.Message})
}

func (f hubFeed) Observe(_ context.Context, r ingest.Reading) {
	l := dashboard.Level{Sensor: r.Sensor, Gateway: r.Gateway, Municipality: r.Municipality, T: r.Record.T,
		LAeq: dashboard.DB(r.Record.LAeq), LAFmax: dashboard.DB(r.Record.LAFmax), Grade: r.Grade}
	synced := r.Clock.Synced
	l.ClockSynced = &synced
	p, _ := registry.Primary(r.Establishments)
	if lim, ok, err := f.limits.LimitAt(r.Code, r.Zone, p.Type, p.Mechanism, r.Record.T); err == nil && ok {
		db, margin := dashboard.DB(lim.DB), dashboard.DB(r.Record.LAeq-lim.DB)
		l.Limit, l.Margin = &db, &margin
		l.Period, l.PeriodLabel, l.PeriodEnd = lim.Period, lim.PeriodLabel, lim.PeriodEnd
	}
	f.hub.PublishLevel(l)
}

// ObserveBatch publishes a batch's latest reading: the hub keeps one level
// per sensor, and working out the limit in force for readings it would
// replace at once cost ~1 µs each.
func (f hubFeed) ObserveBatch(ctx context.Context, rs []ingest.Reading) {
	if len(rs) == 0 {
		return
	}
	latest := 0
	for i := range rs {
		if !rs[i].Record.T.Before(rs[latest].Record.T) {
			latest = i
		}
	}
	f.Observe(ctx, rs[latest])
}

func (f hubFeed) ObserveEnv(_ context.Context, e ingest.EnvReading) {
	f.hub.PublishEnv(dashboard.Env{Sensor: e.Sensor, T: e.Record.T, TempC: e.Record.TemperatureC, RH: e.Record.HumidityPct,
		PressureHPa: e.Record.PressureHPa})
}

func (f hubFeed) ObserveStatus(_ context.Context, s store.GatewayStatus) {
	g := dashboard.GatewayStatus{Gateway: s.Gateway, Municipality: s.Municipality, State: s.State, At: s.At, LastSeen: s.LastSeen}
	if s.Clock != nil {
		synced, off := s.Clock.Synced, s.Clock.OffsetMs
		g.ClockSynced, g.ClockOffset, g.ClockSource = &synced, &off, s.Clock.Source
	}
	f.hub.PublishGateway(g)
}

var (
	_ ingest.BatchObserver  = hubFeed{}
	_ ingest.StatusObserver = hubFeed{}
	_ ingest.EnvObserver    = hubFeed{}
)
