package central

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/users"
)

// httpFixture is the central's HTTP server construction (newHTTPServer on
// capConns) serving h on a loopback port.
type httpFixture struct {
	addr string
	cap  *connCap
	srv  *http.Server
}

func startHTTP(t *testing.T, h http.Handler, lim HTTPLimits, proxies *dashboard.Proxies) *httpFixture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	f := &httpFixture{addr: ln.Addr().String(), cap: capConns(ln, lim, proxies, prometheus.NewRegistry(), log)}
	f.srv = newHTTPServer(h, lim, log)
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(f.cap) }()
	t.Cleanup(func() {
		f.srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return f
}

// dialFrom opens a raw TCP connection from the loopback address ip.
func (f *httpFixture) dialFrom(t *testing.T, ip string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitOpen polls until the server holds n connections.
func (f *httpFixture) waitOpen(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); f.cap.Open() != n; {
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d connections after 60 s, want %d", f.cap.Open(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// serverSockets counts the established TCP sockets of port on the server
// side, as the kernel sees them (/proc/net/tcp): what the process holds,
// accepted or waiting in the accept queue.
func serverSockets(t *testing.T, addr string) int {
	t.Helper()
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return -1
	}
	local := fmt.Sprintf(":%04X", port)
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) > 3 && strings.HasSuffix(fields[1], local) && fields[3] == "01" { // 01 = ESTABLISHED
			n++
		}
	}
	return n
}

func okHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, "grande demais", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "corpo ilegível", http.StatusBadRequest)
			return
		}
		w.Write([]byte("ok"))
	})
}

// getAll GETs url and reads the whole body (so the connection may be kept).
func getAll(c *http.Client, url string) (int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// TestHTTPIdleConnectionsClosed is the idle-connection attack: connections
// that never send a request, that send half a request (slowloris), and
// keep-alive connections left idle after one request. The server closes
// every one of them (HeaderTimeout, IdleTimeout) instead of holding them
// forever, and a user is served meanwhile.
func TestHTTPIdleConnectionsClosed(t *testing.T) {
	const each = 60
	lim := HTTPLimits{HeaderTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond, MaxConns: 1000, MaxConnsPerIP: 1000}
	f := startHTTP(t, okHandler(), lim, nil)
	var conns []net.Conn
	for i := 0; i < each; i++ {
		conns = append(conns, f.dialFrom(t, "127.0.0.2")) // silent
		half := f.dialFrom(t, "127.0.0.2")
		fmt.Fprintf(half, "GET / HTTP/1.1\r\nHost: x\r\n") // never finished
		conns = append(conns, half)
		idle := f.dialFrom(t, "127.0.0.2")
		fmt.Fprintf(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("keep-alive request: %v %v", resp, err)
		}
		resp.Body.Close()
		conns = append(conns, idle)
	}
	held := serverSockets(t, f.addr)
	t.Logf("%d idle connections opened; the kernel shows %d established on the server side", len(conns), held)
	// A user is served while they are open.
	c := &http.Client{Timeout: 10 * time.Second}
	if code, err := getAll(c, "http://"+f.addr+"/"); err != nil || code != 200 {
		t.Fatalf("a user during the attack: %d %v", code, err)
	}
	c.CloseIdleConnections()
	// Every attacking connection ends from the server's side.
	var wg sync.WaitGroup
	for _, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			_, err := io.Copy(io.Discard, conn)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Errorf("connection from %s still open after 60 s", conn.LocalAddr())
			}
		}()
	}
	wg.Wait()
	f.waitOpen(t, 0)
	if n := serverSockets(t, f.addr); n > 0 {
		t.Fatalf("%d sockets still established on the server side", n)
	}
}

// TestHTTPConnectionCap is the descriptor-exhaustion attack: one address
// opens more connections than its share and holds them; then several
// addresses fill the total. Connections over a cap are answered 503 with
// Retry-After at once and closed; a user from another address is served
// while one attacker holds its share; trusted proxies are not held to the
// per-source cap; every place is given back when the attackers leave.
func TestHTTPConnectionCap(t *testing.T) {
	const perIP, total = 20, 50
	proxies, _ := dashboard.NewProxies("127.0.0.9")
	lim := HTTPLimits{HeaderTimeout: time.Minute, IdleTimeout: time.Minute, MaxConns: total, MaxConnsPerIP: perIP}
	f := startHTTP(t, okHandler(), lim, proxies)
	refused := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var body map[string]string
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "" && strings.Contains(body["erro"], "conexões demais")
	}
	var attack []net.Conn
	for i := 0; i < 5*perIP; i++ {
		attack = append(attack, f.dialFrom(t, "127.0.0.2"))
	}
	f.waitOpen(t, perIP)
	nRefused := 0
	for _, c := range attack[perIP:] {
		if refused(c) {
			nRefused++
		}
	}
	t.Logf("%d connections from one address: %d held, %d refused with 503; the kernel shows %d established on the server side",
		len(attack), f.cap.Open(), nRefused, serverSockets(t, f.addr))
	if nRefused != len(attack)-perIP {
		t.Fatalf("%d of the %d connections over the per-source cap were answered 503", nRefused, len(attack)-perIP)
	}
	user := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}).DialContext}}
	defer user.CloseIdleConnections()
	if code, err := getAll(user, "http://"+f.addr+"/"); err != nil || code != 200 {
		t.Fatalf("a user from another address while one attacker holds its share: %d %v", code, err)
	}
	// A trusted proxy carries many clients: no per-source cap.
	for i := 0; i < perIP+5; i++ {
		attack = append(attack, f.dialFrom(t, "127.0.0.9"))
	}
	f.waitOpen(t, perIP+1+perIP+5)
	// The total cap: everyone is refused at once, not left waiting.
	for f.cap.Open() < total {
		attack = append(attack, f.dialFrom(t, "127.0.0.4"))
		time.Sleep(time.Millisecond)
		if len(attack) > 10*total {
			t.Fatal("the total cap never filled")
		}
	}
	late := f.dialFrom(t, "127.0.0.5")
	if !refused(late) {
		t.Fatal("a connection over the total cap was not answered 503")
	}
	for _, c := range attack {
		c.Close()
	}
	user.CloseIdleConnections()
	f.waitOpen(t, 0)
	if code, err := getAll(user, "http://"+f.addr+"/"); err != nil || code != 200 {
		t.Fatalf("a user after the attack: %d %v", code, err)
	}
}

// TestHTTPSlowAndLargeBodies: a body sent too slowly is cut at BodyTimeout
// (the connection is closed), one declared too large is refused with 413
// before it is read, one that grows too large while streaming stops at
// MaxBody.
func TestHTTPSlowAndLargeBodies(t *testing.T) {
	lim := HTTPLimits{HeaderTimeout: time.Minute, BodyTimeout: 300 * time.Millisecond, IdleTimeout: time.Minute, MaxBody: 1000}
	f := startHTTP(t, okHandler(), lim, nil)
	for _, tc := range []struct {
		name, req string
		want      int // 0: the connection is closed without an answer worth reading
	}{
		{"slow body", "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{", 400},
		{"declared too large", "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n", 413},
		{"streamed too large", "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n" + strings.Repeat("x", 2000) + "\r\n0\r\n\r\n", 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := f.dialFrom(t, "127.0.0.2")
			io.WriteString(c, tc.req)
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			// And the server does not keep the connection.
			_, err = io.Copy(io.Discard, br)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("connection still open after 60 s")
			}
		})
	}
	f.waitOpen(t, 0)
}

// hubSessions admits every websocket (the hub's login check is tested in
// the dashboard package).
type hubSessions struct{}

func (hubSessions) SessionFromRequest(*http.Request) (users.Session, error) {
	return users.Session{Token: "t", User: users.User{Name: "op", Role: users.Operador}, Expires: time.Now().Add(time.Hour)}, nil
}

// TestLiveFeedOutlivesWriteTimeout: the server's WriteTimeout ends stuck
// responses, not the live feed: a websocket stays connected for many write
// timeouts (the hub sets its own deadline on every write and ping) and
// still receives updates.
func TestLiveFeedOutlivesWriteTimeout(t *testing.T) {
	hub := dashboard.NewHub(hubSessions{}, dashboard.HubOptions{Tick: 20 * time.Millisecond, PingPeriod: 50 * time.Millisecond,
		PongWait: 2 * time.Second}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- hub.Run(ctx) }()
	defer func() {
		cancel()
		<-ran
	}()
	mux := http.NewServeMux()
	mux.Handle("GET /ws", hub)
	lim := HTTPLimits{WriteTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond, HeaderTimeout: 200 * time.Millisecond,
		BodyTimeout: 200 * time.Millisecond}
	f := startHTTP(t, mux, lim, nil)
	for deadline := time.Now().Add(30 * time.Second); !hubRunning(f.addr); {
		if time.Now().After(deadline) {
			t.Fatal("hub not running")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+f.addr+"/ws", http.Header{"Origin": {"http://" + f.addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	pings := make(chan struct{}, 1000)
	ws.SetPingHandler(func(data string) error {
		pings <- struct{}{}
		return ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	msgs := make(chan string, 1000)
	readErr := make(chan error, 1)
	go func() {
		for {
			_, b, err := ws.ReadMessage()
			if err != nil {
				readErr <- err
				return
			}
			msgs <- string(b)
		}
	}()
	// Forty pings at 50 ms span ten write timeouts.
	for i := 0; i < 40; i++ {
		select {
		case <-pings:
		case err := <-readErr:
			t.Fatalf("the live feed ended after %d pings: %v", i, err)
		}
	}
	hub.PublishLevel(dashboard.Level{Sensor: "lapa-bar-01", T: time.Now(), LAeq: 71.5})
	for {
		select {
		case m := <-msgs:
			if strings.Contains(m, "lapa-bar-01") {
				return
			}
		case err := <-readErr:
			t.Fatalf("the live feed ended before the update: %v", err)
		}
	}
}

// hubRunning reports whether the hub accepts upgrades yet (it answers 503
// before Run starts).
func hubRunning(addr string) bool {
	req, _ := http.NewRequest("GET", "http://"+addr+"/ws", nil)
	req.Header.Set("Origin", "http://"+addr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode != http.StatusServiceUnavailable
}
