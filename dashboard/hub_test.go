package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// clock is a settable clock for session expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is a running dashboard (auth, hub, UI routes) on an httptest server
// with three users: op (operador), fis (fiscal), adm (admin), all with
// password "senha-de-teste".
type fixture struct {
	srv   *httptest.Server
	hub   *Hub
	auth  *Auth
	store *usersdb.Store
	clock *clock
	tick  chan time.Time
	stop  context.CancelFunc
	ran   chan error
	mux   *http.ServeMux
}

const testPassword = "senha-de-teste"

func newFixture(t *testing.T, hopts HubOptions, aopts AuthOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	store, err := usersdb.OpenDir(ctx, t.TempDir(), users.Options{Params: users.Params{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	clk := &clock{t: time.Now().UTC().Truncate(time.Second)} // real date: browsers drop cookies that expired
	for _, u := range []struct {
		n string
		r users.Role
	}{{"op", users.Operador}, {"fis", users.Fiscal}, {"adm", users.Admin}} {
		if _, err := store.Add(ctx, u.n, u.r, testPassword, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.DiscardHandler)
	f := &fixture{store: store, clock: clk, tick: make(chan time.Time), ran: make(chan error, 1)}
	aopts.Now = clk.Now
	hopts.Now = clk.Now
	f.auth = NewAuth(store, aopts, log)
	f.hub = NewHub(f.auth, hopts, log)
	if hopts.Tick == 0 {
		f.hub.tickC = f.tick // the test drives the ticks; a set Tick runs the real ticker
	}
	f.auth.SetOnLogout(f.hub.EndSession)
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	f.mux = http.NewServeMux()
	NewWeb(f.auth, f.hub, set, log).Register(f.mux)
	f.srv = httptest.NewServer(f.mux)
	hctx, stop := context.WithCancel(ctx)
	f.stop = stop
	go func() { f.ran <- f.hub.Run(hctx) }()
	t.Cleanup(func() {
		f.stop()
		if err := <-f.ran; err != nil {
			t.Errorf("Run: %v", err)
		}
		f.srv.Close()
	})
	return f
}

// tickNow makes the hub flush once.
func (f *fixture) tickNow() { f.tick <- f.clock.Now() }

// login returns the session cookie value of user.
func (f *fixture) login(t *testing.T, user string) (cookie, csrf string) {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/login", strings.NewReader(`{"user":"`+user+`","password":"`+testPassword+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", f.srv.URL)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me meResponse
	if err := json.NewDecoder(resp.Body).Decode(&me); err != nil || resp.StatusCode != 200 {
		t.Fatalf("login %s: %d %v", user, resp.StatusCode, err)
	}
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			return c.Value, me.CSRFToken
		}
	}
	t.Fatal("no session cookie")
	return "", ""
}

// dial opens the websocket with the given cookie and Origin ("" = none).
func (f *fixture) dial(cookie, origin string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	if cookie != "" {
		h.Set("Cookie", CookieName+"="+cookie)
	}
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	return d.Dial("ws"+strings.TrimPrefix(f.srv.URL, "http")+"/ws", h)
}

// connect dials as user and consumes hello and snapshot.
func (f *fixture) connect(t *testing.T, user string) *websocket.Conn {
	t.Helper()
	cookie, _ := f.login(t, user)
	c, _, err := f.dial(cookie, f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, want := range []string{"hello", "snapshot"} {
		if m := readMsg(t, c); m.Type != want {
			t.Fatalf("got %q frame, want %q", m.Type, want)
		}
	}
	return c
}

type msg struct {
	Type     string          `json:"type"`
	Role     string          `json:"role"`
	User     string          `json:"user"`
	Levels   []Level         `json:"levels"`
	Env      []Env           `json:"env"`
	Gateways []GatewayStatus `json:"gateways"`
	Event    *alerts.Event   `json:"event"`
	Case     *CaseUpdate     `json:"case"`
}

func readMsg(t *testing.T, c *websocket.Conn) msg {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m msg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

// readClose reads until the server closes and returns the close code.
func readClose(t *testing.T, c *websocket.Conn) int {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		return -1
	}
}

func (f *fixture) waitClients(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if f.hub.Stats().Clients == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("hub has %d clients, want %d", f.hub.Stats().Clients, n)
}

func TestHubRefusals(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{SessionTTL: time.Hour})
	good, _ := f.login(t, "op")
	expiring, _ := f.login(t, "fis")
	f.clock.Add(30 * time.Minute)
	fresh, _ := f.login(t, "fis") // expires 30 min after "expiring"
	f.clock.Add(31 * time.Minute)
	tests := []struct {
		name, cookie, origin string
		want                 int
	}{
		{"no origin", good, "", http.StatusForbidden},
		{"foreign origin", good, "http://evil.example", http.StatusForbidden},
		{"look-alike origin", good, f.srv.URL + ".evil.example", http.StatusForbidden},
		{"no cookie", "", f.srv.URL, http.StatusUnauthorized},
		{"forged cookie", "AAAA" + good[4:], f.srv.URL, http.StatusUnauthorized},
		{"expired session", expiring, f.srv.URL, http.StatusUnauthorized},
		{"ok", fresh, f.srv.URL, http.StatusSwitchingProtocols},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, resp, err := f.dial(tc.cookie, tc.origin)
			if c != nil {
				defer c.Close()
			}
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d (err %v)", resp.StatusCode, tc.want, err)
			}
		})
	}
	if got := f.hub.Stats().Refused; got != 6 {
		t.Fatalf("Refused = %d, want 6", got)
	}
}

func TestHubRolesAndOrder(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{})
	conns := map[string]*websocket.Conn{}
	for _, u := range []string{"op", "fis", "adm"} {
		conns[u] = f.connect(t, u)
	}
	f.waitClients(t, 3)
	f.hub.PublishAlert(alerts.Event{Kind: alerts.EventFiring, Alert: alerts.Alert{ID: "a1", State: alerts.StateFiring}})
	f.hub.PublishCase(CaseUpdate{AlertID: "a1", Action: "ack", By: "fis"})
	f.hub.PublishAlert(alerts.Event{Kind: alerts.EventResolved, Alert: alerts.Alert{ID: "a1", State: alerts.StateResolved}})
	f.hub.PublishLevel(Level{Sensor: "s1", LAeq: 61.26})
	f.tickNow()
	want := map[string][]string{
		"op":  {"alert:a1:firing", "alert:a1:resolved", "update:s1"},
		"fis": {"alert:a1:firing", "case:a1:ack", "alert:a1:resolved", "update:s1"},
		"adm": {"alert:a1:firing", "case:a1:ack", "alert:a1:resolved", "update:s1"},
	}
	for u, seq := range want {
		t.Run(u, func(t *testing.T) {
			for i, w := range seq {
				m := readMsg(t, conns[u])
				var got string
				switch m.Type {
				case "alert":
					got = "alert:" + m.Event.Alert.ID + ":" + string(m.Event.Kind)
				case "case":
					got = "case:" + m.Case.AlertID + ":" + m.Case.Action
				case "update":
					got = "update:" + m.Levels[0].Sensor
					if m.Levels[0].LAeq != 61.3 {
						t.Errorf("LAeq %v, want 61.3 (one decimal)", m.Levels[0].LAeq)
					}
				}
				if got != w {
					t.Fatalf("frame %d = %q, want %q", i, got, w)
				}
			}
		})
	}
}

func TestHubCoalescesAndSnapshots(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{})
	c := f.connect(t, "op")
	f.waitClients(t, 1)
	for _, l := range []Level{{Sensor: "s1", LAeq: 50}, {Sensor: "s1", LAeq: 60}, {Sensor: "s2", LAeq: 40}, {Sensor: "s1", LAeq: 70}} {
		f.hub.PublishLevel(l)
	}
	f.hub.PublishGateway(GatewayStatus{Gateway: "g1", State: "online"})
	f.hub.PublishGateway(GatewayStatus{Gateway: "g1", State: "offline"})
	f.hub.PublishEnv(Env{Sensor: "s1"})
	f.tickNow()
	m := readMsg(t, c)
	got := map[string]DB{}
	for _, l := range m.Levels {
		got[l.Sensor] = l.LAeq
	}
	if m.Type != "update" || len(m.Levels) != 2 || got["s1"] != 70 || got["s2"] != 40 {
		t.Fatalf("update = %+v, want s1=70 and s2=40 only", m)
	}
	if len(m.Gateways) != 1 || m.Gateways[0].State != "offline" || len(m.Env) != 1 {
		t.Fatalf("gateways %+v env %+v", m.Gateways, m.Env)
	}
	if s := f.hub.Stats(); s.Coalesced != 3 || s.LevelsReceived != 4 {
		t.Fatalf("stats %+v, want Coalesced 3, LevelsReceived 4", s)
	}
	// An empty tick sends nothing: the next frame is the next change.
	f.tickNow()
	f.hub.PublishLevel(Level{Sensor: "s2", LAeq: 45})
	f.tickNow()
	if m := readMsg(t, c); len(m.Levels) != 1 || m.Levels[0].Sensor != "s2" || m.Levels[0].LAeq != 45 {
		t.Fatalf("second update %+v", m)
	}
	// A newcomer's snapshot has the latest value of everything.
	cookie, _ := f.login(t, "fis")
	c2, _, err := f.dial(cookie, f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if m := readMsg(t, c2); m.Type != "hello" || m.Role != "fiscal" || m.User != "fis" {
		t.Fatalf("hello %+v", m)
	}
	snap := readMsg(t, c2)
	if snap.Type != "snapshot" || len(snap.Levels) != 2 || snap.Levels[0].LAeq != 70 || snap.Levels[1].LAeq != 45 ||
		len(snap.Gateways) != 1 || snap.Gateways[0].State != "offline" {
		t.Fatalf("snapshot %+v", snap)
	}
}

func TestHubDropsSlowClient(t *testing.T) {
	f := newFixture(t, HubOptions{SendBuffer: 2, WriteWait: time.Second}, AuthOptions{})
	fast := f.connect(t, "op")
	slow := f.connect(t, "fis") // never reads again until dropped
	f.waitClients(t, 2)
	// The fast client reads everything in the background, and each tick
	// waits until it got the update of the tick before: a client that keeps
	// up is one update behind at most, however busy the machine (flooding it
	// with ticks back to back would drop it too, rightly).
	fastDone := make(chan error, 1)
	var fastMsgs atomic.Int64
	go func() {
		for {
			if _, _, err := fast.ReadMessage(); err != nil {
				fastDone <- err
				return
			}
			fastMsgs.Add(1)
		}
	}()
	big := strings.Repeat("x", 4000)
	for i := 0; f.hub.Stats().Dropped == 0; i++ {
		if i > 100000 {
			t.Fatal("slow client never dropped")
		}
		for s := 0; s < 50; s++ {
			f.hub.PublishLevel(Level{Sensor: fmt.Sprintf("s%d-%s", s, big), LAeq: DB(i % 100)})
		}
		seen := fastMsgs.Load()
		f.tickNow()
		deadline := time.Now().Add(time.Minute)
		for fastMsgs.Load() == seen && f.hub.Stats().Dropped == 0 {
			select {
			case err := <-fastDone:
				t.Fatalf("fast client disconnected at tick %d: %v", i, err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("tick %d: the fast client got no update in a minute", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	f.waitClients(t, 1)
	if s := f.hub.Stats(); s.Dropped != 1 {
		t.Fatalf("Dropped = %d, want 1 (only the slow client)", s.Dropped)
	}
	// The slow client's socket ends once it drains what the kernel buffered.
	slow.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		if _, _, err := slow.ReadMessage(); err != nil {
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("slow client still connected: %v", err)
			}
			break
		}
	}
	// The fast client is still served.
	f.hub.PublishAlert(alerts.Event{Kind: alerts.EventFiring, Alert: alerts.Alert{ID: "after"}})
	select {
	case err := <-fastDone:
		t.Fatalf("fast client disconnected: %v", err)
	default:
	}
	if s := f.hub.Stats(); s.Clients != 1 {
		t.Fatalf("clients = %d, want 1", s.Clients)
	}
	fast.Close()
	<-fastDone
}

func TestHubPingPong(t *testing.T) {
	tests := []struct {
		name      string
		answer    bool // client answers pings with pongs
		wantAlive bool
	}{
		{"answering client stays", true, true},
		{"silent client dropped", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, HubOptions{PongWait: 400 * time.Millisecond, PingPeriod: 100 * time.Millisecond}, AuthOptions{})
			c := f.connect(t, "op")
			pings := make(chan struct{}, 100)
			c.SetPingHandler(func(data string) error {
				pings <- struct{}{}
				if tc.answer {
					return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
				}
				return nil
			})
			readErr := make(chan error, 1)
			go func() {
				c.SetReadDeadline(time.Now().Add(30 * time.Second))
				for {
					if _, _, err := c.ReadMessage(); err != nil {
						readErr <- err
						return
					}
				}
			}()
			if tc.wantAlive {
				// Twelve pings span three pong deadlines.
				for i := 0; i < 12; i++ {
					select {
					case <-pings:
					case err := <-readErr:
						t.Fatalf("connection ended after %d pings: %v", i, err)
					}
				}
				if n := f.hub.Stats().Clients; n != 1 {
					t.Fatalf("clients = %d, want 1", n)
				}
				c.Close()
				<-readErr
				return
			}
			err := <-readErr
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("server never dropped the silent client")
			}
			if len(pings) == 0 {
				t.Fatal("no ping was received")
			}
			f.waitClients(t, 0)
		})
	}
}

func TestHubSessionEnd(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{SessionTTL: time.Hour})
	// Logout disconnects that session's sockets only.
	cookie, csrf := f.login(t, "fis")
	c, _, err := f.dial(cookie, f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	other := f.connect(t, "op")
	f.waitClients(t, 2)
	req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/logout", nil)
	req.Header.Set("Cookie", CookieName+"="+cookie)
	req.Header.Set(CSRFHeader, csrf)
	req.Header.Set("Origin", f.srv.URL)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	if code := readClose(t, c); code != 4001 {
		t.Fatalf("logout close code %d, want 4001", code)
	}
	f.waitClients(t, 1)
	// Expiry disconnects at the next tick.
	f.clock.Add(time.Hour)
	f.tickNow()
	if code := readClose(t, other); code != 4001 {
		t.Fatalf("expiry close code %d, want 4001", code)
	}
	f.waitClients(t, 0)
}

func TestHubShutdownClosesClients(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{})
	c := f.connect(t, "adm")
	f.waitClients(t, 1)
	f.stop()
	if code := readClose(t, c); code != websocket.CloseGoingAway {
		t.Fatalf("close code %d, want %d", code, websocket.CloseGoingAway)
	}
	if err := <-f.ran; err != nil {
		t.Fatal(err)
	}
	f.ran <- nil // for the fixture's cleanup
	// After Run, new sockets are refused and Publish still never blocks.
	cookie, _ := f.login(t, "adm")
	_, resp, _ := f.dial(cookie, f.srv.URL)
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("dial after shutdown: %v", resp)
	}
	f.hub.PublishLevel(Level{Sensor: "s"})
	f.hub.EndSession(cookie)
	if err := f.hub.Run(context.Background()); !errors.Is(err, ErrHubStopped) {
		t.Fatalf("second Run = %v", err)
	}
}

func TestPublishNeverBlocks(t *testing.T) {
	h := NewHub(nil, HubOptions{EventQueue: 3}, slog.New(slog.DiscardHandler))
	for i := 0; i < 5; i++ {
		h.PublishAlert(alerts.Event{Kind: alerts.EventFiring})
		h.PublishLevel(Level{Sensor: "s"})
	}
	s := h.Stats()
	if s.EventsDropped != 2 || s.Clients != -1 || s.Coalesced != 4 {
		t.Fatalf("stats %+v", s)
	}
}

func TestDBJSON(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{{61.25, "61.2"}, {61.26, "61.3"}, {0, "0.0"}, {-3.04, "-3.0"}, {120, "120.0"}} {
		b, _ := json.Marshal(DB(tc.in))
		if string(b) != tc.want {
			t.Errorf("DB(%v) = %s, want %s", tc.in, b, tc.want)
		}
	}
}
