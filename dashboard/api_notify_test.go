package dashboard

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notify"
	inotify "github.com/sossego/sossego/internal/notify"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/users"
)

// notifyFixture mounts the notification routes, backed by the real
// notification service, on the auth fixture.
func notifyFixture(t *testing.T) (*fixture, *inotify.Service) {
	t.Helper()
	f := newFixture(t, HubOptions{}, AuthOptions{LoginAttempts: 100})
	ctx := context.Background()
	userRefs := func(ctx context.Context) ([]notify.UserRef, error) {
		list, err := f.store.List(ctx)
		var out []notify.UserRef
		for _, u := range list {
			out = append(out, notify.UserRef{Name: u.Name, Role: string(u.Role), Disabled: u.Disabled})
		}
		return out, err
	}
	svc, err := inotify.Open(ctx, inotify.Options{Path: filepath.Join(t.TempDir(), inotify.FileName), Users: userRefs,
		Now: f.clock.Now, Municipalities: func() []string { return []string{"conceicao-de-macabu", "lapa"} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	NewNotifyAPI(NotifyOptions{Settings: svc, Silences: svc, Push: svc, Registry: registry.NewLive(reg), Now: f.clock.Now,
		Users: func(ctx context.Context) ([]users.User, error) { return f.store.List(ctx) }}).Register(f.mux, f.auth)
	return f, svc
}

const validSettings = `{"public_url":"https://sossego.lapa.pr.gov.br",
 "email":{"enabled":true,"host":"smtp.lapa.pr.gov.br","username":"sossego","password":"senha-smtp","from":"sossego@lapa.pr.gov.br"},
 "webhooks":[{"name":"zap","url":"https://zap.lapa.pr.gov.br/hook","secret":"segredo-do-webhook-123"}],
 "municipalities":[{"id":"lapa","coordinator":"adm","weekly":[{"days":["mon","tue","wed","thu","fri","sat","sun"],"from":"00:00","to":"24:00","user":"fis"}]}],
 "contacts":[{"user":"fis","email":"fis@lapa.pr.gov.br","phone":"+5541999990000"}]}`

func TestNotifySettingsAPI(t *testing.T) {
	f, _ := notifyFixture(t)
	admC, admX := f.login(t, "adm")
	fisC, fisX := f.login(t, "fis")
	opC, _ := f.login(t, "op")
	tests := []struct {
		name         string
		method, path string
		body         string
		cookie, csrf string
		want         int
		wantErr      string
	}{
		{"operador cannot read settings", "GET", "/api/v1/notify/settings", "", opC, "", 403, "não permite"},
		{"fiscal cannot change settings", "PUT", "/api/v1/notify/settings", validSettings, fisC, fisX, 403, "não permite"},
		{"no CSRF token", "PUT", "/api/v1/notify/settings", validSettings, admC, "", 403, "CSRF"},
		{"invalid address", "PUT", "/api/v1/notify/settings", strings.Replace(validSettings, "fis@lapa.pr.gov.br", "fis-at-lapa", 1), admC, admX, 400,
			`e-mail "fis-at-lapa" inválido`},
		{"unknown user in a schedule", "PUT", "/api/v1/notify/settings", strings.Replace(validSettings, `"user":"fis"}]`, `"user":"joana"}]`, 1), admC, admX, 400,
			`usuário "joana" desconhecido`},
		{"operador in a schedule", "PUT", "/api/v1/notify/settings", strings.Replace(validSettings, `"user":"fis"}]`, `"user":"op"}]`, 1), admC, admX, 400,
			"a escala é de fiscais"},
		{"overlapping overrides", "PUT", "/api/v1/notify/settings", strings.Replace(validSettings, `"coordinator":"adm",`,
			`"coordinator":"adm","overrides":[{"date":"2026-12-24","user":"fis"},{"date":"2026-12-24","from":"20:00","user":"fis"}],`, 1), admC, admX, 400,
			"exceções sobrepostas em 2026-12-24"},
		{"unknown field", "PUT", "/api/v1/notify/settings", `{"emial":{}}`, admC, admX, 400, `campo desconhecido "emial": confira o nome`},
		{"not JSON", "PUT", "/api/v1/notify/settings", `{`, admC, admX, 400, "JSON inválido"},
		{"valid", "PUT", "/api/v1/notify/settings", validSettings, admC, admX, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, tc.method, tc.path, tc.body, tc.cookie, tc.csrf, f.srv.URL)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %v", resp.StatusCode, tc.want, body)
			}
			if tc.wantErr != "" && !strings.Contains(body["erro"].(string), tc.wantErr) {
				t.Fatalf("erro %q lacks %q", body["erro"], tc.wantErr)
			}
		})
	}
	// The secrets never come back, and an update without them keeps them.
	resp, body := f.do(t, "GET", "/api/v1/notify/settings", "", admC, "", "")
	raw, _ := json.Marshal(body)
	if resp.StatusCode != 200 || strings.Contains(string(raw), "senha-smtp") || strings.Contains(string(raw), "segredo-do-webhook") {
		t.Fatalf("settings: %d %s", resp.StatusCode, raw)
	}
	set := body["settings"].(map[string]any)
	if set["email"].(map[string]any)["password_set"] != true || set["webhooks"].([]any)[0].(map[string]any)["secret_set"] != true {
		t.Fatalf("secret flags: %s", raw)
	}
	if len(body["users"].([]any)) != 3 {
		t.Fatalf("users: %v", body["users"])
	}
	back, _ := json.Marshal(set)
	if resp, body := f.do(t, "PUT", "/api/v1/notify/settings", string(back), admC, admX, f.srv.URL); resp.StatusCode != 200 {
		t.Fatalf("re-save without secrets: %d %v", resp.StatusCode, body)
	}
	// On duty: every role sees it.
	resp, body = f.do(t, "GET", "/api/v1/notify/on-duty", "", opC, "", "")
	duty := body["on_duty"].([]any)
	if resp.StatusCode != 200 || len(duty) != 2 {
		t.Fatalf("on duty: %d %v", resp.StatusCode, body)
	}
	lapa := duty[1].(map[string]any)
	if lapa["municipality"] != "lapa" || lapa["users"].([]any)[0] != "fis" || lapa["coordinator"] != "adm" {
		t.Fatalf("lapa on duty: %v", lapa)
	}
	if m := duty[0].(map[string]any); m["municipality"] != "conceicao-de-macabu" || len(m["users"].([]any)) != 0 {
		t.Fatalf("a municipality without a schedule: %v", m)
	}
	// Test button: bad receiver name is refused before anything is sent.
	if resp, body := f.do(t, "POST", "/api/v1/notify/test", `{"receiver":"fax","user":"fis"}`, admC, admX, f.srv.URL); resp.StatusCode != 400 {
		t.Fatalf("test fax: %d %v", resp.StatusCode, body)
	}
}

func TestNotifySilencesAPI(t *testing.T) {
	f, _ := notifyFixture(t)
	fisC, fisX := f.login(t, "fis")
	admC, admX := f.login(t, "adm")
	opC, opX := f.login(t, "op")
	later := f.clock.Now().Add(3 * time.Hour).Format(time.RFC3339)
	tests := []struct {
		name         string
		body         string
		cookie, csrf string
		want         int
		wantErr      string
	}{
		{"admin may not silence", `{"sensor":"lapa-bar-01","minutes":60,"reason":"evento licenciado"}`, admC, admX, 403, "não permite"},
		{"unknown sensor", `{"sensor":"lapa-xx","minutes":60,"reason":"evento licenciado"}`, fisC, fisX, 400, `sensor "lapa-xx" não está cadastrado`},
		{"no reason", `{"sensor":"lapa-bar-01","minutes":60}`, fisC, fisX, 400, "informe o motivo"},
		{"both ends and minutes", `{"sensor":"lapa-bar-01","minutes":60,"ends":"` + later + `","reason":"evento licenciado"}`, fisC, fisX, 400, "não os dois"},
		{"too long", `{"sensor":"lapa-bar-01","minutes":100000,"reason":"evento licenciado"}`, fisC, fisX, 400, "de 1 minuto a 31 dias"},
		{"unknown establishment", `{"establishment":"Bar Fantasma","minutes":60,"reason":"evento licenciado"}`, fisC, fisX, 400, "não está cadastrado"},
		{"fiscal silences a sensor", `{"sensor":"lapa-bar-01","ends":"` + later + `","reason":"evento licenciado nº 12/2026"}`, fisC, fisX, 201, ""},
		{"operador silences an establishment", `{"establishment":"Bar Exemplo da Lapa Ltda (fictício)","minutes":90,"reason":"alvará de obra 7/2026"}`, opC, opX, 201, ""},
	}
	var id string
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, "POST", "/api/v1/notify/silences", tc.body, tc.cookie, tc.csrf, f.srv.URL)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %v", resp.StatusCode, tc.want, body)
			}
			if tc.wantErr != "" && !strings.Contains(body["erro"].(string), tc.wantErr) {
				t.Fatalf("erro %q lacks %q", body["erro"], tc.wantErr)
			}
			if tc.want == 201 && id == "" {
				id = body["id"].(string)
				if body["created_by"] != "fis" || body["municipality"] != "lapa" {
					t.Fatalf("silence %v", body)
				}
			}
		})
	}
	if resp, body := f.do(t, "POST", "/api/v1/notify/silences/"+id+"/end", "", opC, opX, f.srv.URL); resp.StatusCode != 200 || body["ended_by"] != "op" {
		t.Fatalf("end: %d %v", resp.StatusCode, body)
	}
	if resp, _ := f.do(t, "POST", "/api/v1/notify/silences/sil-nada/end", "", opC, opX, f.srv.URL); resp.StatusCode != 404 {
		t.Fatalf("end unknown: %d", resp.StatusCode)
	}
	resp, body := f.do(t, "GET", "/api/v1/notify/silences", "", admC, "", "")
	if resp.StatusCode != 200 || len(body["silences"].([]any)) != 2 || len(body["audit"].([]any)) != 3 {
		t.Fatalf("silences: %d %v", resp.StatusCode, body)
	}
	// history and push
	if resp, body := f.do(t, "GET", "/api/v1/alerts/lapa-bar-01%2Fx/notifications", "", opC, "", ""); resp.StatusCode != 200 || body["alert_id"] != "lapa-bar-01/x" {
		t.Fatalf("history: %d %v", resp.StatusCode, body)
	}
	if resp, body := f.do(t, "GET", "/api/v1/notify/push", "", opC, "", ""); resp.StatusCode != 200 || body["public_key"] == "" || body["enabled"] != false {
		t.Fatalf("push: %d %v", resp.StatusCode, body)
	}
	if resp, body := f.do(t, "POST", "/api/v1/notify/push/subscriptions", `{"endpoint":"http://push.example/x","keys":{"p256dh":"x","auth":"y"}}`,
		opC, opX, f.srv.URL); resp.StatusCode != 400 || !strings.Contains(body["erro"].(string), "https") {
		t.Fatalf("bad subscription: %d %v", resp.StatusCode, body)
	}
}

// FuzzSilenceRequest: any body decodes to a clear answer, never a panic,
// and what is accepted is a valid silence.
func FuzzSilenceRequest(f *testing.F) {
	f.Add(`{"sensor":"lapa-bar-01","minutes":60,"reason":"evento licenciado"}`)
	f.Add(`{"establishment":"Bar","ends":"2026-12-01T00:00:00Z","reason":"x"}`)
	f.Add(`{"sensor":"","minutes":-5}`)
	reg, _ := registry.Parse(registry.DemoYAML())
	n := NewNotifyAPI(NotifyOptions{Registry: registry.NewLive(reg)})
	now := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, doc string) {
		var req SilenceRequest
		if json.Unmarshal([]byte(doc), &req) != nil {
			return
		}
		s, err := n.silenceFrom(req, now)
		if err == nil && notify.CheckSilence(s, now) != nil {
			t.Fatalf("accepted an invalid silence %+v", s)
		}
	})
}
