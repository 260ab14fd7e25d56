package dashboard

// The embedded web UI.
//
// static/ holds the whole single-page UI: index.html, the style sheets,
// the vendored uPlot chart library and the ES modules under static/js/
// (js/app.js is the entry point; no bundler, no CDN, no web fonts, no map
// tiles), so the dashboard works on a municipal LAN without internet. All
// user-facing text is pt-BR; times are shown in America/Sao_Paulo.
//
// Web.Register mounts, on one http.ServeMux:
//
//	GET  /                    index.html (strict Content-Security-Policy)
//	GET  /static/…            embedded assets
//	GET  /ws                  the live hub (Hub.ServeHTTP)
//	POST /api/v1/login, POST /api/v1/logout, GET /api/v1/me   (Auth.Register)
//	GET  /api/v1/codes        municipal codes: summary of each
//	GET  /api/v1/codes/{id}   one code's schedule: zone × period → limit, hour rules, articles
//
// The UI reads the rest (sensors, readings, alerts, notices, evidence) from
// the central service's JSON API (docs/api.md) and degrades with a pt-BR
// message when a route is missing.

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/sossego/sossego/codes"
)

//go:embed static
var staticFiles embed.FS

// StaticFS returns the embedded UI assets (rooted at static/).
func StaticFS() fs.FS {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	return sub
}

// Web serves the UI, the hub, the auth routes and the codes schedule.
type Web struct {
	auth  *Auth
	hub   *Hub
	codes *codes.Set
	log   *slog.Logger
}

// NewWeb ties the UI to auth, the hub and the municipal codes (nil: no codes page data).
func NewWeb(auth *Auth, hub *Hub, set *codes.Set, log *slog.Logger) *Web {
	return &Web{auth: auth, hub: hub, codes: set, log: log}
}

// csp allows only this origin: scripts, styles, images (data: for the
// generated notification icon), fetch and websocket.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// jsType is the Content-Type of every script, module or classic.
const jsType = "text/javascript; charset=utf-8"

func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "same-origin")
		w.Header().Set("X-Frame-Options", "DENY")
		h.ServeHTTP(w, r)
	})
}

// RegisterUI mounts the page, its static files and the live feed (/ws)
// on mux.
func (wb *Web) RegisterUI(mux *http.ServeMux) {
	static := StaticFS()
	index, err := fs.ReadFile(static, "index.html")
	if err != nil {
		panic(err)
	}
	mux.Handle("GET /{$}", securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(index)
	})))
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	mux.Handle("GET /static/", securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		if strings.HasSuffix(r.URL.Path, ".js") {
			// A module script needs a JavaScript MIME type; the host's
			// mime.types must not decide it (nosniff is on).
			w.Header().Set("Content-Type", jsType)
		}
		files.ServeHTTP(w, r)
	})))
	mux.Handle("GET /ws", wb.hub)
}

// Register mounts the UI, the live feed, the login and the codes'
// schedules on mux (the central service mounts the last two with every
// other route: RegisterUI and Routes).
func (wb *Web) Register(mux *http.ServeMux) {
	wb.RegisterUI(mux)
	Mount(mux, wb.auth, Routes(Deps{Auth: wb.auth, Web: wb}))
}

// CodeSummary is one entry of GET /api/v1/codes.
type CodeSummary struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	Municipality string `json:"municipality"`
	State        string `json:"state"`
	Version      string `json:"version"`
	InForce      bool   `json:"in_force"`
	RevokedBy    string `json:"revoked_by,omitempty"`
}

// CodeView is GET /api/v1/codes/{id}: the code's schedule as data, plus the
// same schedule as pt-BR text (codes.Schedule).
type CodeView struct {
	CodeSummary
	LawTitle     string     `json:"law_title"`
	Zones        []ZoneView `json:"zones"`
	Limits       []RuleView `json:"limits"` // level limits: zones × period → dB(A)
	Rules        []RuleView `json:"rules"`  // hour bans, permitted hours, durations, schedules, …
	Notice       string     `json:"notice,omitempty"`
	NoticeArt    string     `json:"notice_article,omitempty"`
	PrazoMaxDays int        `json:"prazo_max_days,omitempty"`
	Auto         string     `json:"auto,omitempty"`
	AutoArt      string     `json:"auto_article,omitempty"`
	Schedule     string     `json:"schedule_text"`
}

// RuleView is one encoded provision, flattened for the UI.
type RuleView struct {
	ID             string         `json:"id"`
	Kind           string         `json:"kind"`
	Label          string         `json:"label"`
	Article        string         `json:"article"`
	Quote          string         `json:"quote"`
	Zones          []string       `json:"zones,omitempty"`
	Sources        []string       `json:"sources,omitempty"`
	Establishments []string       `json:"establishments,omitempty"`
	Period         string         `json:"period,omitempty"`
	Window         *WindowView    `json:"window,omitempty"`
	Schedule       []ScheduleView `json:"schedule,omitempty"`
	LimitDB        *float64       `json:"limit_db,omitempty"`
	MaxDurationS   *float64       `json:"max_duration_s,omitempty"`
	MinIntervalS   *float64       `json:"min_interval_s,omitempty"`
	RadiusM        *float64       `json:"radius_m,omitempty"`
	Why            string         `json:"why,omitempty"`
}

// ZoneView is a zone of the code.
type ZoneView struct {
	ID       string `json:"id"`
	Label    string `json:"label"`
	Article  string `json:"article,omitempty"`
	Geometry string `json:"geometry,omitempty"`
}

// WindowView is a daily window [from, to); to ≤ from crosses midnight.
type WindowView struct {
	From          string   `json:"from"`
	To            string   `json:"to"`
	FromExclusive bool     `json:"from_exclusive,omitempty"`
	Days          []string `json:"days,omitempty"`
}

// ScheduleView is one line of an operating schedule.
type ScheduleView struct {
	Days         []string `json:"days"`
	Open         string   `json:"open,omitempty"`
	Close        string   `json:"close,omitempty"`
	CloseNextDay bool     `json:"close_next_day,omitempty"`
	Closed       bool     `json:"closed,omitempty"`
}

func summary(c *codes.Code) CodeSummary {
	return CodeSummary{ID: c.ID, Title: c.Title(), Municipality: c.Municipality, State: c.State,
		Version: c.Version, InForce: c.Status.InForce, RevokedBy: c.Status.RevokedBy}
}

// ViewCode builds the JSON view of c.
func ViewCode(c *codes.Code) CodeView {
	v := CodeView{CodeSummary: summary(c), LawTitle: c.Law.Title, Zones: []ZoneView{}, Schedule: codes.Schedule(c),
		Limits: []RuleView{}, Rules: []RuleView{}}
	for _, z := range c.Zones {
		v.Zones = append(v.Zones, ZoneView{ID: z.ID, Label: z.Label, Article: z.Article, Geometry: z.Geometry})
	}
	for _, r := range c.Rules {
		rv := RuleView{ID: r.ID, Kind: r.Kind, Label: r.Label, Article: r.Article, Quote: r.Quote,
			Zones: r.Match.Zones, Sources: r.Match.Sources, Establishments: r.Match.Establishments,
			Period: r.Period, LimitDB: r.LimitDBA,
			MaxDurationS: r.MaxDurationS, MinIntervalS: r.MinIntervalS, RadiusM: r.RadiusM, Why: r.Why}
		if w := r.Window; w != nil {
			rv.Window = &WindowView{From: w.From, To: w.To, FromExclusive: w.FromExclusive, Days: w.Days}
		}
		for _, e := range r.Schedule {
			rv.Schedule = append(rv.Schedule, ScheduleView{Days: e.Days, Open: e.Open, Close: e.Close, CloseNextDay: e.CloseNextDay, Closed: e.Closed})
		}
		if r.Kind == codes.KindLevelLimit {
			v.Limits = append(v.Limits, rv)
		} else {
			v.Rules = append(v.Rules, rv)
		}
	}
	if n := c.Procedure.Notice; n != nil {
		v.Notice, v.NoticeArt, v.PrazoMaxDays = n.Title, n.Article, n.PrazoDaysMax
	}
	if a := c.Procedure.Auto; a != nil {
		v.Auto, v.AutoArt = a.Title, a.Article
	}
	return v
}

func (wb *Web) listCodes(w http.ResponseWriter, r *http.Request) {
	out := []CodeSummary{}
	if wb.codes != nil {
		for _, id := range wb.codes.IDs() {
			c, _ := wb.codes.Code(id)
			out = append(out, summary(c))
		}
	}
	apiJSON(w, http.StatusOK, out)
}

func (wb *Web) showCode(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSpace(r.PathValue("id"))
	var c *codes.Code
	if wb.codes != nil {
		c, _ = wb.codes.Code(id)
	}
	if c == nil {
		apiError(w, http.StatusNotFound, "código municipal desconhecido: "+id)
		return
	}
	apiJSON(w, http.StatusOK, ViewCode(c))
}
