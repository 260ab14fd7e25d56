// Package mochitest is an in-process mochi-mqtt broker for tests: allow-all
// auth, a fixed loopback port, plain TCP or TLS, stopped and started again
// at will, and a shutdown that the race detector has nothing to say about.
package mochitest

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/sossego/sossego/internal/conntrack"
)

// Broker is an in-process mochi-mqtt broker (allow-all auth, as in a test)
// on a fixed loopback port, that can be stopped and started again.
//
// Its Stop avoids two faults of mochi v2.7.9's Server.Close that the race
// detector reports when clients are still (re)connecting:
//   - a connection's goroutine joins Listeners.ClientsWg (Add) only once it
//     runs, so Close's Wait can race that Add for a connection accepted
//     just before;
//   - its own client closer read-locks the client map twice, which
//     deadlocks against a client removing itself in between.
//
// So Stop closes the TCP listener first, waits until every accepted
// connection's goroutine has started reading (it joined the wait group
// before its first read), disconnects the clients with one read of the
// map, and only then closes the server. internal/broker does the same for
// the product's embedded broker, with the same internal/conntrack.
type Broker struct {
	Addr, URL string
	// TLS, when set before Start, serves MQTT over TLS with this
	// configuration (URL then starts with ssl://).
	TLS *tls.Config

	mu    sync.Mutex
	srv   *mochi.Server
	raw   net.Listener
	conns *conntrack.Set
}

// Start starts a plain-TCP broker on a free port and stops it at the end of
// the test.
func Start(t testing.TB) *Broker { return StartTLS(t, nil) }

// StartTLS starts a broker on a free port, serving TLS with cfg when it is
// not nil, and stops it at the end of the test.
func StartTLS(t testing.TB, cfg *tls.Config) *Broker {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}

// New picks a free loopback port for a broker, TLS when cfg is set;
// Start starts it.
func New(cfg *tls.Config) (*Broker, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	scheme := "tcp://"
	if cfg != nil {
		scheme = "ssl://"
	}
	return &Broker{Addr: addr, URL: scheme + addr, TLS: cfg}, nil
}

// Start (re)starts the broker on its port. Sessions and queued messages of
// the previous instance are gone, as after a crash without persistence.
func (m *Broker) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.srv != nil {
		return nil
	}
	var raw net.Listener
	var err error
	for range 100 { // the old listener may still hold the port for a moment
		if raw, err = net.Listen("tcp", m.Addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("mochitest: listen %s: %w", m.Addr, err)
	}
	conns := conntrack.New()
	ln := conns.Listener(raw)
	if m.TLS != nil {
		ln = tls.NewListener(ln, m.TLS)
	}
	srv := mochi.New(&mochi.Options{InlineClient: false, Logger: slog.New(slog.DiscardHandler)})
	if err := srv.AddHook(new(auth.AllowHook), nil); err != nil {
		raw.Close()
		return err
	}
	if err := srv.AddListener(listeners.NewNet("t", ln)); err != nil {
		raw.Close()
		return err
	}
	go func() { _ = srv.Serve() }()
	m.srv, m.raw, m.conns = srv, raw, conns
	return nil
}

// Stop closes the broker and every connection (no Will is sent for clients
// of a closing server — a broker crash, from the clients' point of view).
func (m *Broker) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.srv == nil {
		return
	}
	srv := m.srv
	m.srv = nil
	_ = m.raw.Close() // no new connection; mochi's accept loop ends
	m.conns.WaitStarted(time.Now().Add(10 * time.Second))
	srv.Listeners.CloseAll(func(listener string) {
		for _, cl := range srv.Clients.GetAll() {
			if cl.Net.Listener == listener && !cl.Closed() {
				_ = srv.DisconnectClient(cl, packets.ErrServerShuttingDown)
			}
		}
	})
	_ = srv.Close()
}
