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
// Password checks are throttled per source (the client address; behind a
// reverse proxy listed in AuthOptions.TrustedProxies, the address it
// forwards) and per user name. A source has LoginAttempts free failures in
// LoginWindow; a name has 4 × LoginAttempts from all sources together, more
// than one source can spend in a window, so one attacker cannot lock a user
// out: the user still logs in from another address. Past its free failures
// a key waits LoginBackoff after the latest failure, doubling with every
// further one up to LoginWindow (exponential backoff, never a hard lock),
// and allows one check at a time. Every check reserves its place on both
// keys before the password is hashed, so guesses sent at once count as
// many as sent one by one; a check held back only by checks still running
// waits up to 3 s for their outcome (colleagues behind one NAT address
// logging in together get in one after another). Over the limit the answer is 429 with
// Retry-After, even for the right password. When the user store is
// saturated (users.ErrBusy: every argon2id slot busy) the answer is 503
// with Retry-After and the attempt is not counted.

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/loginlimit"
	"github.com/sossego/sossego/internal/users"
)

// CookieName is the session cookie.
const CookieName = "sossego_sessao"

// CSRFHeader carries the session's CSRF token on state-changing requests.
const CSRFHeader = "X-CSRF-Token"

// UserStore is what Auth needs from the user store; *usersdb.Store implements it.
type UserStore interface {
	Authenticate(ctx context.Context, name, password string) (users.User, error)
	CreateSession(ctx context.Context, u users.User, now time.Time, ttl time.Duration) (users.Session, error)
	Session(ctx context.Context, token string, now time.Time) (users.Session, error)
	DeleteSession(ctx context.Context, token string) error
}

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
	LoginAttempts int           // free failed logins per source in LoginWindow (a name gets 4×); 5
	LoginWindow   time.Duration // how long a failure counts, and the longest backoff; 15 min
	LoginBackoff  time.Duration // first wait once the free failures are spent, doubling after; 1 s
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client; nil trusts none (the connection's address is the client).
	TrustedProxies *Proxies
	Now            func() time.Time
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
	lim   *loginlimit.Limiter
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
	if opts.LoginBackoff <= 0 {
		opts.LoginBackoff = time.Second
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
		lim: loginlimit.New(opts.LoginWindow, opts.LoginBackoff)}
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
			apiError(w, http.StatusForbidden, "requisição de outra origem recusada")
			return
		}
		s, err := a.SessionFromRequest(r)
		if err == nil {
			if !safeMethod(r.Method) && !a.csrfOK(r, s) {
				apiError(w, http.StatusForbidden, "token CSRF ausente ou inválido: recarregue a página")
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, s))
		} else if !errors.Is(err, users.ErrNoSession) {
			a.log.Error("painel: falha ao consultar sessão", "erro", err)
			apiError(w, http.StatusInternalServerError, "erro ao verificar a sessão")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *Auth) originOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.checkOrigin(r) {
			apiError(w, http.StatusForbidden, "requisição de outra origem recusada")
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
				apiError(w, http.StatusUnauthorized, "faça login para continuar")
				return
			}
			if !slices.Contains(roles, s.User.Role) {
				apiError(w, http.StatusForbidden, "seu perfil ("+string(s.User.Role)+") não permite esta ação")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

type meResponse struct {
	User      string     `json:"user"`
	Role      users.Role `json:"role"`
	CSRFToken string     `json:"csrf_token"`
	Expires   time.Time  `json:"expires"`
}

func (a *Auth) login(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		apiError(w, http.StatusUnsupportedMediaType, "envie o login como JSON")
		return
	}
	var req struct {
		User     string `json:"user"`
		Password string `json:"password"`
	}
	if err := readJSON(w, r, 4096, jsonBody, &req); err != nil {
		apiError(w, http.StatusBadRequest, "informe usuário e senha: "+err.Error())
		return
	}
	if req.User == "" || req.Password == "" {
		apiError(w, http.StatusBadRequest, "informe usuário e senha")
		return
	}
	now := a.opts.Now()
	remote := a.opts.TrustedProxies.ClientIP(r)
	keys := []loginlimit.Key{
		{Name: "src:" + sourceKey(remote), Budget: a.opts.LoginAttempts},
		{Name: "user:" + strings.ToLower(req.User), Budget: 4 * a.opts.LoginAttempts, ClearOnSuccess: true},
	}
	// Reserve the check before hashing: simultaneous guesses each take a
	// place, and those beyond the budget are refused here.
	if wait := a.lim.Reserve(r.Context(), keys, a.opts.Now); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(loginlimit.RetrySeconds(wait)))
		apiError(w, http.StatusTooManyRequests, "muitas tentativas de login: aguarde "+loginlimit.WaitText(wait)+" e tente de novo")
		return
	}
	outcome := loginlimit.NotChecked
	defer func() { a.lim.Resolve(keys, outcome, a.opts.Now()) }()
	u, err := a.store.Authenticate(r.Context(), req.User, req.Password)
	switch {
	case errors.Is(err, users.ErrBadCredentials):
		outcome = loginlimit.Failed
		a.log.Info("painel: login recusado", "user", req.User, "remote", remote.String())
		apiError(w, http.StatusUnauthorized, "usuário ou senha incorretos")
		return
	case errors.Is(err, users.ErrBusy):
		w.Header().Set("Retry-After", "2")
		a.log.Warn("painel: login adiado, verificações de senha demais ao mesmo tempo", "user", req.User, "remote", remote.String())
		apiError(w, http.StatusServiceUnavailable, "servidor ocupado verificando outras senhas: tente de novo em alguns segundos")
		return
	case err != nil:
		a.log.Error("painel: falha no login", "user", req.User, "erro", err)
		apiError(w, http.StatusInternalServerError, "erro ao verificar a senha")
		return
	}
	outcome = loginlimit.Succeeded
	// A fresh session id on every login (no fixation); drop the old one.
	if old, err := r.Cookie(CookieName); err == nil {
		_ = a.store.DeleteSession(r.Context(), old.Value)
	}
	s, err := a.store.CreateSession(r.Context(), u, now, a.opts.SessionTTL)
	if err != nil {
		a.log.Error("painel: falha ao criar sessão", "erro", err)
		apiError(w, http.StatusInternalServerError, "erro ao abrir a sessão")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || a.opts.SecureCookies, Expires: s.Expires})
	a.log.Info("painel: login aceito", "user", u.Name, "role", u.Role, "remote", remote.String())
	apiJSON(w, http.StatusOK, meResponse{User: u.Name, Role: u.Role, CSRFToken: s.CSRF, Expires: s.Expires})
}

func (a *Auth) logout(w http.ResponseWriter, r *http.Request) {
	if s, ok := SessionFrom(r.Context()); ok {
		if err := a.store.DeleteSession(r.Context(), s.Token); err != nil {
			a.log.Error("painel: falha ao encerrar sessão", "erro", err)
			apiError(w, http.StatusInternalServerError, "erro ao encerrar a sessão")
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
	apiJSON(w, http.StatusOK, meResponse{User: s.User.Name, Role: s.User.Role, CSRFToken: s.CSRF, Expires: s.Expires})
}

// Proxies is the set of reverse proxies whose X-Forwarded-For header is
// believed. The zero value (and nil) trusts none.
type Proxies struct {
	nets []netip.Prefix
}

// NewProxies parses proxy addresses ("10.0.0.5", "::1") and networks
// ("10.0.0.0/24").
func NewProxies(list ...string) (*Proxies, error) {
	p := &Proxies{}
	for _, s := range list {
		s = strings.TrimSpace(s)
		if pr, err := netip.ParsePrefix(s); err == nil {
			p.nets = append(p.nets, pr.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("dashboard: proxy %q: use an address (10.0.0.5) or a network (10.0.0.0/24)", s)
		}
		a = a.Unmap()
		p.nets = append(p.nets, netip.PrefixFrom(a, a.BitLen()))
	}
	return p, nil
}

// Trusted reports whether a is one of the proxies.
func (p *Proxies) Trusted(a netip.Addr) bool {
	if p == nil {
		return false
	}
	a = a.Unmap()
	for _, n := range p.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// ClientIP is the address a request came from: the connection's, unless
// that is a trusted proxy; then the right-most address of X-Forwarded-For
// that is not a trusted proxy (what the outermost trusted proxy saw; the
// entries left of it are the client's own claims). An unreadable entry
// stops the walk at the proxy that wrote it. The zero Addr means the
// connection's address is not an IP (a test's pipe).
func (p *Proxies) ClientIP(r *http.Request) netip.Addr {
	remote := remoteAddr(r.RemoteAddr)
	if !remote.IsValid() || !p.Trusted(remote) {
		return remote
	}
	client := remote
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return client
			}
			client = a.Unmap()
			if !p.Trusted(client) {
				return client
			}
		}
	}
	return client
}

// remoteAddr parses http.Request.RemoteAddr ("ip:port").
func remoteAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// SourceOf is the address block one client controls: the address itself
// for IPv4, its /64 for IPv6 (one subscriber's usual allocation).
func SourceOf(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p
	}
	return netip.PrefixFrom(a, a.BitLen())
}

func sourceKey(a netip.Addr) string {
	if !a.IsValid() {
		return "?"
	}
	return SourceOf(a).String()
}
