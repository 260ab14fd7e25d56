package broker

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/wire"
)

func mqttString(s string) []byte { return append([]byte{byte(len(s) >> 8), byte(len(s))}, s...) }

func mqttPacket(header byte, body []byte) []byte {
	out := []byte{header}
	n := len(body)
	for {
		b := byte(n % 128)
		n /= 128
		if n > 0 {
			b |= 0x80
		}
		out = append(out, b)
		if n == 0 {
			break
		}
	}
	return append(out, body...)
}

// connect311 is an MQTT 3.1.1 CONNECT with a clean session, username and
// password, and a keep-alive of 0: mochi then sets no deadline at all on
// the connection.
func connect311(id, user, pass string) []byte {
	body := append(mqttString("MQTT"), 4, 0xC2, 0, 0)
	body = append(body, mqttString(id)...)
	body = append(body, mqttString(user)...)
	body = append(body, mqttString(pass)...)
	return mqttPacket(0x10, body)
}

func subscribe311(topic string) []byte {
	body := append([]byte{0, 1}, mqttString(topic)...)
	return mqttPacket(0x82, append(body, 1))
}

// readPacket reads one packet's type and body.
func readPacket(r *bufio.Reader) (byte, []byte, error) {
	h, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, mul := 0, 1
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		n += int(b&0x7f) * mul
		mul *= 128
		if b&0x80 == 0 {
			break
		}
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	return h >> 4, body, err
}

// syncLog collects the broker's log lines.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hogCPU keeps every core busy until the test ends, as on the busy
// machines where the shutdown hang was seen.
func hogCPU(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 1e5; i++ {
				}
			}
		}()
	}
	t.Cleanup(func() { close(stop); wg.Wait() })
}

// TestShutdownBounded: Run returns when ctx ends whatever the clients do.
// With mochi's Close alone, each of these held the shutdown for ever: a
// client that stopped reading with a keep-alive of 0 (the DISCONNECT waits
// behind a write that never completes, under the client's lock), and a
// connection that finishes CONNECT after the clients were told to leave (it
// stays connected and Close waits for it). Many connections are mid-CONNECT
// and the CPU is busy, as in the hang seen on a loaded machine.
func TestShutdownBounded(t *testing.T) {
	hogCPU(t)
	var logs syncLog
	o := Options{Listen: "127.0.0.1:0", Directory: testDirectory(t), ServiceUser: svcUser, ServicePassword: svcPass,
		ShutdownGrace: 300 * time.Millisecond, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	addr := b.Addr().String()

	// A gateway that subscribes to its ack topic, then never reads again.
	stuck, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	if tc, ok := stuck.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096) // a small window: the broker's writes block sooner
	}
	if _, err := stuck.Write(append(connect311("gw-a", "gw-a", "pa"), subscribe311(wire.AckTopic("lapa", "gw-a"))...)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stuck)
	for _, want := range []byte{2, 9} { // CONNACK, SUBACK
		_ = stuck.SetReadDeadline(time.Now().Add(30 * time.Second))
		typ, body, err := readPacket(r)
		if err != nil || typ != want || (typ == 2 && body[1] != 0) {
			t.Fatalf("packet %d %x %v, want type %d", typ, body, err, want)
		}
	}
	// Fill its socket buffers: the broker's write loop blocks holding the
	// client's lock (and so does the broker's own Publish to it, which
	// takes the same lock for the packet id).
	var published atomic.Int64
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		big := make([]byte, 64<<10)
		for ctx.Err() == nil && published.Load() < 1024 { // up to 64 MiB, far beyond any loopback socket buffers
			if b.Publish(wire.AckTopic("lapa", "gw-a"), big) != nil {
				return
			}
			published.Add(1)
		}
	}()
	defer func() { <-pubDone }()
	// 64 MiB cannot fit in the socket buffers: the publisher stops making
	// progress once the write loop is blocked. Wait for that (no publish
	// completing for half a second).
	last, since := published.Load(), time.Now()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n := published.Load()
		if n >= 1024 {
			t.Fatal("64 MiB went into a client that does not read: the write loop never blocked")
		}
		if n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > 500*time.Millisecond && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the publisher never blocked (%d publishes)", n)
		}
	}

	// Connections accepted and still sending CONNECT.
	var pending []net.Conn
	for range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		pending = append(pending, c)
	}
	// Wait until the broker has accepted them all (plus the stuck one).
	deadline := time.Now().Add(30 * time.Second)
	for len(b.conns.Open()) < len(pending)+1 {
		if time.Now().After(deadline) {
			t.Fatalf("the broker accepted %d connections, want %d", len(b.conns.Open()), len(pending)+1)
		}
		time.Sleep(time.Millisecond)
	}

	cancel()
	// Once the broker is stopping, one of them completes its CONNECT.
	for !b.closing.Load() {
		time.Sleep(time.Millisecond)
	}
	late := pending[0]
	if _, err := late.Write(connect311("gw-b", "gw-b", "pb")); err != nil {
		t.Fatal(err)
	}

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		done <- nil
	case <-time.After(60 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("Run has not returned 60 s after ctx ended (grace %s):\n%s", o.ShutdownGrace, buf[:runtime.Stack(buf, true)])
	}
	// Nothing is left open on the broker's side.
	if left := b.conns.Open(); len(left) > 0 {
		t.Errorf("%d connections still open after Run", len(left))
	}
	for _, cl := range b.srv.Clients.GetAll() {
		if !cl.Net.Inline && !cl.Closed() {
			t.Errorf("client %s (%s) still connected after Run", cl.ID, cl.Net.Remote)
		}
	}
	// The late CONNECT got no CONNACK: its connection is closed.
	if !closedWithin(late, 30*time.Second) {
		t.Error("the connection that sent CONNECT during the shutdown is still open")
	}
	if got := logs.String(); !strings.Contains(got, "fechadas à força") || !strings.Contains(got, "gw-a@") {
		t.Errorf("the shutdown log does not say what it cut:\n%s", got)
	}
}
