package mqttnet

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/sossego/sossego/internal/mochitest"
	"github.com/sossego/sossego/internal/testenv"
)

// noProxy clears the proxy variables that make Use leave paho's opener.
func noProxy(t *testing.T) {
	t.Setenv("ALL_PROXY", "")
	t.Setenv("all_proxy", "")
}

func TestSupports(t *testing.T) {
	for scheme, want := range map[string]bool{
		"tcp": true, "mqtt": true, "ssl": true, "tls": true, "mqtts": true, "mqtt+ssl": true, "tcps": true,
		"ws": false, "wss": false, "unix": false, "http": false, "": false,
	} {
		if got := Supports(scheme); got != want {
			t.Errorf("Supports(%q) = %v, want %v", scheme, got, want)
		}
	}
}

func TestUse(t *testing.T) {
	errCustom := errors.New("custom opener")
	custom := func(*url.URL, paho.ClientOptions) (net.Conn, error) { return nil, errCustom }
	// What opens connections: "open" (Open), "custom" (custom) or "paho" (paho's own).
	opener := func(o *paho.ClientOptions) string {
		if o.CustomOpenConnectionFn == nil {
			return "paho"
		}
		_, err := o.CustomOpenConnectionFn(&url.URL{Scheme: "gopher", Host: "x"}, *o)
		switch {
		case errors.Is(err, errCustom):
			return "custom"
		case err != nil && strings.Contains(err.Error(), `unsupported scheme "gopher"`):
			return "open"
		}
		return fmt.Sprintf("unknown (%v)", err)
	}
	for _, tc := range []struct {
		name    string
		brokers []string
		setup   func(*paho.ClientOptions)
		env     string // ALL_PROXY or all_proxy, set to a proxy
		want    string
	}{
		{name: "tcp", brokers: []string{"tcp://127.0.0.1:1883"}, want: "open"},
		{name: "no scheme", brokers: []string{"127.0.0.1:1883"}, want: "open"}, // paho adds tcp://
		{name: "mqtt", brokers: []string{"mqtt://broker.example:1883"}, want: "open"},
		{name: "mqtts", brokers: []string{"mqtts://broker.example:8883"}, want: "open"},
		{name: "tcp and ssl", brokers: []string{"tcp://a.example:1883", "ssl://b.example:8883"}, want: "open"},
		{name: "ws", brokers: []string{"ws://broker.example/mqtt"}, want: "paho"},
		{name: "wss", brokers: []string{"wss://broker.example/mqtt"}, want: "paho"},
		{name: "tcp and ws", brokers: []string{"tcp://a.example:1883", "ws://b.example/mqtt"}, want: "paho"},
		{name: "unix", brokers: []string{"unix:///run/mqtt.sock"}, want: "paho"},
		{name: "no broker", want: "paho"},
		{name: "connect attempt handler", brokers: []string{"ssl://broker.example:8883"}, want: "paho",
			setup: func(o *paho.ClientOptions) {
				o.SetConnectionAttemptHandler(func(_ *url.URL, c *tls.Config) *tls.Config { return c })
			}},
		{name: "custom opener kept", brokers: []string{"tcp://broker.example:1883"}, want: "custom",
			setup: func(o *paho.ClientOptions) { o.SetCustomOpenConnectionFn(custom) }},
		{name: "ALL_PROXY", brokers: []string{"tcp://broker.example:1883"}, env: "ALL_PROXY", want: "paho"},
		{name: "all_proxy", brokers: []string{"mqtts://broker.example:8883"}, env: "all_proxy", want: "paho"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noProxy(t)
			if tc.env != "" {
				t.Setenv(tc.env, "socks5://127.0.0.1:1080")
			}
			o := paho.NewClientOptions()
			for _, b := range tc.brokers {
				o.AddBroker(b)
			}
			if tc.setup != nil {
				tc.setup(o)
			}
			if got := Use(o); got != o {
				t.Fatal("Use did not return its argument")
			}
			if got := opener(o); got != tc.want {
				t.Errorf("opener after Use = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	closed := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	for _, tc := range []struct {
		url  string
		want []string // substrings of the error
		is   error
	}{
		{url: "ws://127.0.0.1:1/mqtt", want: []string{`unsupported scheme "ws"`}},
		{url: "wss://127.0.0.1:1/mqtt", want: []string{`unsupported scheme "wss"`}},
		{url: "unix:///run/mqtt.sock", want: []string{`unsupported scheme "unix"`}},
		{url: "http://127.0.0.1:1", want: []string{`unsupported scheme "http"`}},
		{url: "tcp://" + closed, want: []string{"mqttnet: open tcp://" + closed}, is: syscall.ECONNREFUSED},
		{url: "mqtts://" + closed, want: []string{"mqttnet: open mqtts://" + closed}, is: syscall.ECONNREFUSED},
	} {
		t.Run(tc.url, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Open(u, *paho.NewClientOptions().SetConnectTimeout(2 * time.Second))
			if err == nil {
				c.Close()
				t.Fatal("Open succeeded")
			}
			if c != nil {
				t.Errorf("Open returned a connection (%T) with its error", c)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}
}

// TestOpenTLS checks the TLS configuration Open dials with: the caller's,
// not modified, with ServerName from the broker host only when empty, and
// certificates verified.
func TestOpenTLS(t *testing.T) {
	pki := testenv.NewPKI(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pki.Issue("127.0.0.1", true)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
				_, _ = io.Copy(c, c) // echo
			}()
		}
	}()
	withName := func(name string) *tls.Config {
		c := pki.ClientTLS("")
		c.ServerName = name
		return c
	}
	for _, tc := range []struct {
		name, scheme string
		cfg          *tls.Config
		wantErr      string
	}{
		{name: "server name from the host", scheme: "ssl", cfg: pki.ClientTLS("")},
		{name: "server name given", scheme: "mqtts", cfg: withName("127.0.0.1")},
		{name: "server name kept", scheme: "tls", cfg: withName("broker.invalid"), wantErr: "broker.invalid"},
		{name: "nil config verifies", scheme: "tcps", cfg: nil, wantErr: "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before string
			if tc.cfg != nil {
				before = tc.cfg.ServerName
			}
			o := paho.NewClientOptions().SetTLSConfig(tc.cfg).SetConnectTimeout(5 * time.Second)
			c, err := Open(&url.URL{Scheme: tc.scheme, Host: ln.Addr().String()}, *o)
			if tc.cfg != nil && tc.cfg.ServerName != before {
				t.Errorf("Open changed the caller's ServerName from %q to %q", before, tc.cfg.ServerName)
			}
			if tc.wantErr != "" {
				if err == nil {
					c.Close()
					t.Fatal("Open succeeded")
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %q does not mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, ok := c.(*conn); !ok {
				t.Fatalf("Open returned %T, want the buffered *conn", c)
			}
			if _, err := c.Write([]byte("ping")); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 4)
			if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
				t.Fatalf("echo = %q, %v", got, err)
			}
		})
	}
}

// TestDeadlines: a deadline bounds reads that wait on the network, data
// already buffered is returned regardless, a timeout does not stick once
// the deadline is cleared, and Close ends a blocked read with the error
// paho recognises ("use of closed network connection").
func TestDeadlines(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(srv)
			return
		}
		srv <- c
	}()
	c, err := Open(&url.URL{Scheme: "tcp", Host: ln.Addr().String()}, *paho.NewClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, ok := <-srv
	if !ok {
		t.Fatal("accept failed")
	}
	defer s.Close()
	b := make([]byte, 1)

	if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(b); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with nothing sent = %d, %v; want the deadline", n, err)
	}

	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(b); n != 1 || err != nil || b[0] != 'a' {
		t.Fatalf("read after clearing the deadline = %d %q, %v; want \"a\"", n, b[:n], err)
	}

	if err := c.SetDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(b); n != 1 || err != nil || b[0] != 'b' {
		t.Fatalf("read of buffered data past the deadline = %d %q, %v; want \"b\"", n, b[:n], err)
	}
	if n, err := c.Read(b); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline with the buffer empty = %d, %v; want the deadline", n, err)
	}

	if err := c.SetDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(b)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) || !strings.Contains(err.Error(), "use of closed network connection") {
			t.Fatalf("blocked read after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a blocked read")
	}
}

// countingConn counts the Read calls on the real connection.
type countingConn struct {
	net.Conn
	reads atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.Conn.Read(p)
}

// TestBufferedReads is the point of the package: a paho client receiving
// a burst of small packets makes far fewer reads on the connection than
// it receives packets (without the buffer paho makes at least three per
// packet: type, remaining length, body). A fake broker answers CONNECT
// with CONNACK and n QoS 0 PUBLISH packets in one write.
func TestBufferedReads(t *testing.T) {
	const n = 2000
	var burst bytes.Buffer
	if err := packets.NewControlPacket(packets.Connack).Write(&burst); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		p := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
		p.TopicName = "burst"
		p.Payload = fmt.Appendf(nil, "%06d", i)
		if err := p.Write(&burst); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := packets.ReadPacket(c); err != nil { // CONNECT
			return
		}
		if _, err := c.Write(burst.Bytes()); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, c) // until the client leaves
	}()

	var (
		counted atomic.Pointer[countingConn]
		mu      sync.Mutex
		got     int
		bad     []string
		all     = make(chan struct{})
	)
	opts := paho.NewClientOptions().AddBroker("tcp://" + ln.Addr().String()).SetClientID("burst").
		SetAutoReconnect(false).SetConnectTimeout(5 * time.Second).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			mu.Lock()
			defer mu.Unlock()
			if want := fmt.Sprintf("%06d", got); string(m.Payload()) != want && len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("message %d: %q", got, m.Payload()))
			}
			if got++; got == n {
				close(all)
			}
		}).
		// Open, with the real connection counted under the buffer.
		SetCustomOpenConnectionFn(func(u *url.URL, o paho.ClientOptions) (net.Conn, error) {
			c, err := dial(u, o)
			if err != nil {
				return nil, err
			}
			cc := &countingConn{Conn: c}
			counted.Store(cc)
			return buffered(cc, o.WriteTimeout), nil
		})
	cl := paho.NewClient(opts)
	if tok := cl.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer cl.Disconnect(0)
	select {
	case <-all:
	case <-time.After(5 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("received %d of %d messages", got, n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("messages out of order or corrupted: %v", bad)
	}
	reads := counted.Load().reads.Load()
	t.Logf("%d packets (%d bytes) in %d reads on the connection", n+1, burst.Len(), reads)
	if reads > n/20 {
		t.Errorf("%d reads on the connection for %d packets; want at most %d (unbuffered: at least %d)", reads, n+1, n/20, 3*(n+1))
	}
}

// testBroker is a broker to run a client against.
type testBroker struct {
	url string
	tls *tls.Config // client configuration; nil for plain TCP
}

// startMochi starts an in-process mochi broker (allow-all) on a free port,
// with TLS when cert is set, and stops it at the end of the test.
func startMochi(t *testing.T, cert *tls.Certificate) string {
	t.Helper()
	var cfg *tls.Config
	if cert != nil {
		cfg = &tls.Config{Certificates: []tls.Certificate{*cert}}
	}
	return mochitest.StartTLS(t, cfg).Addr
}

func brokers() []struct {
	name  string
	start func(t *testing.T) testBroker
} {
	return []struct {
		name  string
		start func(t *testing.T) testBroker
	}{
		{"mosquitto/tcp", func(t *testing.T) testBroker {
			return testBroker{url: testenv.StartMosquitto(t, testenv.MosquittoOpts{}).URL}
		}},
		{"mosquitto/ssl", func(t *testing.T) testBroker {
			pki := testenv.NewPKI(t)
			dir := t.TempDir()
			// Started as root, mosquitto may read its files as its own user.
			for _, d := range []string{filepath.Dir(dir), dir} {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cert, key, _ := pki.ServerFiles(dir, "127.0.0.1")
			port := testenv.FreePort(t)
			testenv.StartMosquitto(t, testenv.MosquittoOpts{Extra: []string{
				fmt.Sprintf("listener %d 127.0.0.1", port), "certfile " + cert, "keyfile " + key}})
			return testBroker{url: fmt.Sprintf("ssl://127.0.0.1:%d", port), tls: pki.ClientTLS("")}
		}},
		{"mochi/tcp", func(t *testing.T) testBroker {
			return testBroker{url: "tcp://" + startMochi(t, nil)}
		}},
		{"mochi/mqtts", func(t *testing.T) testBroker {
			pki := testenv.NewPKI(t)
			cert := pki.Issue("127.0.0.1", true)
			return testBroker{url: "mqtts://" + startMochi(t, &cert), tls: pki.ClientTLS("")}
		}},
	}
}

// payload is message i of the given size: its index in the first four
// bytes (when it has room) and a pattern depending on i.
func payload(i, size int) []byte {
	b := make([]byte, size)
	for j := range b {
		b[j] = byte(i*7 + j*31)
	}
	if size >= 4 {
		binary.BigEndian.PutUint32(b, uint32(i))
	}
	return b
}

// TestRoundTrip connects paho clients through Use/Open to real brokers,
// over TCP and TLS, and checks that QoS 1 messages of every remaining-length
// width (1 to 4 bytes), around and beyond the read buffer's size, and a
// burst of small ones, all arrive intact and in order.
func TestRoundTrip(t *testing.T) {
	const topic = "mqttnet/test"
	overhead := 2 + len(topic) + 2 // remaining length of a QoS 1 PUBLISH = overhead + payload
	edges := []int{0, 1, 127 - overhead, 128 - overhead, 16383 - overhead, 16384 - overhead,
		readBuffer - 1, readBuffer, readBuffer + 1, 100_000, 2_097_151 - overhead, 2_097_152 - overhead}
	var sizes []int
	sizes = append(sizes, edges...)
	for i := range 300 {
		sizes = append(sizes, 4+i%60)
	}
	for i := len(edges) - 1; i >= 0; i-- {
		sizes = append(sizes, edges[i])
	}
	want := make([][]byte, len(sizes))
	for i, s := range sizes {
		want[i] = payload(i, s)
	}

	for _, b := range brokers() {
		t.Run(b.name, func(t *testing.T) {
			noProxy(t)
			br := b.start(t)
			var opened atomic.Int32
			connect := func(id string, o *paho.ClientOptions) paho.Client {
				t.Helper()
				o.AddBroker(br.url).SetClientID(id).SetTLSConfig(br.tls).SetAutoReconnect(false).
					SetConnectRetry(true).SetConnectRetryInterval(100 * time.Millisecond).
					SetConnectTimeout(5 * time.Second).SetWriteTimeout(10 * time.Second)
				if Use(o).CustomOpenConnectionFn == nil {
					t.Fatalf("Use did not install Open for %s", br.url)
				}
				open := o.CustomOpenConnectionFn
				o.SetCustomOpenConnectionFn(func(u *url.URL, o paho.ClientOptions) (net.Conn, error) {
					c, err := open(u, o)
					if err != nil {
						return nil, err
					}
					if _, ok := c.(*conn); !ok {
						c.Close()
						return nil, fmt.Errorf("opened %T, want *conn", c)
					}
					opened.Add(1)
					return c, nil
				})
				c := paho.NewClient(o)
				if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
					t.Fatalf("%s: connect %s: %v", id, br.url, tok.Error())
				}
				t.Cleanup(func() { c.Disconnect(0) })
				return c
			}

			var (
				mu  sync.Mutex
				got [][]byte
				all = make(chan struct{})
			)
			sub := connect("sub", paho.NewClientOptions().SetOrderMatters(true))
			tok := sub.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
				mu.Lock()
				defer mu.Unlock()
				if got = append(got, m.Payload()); len(got) == len(want) {
					close(all)
				}
			})
			if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
				t.Fatalf("subscribe: %v", tok.Error())
			}

			pub := connect("pub", paho.NewClientOptions())
			toks := make([]paho.Token, len(want))
			for i, p := range want {
				toks[i] = pub.Publish(topic, 1, false, p)
			}
			for i, tok := range toks {
				if !tok.WaitTimeout(20*time.Second) || tok.Error() != nil {
					t.Fatalf("publish %d (%d bytes): %v", i, len(want[i]), tok.Error())
				}
			}
			select {
			case <-all:
			case <-time.After(20 * time.Second):
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != len(want) {
				t.Fatalf("received %d of %d messages", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("message %d: got %d bytes, want %d bytes (%d); out of order or corrupted", i, len(got[i]), len(want[i]), sizes[i])
				}
			}
			if n := opened.Load(); n < 2 {
				t.Errorf("Open made %d connections, want one per client", n)
			}
		})
	}
}

// failingConn is a real connection whose writes fail once armed, as
// writes do when the broker has gone (broken pipe) before the reader has
// seen it go.
type failingConn struct {
	net.Conn
	fail atomic.Bool
}

var errBrokenPipe = errors.New("write: broken pipe")

func (c *failingConn) Write(p []byte) (int, error) {
	if c.fail.Load() {
		return 0, errBrokenPipe
	}
	return c.Conn.Write(p)
}

// TestFailedWriteReported: a write that fails before the reader has seen
// the broker go ends the connection, and paho learns it at once — not at
// its keepalive (an hour here), which is when it would learn it if the
// reader only met the closed connection (paho's reader keeps quiet about
// "use of closed network connection", taking it for its own Close). A
// paho Disconnect stays quiet as before.
func TestFailedWriteReported(t *testing.T) {
	for _, b := range brokers() {
		t.Run(b.name, func(t *testing.T) {
			br := b.start(t)
			var fc atomic.Pointer[failingConn]
			lost := make(chan error, 4)
			o := paho.NewClientOptions().AddBroker(br.url).SetClientID("failing").SetTLSConfig(br.tls).
				SetKeepAlive(time.Hour).SetAutoReconnect(false).SetWriteTimeout(5 * time.Second).
				SetConnectionLostHandler(func(_ paho.Client, err error) { lost <- err }).
				SetCustomOpenConnectionFn(func(u *url.URL, o paho.ClientOptions) (net.Conn, error) {
					c, err := dial(u, o)
					if err != nil {
						return nil, err
					}
					f := &failingConn{Conn: c}
					fc.Store(f)
					return buffered(f, o.WriteTimeout), nil
				})
			c := paho.NewClient(o)
			if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
				t.Fatalf("connect %s: %v", br.url, tok.Error())
			}
			fc.Load().fail.Store(true)
			// QoS 0: paho's write returns once queued; the failure happens
			// in the writer, and nothing is written after it.
			if tok := c.Publish("mqttnet/failing", 0, false, "x"); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
				t.Fatalf("publish: %v", tok.Error())
			}
			select {
			case err := <-lost:
				if !errors.Is(err, errBrokenPipe) {
					t.Errorf("connection lost with %v, want the write's error", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("paho did not notice the failed write (it would at its keepalive, an hour away)")
			}

			// A clean Disconnect is not a lost connection.
			fc.Store(nil)
			if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
				t.Fatalf("reconnect %s: %v", br.url, tok.Error())
			}
			c.Disconnect(250)
			select {
			case err := <-lost:
				t.Errorf("Disconnect reported a lost connection: %v", err)
			case <-time.After(500 * time.Millisecond):
			}
		})
	}
}
