package dashboard

// Every /api/v1 route: method, path, who may call it and the handler. The
// central service mounts Routes once (Mount); each part's Register mounts
// its own rows, for its tests and for a mux of its own.

import (
	"net/http"
	"strings"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/users"
)

// Access is who may call a route.
type Access int

const (
	// Public: no session is looked at (the login, the evidence key).
	Public Access = iota
	// Session: a session is resolved when there is one, and unsafe
	// requests need its CSRF token (Auth.Protect); no login needed.
	Session
	// Roles: a logged-in user with one of the route's roles.
	Roles
)

// Route is one route of the API.
type Route struct {
	Method, Path string
	Access       Access
	Roles        []users.Role // with Access Roles
	Handler      http.Handler
}

// Deps are the parts that serve the API; a nil part's routes are left out.
type Deps struct {
	Auth        *Auth // login, logout, me
	Web         *Web  // the codes' schedules
	API         *API  // sensors, readings, alerts, health, … and the JSON 404 of /api/v1/
	Reports     *Reports
	Workflow    *WorkflowAPI
	Cases       *CasesAPI
	Registry    *RegistryAPI
	Admin       *AdminAPI
	Holidays    *HolidaysAPI
	Notify      *NotifyAPI
	Calibration *CalibrationAPI
	EvidenceKey http.Handler // GET /api/v1/evidence/key, public
}

// Routes lists every route the parts in d serve.
func Routes(d Deps) []Route {
	var rs []Route
	if d.Auth != nil {
		rs = append(rs, d.Auth.routes()...)
	}
	if d.Web != nil {
		rs = append(rs, d.Web.routes()...)
	}
	if d.API != nil {
		rs = append(rs, d.API.routes()...)
	}
	if d.Reports != nil {
		rs = append(rs, d.Reports.routes()...)
	}
	if d.Workflow != nil {
		rs = append(rs, d.Workflow.routes()...)
	}
	if d.Cases != nil {
		rs = append(rs, d.Cases.routes()...)
	}
	if d.Registry != nil {
		rs = append(rs, d.Registry.routes()...)
	}
	if d.Admin != nil {
		rs = append(rs, d.Admin.routes()...)
	}
	if d.Holidays != nil {
		rs = append(rs, d.Holidays.routes()...)
	}
	if d.Notify != nil {
		rs = append(rs, d.Notify.routes()...)
	}
	if d.Calibration != nil {
		rs = append(rs, d.Calibration.routes()...)
	}
	if d.EvidenceKey != nil {
		// Public, like the health probe: a perito compares it with a
		// package without an account.
		rs = append(rs, Route{"GET", "/api/v1/evidence/key", Public, nil, d.EvidenceKey})
	}
	return rs
}

// Mount adds routes to mux, each behind auth as its Access says; a nil
// auth mounts the handlers bare (a mux the caller puts behind its own
// guard).
func Mount(mux *http.ServeMux, auth *Auth, routes []Route) {
	for _, r := range routes {
		h := r.Handler
		if auth != nil {
			switch r.Access {
			case Session:
				h = auth.Protect(h)
			case Roles:
				h = auth.Protect(auth.RequireRole(r.Roles...)(h))
			}
		}
		pattern := r.Path
		if r.Method != "" {
			pattern = r.Method + " " + r.Path
		}
		mux.Handle(pattern, h)
	}
}

var (
	anyRole  = users.Roles
	admin    = []users.Role{users.Admin}
	onStreet = []users.Role{users.Operador, users.Fiscal}
)

// at is a route for the given roles.
func at(method, path string, roles []users.Role, h http.HandlerFunc) Route {
	return Route{method, path, Roles, roles, h}
}

func (a *Auth) routes() []Route {
	return []Route{
		// Login needs no CSRF token (there is no session yet) but is
		// refused from other origins like every unsafe request.
		{"POST", "/api/v1/login", Public, nil, a.originOnly(http.HandlerFunc(a.login))},
		{"POST", "/api/v1/logout", Session, nil, http.HandlerFunc(a.logout)},
		at("GET", "/api/v1/me", anyRole, a.me),
	}
}

func (wb *Web) routes() []Route {
	return []Route{
		at("GET", "/api/v1/codes", anyRole, wb.listCodes),
		at("GET", "/api/v1/codes/{id}", anyRole, wb.showCode),
	}
}

func (a *API) routes() []Route {
	return []Route{
		// Outside monitors probe the health without a login (the verdict
		// only; a session also gets the details).
		{"GET", "/api/v1/health", Session, nil, http.HandlerFunc(a.health)},
		at("GET", "/api/v1/sensors", anyRole, a.sensors),
		at("GET", "/api/v1/sensors/{id}", anyRole, a.sensor),
		at("GET", "/api/v1/sensors/{id}/env", anyRole, a.env),
		at("GET", "/api/v1/gateways", anyRole, a.gateways),
		at("GET", "/api/v1/alerts", anyRole, a.alerts),
		at("GET", "/api/v1/readings", anyRole, a.readings),
		at("GET", "/api/v1/dead-letters", anyRole, a.deadLetters),
		at("GET", "/api/v1/labels", anyRole, a.labels),
		at("GET", "/api/v1/conflicts", anyRole, a.recordConflicts),
		at("GET", "/api/v1/seq-skips", anyRole, a.seqSkips),
		at("", "/api/v1/", anyRole, func(w http.ResponseWriter, r *http.Request) {
			apiError(w, http.StatusNotFound, "recurso não encontrado: "+r.URL.Path)
		}),
	}
}

func (rp *Reports) routes() []Route {
	return []Route{
		at("GET", "/api/v1/reports", anyRole, rp.report),
		at("GET", "/api/v1/sensors/{id}/export", anyRole, rp.export),
		at("GET", "/api/v1/sensors/{id}/limits", anyRole, rp.limits),
	}
}

// The workflow's routes are open to every role; h.act refuses all but a
// fiscal itself, saying so in pt-BR.
func (h *WorkflowAPI) routes() []Route {
	rs := []Route{
		at("GET", "/api/v1/alerts/{id}/notice", anyRole, h.read(h.getAlertNotice)),
		at("POST", "/api/v1/alerts/{id}/notice", anyRole, h.act(h.createNotice)),
		at("GET", "/api/v1/alerts/{id}/evidence", anyRole, h.read(h.evidence)),
		at("GET", "/api/v1/notices/{id}", anyRole, h.read(h.getNotice)),
		at("PATCH", "/api/v1/notices/{id}", anyRole, h.act(h.editNotice)),
		at("POST", "/api/v1/notices/{id}/correct", anyRole, h.act(h.correct)),
		at("POST", "/api/v1/alerts/{id}/constatacoes", anyRole, h.act(h.postConstatacao)),
		at("GET", "/api/v1/alerts/{id}/constatacoes", anyRole, h.read(h.getConstatacoes)),
		at("GET", "/api/v1/notices/{id}/pdf", anyRole, h.read(h.pdf)),
		at("GET", "/api/v1/notices/{id}/audit", anyRole, h.read(h.audit)),
		at("GET", "/api/v1/parties/{document}/history", anyRole, h.read(h.history)),
		at("POST", "/api/v1/alerts/{id}/ack", anyRole, h.act(h.ack)),
		at("POST", "/api/v1/alerts/{id}/assign", anyRole, h.act(h.assign)),
		at("GET", "/api/v1/alerts/{id}/case", anyRole, h.read(h.alertCase)),
		at("GET", "/api/v1/alert-cases", anyRole, h.read(h.alertCases)),
	}
	// POST /api/v1/notices/{id}/issue, ciente, recusa, regularize, auto,
	// cancel, decide.
	for _, a := range []notice.ActionKind{notice.ActIssue, notice.ActAcknowledge, notice.ActRefuse, notice.ActRegularise,
		notice.ActEscalate, notice.ActCancel, notice.ActDecide} {
		rs = append(rs, at("POST", "/api/v1/notices/{id}/"+string(a), anyRole, h.act(h.step(a))))
	}
	return rs
}

func (c *CasesAPI) routes() []Route {
	return []Route{
		at("GET", "/api/v1/cases", onStreet, c.list),
		at("GET", "/api/v1/parties/{doc}", onStreet, c.party),
	}
}

func (h *RegistryAPI) routes() []Route {
	return []Route{
		at("GET", "/api/v1/registry", admin, h.get),
		at("PUT", "/api/v1/registry", admin, h.put),
	}
}

func (a *AdminAPI) routes() []Route {
	return []Route{
		at("GET", "/api/v1/admin/users", admin, a.listUsers),
		at("POST", "/api/v1/admin/users", admin, a.createUser),
		at("PATCH", "/api/v1/admin/users/{name}", admin, a.updateUser),
		at("GET", "/api/v1/units", anyRole, a.units),
		at("GET", "/api/v1/units/{code}/history", anyRole, a.unitHistory),
		at("POST", "/api/v1/admin/units", admin, a.setUnit),
	}
}

func (h *HolidaysAPI) routes() []Route {
	return []Route{
		at("GET", "/api/v1/holidays", anyRole, h.list),
		at("GET", "/api/v1/holidays/history", anyRole, h.history),
		at("POST", "/api/v1/admin/holidays", admin, h.add),
		at("DELETE", "/api/v1/admin/holidays/{id}", admin, h.remove),
	}
}

func (n *NotifyAPI) routes() []Route {
	return []Route{
		at("GET", "/api/v1/notify/on-duty", anyRole, n.onDuty),
		at("GET", "/api/v1/notify/settings", admin, n.getSettings),
		at("PUT", "/api/v1/notify/settings", admin, n.putSettings),
		at("POST", "/api/v1/notify/test", admin, n.test),
		at("GET", "/api/v1/notify/silences", anyRole, n.silences),
		at("POST", "/api/v1/notify/silences", onStreet, n.createSilence),
		at("POST", "/api/v1/notify/silences/{id}/end", onStreet, n.endSilence),
		at("GET", "/api/v1/alerts/{id}/notifications", anyRole, n.history),
		at("GET", "/api/v1/notify/push", anyRole, n.push),
		at("POST", "/api/v1/notify/push/subscriptions", anyRole, n.subscribe),
		at("DELETE", "/api/v1/notify/push/subscriptions", anyRole, n.unsubscribe),
	}
}

func (c *CalibrationAPI) routes() []Route {
	return []Route{
		at("GET", "/api/v1/calibration", anyRole, c.overview),
		at("GET", "/api/v1/calibration/sensors/{sensor}", anyRole, c.sensor),
		at("GET", "/api/v1/calibration/sensors/{sensor}/status", anyRole, c.status),
		at("POST", "/api/v1/calibration/sensors/{sensor}/certificates", admin, c.add),
		at("GET", "/api/v1/calibration/certificates/{id}/file", anyRole, c.file),
		at("PUT", "/api/v1/calibration/policy/{municipality}", admin, c.policy),
	}
}

// Each part's Register mounts its rows of the table.

// Register mounts POST /api/v1/login, POST /api/v1/logout and GET
// /api/v1/me on mux, already wrapped in Protect.
func (a *Auth) Register(mux *http.ServeMux) { Mount(mux, a, a.routes()) }

// Register adds the API routes to mux, bare: the caller puts the mux
// behind the session (Auth.Protect and RequireRole).
func (a *API) Register(mux *http.ServeMux) { Mount(mux, nil, a.routes()) }

// Register adds the routes to mux (the API's mux, behind the session).
func (rp *Reports) Register(mux *http.ServeMux) { Mount(mux, nil, rp.routes()) }

// Register mounts the routes on mux behind auth: fiscais and operadores.
func (c *CasesAPI) Register(mux *http.ServeMux, auth *Auth) { Mount(mux, auth, c.routes()) }

// Register mounts the routes on mux behind auth: admins only.
func (h *RegistryAPI) Register(mux *http.ServeMux, auth *Auth) { Mount(mux, auth, h.routes()) }

// Register mounts the routes on mux behind auth (sessions, CSRF, roles).
func (a *AdminAPI) Register(mux *http.ServeMux, auth *Auth) { Mount(mux, auth, a.routes()) }

// Register mounts the routes on mux behind auth (sessions, CSRF, roles).
func (h *HolidaysAPI) Register(mux *http.ServeMux, auth *Auth) { Mount(mux, auth, h.routes()) }

// Register mounts the routes on mux behind auth (sessions, CSRF, roles).
func (n *NotifyAPI) Register(mux *http.ServeMux, auth *Auth) { Mount(mux, auth, n.routes()) }

// Register mounts the routes on mux behind auth.
func (c *CalibrationAPI) Register(mux *http.ServeMux, auth *Auth) { Mount(mux, auth, c.routes()) }

// WorkflowRoutes lists the workflow's patterns with their methods, for
// mounting the WorkflowAPI handler on another mux.
func WorkflowRoutes() []string {
	var out []string
	for _, r := range (&WorkflowAPI{}).routes() {
		out = append(out, strings.TrimSpace(r.Method+" "+r.Path))
	}
	return out
}
