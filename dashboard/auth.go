package dashboard

// Authentication, roles and CSRF protection.
//
// A login (POST /api/v1/login, JSON {"user","password"}) creates a
// server-side session in the user store and sets the cookie CookieName:
// 256 random bits, HttpOnly, SameSite=Strict, Path=/, Secure when the request
// came over TLS (or AuthOptions.SecureCookies). The response and GET
// /api/v1/me carry the session's CSRF token, which the UI sends back in the
// X-CSRF-Token header of every state-changing request.
//
// Auth.Protect is the middleware for every API route: on unsafe methods
// (anything but GET, HEAD, OPTIONS) it refuses cross-origin browser requests
// (Origin or Sec-Fetch-Site, via net/http.CrossOriginProtection plus the
// Origins allow-list) and, when the request carries a session, a missing or
// wrong CSRF token. It puts the session in the request context
// (SessionFrom). RequireRole(roles…) then admits only those roles:
//
//	api := auth.Protect(mux)                                  // every /api/v1 route
//	mux.Handle("POST /api/v1/notices/{id}/issue", auth.RequireRole(users.Fiscal)(issue))
//	mux.Handle("PUT /api/v1/registry", auth.RequireRole(users.Admin)(edit))
//	mux.Handle("GET /api/v1/sensors", auth.RequireRole(users.Roles...)(list))
//
// Failed logins are rate limited per client address and per user name
// (AuthOptions.LoginAttempts in LoginWindow); over the limit the answer is 429
// with Retry-After, even for the right password.

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sossego/sossego/internal/users"
)

// CookieName is the session cookie.
const CookieName = "sossego_sessao"

// CSRFHeader carries the session's CSRF token on state-changing requests.
const CSRFHeader = "X-CSRF-Token"

// UserStore is what Auth needs from the user store; *users.Store implements it.
type UserStore interface {
	Authenticate(ctx context.Context, name, password string) (users.User, error)
	CreateSession(ctx context.Context, u users.User, now time.Time, ttl time.Duration) (users.Session, error)
	Session(ctx context.Context, token string, now time.Time) (users.Session, error)
	DeleteSession(ctx context.Context, token string) error
}

var _ UserStore = (*users.Store)(nil)

// Origins is the allow-list of browser origins ("scheme://host[:port]").
// A request's Origin is allowed when it is listed, or when it names the same
// host the request was sent to (gorilla/websocket's default rule). The zero
// value allows the same host only.
type Origins struct {
	list map[string]bool
}

// NewOrigins validates and normalises origins such as "https://painel.lapa.pr.gov.br".
func NewOrigins(origins ...string) (*Origins, error) {
	o := &Origins{list: map[string]bool{}}
	for _, s := range origins {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return nil, errors.New("dashboard: origin " + strconv.Quote(s) + " must look like https://host[:port]")
		}
		o.list[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	return o, nil
}

// Allowed reports whether the request's Origin header is allowed. A request
// without Origin is not.
func (o *Origins) Allowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	if o != nil && o.list[strings.ToLower(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// List returns the configured origins, sorted.
func (o *Origins) List() []string {
	var out []string
	if o != nil {
		for k := range o.list {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// AuthOptions configure Auth; zero fields take the defaults shown.
type AuthOptions struct {
	SessionTTL    time.Duration // 12 h (one shift and some)
	SecureCookies bool          // mark cookies Secure even on plain HTTP (TLS terminated by a proxy)
	Origins       *Origins      // nil: same host only
	LoginAttempts int           // failed logins allowed per address and per name in LoginWindow; 5
	LoginWindow   time.Duration // 15 min
	Now           func() time.Time
	// OnLogout is called with the token of a session that logged out
	// (Hub.EndSession disconnects its sockets).
	OnLogout func(token string)
}

// Auth serves login/logout/me and guards the other routes.
type Auth struct {
	store UserStore
	opts  AuthOptions
	log   *slog.Logger
	cop   *http.CrossOriginProtection
	lim   *loginLimiter
}

// NewAuth returns the authentication layer over store.
func NewAuth(store UserStore, opts AuthOptions, log *slog.Logger) *Auth {
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.LoginAttempts <= 0 {
		opts.LoginAttempts = 5
	}
	if opts.LoginWindow <= 0 {
		opts.LoginWindow = 15 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Origins == nil {
		opts.Origins = &Origins{}
	}
	cop := http.NewCrossOriginProtection()
	for _, o := range opts.Origins.List() {
		_ = cop.AddTrustedOrigin(o) // validated by NewOrigins
	}
	return &Auth{store: store, opts: opts, log: log, cop: cop,
		lim: &loginLimiter{max: opts.LoginAttempts, window: opts.LoginWindow, fails: map[string][]time.Time{}}}
}

// SetOnLogout sets the function called with the token of a session that
// logs out (Hub.EndSession). Call it before serving; the hub needs the Auth
// to exist first, hence a setter.
func (a *Auth) SetOnLogout(f func(token string)) { a.opts.OnLogout = f }

type ctxKey struct{}

// SessionFrom returns the session Protect put in the context.
func SessionFrom(ctx context.Context) (users.Session, bool) {
	s, ok := ctx.Value(ctxKey{}).(users.Session)
	return s, ok
}

// SessionFromRequest resolves the session cookie (Hub uses it).
func (a *Auth) SessionFromRequest(r *http.Request) (users.Session, error) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return users.Session{}, users.ErrNoSession
	}
	return a.store.Session(r.Context(), c.Value, a.opts.Now())
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// checkOrigin refuses cross-origin browser requests on unsafe methods.
func (a *Auth) checkOrigin(r *http.Request) bool {
	if safeMethod(r.Method) {
		return true
	}
	if r.Header.Get("Origin") != "" && !a.opts.Origins.Allowed(r) {
		return false
	}
	return a.cop.Check(r) == nil
}

// Protect resolves the session and enforces the origin and CSRF rules (see
// the file comment). It does not require a login: RequireRole does.
func (a *Auth) Protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.checkOrigin(r) {
			webError(w, http.StatusForbidden, "requisição de outra origem recusada")
			return
		}
		s, err := a.SessionFromRequest(r)
		if err == nil {
			if !safeMethod(r.Method) && !a.csrfOK(r, s) {
				webError(w, http.StatusForbidden, "token CSRF ausente ou inválido: recarregue a página")
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, s))
		} else if !errors.Is(err, users.ErrNoSession) {
			a.log.Error("painel: falha ao consultar sessão", "erro", err)
			webError(w, http.StatusInternalServerError, "erro ao verificar a sessão")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *Auth) originOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.checkOrigin(r) {
			webError(w, http.StatusForbidden, "requisição de outra origem recusada")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *Auth) csrfOK(r *http.Request, s users.Session) bool {
	got := r.Header.Get(CSRFHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) == 1
}

// RequireRole admits only logged-in users with one of roles: 401 without a
// session, 403 with another role. Use it inside Protect.
func (a *Auth) RequireRole(roles ...users.Role) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s, ok := SessionFrom(r.Context())
			if !ok {
				webError(w, http.StatusUnauthorized, "faça login para continuar")
				return
			}
			if !slices.Contains(roles, s.User.Role) {
				webError(w, http.StatusForbidden, "seu perfil ("+string(s.User.Role)+") não permite esta ação")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Register mounts POST /api/v1/login, POST /api/v1/logout and GET
// /api/v1/me on mux, already wrapped in Protect.
func (a *Auth) Register(mux *http.ServeMux) {
	// Login needs no CSRF token (there is no session yet) but is refused
	// from other origins like every unsafe request.
	mux.Handle("POST /api/v1/login", a.originOnly(http.HandlerFunc(a.login)))
	mux.Handle("POST /api/v1/logout", a.Protect(http.HandlerFunc(a.logout)))
	mux.Handle("GET /api/v1/me", a.Protect(a.RequireRole(users.Roles...)(http.HandlerFunc(a.me))))
}

type meResponse struct {
	User      string     `json:"user"`
	Role      users.Role `json:"role"`
	CSRFToken string     `json:"csrf_token"`
	Expires   time.Time  `json:"expires"`
}

func (a *Auth) login(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		webError(w, http.StatusUnsupportedMediaType, "envie o login como JSON")
		return
	}
	var req struct {
		User     string `json:"user"`
		Password string `json:"password"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
	if err := dec.Decode(&req); err != nil || req.User == "" || req.Password == "" {
		webError(w, http.StatusBadRequest, "informe usuário e senha")
		return
	}
	now := a.opts.Now()
	keys := []string{"ip:" + clientIP(r), "user:" + strings.ToLower(req.User)}
	if wait := a.lim.blocked(keys, now); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+0.999)))
		webError(w, http.StatusTooManyRequests, "muitas tentativas de login: aguarde alguns minutos e tente de novo")
		return
	}
	u, err := a.store.Authenticate(r.Context(), req.User, req.Password)
	if errors.Is(err, users.ErrBadCredentials) {
		a.lim.fail(keys, now)
		a.log.Info("painel: login recusado", "user", req.User, "remote", clientIP(r))
		webError(w, http.StatusUnauthorized, "usuário ou senha incorretos")
		return
	}
	if err != nil {
		a.log.Error("painel: falha no login", "erro", err)
		webError(w, http.StatusInternalServerError, "erro ao verificar a senha")
		return
	}
	a.lim.reset(keys[1])
	// A fresh session id on every login (no fixation); drop the old one.
	if old, err := r.Cookie(CookieName); err == nil {
		_ = a.store.DeleteSession(r.Context(), old.Value)
	}
	s, err := a.store.CreateSession(r.Context(), u, now, a.opts.SessionTTL)
	if err != nil {
		a.log.Error("painel: falha ao criar sessão", "erro", err)
		webError(w, http.StatusInternalServerError, "erro ao abrir a sessão")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || a.opts.SecureCookies, Expires: s.Expires})
	a.log.Info("painel: falha no login", "user", u.Name, "role", u.Role)
	webJSON(w, http.StatusOK, meResponse{User: u.Name, Role: u.Role, CSRFToken: s.CSRF, Expires: s.Expires})
}

func (a *Auth) logout(w http.ResponseWriter, r *http.Request) {
	if s, ok := SessionFrom(r.Context()); ok {
		if err := a.store.DeleteSession(r.Context(), s.Token); err != nil {
			a.log.Error("painel: falha ao encerrar sessão", "erro", err)
			webError(w, http.StatusInternalServerError, "erro ao encerrar a sessão")
			return
		}
		if a.opts.OnLogout != nil {
			a.opts.OnLogout(s.Token)
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || a.opts.SecureCookies, MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
}

func (a *Auth) me(w http.ResponseWriter, r *http.Request) {
	s, _ := SessionFrom(r.Context())
	webJSON(w, http.StatusOK, meResponse{User: s.User.Name, Role: s.User.Role, CSRFToken: s.CSRF, Expires: s.Expires})
}

// clientIP is the connection's address (proxies' headers are not trusted).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// loginLimiter counts failed logins per key in a sliding window.
type loginLimiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	fails  map[string][]time.Time
}

// blocked returns how long until the most limited key may try again.
func (l *loginLimiter) blocked(keys []string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		ts := l.prune(k, now)
		if len(ts) >= l.max {
			if w := ts[len(ts)-l.max].Add(l.window).Sub(now); w > wait {
				wait = w
			}
		}
	}
	return wait
}

func (l *loginLimiter) fail(keys []string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		l.fails[k] = append(l.prune(k, now), now)
	}
	if len(l.fails) > 100000 { // a flood of names: forget the stale ones
		for k := range l.fails {
			if len(l.prune(k, now)) == 0 {
				delete(l.fails, k)
			}
		}
	}
}

func (l *loginLimiter) reset(key string) {
	l.mu.Lock()
	delete(l.fails, key)
	l.mu.Unlock()
}

// prune drops failures older than the window; the caller holds mu.
func (l *loginLimiter) prune(k string, now time.Time) []time.Time {
	ts := l.fails[k]
	i := 0
	for i < len(ts) && !now.Before(ts[i].Add(l.window)) {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.fails, k)
		return nil
	}
	l.fails[k] = ts
	return ts
}

// webJSON writes v as JSON.
func webJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// webError writes {"erro": msg} with a pt-BR message.
func webError(w http.ResponseWriter, status int, msg string) {
	webJSON(w, status, map[string]string{"erro": msg})
}
