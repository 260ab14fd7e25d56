package central

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
)

// TestNotificationsWired (whole service): a Lapa night exceedance reaches
// the fiscal on duty by e-mail (a real SMTP server), the plantão is in the
// API, the fiscal's acknowledgement in the dashboard reaches the
// notifications (history), and /metrics counts the delivery.
func TestNotificationsWired(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	mp := testenv.StartMailpit(t, testenv.MailpitOpts{})
	dir := t.TempDir()
	us, err := usersdb.OpenDir(context.Background(), dir, users.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := us.Add(context.Background(), "fiscal-lapa", users.Fiscal, testPassword, time.Now()); err != nil {
		t.Fatal(err)
	}
	us.Close()
	all := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	set := notify.Settings{PublicURL: "https://sossego.lapa.pr.gov.br",
		Email:          notify.EmailSettings{Enabled: true, Host: mp.Host, Port: mp.Port, Security: "none", From: "sossego@lapa.pr.gov.br"},
		Municipalities: []notify.Municipality{{ID: "lapa", Weekly: []notify.Shift{{Days: all, From: "00:00", To: "24:00", User: "fiscal-lapa"}}}},
		Contacts:       []notify.Contact{{User: "fiscal-lapa", Email: "fiscal-lapa@lapa.pr.gov.br"}}}
	a := startCentral(t, Options{DataDir: dir, NotifyDefaults: &set})
	st, err := loadgen.Run(context.Background(), loadgen.Options{URL: a.MQTT, Gateways: []loadgen.Gateway{lapaBar(t)},
		Batches: 400, RecordsPerBatch: 1, Start: lastNight(), Window: 200, Level: func(_, _ string, _ time.Time) float64 { return 75 }})
	if err != nil || st.Acked != 400 {
		t.Fatalf("loadgen: %v, acked %d", err, st.Acked)
	}
	msg := mp.WaitMessages(t, 1, 30*time.Second)[0]
	if msg.To[0] != "fiscal-lapa@lapa.pr.gov.br" || !strings.Contains(msg.Subject, "lapa-bar-01") ||
		!strings.Contains(msg.Text, "Rua XV de Novembro, 100") || !strings.Contains(msg.Text, "Art. 96") ||
		!strings.Contains(msg.Text, "https://sossego.lapa.pr.gov.br/#/alertas/lapa-bar-01") {
		t.Fatalf("message %+v", msg)
	}
	base := "http://" + a.HTTP + "/api/v1"
	var duty struct {
		OnDuty []struct {
			Municipality string   `json:"municipality"`
			Users        []string `json:"users"`
		} `json:"on_duty"`
	}
	if code := getJSON(t, base+"/notify/on-duty", &duty); code != 200 || len(duty.OnDuty) != 2 || duty.OnDuty[1].Users[0] != "fiscal-lapa" {
		t.Fatalf("on duty: %d %+v", code, duty)
	}
	var al struct {
		Alerts []struct {
			ID string `json:"id"`
		} `json:"alerts"`
	}
	getJSON(t, base+"/alerts?sensor=lapa-bar-01&state=firing", &al)
	if len(al.Alerts) != 1 {
		t.Fatalf("alerts %+v", al)
	}
	id := al.Alerts[0].ID
	// The fiscal acknowledges in the dashboard.
	jar, _ := cookiejar.New(nil)
	// A bound, like the other central tests' clients: a login hashes with
	// 64 MiB of argon2id, which takes seconds under -race on a busy machine.
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	post := func(path, body, csrf string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+a.HTTP+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://"+a.HTTP)
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	code, me := post("/api/v1/login", `{"user":"fiscal-lapa","password":"`+testPassword+`"}`, "")
	if code != 200 {
		t.Fatalf("login: %d %v", code, me)
	}
	if code, body := post("/api/v1/alerts/"+url.PathEscape(id)+"/ack", `{}`, me["csrf_token"].(string)); code != 200 {
		t.Fatalf("ack: %d %v", code, body)
	}
	var hist struct {
		History []struct {
			Kind string `json:"kind"`
			User string `json:"user"`
		} `json:"history"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for acked := false; !acked; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no acknowledgement in the notification history: %+v", hist)
		}
		getJSON(t, base+"/alerts/"+url.PathEscape(id)+"/notifications", &hist)
		for _, e := range hist.History {
			acked = acked || (e.Kind == "acked" && e.User == "fiscal-lapa")
		}
	}
	resp, err := http.Get("http://" + a.HTTP + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `sossego_notify_deliveries_total{outcome="sent",receiver="email"} 1`) {
		t.Errorf("metrics lack the sent e-mail:\n%s", grepLines(string(b), "sossego_notify"))
	}
}
