package notify

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notify"
)

func subscriptionAt(endpoint string) notify.PushSubscription {
	var s notify.PushSubscription
	s.Endpoint = endpoint
	s.Keys.P256dh = "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM"
	s.Keys.Auth = "tBHItJI5svbpez7KI4CCXg"
	return s
}

// TestPushEndpointsInsideTheNetworkRefused: a push endpoint is given by a
// browser, so by any user; one on this server or the LAN is refused at
// subscription, with what to do, and again at delivery.
func TestPushEndpointsInsideTheNetworkRefused(t *testing.T) {
	h := start(t, "", nil, nil)
	for _, tc := range []struct {
		endpoint string
		ok       bool
	}{
		{"https://fcm.googleapis.com/fcm/send/abc", true},
		{"https://updates.push.services.mozilla.com/wpush/v2/abc", true},
		{"https://8.8.8.8/push", true},
		{"https://127.0.0.1/push", false},
		{"https://127.1.2.3:8443/push", false},
		{"https://[::1]/push", false},
		{"https://[::ffff:10.0.0.1]/push", false},
		{"https://10.1.2.3/push", false},
		{"https://192.168.0.10/push", false},
		{"https://172.16.5.4/push", false},
		{"https://169.254.169.254/latest", false},
		{"https://100.64.0.1/push", false},
		{"https://0.0.0.0/push", false},
		{"https://localhost/push", false},
		{"https://LOCALHOST./push", false},
		{"https://api.localhost/push", false},
		{"https://intranet/push", false},
	} {
		err := h.svc.Subscribe(context.Background(), "fiscal-a", subscriptionAt(tc.endpoint))
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok=%v", tc.endpoint, err, tc.ok)
		}
		var ve *notify.ValidationError
		if err != nil && (!errors.As(err, &ve) || !strings.Contains(err.Error(), "rede interna")) {
			t.Errorf("%s: %v, want a validation error saying why", tc.endpoint, err)
		}
	}
	// A subscription stored before this rule (or by a lab setting) is
	// refused when delivered to, for good.
	if _, err := h.svc.st.db.Exec(`INSERT INTO notify_push_subscriptions (endpoint, user, p256dh, auth, created_at) VALUES (?, ?, ?, ?, 0)`,
		"https://10.0.0.7/push", "fiscal-a", "k", "a"); err != nil {
		t.Fatal(err)
	}
	err := h.svc.sendPush(context.Background(), notify.PushSettings{Enabled: true}, delivery{Target: "https://10.0.0.7/push", Payload: []byte("{}")})
	if !errors.As(err, new(permanentError)) || !errors.Is(err, errPrivatePush) {
		t.Errorf("delivery to an internal endpoint: %v, want a permanent refusal", err)
	}
}

// TestRefuseInternalOnConnect: a public name resolving to an internal
// address is refused when connecting.
func TestRefuseInternalOnConnect(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{{"127.0.0.1:443", false}, {"[fd00::1]:443", false}, {"10.0.0.1:443", false}, {"8.8.8.8:443", true}, {"[2001:4860::8888]:443", true}} {
		if err := refuseInternal("tcp", tc.addr, nil); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
}

// TestPushDeviceCap: a user has at most MaxPushDevices subscriptions;
// subscribing a device again is not a new one.
func TestPushDeviceCap(t *testing.T) {
	h := start(t, "", nil, func(o *Options) { o.MaxPushDevices = 3 })
	ctx := context.Background()
	for i := range 3 {
		if err := h.svc.Subscribe(ctx, "fiscal-a", subscriptionAt("https://push.example.com/"+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	err := h.svc.Subscribe(ctx, "fiscal-a", subscriptionAt("https://push.example.com/d"))
	var ve *notify.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "limite de 3 aparelhos") {
		t.Errorf("a 4th device: %v, want the cap refusal", err)
	}
	if err := h.svc.Subscribe(ctx, "fiscal-a", subscriptionAt("https://push.example.com/a")); err != nil {
		t.Errorf("the same device again: %v", err)
	}
	if err := h.svc.Subscribe(ctx, "fiscal-b", subscriptionAt("https://push.example.com/e")); err != nil {
		t.Errorf("another user's device: %v", err)
	}
	if n, _ := h.svc.Devices(ctx, "fiscal-a"); n != 3 {
		t.Errorf("%d devices, want 3", n)
	}
}

// TestDeliveriesDoNotFollowRedirects: a webhook answering 307 would have
// the signed body sent elsewhere, a 302 would become a GET on an address
// of the redirector's choice; neither is followed, for webhooks or push.
func TestDeliveriesDoNotFollowRedirects(t *testing.T) {
	var elsewhere atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(target.Close)
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/internal", code)
		}))
		t.Cleanup(redirector.Close)
		h := start(t, "", nil, nil)
		err := h.svc.sendWebhook(context.Background(), notify.Webhook{Name: "sgi", URL: redirector.URL, Secret: "s"}, []byte(`{}`))
		if !errors.As(err, new(permanentError)) || !strings.Contains(err.Error(), "redirecionamento HTTP") {
			t.Errorf("webhook answered %d: %v, want a permanent refusal naming the redirect", code, err)
		}
		ps := newPushService(t)
		ps.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/internal", code)
		})
		hp := start(t, "", nil, func(o *Options) { o.Transport = ps.srv.Client().Transport; o.AllowInternalPush = true })
		if err := hp.svc.Subscribe(context.Background(), "fiscal-a", ps.subscription()); err != nil {
			t.Fatal(err)
		}
		err = hp.svc.sendPush(context.Background(), notify.PushSettings{Enabled: true}, delivery{Target: ps.subscription().Endpoint, Payload: []byte("{}")})
		if !errors.As(err, new(permanentError)) || !strings.Contains(err.Error(), "redirecionamento HTTP") {
			t.Errorf("push service answered %d: %v, want a permanent refusal naming the redirect", code, err)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the redirect's target", n)
	}
}

// TestPushEndpointNeverDelaysAnother: endpoints that never answer used to
// hold every push behind them, each for the whole push timeout (300 of
// them delayed an alert by 14.5 min). Each push delivery runs on its own:
// the device that answers gets the alert while the others still hang.
func TestPushEndpointNeverDelaysAnother(t *testing.T) {
	release := make(chan struct{})
	var hanging sync.WaitGroup
	const stuck = 20
	hanging.Add(stuck)
	var entered atomic.Int64
	staller := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if entered.Add(1) <= stuck {
			hanging.Done()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); staller.Close() })
	ps := newPushService(t)
	// One client for both servers: each httptest TLS server trusts its own
	// certificate, so pick the transport by host.
	tr := hostTransport{staller.Listener.Addr().String(): staller.Client().Transport, ps.srv.Listener.Addr().String(): ps.srv.Client().Transport}
	h := start(t, "", nil, func(o *Options) { o.Transport = tr; o.AllowInternalPush = true; o.MaxPushDevices = stuck + 1 })
	set := baseSettings()
	set.Push = notify.PushSettings{Enabled: true, Subject: "mailto:ti@lapa.pr.gov.br", Timeout: notify.Duration(2 * time.Minute)}
	h.put(set)
	ctx := context.Background()
	for i := range stuck {
		if err := h.svc.Subscribe(ctx, "fiscal-b", subscriptionAt(staller.URL+"/push/"+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.svc.Subscribe(ctx, "fiscal-b", ps.subscription()); err != nil {
		t.Fatal(err)
	}
	ev := firing("lapa-bar-01", t0)
	h.svc.Notify(ctx, ev)
	h.waitHistory(ev.Alert.ID, notify.EntrySent, "fiscal-b")
	ps.mu.Lock()
	got := len(ps.got)
	ps.mu.Unlock()
	if got != 1 {
		t.Fatalf("the answering device got %d messages, want 1", got)
	}
	hanging.Wait() // and every hanging endpoint was tried meanwhile, each on its own
}

// hostTransport routes each request to the transport of its host.
type hostTransport map[string]http.RoundTripper

func (h hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t, ok := h[r.URL.Host]; ok {
		return t.RoundTrip(r)
	}
	return nil, errors.New("no such test server")
}

// TestHistoryShowsSummaryRawErrorForAdmins: the alert's history, which
// every role reads, says in short why a delivery failed; the receiver's
// raw error (here naming the internal address it could not reach) is kept
// for administrators.
func TestHistoryShowsSummaryRawErrorForAdmins(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	addr := closed.Listener.Addr().String()
	closed.Close() // nothing listens there now
	h := start(t, "", nil, func(o *Options) { o.MaxAttempts = 1 })
	set := baseSettings()
	set.Webhooks = []notify.Webhook{{Name: "sgi", URL: "http://" + addr + "/hook", Secret: "segredo-do-webhook-123"}}
	h.put(set)
	ev := firing("lapa-bar-01", t0)
	h.svc.Notify(context.Background(), ev)
	hs := h.waitHistory(ev.Alert.ID, notify.EntryFailed, "fiscal-b")
	text := dump(hs)
	if !strings.Contains(text, "falha de rede ao contatar o receptor") {
		t.Errorf("history without the summary:\n%s", text)
	}
	if strings.Contains(text, addr) || strings.Contains(text, "connection refused") || strings.Contains(text, "dial tcp") {
		t.Errorf("the raw error reached the history:\n%s", text)
	}
	raw, err := h.svc.DeliveryErrors(context.Background(), ev.Alert.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 1 || raw[0].Receiver != "webhook:sgi" || raw[0].Status != "failed" || !strings.Contains(raw[0].Error, "connection refused") {
		t.Errorf("raw errors for administrators: %+v", raw)
	}
	if other, _ := h.svc.DeliveryErrors(context.Background(), "another-alert"); len(other) != 0 {
		t.Errorf("another alert's raw errors: %+v", other)
	}
}

// TestSummary: what the history says of each kind of error.
func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{permanent(shown("webhook sgi recusou: HTTP 400", nil)), "webhook sgi recusou: HTTP 400"},
		{shown("sem resposta em 10s", context.DeadlineExceeded), "sem resposta em 10s"},
		{context.DeadlineExceeded, "sem resposta dentro do tempo limite"},
		{permanent(errPrivatePush), errPrivatePush.Error()},
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, "falha de rede ao contatar o receptor (detalhes para administradores)"},
		{errors.New("535 5.7.8 authentication failed for user x at 10.0.0.3"), "o receptor falhou (detalhes para administradores)"},
	} {
		if got := summary(tc.err); got != tc.want {
			t.Errorf("summary(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
