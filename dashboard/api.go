package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/store"
)

// The HTTP JSON API under /api/v1 (docs/api.md). Every dependency is a
// small consumer-side interface so that tests use fakes and the central
// service plugs in the store, the registry, the codes engine and the case
// store.

// APIRegistry gives the sensor register in force.
type APIRegistry interface {
	Current() *registry.Registry
}

// APIStore answers reading, gateway and dead-letter queries.
type APIStore interface {
	Latest(ctx context.Context, sensor string) (store.Record, bool, error)
	GatewayStatuses(ctx context.Context) ([]store.GatewayStatus, error)
	DeadLetters(ctx context.Context, f store.DeadLetterFilter) ([]store.DeadLetter, error)
}

// APIReadings answers window queries (SQLite, or InfluxDB with --store influx).
type APIReadings interface {
	Records(ctx context.Context, sensor string, from, to time.Time, limit int) ([]store.Record, error)
	Buckets(ctx context.Context, sensor string, from, to time.Time, step time.Duration) ([]store.Bucket, error)
}

// Limit is the limit in force for a sensor at an instant, as the codes
// engine states it.
type Limit struct {
	LimitDBA float64 `json:"limit_dba"`
	Code     string  `json:"code"`
	Version  string  `json:"code_version,omitempty"`
	Article  string  `json:"article,omitempty"`
	Period   string  `json:"period,omitempty"`
	Until    string  `json:"until,omitempty"` // RFC 3339: when this limit stops applying
}

// LimitFunc returns the limit in force for a sensor at an instant; ok is
// false when the code sets no numeric limit there.
type LimitFunc func(s registry.Sensor, at time.Time) (l Limit, ok bool, err error)

// AlertFilter selects alerts.
type AlertFilter struct {
	State        string
	Municipality string
	Sensor       string
	Limit        int
}

// AlertLister lists alerts (the case store implements it). The result is
// encoded as the JSON array "alerts".
type AlertLister interface {
	ListAlerts(ctx context.Context, f AlertFilter) (any, error)
}

// APIOptions configures the API handler.
type APIOptions struct {
	Registry APIRegistry
	Store    APIStore
	Readings APIReadings // default: Store if it implements APIReadings
	Env      APIEnv      // default: Store if it implements APIEnv; nil: /sensors/{id}/env answers 503
	Limits   LimitFunc   // nil: no limit reported
	Alerts   AlertLister // nil: /alerts answers 503
	// Health reports component states for /api/v1/health (nil: just "ok").
	Health func(ctx context.Context) HealthReport
	Now    func() time.Time
	Log    *slog.Logger
	// MaxRecords bounds a 1-s window answer; default 86400 (one day).
	MaxRecords int

	// LimitSeries gives the limit in force over a window as steps, returned
	// with /readings (nil: none).
	LimitSeries func(s registry.Sensor, from, to time.Time) ([]stats.LimitStep, error)
	// Window gives the figures of a window (LAeq, percentiles from the
	// merged histograms, coverage), returned with /readings (nil: none).
	Window func(ctx context.Context, s registry.Sensor, from, to time.Time) (stats.Figures, error)
}

// API serves /api/v1.
type API struct {
	o APIOptions
}

// NewAPI returns the API handler.
func NewAPI(o APIOptions) *API {
	if o.Readings == nil {
		if r, ok := o.Store.(APIReadings); ok {
			o.Readings = r
		}
	}
	if o.Env == nil {
		if e, ok := o.Store.(APIEnv); ok {
			o.Env = e
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = 86400
	}
	return &API{o: o}
}

// ServeHTTP makes API an http.Handler on its own mux.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mux := http.NewServeMux()
	a.Register(mux)
	mux.ServeHTTP(w, r)
}

func (a *API) internal(w http.ResponseWriter, err error) {
	serverError(w, a.o.Log, "painel", err)
}

// HealthReport is the service's state for /api/v1/health.
type HealthReport struct {
	Components map[string]string // e.g. "mqtt": "conectado"
	// Problems (pt-BR) degrade the service without stopping it: status
	// "degradado", HTTP 200 (e.g. InfluxDB down while ingest goes on).
	Problems []string
	// Down is set when the service cannot do its job (no MQTT connection
	// for ingest): status "degradado", HTTP 503.
	Down error
}

func (a *API) health(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{"status": "ok"}
	status := http.StatusOK
	if a.o.Health != nil {
		h := a.o.Health(r.Context())
		out["components"] = h.Components
		if len(h.Problems) > 0 {
			out["status"] = "degradado"
			out["problemas"] = h.Problems
		}
		if h.Down != nil {
			out["status"] = "degradado"
			out["erro"] = h.Down.Error()
			status = http.StatusServiceUnavailable
		}
	}
	if _, ok := SessionFrom(r.Context()); !ok {
		// An outside monitor (Zabbix, Nagios) sees the verdict only: the
		// components and problems name internals for logged-in staff.
		out = map[string]any{"status": out["status"]}
	}
	apiJSON(w, status, out)
}

// HealthProbe serves GET /api/v1/health without a login: anyone gets
// {"status": "ok"|"degradado"} with 200, or 503 when the service cannot
// ingest; a logged-in session (mount it inside Auth.Protect) also gets the
// components and problems. Mount it ahead of the authenticated API.
func (a *API) HealthProbe() http.Handler { return http.HandlerFunc(a.health) }

// sensorView is one sensor in /sensors.
type sensorView struct {
	registry.Sensor
	Municipality string        `json:"municipality"`
	Latest       *store.Record `json:"latest"`
	Limit        *Limit        `json:"limit"`
	LimitError   string        `json:"limit_erro,omitempty"`
}

func (a *API) view(ctx context.Context, s registry.Sensor, now time.Time) (sensorView, error) {
	v := sensorView{Sensor: s, Municipality: s.Municipality()}
	if rec, ok, err := a.o.Store.Latest(ctx, s.ID); err != nil {
		return v, err
	} else if ok {
		v.Latest = &rec
	}
	if a.o.Limits != nil {
		l, ok, err := a.o.Limits(s, now)
		switch {
		case err != nil:
			v.LimitError = err.Error()
		case ok:
			v.Limit = &l
		}
	}
	return v, nil
}

func (a *API) sensors(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	now := a.o.Now()
	out := []sensorView{}
	for _, s := range a.o.Registry.Current().Sensors() {
		if m := q.Get("municipality"); m != "" && m != s.Municipality() && m != s.Code {
			continue
		}
		if g := q.Get("gateway"); g != "" && g != s.Gateway {
			continue
		}
		v, err := a.view(r.Context(), s, now)
		if err != nil {
			a.internal(w, err)
			return
		}
		out = append(out, v)
	}
	apiJSON(w, http.StatusOK, map[string]any{"sensors": out, "at": now.UTC()})
}

func (a *API) sensor(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s, ok := a.o.Registry.Current().Sensor(id)
	if !ok {
		apiError(w, http.StatusNotFound, "sensor "+strconv.Quote(id)+" não está cadastrado")
		return
	}
	v, err := a.view(r.Context(), s, a.o.Now())
	if err != nil {
		a.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, v)
}

type gatewayView struct {
	store.GatewayStatus
	Name       string `json:"name,omitempty"`
	Registered bool   `json:"registered"`
	Sensors    int    `json:"sensors"`
}

func (a *API) gateways(w http.ResponseWriter, r *http.Request) {
	sts, err := a.o.Store.GatewayStatuses(r.Context())
	if err != nil {
		a.internal(w, err)
		return
	}
	reg := a.o.Registry.Current()
	count := map[string]int{}
	for _, s := range reg.Sensors() {
		count[s.Gateway]++
	}
	seen := map[string]bool{}
	out := []gatewayView{}
	for _, st := range sts {
		g, ok := reg.Gateway(st.Gateway)
		out = append(out, gatewayView{GatewayStatus: st, Name: g.Name, Registered: ok, Sensors: count[st.Gateway]})
		seen[st.Gateway] = true
	}
	for _, g := range reg.Gateways() {
		if !seen[g.ID] {
			out = append(out, gatewayView{GatewayStatus: store.GatewayStatus{Gateway: g.ID, Municipality: g.Municipality},
				Name: g.Name, Registered: true, Sensors: count[g.ID]})
		}
	}
	apiJSON(w, http.StatusOK, map[string]any{"gateways": out})
}

var alertStates = map[string]bool{"": true, "pending": true, "firing": true, "resolved": true, "cancelled": true, "no_data": true}

func (a *API) alerts(w http.ResponseWriter, r *http.Request) {
	if a.o.Alerts == nil {
		apiError(w, http.StatusServiceUnavailable, "alertas indisponíveis neste serviço")
		return
	}
	q := r.URL.Query()
	f := AlertFilter{State: q.Get("state"), Municipality: q.Get("municipality"), Sensor: q.Get("sensor")}
	if !alertStates[f.State] {
		apiError(w, http.StatusBadRequest, "state "+strconv.Quote(f.State)+" inválido; use pending, firing, resolved, cancelled ou no_data")
		return
	}
	if n, ok := intParam(w, q.Get("limit"), "limit", 1, 1000); !ok {
		return
	} else {
		f.Limit = n
	}
	list, err := a.o.Alerts.ListAlerts(r.Context(), f)
	if err != nil {
		a.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, map[string]any{"alerts": list})
}

func intParam(w http.ResponseWriter, s, name string, lo, hi int) (int, bool) {
	if s == "" {
		return 0, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		apiError(w, http.StatusBadRequest, name+" deve ser um inteiro entre "+strconv.Itoa(lo)+" e "+strconv.Itoa(hi))
		return 0, false
	}
	return n, true
}

func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, errors.New("use RFC 3339, ex.: 2026-11-30T22:00:00-03:00")
}

func (a *API) readings(w http.ResponseWriter, r *http.Request) {
	if a.o.Readings == nil {
		apiError(w, http.StatusServiceUnavailable, "consulta de leituras indisponível")
		return
	}
	q := r.URL.Query()
	sensor := q.Get("sensor")
	if sensor == "" {
		apiError(w, http.StatusBadRequest, "informe o parâmetro sensor")
		return
	}
	sen, ok := a.o.Registry.Current().Sensor(sensor)
	if !ok {
		apiError(w, http.StatusNotFound, "sensor "+strconv.Quote(sensor)+" não está cadastrado")
		return
	}
	from, to, step, msg := readingsWindow(q.Get("from"), q.Get("to"), q.Get("step"), a.o.Now())
	if msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	out := map[string]any{"sensor": sensor, "from": from.UTC(), "to": to.UTC(), "step": step.String()}
	a.readingsFigures(r.Context(), out, sen, from, to)
	if !a.readingsData(r.Context(), w, out, sensor, from, to, step) {
		return
	}
	apiJSON(w, http.StatusOK, out)
}

// readingsWindow reads a readings query's from, to and step (defaults: the
// hour before now, by the second) and checks them; msg says what is wrong.
func readingsWindow(fromS, toS, stepS string, now time.Time) (from, to time.Time, step time.Duration, msg string) {
	to = now
	var err error
	if toS != "" {
		if to, err = parseTime(toS); err != nil {
			return time.Time{}, time.Time{}, 0, "to inválido: " + err.Error()
		}
	}
	if fromS != "" {
		if from, err = parseTime(fromS); err != nil {
			return time.Time{}, time.Time{}, 0, "from inválido: " + err.Error()
		}
	} else {
		from = to.Add(-time.Hour)
	}
	if !from.Before(to) {
		return time.Time{}, time.Time{}, 0, "from deve ser anterior a to"
	}
	if to.Sub(from) > 366*24*time.Hour {
		return time.Time{}, time.Time{}, 0, "janela maior que um ano; divida a consulta"
	}
	step = time.Second
	if stepS != "" {
		if step, err = time.ParseDuration(stepS); err != nil || step < time.Second || step%time.Second != 0 {
			return time.Time{}, time.Time{}, 0, "step inválido: use uma duração em segundos inteiros ≥ 1s, ex.: 1s, 1m, 15m, 1h"
		}
	}
	return from, to, step, ""
}

// readingsFigures adds the window's figures and the limits in force to
// out, where the service provides them; neither failing fails the query.
func (a *API) readingsFigures(ctx context.Context, out map[string]any, sen registry.Sensor, from, to time.Time) {
	if a.o.Window != nil {
		if f, err := a.o.Window(ctx, sen, from, to); err == nil {
			out["window"] = f
		} else {
			a.o.Log.Warn("números da janela indisponíveis", "sensor", sen.ID, "erro", err)
		}
	}
	if a.o.LimitSeries != nil {
		steps, err := a.o.LimitSeries(sen, from, to)
		if err != nil {
			out["limits_erro"] = err.Error()
		} else {
			out["limits"] = steps
		}
	}
}

// readingsData adds the window's 1-s records (step 1s) or its buckets to
// out; when it cannot, it writes the error response and returns false.
func (a *API) readingsData(ctx context.Context, w http.ResponseWriter, out map[string]any, sensor string, from, to time.Time, step time.Duration) bool {
	if step == time.Second {
		recs, err := a.o.Readings.Records(ctx, sensor, from, to, a.o.MaxRecords+1)
		if err != nil {
			a.internal(w, err)
			return false
		}
		if len(recs) > a.o.MaxRecords {
			apiError(w, http.StatusBadRequest, "janela com mais de "+strconv.Itoa(a.o.MaxRecords)+" registros de 1 s; use step (ex.: step=1m) ou uma janela menor")
			return false
		}
		if recs == nil {
			recs = []store.Record{}
		}
		out["records"] = recs
		return true
	}
	if to.Sub(from)/step > 100000 {
		apiError(w, http.StatusBadRequest, "mais de 100000 intervalos; aumente step")
		return false
	}
	b, err := a.o.Readings.Buckets(ctx, sensor, from, to, step)
	if err != nil {
		a.internal(w, err)
		return false
	}
	if b == nil {
		b = []store.Bucket{}
	}
	out["buckets"] = b
	return true
}

func (a *API) deadLetters(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.DeadLetterFilter{Reason: q.Get("reason"), Gateway: q.Get("gateway")}
	n, ok := intParam(w, q.Get("limit"), "limit", 1, 1000)
	if !ok {
		return
	}
	f.Limit = n
	if s := q.Get("before"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			apiError(w, http.StatusBadRequest, "before deve ser o id (inteiro positivo) de uma mensagem rejeitada")
			return
		}
		f.BeforeID = id
	}
	list, err := a.o.Store.DeadLetters(r.Context(), f)
	if err != nil {
		a.internal(w, err)
		return
	}
	if list == nil {
		list = []store.DeadLetter{}
	}
	resp := map[string]any{"dead_letters": list}
	limit := f.Limit
	if limit == 0 {
		limit = 100
	}
	if len(list) == limit {
		resp["next_before"] = list[len(list)-1].ID
	}
	apiJSON(w, http.StatusOK, resp)
}
