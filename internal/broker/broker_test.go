package broker

import (
	"context"
	"crypto/tls"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"golang.org/x/crypto/bcrypt"

	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

const svcUser, svcPass = "sossego-central", "service-secret"

func hash(t testing.TB, pw string) []byte {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func testDirectory(t testing.TB) Directory {
	gws := map[string]Gateway{
		"gw-a":    {ID: "gw-a", Municipality: "lapa", PasswordHash: hash(t, "pa")},
		"gw-b":    {ID: "gw-b", Municipality: "lapa", PasswordHash: hash(t, "pb")},
		"gw-cert": {ID: "gw-cert", Municipality: "lapa"},
	}
	return DirectoryFunc(func(id string) (Gateway, bool) { g, ok := gws[id]; return g, ok })
}

func startBroker(t *testing.T, o Options) *Broker {
	t.Helper()
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	o.Directory = testDirectory(t)
	o.ServiceUser, o.ServicePassword = svcUser, svcPass
	o.Log = slog.New(slog.DiscardHandler)
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("broker run: %v", err)
		}
	})
	return b
}

// collector is a subscriber that records what it receives.
type collector struct {
	mu   sync.Mutex
	msgs map[string][]string
}

func (c *collector) handler(_ paho.Client, m paho.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs[m.Topic()] = append(c.msgs[m.Topic()], string(m.Payload()))
}

func (c *collector) count(topic string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs[topic])
}

func (c *collector) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.msgs {
		n += len(v)
	}
	return n
}

func connect(t *testing.T, url, clientID, user, pass string, tlsCfg *tls.Config) (paho.Client, error) {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(url).SetClientID(clientID).SetUsername(user).SetPassword(pass).
		SetAutoReconnect(false).SetConnectTimeout(5 * time.Second).SetCleanSession(true)
	if tlsCfg != nil {
		o.SetTLSConfig(tlsCfg)
	}
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(10 * time.Second) {
		return nil, context.DeadlineExceeded
	}
	if tok.Error() != nil {
		return nil, tok.Error()
	}
	t.Cleanup(func() { c.Disconnect(50) })
	return c, nil
}

func mustConnect(t *testing.T, url, clientID, user, pass string) paho.Client {
	t.Helper()
	c, err := connect(t, url, clientID, user, pass, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", user, err)
	}
	return c
}

func subscribe(t *testing.T, c paho.Client, filter string, col *collector) {
	t.Helper()
	tok := c.Subscribe(filter, 1, col.handler)
	tok.Wait()
	if tok.Error() != nil {
		t.Fatalf("subscribe %s: %v", filter, tok.Error())
	}
}

func publish(c paho.Client, topic, payload string) {
	tok := c.Publish(topic, 1, false, payload)
	tok.WaitTimeout(5 * time.Second) // a denied publish is still PUBACKed (MQTT 3.1.1)
}

// barrier publishes a marker the subscriber must see, so that everything
// published before it has been routed (or dropped) by then.
func barrier(t *testing.T, pub paho.Client, topic string, col *collector) {
	t.Helper()
	before := col.count(topic)
	publish(pub, topic, "barrier")
	deadline := time.Now().Add(10 * time.Second)
	for col.count(topic) == before {
		if time.Now().After(deadline) {
			t.Fatalf("barrier on %s never arrived", topic)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAuthentication(t *testing.T) {
	b := startBroker(t, Options{})
	cases := []struct {
		name, clientID, user, pass string
		ok                         bool
	}{
		{"anonymous", "x", "", "", false},
		{"wrong password", "gw-a", "gw-a", "nope", false},
		{"gateway without password", "gw-a", "gw-a", "", false},
		{"unknown gateway", "gw-z", "gw-z", "pz", false},
		{"gateway", "gw-a", "gw-a", "pa", true},
		{"gateway with suffixed client id", "gw-b:test", "gw-b", "pb", false},
		{"client id of another gateway", "gw-b", "gw-a", "pa", false},
		{"client id of the service", "sossego-central", "gw-a", "pa", false},
		{"certificate-only gateway with password", "gw-cert", "gw-cert", "", false},
		{"service", "svc", svcUser, svcPass, true},
		{"service wrong password", "svc2", svcUser, "x", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := connect(t, b.URL(), tc.clientID, tc.user, tc.pass, nil)
			if (err == nil) != tc.ok {
				t.Errorf("connect err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestACLAtTheSubscriber(t *testing.T) {
	b := startBroker(t, Options{})
	svc := mustConnect(t, b.URL(), "svc", svcUser, svcPass)
	all := &collector{msgs: map[string][]string{}}
	subscribe(t, svc, "sossego/v1/#", all)

	// A gateway has one session at a time (its client id is its id), so
	// each step below has its own connection, one after the other.
	// gw-a tries to read gw-b's acks and everything; both refused.
	// (A separate connection: paho routes locally by filter, so a refused
	// subscription on the same client would still see the client's own acks.)
	spy := &collector{msgs: map[string][]string{}}
	spyConn := mustConnect(t, b.URL(), "gw-a", "gw-a", "pa")
	_ = spyConn.Subscribe(wire.AckTopic("lapa", "gw-b"), 1, spy.handler).WaitTimeout(5 * time.Second)
	_ = spyConn.Subscribe("sossego/v1/#", 1, spy.handler).WaitTimeout(5 * time.Second)
	spyConn.Disconnect(50)
	waitGone(t, b, "gw-a")

	denied := []string{
		wire.LevelsTopic("lapa", "gw-b", "s1"),         // another gateway
		wire.LevelsTopic("campos-altos", "gw-a", "s1"), // another municipality
		wire.AckTopic("lapa", "gw-a"),                  // acks come from the service
		wire.StatusTopic("lapa", "gw-b"),               // another gateway's status
		"sossego/v1/lapa/gw-a/s1/levels/extra",         // not a v1 topic
		"other/topic",                                  // outside the tree
	}
	allowed := []string{
		wire.LevelsTopic("lapa", "gw-a", "s1"),
		wire.EnvTopic("lapa", "gw-a", "s1"),
		wire.StatusTopic("lapa", "gw-a"),
	}
	// mochi disconnects a v3.1.1 client after a denied QoS 1 publish, so
	// each attempt gets its own connection.
	for _, tp := range denied {
		c := mustConnect(t, b.URL(), "gw-a", "gw-a", "pa")
		publish(c, tp, "spoof")
		c.Disconnect(50)
		waitGone(t, b, "gw-a")
	}
	a := mustConnect(t, b.URL(), "gw-a", "gw-a", "pa")
	own := &collector{msgs: map[string][]string{}}
	subscribe(t, a, wire.AckTopic("lapa", "gw-a"), own)
	for _, tp := range allowed {
		publish(a, tp, "ok")
	}
	// The service acks both gateways.
	publish(svc, wire.AckTopic("lapa", "gw-b"), "ack-b")
	publish(svc, wire.AckTopic("lapa", "gw-a"), "ack-a")
	// The service may not publish data.
	publish(mustConnect(t, b.URL(), "svc-forger", svcUser, svcPass), wire.LevelsTopic("lapa", "gw-a", "s1"), "forged-by-service")
	barrier(t, a, wire.StatusTopic("lapa", "gw-a"), all)
	waitCount(t, own, wire.AckTopic("lapa", "gw-a"), 1)

	for _, tp := range denied {
		for _, p := range all.msgs[tp] {
			if p == "spoof" {
				t.Errorf("denied publish on %s reached the subscriber", tp)
			}
		}
	}
	for _, tp := range allowed {
		if all.count(tp) == 0 {
			t.Errorf("allowed publish on %s did not arrive", tp)
		}
	}
	for _, p := range all.msgs[wire.LevelsTopic("lapa", "gw-a", "s1")] {
		if p == "forged-by-service" {
			t.Error("the service could publish a levels message")
		}
	}
	if spy.total() != 0 {
		t.Errorf("gw-a read foreign topics: %v", spy.msgs)
	}
	if own.count(wire.AckTopic("lapa", "gw-a")) != 1 || own.total() != 1 {
		t.Errorf("gw-a acks = %v", own.msgs)
	}
}

func waitCount(t *testing.T, c *collector, topic string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.count(topic) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d messages, want %d", topic, c.count(topic), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWillMustBeOwnTopic(t *testing.T) {
	b := startBroker(t, Options{})
	for _, tc := range []struct {
		topic string
		ok    bool
	}{{wire.StatusTopic("lapa", "gw-a"), true}, {wire.StatusTopic("lapa", "gw-b"), false}} {
		o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID("gw-a").SetUsername("gw-a").SetPassword("pa").
			SetAutoReconnect(false).SetWill(tc.topic, string(wire.OfflinePayload), 1, true)
		c := paho.NewClient(o)
		tok := c.Connect()
		tok.WaitTimeout(5 * time.Second)
		if (tok.Error() == nil) != tc.ok {
			t.Errorf("will on %s: err = %v, want ok=%v", tc.topic, tok.Error(), tc.ok)
		}
		c.Disconnect(50)
	}
}

func TestOversizedPacketRefused(t *testing.T) {
	b := startBroker(t, Options{})
	svc := mustConnect(t, b.URL(), "svc", svcUser, svcPass)
	all := &collector{msgs: map[string][]string{}}
	subscribe(t, svc, "sossego/v1/#", all)
	a := mustConnect(t, b.URL(), "gw-a", "gw-a", "pa")
	big := strings.Repeat("x", MaxPacket+1)
	tok := a.Publish(wire.LevelsTopic("lapa", "gw-a", "s1"), 1, false, big)
	tok.WaitTimeout(3 * time.Second)
	// The broker drops the connection; a fresh one still works.
	a2 := mustConnect(t, b.URL(), "gw-a", "gw-a", "pa")
	barrier(t, a2, wire.StatusTopic("lapa", "gw-a"), all)
	if n := all.count(wire.LevelsTopic("lapa", "gw-a", "s1")); n != 0 {
		t.Errorf("oversized packet delivered %d times", n)
	}
}

func TestAllowedTable(t *testing.T) {
	cases := []struct {
		service     bool
		muni, gw    string
		topic       string
		write, want bool
	}{
		{false, "lapa", "g", "sossego/v1/lapa/g/s/levels", true, true},
		{false, "lapa", "g", "sossego/v1/lapa/g/s/env", true, true},
		{false, "lapa", "g", "sossego/v1/lapa/g/status", true, true},
		{false, "lapa", "g", "sossego/v1/lapa/g/ack", true, false},
		{false, "lapa", "g", "sossego/v1/lapa/g/+/levels", true, false},
		{false, "lapa", "g", "sossego/v1/lapa/h/s/levels", true, false},
		{false, "lapa", "g", "sossego/v1/lapa/g/ack", false, true},
		{false, "lapa", "g", "sossego/v1/lapa/+/ack", false, false},
		{false, "lapa", "g", "sossego/v1/lapa/g/#", false, false},
		{false, "", "", "sossego/v1/lapa/g/s/levels", true, false},
		{true, "", "", "sossego/v1/+/+/+/levels", false, true},
		{true, "", "", "$share/central/sossego/v1/+/+/+/levels", false, true},
		{true, "", "", "sossego/v1/lapa/g/ack", true, true},
		{true, "", "", "sossego/v1/lapa/g/s/levels", true, false},
		{true, "", "", "$SYS/#", false, false},
	}
	for _, tc := range cases {
		if got := Allowed(tc.service, tc.muni, tc.gw, tc.topic, tc.write); got != tc.want {
			t.Errorf("Allowed(%v, %q, %q, %q, write=%v) = %v, want %v", tc.service, tc.muni, tc.gw, tc.topic, tc.write, got, tc.want)
		}
	}
}

// TLS with client certificates: the CN is the gateway id.
func TestClientCertificates(t *testing.T) {
	pki := testenv.NewPKI(t)
	b := startBroker(t, Options{TLSListen: "127.0.0.1:0", TLS: &tls.Config{
		Certificates: []tls.Certificate{pki.Issue("127.0.0.1", true)}, ClientCAs: pki.Pool(),
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}})
	svc := mustConnect(t, b.URL(), "svc", svcUser, svcPass)
	all := &collector{msgs: map[string][]string{}}
	subscribe(t, svc, "sossego/v1/#", all)
	url := "ssl://" + b.TLSAddr().String()
	clientTLS := pki.ClientTLS
	c, err := connect(t, url, "gw-cert", "", "", clientTLS("gw-cert"))
	if err != nil {
		t.Fatalf("certificate login: %v", err)
	}
	publish(c, wire.LevelsTopic("lapa", "gw-cert", "s"), "ok")
	waitCount(t, all, wire.LevelsTopic("lapa", "gw-cert", "s"), 1)
	publish(c, wire.LevelsTopic("lapa", "gw-b", "s"), "spoof")
	c2, err := connect(t, url, "gw-cert", "", "", clientTLS("gw-cert"))
	if err != nil {
		t.Fatal(err)
	}
	barrier(t, c2, wire.StatusTopic("lapa", "gw-cert"), all)
	if all.count(wire.LevelsTopic("lapa", "gw-b", "s")) != 0 {
		t.Error("certificate gateway published as gw-b")
	}
	if _, err := connect(t, url, "gw-zz", "", "", clientTLS("gw-zz")); err == nil {
		t.Error("certificate with unknown CN accepted")
	}
	if _, err := connect(t, url, "gw-a", "gw-a", "pa", pki.ClientTLS("")); err == nil {
		t.Error("TLS without client certificate accepted")
	}
}

// waitGone waits until the broker has let go of the (clean) session id, so
// that the next connection under it is not taken for a takeover of a
// connection still closing.
func waitGone(t *testing.T, b *Broker, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cl, ok := b.srv.Clients.Get(id)
		if !ok || cl.Closed() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s still open", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
