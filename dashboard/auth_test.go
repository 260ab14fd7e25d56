package dashboard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/users"
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

func TestLoginRateLimit(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{LoginAttempts: 3, LoginWindow: 10 * time.Minute})
	try := func(user, pw string) int {
		resp, _ := f.do(t, "POST", "/api/v1/login", `{"user":"`+user+`","password":"`+pw+`"}`, "", "", f.srv.URL)
		return resp.StatusCode
	}
	steps := []struct {
		name      string
		advance   time.Duration
		user, pw  string
		want      int
		wantRetry bool
	}{
		{"fail 1", 0, "fis", "x-errada", 401, false},
		{"fail 2", 0, "fis", "x-errada", 401, false},
		{"fail 3", time.Minute, "fis", "x-errada", 401, false},
		{"right password now refused", 0, "fis", testPassword, 429, true},
		{"another user from the same address refused", 0, "op", testPassword, 429, true},
		{"just before the first failures age out", 8*time.Minute + 59*time.Second, "fis", testPassword, 429, true},
		{"first failures aged out", time.Second, "fis", testPassword, 200, false},
	}
	for _, st := range steps {
		f.clock.Add(st.advance)
		if got := try(st.user, st.pw); got != st.want {
			t.Fatalf("%s: status %d, want %d", st.name, got, st.want)
		}
	}
	// Retry-After is set on 429.
	for i := 0; i < 3; i++ {
		f.do(t, "POST", "/api/v1/login", `{"user":"op","password":"x-errada"}`, "", "", f.srv.URL)
	}
	resp, _ := f.do(t, "POST", "/api/v1/login", `{"user":"op","password":"x-errada"}`, "", "", f.srv.URL)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

func TestLoginLimiterPerName(t *testing.T) {
	// Failures for one name from many addresses block that name only.
	l := &loginLimiter{max: 2, window: time.Minute, fails: map[string][]time.Time{}}
	now := time.Now()
	l.fail([]string{"ip:1", "user:ana"}, now)
	l.fail([]string{"ip:2", "user:ana"}, now)
	if w := l.blocked([]string{"ip:3", "user:ana"}, now); w != time.Minute {
		t.Fatalf("ana from a third address: wait %v, want 1m", w)
	}
	if w := l.blocked([]string{"ip:3", "user:bia"}, now); w != 0 {
		t.Fatalf("bia blocked %v", w)
	}
	if w := l.blocked([]string{"ip:3", "user:ana"}, now.Add(time.Minute)); w != 0 {
		t.Fatalf("after the window: %v", w)
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
		webJSON(w, 200, map[string]string{"by": s.User.Name})
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
