package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/internal/testenv"
)

func emailTo(m *testenv.Mailpit, security, user, pass string) notify.EmailSettings {
	return notify.EmailSettings{Enabled: true, Host: m.Host, Port: m.Port, Security: security, Username: user, Password: pass,
		CAFile: m.CAFile, From: "sossego@lapa.pr.gov.br"}
}

// TestEmailThroughMailpit sends a firing alert by e-mail through a real
// SMTP server: STARTTLS with authentication, implicit TLS, and a plain
// local relay.
func TestEmailThroughMailpit(t *testing.T) {
	tests := []struct {
		name     string
		opts     testenv.MailpitOpts
		security string
		user     string
	}{
		{"starttls with auth", testenv.MailpitOpts{STARTTLS: true, Users: map[string]string{"sossego": "senha-smtp-123"}}, "starttls", "sossego"},
		{"implicit tls", testenv.MailpitOpts{ImplicitTLS: true}, "tls", ""},
		{"local relay without tls", testenv.MailpitOpts{}, "none", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mp := testenv.StartMailpit(t, tc.opts)
			h := start(t, "", nil, nil)
			set := baseSettings()
			pass := ""
			if tc.user != "" {
				pass = "senha-smtp-123"
			}
			set.Email = emailTo(mp, tc.security, tc.user, pass)
			h.put(set)
			ev := firing("lapa-bar-01", t0)
			if err := h.svc.Notify(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			msgs := mp.WaitMessages(t, 1, 20*time.Second)
			m := msgs[0]
			if m.To[0] != "fiscal-b@lapa.pr.gov.br" || m.Subject != "[Sossego] Alerta em lapa: lapa-bar-01 a 72,4 dB(A), limite 60,0 dB(A)" {
				t.Fatalf("to %v subject %q", m.To, m.Subject)
			}
			for _, want := range []string{"Rua XV de Novembro, 100, Centro, Lapa - PR", "Bar do Tropeiro Ltda", "Art. 96",
				"72,4 dB(A) (LAeq) para limite de 60,0 dB(A)", "https://sossego.lapa.pr.gov.br/#/alertas/lapa-bar-01%2F"} {
				if !strings.Contains(m.Text, want) {
					t.Errorf("text lacks %q:\n%s", want, m.Text)
				}
			}
			if !strings.Contains(m.HTML, "Bar do Tropeiro Ltda") {
				t.Errorf("html: %s", m.HTML)
			}
			hs := h.waitHistory(ev.Alert.ID, notify.EntrySent, "fiscal-b")
			if !strings.Contains(dump(hs), "notified fiscal-b") || !strings.Contains(dump(hs), "enqueued fiscal-b email") {
				t.Errorf("history:\n%s", dump(hs))
			}
			if n := h.counter("sossego_notify_deliveries_total", "receiver", "email", "outcome", "sent"); n != 1 {
				t.Errorf("sent counter %v", n)
			}
		})
	}
}

// TestSMTPWrongPasswordFailsVisibly: the SMTP server refuses the login;
// the delivery is retried and the failure is in the history and metrics,
// without the password anywhere.
func TestSMTPWrongPasswordFailsVisibly(t *testing.T) {
	mp := testenv.StartMailpit(t, testenv.MailpitOpts{STARTTLS: true, Users: map[string]string{"sossego": "senha-certa-123"}})
	var logs strings.Builder
	var lmu sync.Mutex
	h := start(t, "", nil, func(o *Options) {
		o.Log = newTestLogger(&logs, &lmu)
		o.MaxAttempts = 2
	})
	set := baseSettings()
	set.Email = emailTo(mp, "starttls", "sossego", "senha-errada-999")
	h.put(set)
	ev := firing("lapa-bar-01", t0)
	h.svc.Notify(context.Background(), ev)
	h.waitHistory(ev.Alert.ID, notify.EntryRetry, "fiscal-b")
	h.clock.Advance(time.Minute)
	hs := h.waitHistory(ev.Alert.ID, notify.EntryFailed, "fiscal-b")
	if strings.Contains(dump(hs), "senha-errada") {
		t.Fatal("the password is in the history")
	}
	lmu.Lock()
	defer lmu.Unlock()
	if strings.Contains(logs.String(), "senha-errada") {
		t.Fatal("the password is in the log")
	}
	if h.counter("sossego_notify_deliveries_total", "receiver", "email", "outcome", "failed") != 1 {
		t.Fatal("failed counter not incremented")
	}
}

// TestUnreachableSMTPRetriesWithBackoff: nothing listens; attempts are
// spaced 1 s, 2 s, 4 s … (injected clock) until MaxAttempts, each in the
// history and the metrics.
func TestUnreachableSMTPRetriesWithBackoff(t *testing.T) {
	port := testenv.FreePort(t) // nothing listens there
	h := start(t, "", nil, func(o *Options) { o.MaxAttempts = 4 })
	set := baseSettings()
	set.Email = notify.EmailSettings{Enabled: true, Host: "127.0.0.1", Port: port, Security: "none", From: "sossego@lapa.pr.gov.br",
		Timeout: notify.Duration(2 * time.Second)}
	h.put(set)
	ev := firing("lapa-bar-01", t0)
	h.svc.Notify(context.Background(), ev)
	var retries int
	for step, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		waitFor(t, "retry entry", func() bool {
			hs, _ := h.svc.History(context.Background(), ev.Alert.ID)
			retries = 0
			for _, e := range hs {
				if e.Kind == notify.EntryRetry {
					retries++
				}
			}
			return retries == step+1
		})
		// not due yet: no new attempt before the backoff
		h.clock.Advance(wait - time.Millisecond)
		h.settled(ReceiverEmail)
		hs, _ := h.svc.History(context.Background(), ev.Alert.ID)
		n := 0
		for _, e := range hs {
			if e.Kind == notify.EntryRetry || e.Kind == notify.EntryFailed {
				n++
			}
		}
		if n != step+1 {
			t.Fatalf("attempt before its backoff of %v:\n%s", wait, dump(hs))
		}
		h.clock.Advance(time.Millisecond)
	}
	hs := h.waitHistory(ev.Alert.ID, notify.EntryFailed, "fiscal-b")
	if !strings.Contains(dump(hs), "após 4 tentativa(s)") {
		t.Errorf("history:\n%s", dump(hs))
	}
	if got := h.counter("sossego_notify_deliveries_total", "receiver", "email", "outcome", "retry"); got != 3 {
		t.Errorf("retry counter %v, want 3", got)
	}
}

// TestWebhookSignedAndHangingReceiverDoesNotBlock: one webhook answers and
// checks the signature; another never answers. The e-mail and the good
// webhook are delivered at once; the hanging one times out and retries.
func TestWebhookSignedAndHangingReceiverDoesNotBlock(t *testing.T) {
	mp := testenv.StartMailpit(t, testenv.MailpitOpts{})
	secret := "segredo-do-webhook-123"
	clk := &clock{t: t0}
	var mu sync.Mutex
	var got []notify.WebhookPayload
	var verr []error
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		err := notify.Verify([]byte(secret), r.Header.Get(notify.HeaderTimestamp), r.Header.Get(notify.HeaderSignature), body, clk.Now(), 5*time.Minute)
		var p notify.WebhookPayload
		if jerr := json.Unmarshal(body, &p); jerr != nil {
			err = errors.Join(err, jerr)
		}
		if r.Header.Get(notify.HeaderDelivery) != p.Delivery {
			err = errors.Join(err, errors.New("delivery header differs"))
		}
		mu.Lock()
		got, verr = append(got, p), append(verr, err)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer good.Close()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	h := start(t, "", clk, nil)
	set := baseSettings()
	set.Email = emailTo(mp, "none", "", "")
	set.Webhooks = []notify.Webhook{
		{Name: "travado", URL: hang.URL + "/hook", Secret: "outro-segredo-0123456", Timeout: notify.Duration(time.Second)},
		{Name: "zap", URL: good.URL + "/sossego", Secret: secret},
	}
	h.put(set)
	ev := firing("lapa-bar-01", t0)
	h.svc.Notify(context.Background(), ev)
	mp.WaitMessages(t, 1, 20*time.Second)
	waitFor(t, "the good webhook", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 1 })
	mu.Lock()
	if verr[0] != nil {
		t.Fatalf("signature: %v", verr[0])
	}
	p := got[0]
	mu.Unlock()
	if p.Type != notify.TypeFiring || p.Recipient.Phone != "+5541999990002" || len(p.Alerts) != 1 || p.Alerts[0].Address == "" ||
		p.Alerts[0].LimitDB != 60 || p.Municipality != "lapa" {
		t.Fatalf("payload %+v", p)
	}
	hs := h.waitHistory(ev.Alert.ID, notify.EntryRetry, "fiscal-b")
	if !strings.Contains(dump(hs), "webhook travado") || !strings.Contains(dump(hs), "sem resposta em 1s") {
		t.Errorf("history:\n%s", dump(hs))
	}
}

// TestRestartLosesNothingPending: a delivery waiting for its retry and an
// input never stepped both survive the process.
func TestRestartLosesNothingPending(t *testing.T) {
	mp := testenv.StartMailpit(t, testenv.MailpitOpts{})
	mp.Stop() // the SMTP server is down
	path := filepath.Join(t.TempDir(), FileName)
	clk := &clock{t: t0}
	h := start(t, path, clk, nil)
	set := baseSettings()
	set.Email = emailTo(mp, "none", "", "")
	h.put(set)
	ev := firing("lapa-bar-01", t0)
	h.svc.Notify(context.Background(), ev)
	h.waitHistory(ev.Alert.ID, notify.EntryRetry, "fiscal-b")
	h.stop()

	// An alert that fired while the service was stopping: the monitor
	// stored it, the notification never saw it.
	lost := firing("lapa-pub-02", t0.Add(time.Second))
	cases := &fakeAlerts{all: map[string]alerts.Alert{ev.Alert.ID: ev.Alert, lost.Alert.ID: lost.Alert}}
	mp.Start(t)
	clk.Advance(10 * time.Minute)
	h2 := start(t, path, clk, func(o *Options) { o.Alerts = cases; o.Acks = cases.ack })
	msgs := mp.WaitMessages(t, 2, 20*time.Second)
	subjects := msgs[0].Subject + " | " + msgs[1].Subject
	if !strings.Contains(subjects, "lapa-bar-01") || !strings.Contains(subjects, "lapa-pub-02") {
		t.Fatalf("after restart: %s", subjects)
	}
	h2.waitHistory(ev.Alert.ID, notify.EntrySent, "fiscal-b")
	// nothing else: no duplicate of the first alert
	h2.settled(ReceiverEmail)
	if n := mp.Count(t); n != 2 {
		t.Fatalf("%d messages, want 2", n)
	}
}

// TestReconcileAckedAndResolvedWhileDown: acknowledgements and resolutions
// the service missed stop the escalation after a restart.
func TestReconcileAckedAndResolvedWhileDown(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	clk := &clock{t: t0}
	h := start(t, path, clk, nil)
	set := baseSettings()
	set.Email = notify.EmailSettings{Enabled: true, Transport: "dir", Dir: filepath.Join(dir, "mail"), From: "sossego@lapa.pr.gov.br"}
	h.put(set)
	a, b := firing("bar-a", t0), firing("bar-b", t0)
	h.svc.Notify(context.Background(), a)
	h.svc.Notify(context.Background(), b)
	h.waitHistory(a.Alert.ID, notify.EntrySent, "fiscal-b")
	clk.Advance(2*time.Minute + time.Second) // b was grouped behind a
	h.waitHistory(b.Alert.ID, notify.EntrySent, "fiscal-b")
	h.stop()
	resolved := b.Alert
	resolved.State, resolved.ResolvedAt = alerts.StateResolved, t0.Add(time.Minute)
	cases := &fakeAlerts{all: map[string]alerts.Alert{a.Alert.ID: a.Alert, b.Alert.ID: resolved}, acks: map[string]string{a.Alert.ID: "fiscal-b"}}
	h2 := start(t, path, clk, func(o *Options) { o.Alerts = cases; o.Acks = cases.ack })
	h2.waitHistory(a.Alert.ID, notify.EntryAcked, "fiscal-b")
	h2.waitHistory(b.Alert.ID, notify.EntryResolved, "")
	clk.Advance(20 * time.Minute)
	h2.settled(ReceiverEmail)
	files, _ := os.ReadDir(filepath.Join(dir, "mail"))
	var escal int
	for _, f := range files {
		body, _ := os.ReadFile(filepath.Join(dir, "mail", f.Name()))
		if strings.Contains(string(body), "ESCALONADO") {
			escal++
		}
	}
	if escal != 0 {
		t.Fatalf("%d escalation messages after ack and resolution", escal)
	}
}

// TestEnqueueNeverBlocks: with the engine's loop not running, Notify
// returns at once and keeps every input.
func TestEnqueueNeverBlocks(t *testing.T) {
	svc, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), FileName),
		Users: func(context.Context) ([]notify.UserRef, error) { return testUsers, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	for i := range 5000 {
		svc.Notify(context.Background(), firing("s", t0.Add(time.Duration(i)*time.Second)))
	}
	svc.Notify(context.Background(), alerts.Event{Kind: alerts.EventPending})
	if n := svc.QueueLen(); n != 5000 {
		t.Fatalf("queue %d, want 5000 (pending transitions are not queued)", n)
	}
}

// TestDirTransportAndSilence: the demo's transport writes .eml files; a
// silenced sensor's alert is recorded and not written.
func TestDirTransportAndSilence(t *testing.T) {
	dir := t.TempDir()
	h := start(t, "", nil, nil)
	set := baseSettings()
	set.Email = notify.EmailSettings{Enabled: true, Transport: "dir", Dir: filepath.Join(dir, "mensagens"), From: "sossego@demo.invalid"}
	h.put(set)
	sl, err := h.svc.CreateSilence(context.Background(), notify.Silence{Sensor: "obra-1", Ends: t0.Add(2 * time.Hour), Reason: "alvará de obra 77/2026"}, "fiscal-a")
	if err != nil {
		t.Fatal(err)
	}
	quiet, loud := firing("obra-1", t0), firing("bar-1", t0)
	h.svc.Notify(context.Background(), quiet)
	h.svc.Notify(context.Background(), loud)
	h.waitHistory(loud.Alert.ID, notify.EntrySent, "fiscal-b")
	hs := h.waitHistory(quiet.Alert.ID, notify.EntrySilenced, "")
	if !strings.Contains(dump(hs), "alvará de obra 77/2026") {
		t.Errorf("history: %s", dump(hs))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "mensagens", "*.eml"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	body, _ := os.ReadFile(files[0])
	if !strings.Contains(string(body), "bar-1") || strings.Contains(string(body), "obra-1") {
		t.Fatalf("message: %s", body)
	}
	// ending the silence early is audited
	if _, err := h.svc.EndSilence(context.Background(), sl.ID, "fiscal-b"); err != nil {
		t.Fatal(err)
	}
	_, audit, err := h.svc.Silences(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range audit {
		actions = append(actions, a.Action+" "+a.By)
	}
	if len(actions) != 2 || actions[0] != "ended fiscal-b" || actions[1] != "created fiscal-a" {
		t.Fatalf("audit %v", actions)
	}
	// still firing when the silence ended: sent with the group's next
	// message (the group sent one at t0)
	h.waitHistory(quiet.Alert.ID, notify.EntryUnsilenced, "")
	h.clock.Advance(2*time.Minute + time.Second)
	h.waitHistory(quiet.Alert.ID, notify.EntrySent, "fiscal-b")
}

// TestSettingsFile: settings from a YAML file with the secret in its own
// file; the dashboard cannot overwrite them; a broken edit is refused and
// the settings in force stay.
func TestSettingsFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "smtp-pass"), []byte("senha-do-arquivo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "notificacoes.yaml")
	doc := `public_url: https://sossego.lapa.pr.gov.br
email:
  enabled: true
  host: smtp.lapa.pr.gov.br
  username: sossego
  password_file: ` + filepath.Join(dir, "smtp-pass") + `
  from: sossego@lapa.pr.gov.br
municipalities:
  - id: lapa
    coordinator: coord
    weekly:
      - {days: [mon, tue, wed, thu, fri, sat, sun], from: "19:00", to: "07:00", user: fiscal-b}
contacts:
  - {user: fiscal-b, email: fiscal-b@lapa.pr.gov.br}
`
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	h := start(t, "", nil, func(o *Options) { o.ConfigFile = cfg })
	got, src := h.svc.Settings()
	if src != cfg || got.Email.Password != "" || !got.Email.PasswordSet || got.Email.Port != 587 {
		t.Fatalf("settings %+v from %q", got.Email, src)
	}
	if h.svc.policy.Load().Settings.Email.Password != "senha-do-arquivo" {
		t.Fatal("password file not read")
	}
	if _, err := h.svc.PutSettings(context.Background(), got, "admin"); !errors.Is(err, ErrFileManaged) {
		t.Fatalf("PutSettings with a file: %v", err)
	}
	d := h.svc.OnDuty(t0)
	if len(d) != 1 || len(d[0].Users) != 1 || d[0].Users[0] != "fiscal-b" {
		t.Fatalf("on duty %+v", d)
	}
	// An unknown key: refused at start with the line.
	if err := os.WriteFile(cfg, []byte(doc+"extra: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), Options{Path: filepath.Join(dir, "other.db"), ConfigFile: cfg,
		Users: func(context.Context) ([]notify.UserRef, error) { return testUsers, nil }})
	if err == nil || !strings.Contains(err.Error(), "line") || !strings.Contains(err.Error(), "extra") {
		t.Fatalf("open with a bad file: %v", err)
	}
}

// TestTestMessage: the settings page's button reaches the receiver now.
func TestTestMessage(t *testing.T) {
	mp := testenv.StartMailpit(t, testenv.MailpitOpts{})
	h := start(t, "", nil, nil)
	set := baseSettings()
	set.Email = emailTo(mp, "none", "", "")
	h.put(set)
	if err := h.svc.Test(context.Background(), ReceiverEmail, "fiscal-a"); err != nil {
		t.Fatal(err)
	}
	m := mp.WaitMessages(t, 1, 10*time.Second)[0]
	if m.Subject != "[Sossego] Mensagem de teste" || m.To[0] != "fiscal-a@lapa.pr.gov.br" {
		t.Fatalf("test message %+v", m)
	}
	if err := h.svc.Test(context.Background(), ReceiverPush, "fiscal-a"); err == nil {
		t.Fatal("push test without push enabled succeeded")
	}
	// an unreachable webhook: the error comes back, pt-BR
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	set.Webhooks = []notify.Webhook{{Name: "sms", URL: "http://" + addr + "/x", Secret: "segredo-do-webhook-123"}}
	h.put(set)
	if err := h.svc.Test(context.Background(), "webhook:sms", "fiscal-a"); err == nil || !strings.Contains(err.Error(), "webhook sms") {
		t.Fatalf("unreachable webhook test: %v", err)
	}
}
