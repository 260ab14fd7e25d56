package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
)

// do sends a request to the fixture with optional cookie, CSRF token and Origin.
func (f *fixture) do(t *testing.T, method, path, body, cookie, csrf, origin string, hdr ...string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if cookie != "" {
		req.Header.Set("Cookie", CookieName+"="+cookie)
	}
	if csrf != "" {
		req.Header.Set(CSRFHeader, csrf)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp, m
}

func TestLogin(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{LoginAttempts: 100})
	tests := []struct {
		name, body, ctype, origin string
		want                      int
		wantErr                   string
	}{
		{"right password", `{"user":"fis","password":"senha-de-teste"}`, "application/json", "same", 200, ""},
		{"no origin (non-browser client)", `{"user":"op","password":"senha-de-teste"}`, "application/json", "", 200, ""},
		{"wrong password", `{"user":"fis","password":"senha-errada"}`, "application/json", "same", 401, "usuário ou senha incorretos"},
		{"unknown user", `{"user":"ninguem","password":"senha-de-teste"}`, "application/json", "same", 401, "usuário ou senha incorretos"},
		{"missing password", `{"user":"fis"}`, "application/json", "same", 400, "informe usuário e senha"},
		{"not JSON", `user=fis&password=senha-de-teste`, "application/x-www-form-urlencoded", "same", 415, "JSON"},
		{"garbage", `{"user":`, "application/json", "same", 400, "informe usuário e senha"},
		{"foreign origin", `{"user":"fis","password":"senha-de-teste"}`, "application/json", "http://evil.example", 403, "outra origem"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			origin := tc.origin
			if origin == "same" {
				origin = f.srv.URL
			}
			req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/login", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ctype)
			if origin != "" {
				req.Header.Set("Origin", origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var m map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&m)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d (%v)", resp.StatusCode, tc.want, m)
			}
			if tc.wantErr != "" && !strings.Contains(m["erro"].(string), tc.wantErr) {
				t.Fatalf("error %q, want %q", m["erro"], tc.wantErr)
			}
			var sc *http.Cookie
			for _, c := range resp.Cookies() {
				if c.Name == CookieName {
					sc = c
				}
			}
			if tc.want != 200 {
				if sc != nil {
					t.Fatal("cookie set on failure")
				}
				return
			}
			if sc == nil || !sc.HttpOnly || sc.SameSite != http.SameSiteStrictMode || sc.Path != "/" || len(sc.Value) < 40 {
				t.Fatalf("cookie %+v", sc)
			}
			if m["csrf_token"] == "" || m["role"] == "" {
				t.Fatalf("body %v", m)
			}
		})
	}
}

func TestSecureCookie(t *testing.T) {
	for _, tc := range []struct {
		name   string
		secure bool
	}{{"plain http", false}, {"forced secure", true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, HubOptions{}, AuthOptions{SecureCookies: tc.secure})
			resp, _ := f.do(t, "POST", "/api/v1/login", `{"user":"op","password":"senha-de-teste"}`, "", "", f.srv.URL)
			if c := resp.Cookies(); len(c) != 1 || c[0].Secure != tc.secure {
				t.Fatalf("cookies %+v", c)
			}
		})
	}
}

// TestLoginRateLimit: a source's free failures, then waits that double
// after each further failure (Retry-After says how long), one check at a
// time; everything is forgotten once the window has passed.
func TestLoginRateLimit(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{LoginAttempts: 3, LoginWindow: 10 * time.Minute, LoginBackoff: time.Second})
	try := func(user, pw string) (int, string) {
		resp, _ := f.do(t, "POST", "/api/v1/login", `{"user":"`+user+`","password":"`+pw+`"}`, "", "", f.srv.URL)
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	steps := []struct {
		name      string
		advance   time.Duration
		user, pw  string
		want      int
		wantRetry string
	}{
		{"fail 1", 0, "fis", "x-errada", 401, ""},
		{"fail 2", 0, "fis", "x-errada", 401, ""},
		{"fail 3", time.Minute, "fis", "x-errada", 401, ""},
		{"right password now waits", 0, "fis", testPassword, 429, "1"},
		{"another user from the same address waits too", 0, "op", testPassword, 429, "1"},
		{"after the first backoff", time.Second, "fis", "x-errada", 401, ""},
		{"the wait doubled", 0, "fis", testPassword, 429, "2"},
		{"not yet", 1999 * time.Millisecond, "fis", testPassword, 429, "1"},
		{"after the second backoff", time.Millisecond, "op", "x-errada", 401, ""},
		{"doubled again", 0, "fis", testPassword, 429, "4"},
		{"a right password is checked once its turn comes", 4 * time.Second, "fis", testPassword, 200, ""},
		{"and does not clear the source's record", 0, "fis", "x-errada", 401, ""},
		{"whose waits keep doubling", 0, "fis", testPassword, 429, "8"},
		{"everything aged out", 10 * time.Minute, "fis", "x-errada", 401, ""},
		{"free attempts again", 0, "fis", testPassword, 200, ""},
	}
	for _, st := range steps {
		f.clock.Add(st.advance)
		if got, retry := try(st.user, st.pw); got != st.want || retry != st.wantRetry {
			t.Fatalf("%s: status %d Retry-After %q, want %d %q", st.name, got, retry, st.want, st.wantRetry)
		}
	}
}

func TestSessionExpiryAndLogout(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{SessionTTL: 2 * time.Hour})
	cookie, csrf := f.login(t, "op")
	if resp, m := f.do(t, "GET", "/api/v1/me", "", cookie, "", ""); resp.StatusCode != 200 || m["user"] != "op" || m["role"] != "operador" || m["csrf_token"] != csrf {
		t.Fatalf("me: %d %v", resp.StatusCode, m)
	}
	f.clock.Add(2*time.Hour - time.Second)
	if resp, _ := f.do(t, "GET", "/api/v1/me", "", cookie, "", ""); resp.StatusCode != 200 {
		t.Fatalf("me before expiry: %d", resp.StatusCode)
	}
	f.clock.Add(time.Second)
	if resp, m := f.do(t, "GET", "/api/v1/me", "", cookie, "", ""); resp.StatusCode != 401 || !strings.Contains(m["erro"].(string), "login") {
		t.Fatalf("me after expiry: %d %v", resp.StatusCode, m)
	}
	cookie, csrf = f.login(t, "op")
	if resp, _ := f.do(t, "POST", "/api/v1/logout", "", cookie, "", f.srv.URL); resp.StatusCode != 403 {
		t.Fatalf("logout without CSRF token: %d", resp.StatusCode)
	}
	resp, _ := f.do(t, "POST", "/api/v1/logout", "", cookie, csrf, f.srv.URL)
	if resp.StatusCode != 204 || len(resp.Cookies()) != 1 || resp.Cookies()[0].MaxAge >= 0 {
		t.Fatalf("logout: %d %+v", resp.StatusCode, resp.Cookies())
	}
	if resp, _ := f.do(t, "GET", "/api/v1/me", "", cookie, "", ""); resp.StatusCode != 401 {
		t.Fatalf("me after logout: %d", resp.StatusCode)
	}
}

// TestProtectAndRoles mounts fake state-changing routes the way the lead
// mounts the API and checks CSRF, origin and role rules.
func TestProtectAndRoles(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{})
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, _ := SessionFrom(r.Context())
		apiJSON(w, 200, map[string]string{"by": s.User.Name})
	})
	f.mux.Handle("POST /api/v1/notices/{id}/issue", f.auth.Protect(f.auth.RequireRole(users.Fiscal)(ok)))
	f.mux.Handle("PUT /api/v1/registry", f.auth.Protect(f.auth.RequireRole(users.Admin)(ok)))
	f.mux.Handle("GET /api/v1/sensors", f.auth.Protect(f.auth.RequireRole(users.Roles...)(ok)))
	sess := map[string][2]string{}
	for _, u := range []string{"op", "fis", "adm"} {
		c, x := f.login(t, u)
		sess[u] = [2]string{c, x}
	}
	tests := []struct {
		name, method, path, user string
		csrf                     string // "ok", "bad", ""
		origin                   string // "same", "foreign", ""
		extra                    []string
		want                     int
	}{
		{"fiscal issues", "POST", "/api/v1/notices/n1/issue", "fis", "ok", "same", nil, 200},
		{"operador cannot issue", "POST", "/api/v1/notices/n1/issue", "op", "ok", "same", nil, 403},
		{"admin cannot issue", "POST", "/api/v1/notices/n1/issue", "adm", "ok", "same", nil, 403},
		{"anonymous cannot issue", "POST", "/api/v1/notices/n1/issue", "", "", "same", nil, 401},
		{"issue without CSRF token", "POST", "/api/v1/notices/n1/issue", "fis", "", "same", nil, 403},
		{"issue with wrong CSRF token", "POST", "/api/v1/notices/n1/issue", "fis", "bad", "same", nil, 403},
		{"issue from a foreign origin", "POST", "/api/v1/notices/n1/issue", "fis", "ok", "foreign", nil, 403},
		{"issue from a cross-site fetch", "POST", "/api/v1/notices/n1/issue", "fis", "ok", "", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"admin edits registry", "PUT", "/api/v1/registry", "adm", "ok", "same", nil, 200},
		{"fiscal cannot edit registry", "PUT", "/api/v1/registry", "fis", "ok", "same", nil, 403},
		{"everyone reads sensors", "GET", "/api/v1/sensors", "op", "", "", nil, 200},
		{"GET needs no CSRF token even cross-site", "GET", "/api/v1/sensors", "fis", "", "foreign", nil, 200},
		{"anonymous cannot read", "GET", "/api/v1/sensors", "", "", "", nil, 401},
		{"codes need a login", "GET", "/api/v1/codes", "", "", "", nil, 401},
		{"codes list", "GET", "/api/v1/codes", "op", "", "", nil, 200},
		{"one code", "GET", "/api/v1/codes/lapa", "op", "", "", nil, 200},
		{"unknown code", "GET", "/api/v1/codes/atlantida", "op", "", "", nil, 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cookie, csrf, origin string
			if tc.user != "" {
				cookie = sess[tc.user][0]
				switch tc.csrf {
				case "ok":
					csrf = sess[tc.user][1]
				case "bad":
					csrf = strings.Repeat("A", len(sess[tc.user][1]))
				}
			}
			switch tc.origin {
			case "same":
				origin = f.srv.URL
			case "foreign":
				origin = "https://evil.example"
			}
			resp, m := f.do(t, tc.method, tc.path, "", cookie, csrf, origin, tc.extra...)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d (%v)", resp.StatusCode, tc.want, m)
			}
			if resp.StatusCode >= 400 {
				if e, _ := m["erro"].(string); e == "" {
					t.Fatalf("no pt-BR error message: %v", m)
				}
			}
		})
	}
}

func TestCodesView(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{})
	cookie, _ := f.login(t, "op")
	req, _ := http.NewRequest("GET", f.srv.URL+"/api/v1/codes/lapa", nil)
	req.Header.Set("Cookie", CookieName+"="+cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v CodeView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v.ID != "lapa" || len(v.Limits) == 0 || v.Notice == "" || !strings.Contains(v.Schedule, "Limites de nível") {
		t.Fatalf("view %+v", v.CodeSummary)
	}
	for _, l := range v.Limits {
		if l.LimitDB == nil || l.Article == "" || l.Quote == "" {
			t.Errorf("limit rule %s lacks limit, article or quote", l.ID)
		}
	}
}

func TestOrigins(t *testing.T) {
	o, err := NewOrigins("https://painel.lapa.pr.gov.br", "http://10.0.0.5:8080/")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"painel.lapa", "ftp://x", "https://x/path", "https://"} {
		if _, err := NewOrigins(bad); err == nil {
			t.Errorf("NewOrigins(%q) accepted", bad)
		}
	}
	tests := []struct {
		origin, host string
		want         bool
	}{
		{"https://painel.lapa.pr.gov.br", "127.0.0.1:8080", true},
		{"HTTPS://PAINEL.LAPA.PR.GOV.BR", "127.0.0.1:8080", true},
		{"http://10.0.0.5:8080", "x", true},
		{"http://painel.lapa.pr.gov.br", "x", false},
		{"http://localhost:8080", "localhost:8080", true},
		{"http://localhost:8081", "localhost:8080", false},
		{"", "localhost:8080", false},
		{"null", "localhost:8080", false},
		{"http://evil.example", "localhost:8080", false},
	}
	for _, tc := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := o.Allowed(r); got != tc.want {
			t.Errorf("Allowed(origin %q, host %q) = %v, want %v", tc.origin, tc.host, got, tc.want)
		}
	}
}

// FuzzOrigins: the Origin header is outside input.
func FuzzOrigins(f *testing.F) {
	for _, s := range []string{"http://localhost:8080", "null", "", "http://[::1", "https://a.b:99999"} {
		f.Add(s, "localhost:8080")
	}
	o, _ := NewOrigins("https://painel.example")
	f.Fuzz(func(t *testing.T, origin, host string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		r.Header.Set("Origin", origin)
		if o.Allowed(r) && origin == "" {
			t.Fatal("empty origin allowed")
		}
	})
}

// loginServer is Auth alone on a real loopback listener, with a settable
// clock; clients pick their source address with from.
type loginServer struct {
	srv   *httptest.Server
	clock *clock
	auth  *Auth
}

// newLoginServer starts it; tweak adjusts the Auth before it serves.
func newLoginServer(t *testing.T, store UserStore, opts AuthOptions, log *slog.Logger, tweak ...func(*Auth)) *loginServer {
	t.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clk := &clock{t: time.Now().UTC().Truncate(time.Second)}
	opts.Now = clk.Now
	a := NewAuth(store, opts, log)
	for _, f := range tweak {
		f(a)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &loginServer{srv: srv, clock: clk, auth: a}
}

// from returns a client whose connections leave from ip (any 127.0.0.0/8
// address works on Linux's loopback).
func from(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 100}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// post logs in as user with pw; hdr adds header pairs.
func (s *loginServer) post(t *testing.T, c *http.Client, user, pw string, hdr ...string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.srv.URL+"/api/v1/login", strings.NewReader(`{"user":"`+user+`","password":"`+pw+`"}`))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Error(err)
		return &http.Response{StatusCode: -1, Header: http.Header{}}, nil
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp, m
}

func testUsers(t *testing.T, opts users.Options) *usersdb.Store {
	t.Helper()
	if opts.Params == (users.Params{}) {
		opts.Params = users.Params{Time: 1, MemKiB: 64, Threads: 1}
	}
	st, err := usersdb.OpenDir(context.Background(), t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Add(context.Background(), "fis", users.Fiscal, testPassword, time.Now()); err != nil {
		t.Fatal(err)
	}
	return st
}

// gatedStore holds every password check until open is closed, counting them.
type gatedStore struct {
	UserStore
	checks atomic.Int64
	open   chan struct{}
}

func (g *gatedStore) Authenticate(ctx context.Context, name, pw string) (users.User, error) {
	g.checks.Add(1)
	<-g.open
	return g.UserStore.Authenticate(ctx, name, pw)
}

// TestLoginSimultaneousGuesses is the attack of guesses sent at once: 30
// wrong passwords for one user from one address, all in flight together,
// with 5 attempts allowed. Every check reserves its place before hashing,
// so 5 passwords are checked and 25 refused with 429, however the requests
// interleave (a limiter that counts only after hashing checks all 30).
func TestLoginSimultaneousGuesses(t *testing.T) {
	const guesses, limit = 30, 5
	g := &gatedStore{UserStore: testUsers(t, users.Options{}), open: make(chan struct{})}
	// The held guesses resolve before any waiter gives up.
	s := newLoginServer(t, g, AuthOptions{LoginAttempts: limit}, nil, func(a *Auth) { a.lim.PendingWait = time.Minute })
	c := from(t, "127.0.0.2")
	codes := make(chan int, guesses)
	var wg sync.WaitGroup
	for i := 0; i < guesses; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := s.post(t, c, "fis", fmt.Sprintf("palpite-%02d", i))
			codes <- resp.StatusCode
		}()
	}
	// Every guess is being checked (held in the store), waiting for
	// those to end, or answered.
	for deadline := time.Now().Add(30 * time.Second); int(g.checks.Load()+s.auth.lim.Waiting())+len(codes) < guesses; {
		if time.Now().After(deadline) {
			close(g.open)
			wg.Wait()
			t.Fatalf("after 30 s: %d checked, %d answered of %d", g.checks.Load(), len(codes), guesses)
		}
		time.Sleep(5 * time.Millisecond)
	}
	checked := g.checks.Load()
	close(g.open)
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	t.Logf("%d simultaneous guesses, limit %d: %d checked, answers %v", guesses, limit, checked, count)
	if checked != limit || count[401] != limit || count[429] != guesses-limit {
		t.Fatalf("%d of %d guesses checked (answers %v); want %d checked, %d refused with 429", checked, guesses, count, limit, guesses-limit)
	}
}

// TestLoginTogetherFromOneAddress: colleagues behind one NAT address
// logging in at the same moment, more of them than the free attempts, all
// get in: those held back by checks still running wait for them (right
// passwords give their places back) instead of getting 429.
func TestLoginTogetherFromOneAddress(t *testing.T) {
	const people, limit = 10, 5
	g := &gatedStore{UserStore: testUsers(t, users.Options{}), open: make(chan struct{})}
	s := newLoginServer(t, g, AuthOptions{LoginAttempts: limit}, nil, func(a *Auth) { a.lim.PendingWait = time.Minute })
	c := from(t, "127.0.0.6")
	codes := make(chan int, people)
	var wg sync.WaitGroup
	for i := 0; i < people; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := s.post(t, c, "fis", testPassword)
			codes <- resp.StatusCode
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); g.checks.Load() < limit || s.auth.lim.Waiting() < people-limit; {
		if time.Now().After(deadline) {
			close(g.open)
			wg.Wait()
			t.Fatalf("after 30 s: %d checked, %d waiting", g.checks.Load(), s.auth.lim.Waiting())
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(g.open)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != 200 {
			t.Errorf("a login of the group: %d, want 200", code)
		}
	}
}

// TestLoginLockoutFromAnotherAddress is the lock-out attack: an attacker
// guessing a user's password as fast as the limiter lets it for a whole
// window neither locks the user out (the user logs in from another address
// meanwhile) nor gets more than a handful of guesses. Many attacking
// addresses together do slow the user's name down, with a wait that ends,
// never a lock.
func TestLoginLockoutFromAnotherAddress(t *testing.T) {
	const window = 15 * time.Minute
	s := newLoginServer(t, testUsers(t, users.Options{}), AuthOptions{LoginAttempts: 5, LoginWindow: window, LoginBackoff: time.Second}, nil)
	attacker, user := from(t, "127.0.0.2"), from(t, "127.0.0.3")

	// One attacker, patient: it waits whatever Retry-After says.
	guesses, waits, start := 0, 0, s.clock.Now()
	for s.clock.Now().Sub(start) < window {
		resp, _ := s.post(t, attacker, "fis", fmt.Sprintf("palpite-%d", guesses))
		switch resp.StatusCode {
		case 401:
			guesses++
		case 429:
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err != nil || secs < 1 {
				t.Fatalf("429 with Retry-After %q", resp.Header.Get("Retry-After"))
			}
			s.clock.Add(time.Duration(secs) * time.Second)
			waits++
		default:
			t.Fatalf("attacker got %d", resp.StatusCode)
		}
	}
	t.Logf("one address guessing for %v: %d passwords checked, %d waits", window, guesses, waits)
	if guesses > 5+11 || waits < guesses-5 {
		t.Fatalf("one address had %d passwords checked in one window, with %d waits", guesses, waits)
	}
	if resp, m := s.post(t, user, "fis", testPassword); resp.StatusCode != 200 {
		t.Fatalf("the user, from another address, during the attack: %d %v", resp.StatusCode, m)
	}

	// Five addresses spending their free attempts on one name: the name
	// waits (after 4 × 5 failures), also for the user, then admits them.
	for i := 0; i < 5; i++ {
		c := from(t, fmt.Sprintf("127.0.1.%d", i+1))
		for j := 0; j < 5; j++ {
			s.post(t, c, "fis", "palpite")
		}
	}
	resp, _ := s.post(t, from(t, "127.0.2.1"), "fis", testPassword)
	if resp.StatusCode != 429 {
		t.Fatalf("the name under a spread attack: %d, want 429", resp.StatusCode)
	}
	secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if secs < 1 || time.Duration(secs)*time.Second > window {
		t.Fatalf("Retry-After %q: want a wait shorter than the window", resp.Header.Get("Retry-After"))
	}
	s.clock.Add(time.Duration(secs) * time.Second)
	if resp, m := s.post(t, user, "fis", testPassword); resp.StatusCode != 200 {
		t.Fatalf("the user after the wait: %d %v", resp.StatusCode, m)
	}
}

// TestLoginBehindTrustedProxy: behind a configured proxy each forwarded
// client has its own record; an address that is not a configured proxy
// cannot pick its record with X-Forwarded-For.
func TestLoginBehindTrustedProxy(t *testing.T) {
	proxies, err := NewProxies("127.0.0.9")
	if err != nil {
		t.Fatal(err)
	}
	s := newLoginServer(t, testUsers(t, users.Options{}), AuthOptions{LoginAttempts: 2, TrustedProxies: proxies}, nil)
	proxy, direct := from(t, "127.0.0.9"), from(t, "127.0.0.10")
	for i := 0; i < 2; i++ {
		s.post(t, proxy, "nobody", "x", "X-Forwarded-For", "203.0.113.7")
		s.post(t, direct, "nobody", "x", "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i))
	}
	for _, tc := range []struct {
		name string
		c    *http.Client
		xff  string
		want int
	}{
		{"the throttled client via the proxy", proxy, "203.0.113.7", 429},
		{"the same client forging a longer chain", proxy, "10.1.1.1, 203.0.113.7", 429},
		{"another client via the proxy", proxy, "203.0.113.8", 200},
		{"the direct address, forging another client", direct, "192.0.2.44", 429},
	} {
		if resp, _ := s.post(t, tc.c, "fis", testPassword, "X-Forwarded-For", tc.xff); resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}

func TestClientIP(t *testing.T) {
	proxies, err := NewProxies("10.0.0.1", "10.0.1.0/24", "::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"direct", "192.0.2.1:5000", nil, "192.0.2.1"},
		{"direct, header ignored", "192.0.2.1:5000", []string{"203.0.113.9"}, "192.0.2.1"},
		{"proxy without header", "10.0.0.1:5000", nil, "10.0.0.1"},
		{"proxy", "10.0.0.1:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"chain of trusted proxies", "10.0.0.1:5000", []string{"203.0.113.9, 10.0.1.7"}, "203.0.113.9"},
		{"client's forged entries left of the real one", "10.0.0.1:5000", []string{"1.2.3.4, 203.0.113.9"}, "203.0.113.9"},
		{"several headers", "10.0.0.1:5000", []string{"1.2.3.4", "203.0.113.9"}, "203.0.113.9"},
		{"garbage from the proxy", "10.0.0.1:5000", []string{"203.0.113.9, banana"}, "10.0.0.1"},
		{"garbage behind a trusted hop", "10.0.0.1:5000", []string{"banana, 10.0.1.7"}, "10.0.1.7"},
		{"IPv6 proxy", "[::1]:5000", []string{"2001:db8::5"}, "2001:db8::5"},
		{"mapped IPv4", "[::ffff:192.0.2.1]:5000", nil, "192.0.2.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := proxies.ClientIP(r).String(); got != tc.want {
				t.Fatalf("ClientIP = %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := NewProxies("proxy.example"); err == nil {
		t.Fatal("a host name accepted as a proxy")
	}
	if got := SourceOf(netip.MustParseAddr("2001:db8:1:2:3:4:5:6")).String(); got != "2001:db8:1:2::/64" {
		t.Fatalf("IPv6 source %s, want its /64", got)
	}
}

// FuzzClientIP: X-Forwarded-For is outside input; the answer is the
// connection's address or one written in the header, never a proxy's
// claim about an untrusted hop.
func FuzzClientIP(f *testing.F) {
	for _, s := range []string{"203.0.113.9", "1.2.3.4, 10.0.0.1", ", ,", "::1, banana", "[::1]", "10.0.0.1,10.0.0.1,10.0.0.1"} {
		f.Add("10.0.0.1:80", s)
	}
	f.Add("192.0.2.1:80", "203.0.113.9")
	proxies, _ := NewProxies("10.0.0.0/8")
	f.Fuzz(func(t *testing.T, remote, xff string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", xff)
		got := proxies.ClientIP(r)
		direct := remoteAddr(remote)
		if !proxies.Trusted(direct) && got != direct {
			t.Fatalf("untrusted %q: client %v from its header %q", remote, got, xff)
		}
		if got.IsValid() && got != direct && !strings.Contains(xff, got.String()) && !strings.Contains(strings.ToLower(xff), got.String()) {
			// Parsing normalises (leading zeros, case); the address must
			// at least parse from one of the header's entries.
			found := false
			for _, p := range strings.Split(xff, ",") {
				if a, err := netip.ParseAddr(strings.TrimSpace(p)); err == nil && a.Unmap() == got {
					found = true
				}
			}
			if !found {
				t.Fatalf("client %v is neither %q nor in %q", got, remote, xff)
			}
		}
	})
}

// TestLoginLogLines: a right password is logged as accepted, a wrong one
// as refused, each with the client's address.
func TestLoginLogLines(t *testing.T) {
	var buf testBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	s := newLoginServer(t, testUsers(t, users.Options{}), AuthOptions{}, log)
	c := from(t, "127.0.0.4")
	s.post(t, c, "fis", testPassword)
	s.post(t, c, "fis", "senha-errada")
	out := buf.String()
	if !strings.Contains(out, `msg="painel: login aceito" user=fis role=fiscal remote=127.0.0.4`) ||
		!strings.Contains(out, `msg="painel: login recusado" user=fis remote=127.0.0.4`) || strings.Contains(out, "falha") {
		t.Fatalf("log:\n%s", out)
	}
}

// testBuffer is a bytes.Buffer safe for the server's goroutines.
type testBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *testBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}
func (b *testBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// TestLoginBurstMemory is the memory attack: 100 logins at once, each from
// its own address and for its own name (so the limiter lets all of them
// through) and each an
// argon2id check of 64 MiB (the production cost). The store runs at most
// users.DefaultMaxHashes() checks at once, lets a few more wait, and
// refuses the rest with 503 and Retry-After, so the process's peak
// resident memory grows by a few hashes' worth, not 100 (6.7 GB before the
// bound). Measured as VmHWM in /proc/self/status after resetting it.
func TestLoginBurstMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("hashes with the production cost (64 MiB each)")
	}
	const logins = 100
	st := testUsers(t, users.Options{Params: users.DefaultParams})
	s := newLoginServer(t, st, AuthOptions{}, nil)
	clients := make([]*http.Client, logins)
	for i := range clients {
		clients[i] = from(t, fmt.Sprintf("127.0.3.%d", i+1))
		// Open each connection first, so that the logins start together.
		if resp, err := clients[i].Get(s.srv.URL + "/api/v1/me"); err == nil {
			resp.Body.Close()
		}
	}
	base, ok := resetPeakRSS(t)
	if !ok {
		t.Skip("cannot reset the peak RSS (/proc/self/clear_refs)")
	}
	start := make(chan struct{})
	type answer struct {
		code  int
		retry string
		msg   any
	}
	answers := make(chan answer, logins)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// A name of its own too (unknown names cost the same hash).
			resp, m := s.post(t, clients[i], fmt.Sprintf("usuario-%03d", i), "palpite")
			answers <- answer{resp.StatusCode, resp.Header.Get("Retry-After"), m["erro"]}
		}()
	}
	close(start)
	wg.Wait()
	close(answers)
	peak := peakRSS(t)
	count := map[int]int{}
	for a := range answers {
		count[a.code]++
		switch a.code {
		case 401:
		case 503:
			if a.retry == "" || !strings.Contains(fmt.Sprint(a.msg), "servidor ocupado") {
				t.Errorf("503 with Retry-After %q and message %v", a.retry, a.msg)
			}
		default:
			t.Errorf("answer %d (%v)", a.code, a.msg)
		}
	}
	grew := peak - base
	perHash := int64(users.DefaultParams.MemKiB) << 10
	t.Logf("%d logins at once, %d hashing slots: answers %v; peak RSS %d MiB → %d MiB (+%d MiB; one hash is %d MiB)",
		logins, users.DefaultMaxHashes(), count, base>>20, peak>>20, grew>>20, perHash>>20)
	if count[503] == 0 {
		t.Errorf("no login was refused as busy: the hashing is not bounded")
	}
	// Slots, plus garbage of finished hashes the collector has not yet
	// reused (plus the race detector's shadow): well under 100 hashes.
	limit := int64(users.DefaultMaxHashes()+4) * 2 * perHash
	if raceEnabled {
		limit *= 2
	}
	if grew > limit {
		t.Fatalf("peak RSS grew by %d MiB during the burst, over %d MiB", grew>>20, limit>>20)
	}
}

// resetPeakRSS resets VmHWM to the current RSS and returns it.
func resetPeakRSS(t *testing.T) (int64, bool) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, false
	}
	return peakRSS(t), true
}

// peakRSS is VmHWM from /proc/self/status, in bytes.
func peakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q", rest)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
