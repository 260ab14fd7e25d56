// Package conntrack keeps the connections a server's listeners accepted and
// has not closed yet, and whether each has been read from. A shutdown needs
// both: which connections are still open after a grace, and whether the
// goroutine the server starts for each connection has begun — mochi v2.7.9
// joins its wait group in that goroutine, before its first read, so a Close
// that waits on the group before then races the Add.
//
// It is used by the product's embedded broker (internal/broker) and by the
// test broker (internal/mochitest).
//
// Overview of its parts: the connections a server's listeners accepted and
// have not closed, and whether each has been read from: what a shutdown needs
// to know that mochi's goroutine for every connection has started (mochi
// v2.7.9 joins its wait group there, so its `Close` races a connection
// accepted just before) and which connections are left after a grace; used by
// `internal/broker` and `internal/mochitest`.
package conntrack

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Set is the set of open connections accepted through it.
type Set struct {
	mu sync.Mutex
	m  map[*Conn]struct{}
}

// New returns an empty set.
func New() *Set { return &Set{m: map[*Conn]struct{}{}} }

// Track adds c to the set; the returned connection leaves it when closed.
func (s *Set) Track(c net.Conn) *Conn {
	t := &Conn{Conn: c, set: s}
	s.mu.Lock()
	s.m[t] = struct{}{}
	s.mu.Unlock()
	return t
}

// Open lists the connections not closed yet, in no order.
func (s *Set) Open() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Conn, 0, len(s.m))
	for t := range s.m {
		out = append(out, t)
	}
	return out
}

// Started reports whether every open connection has been read from.
func (s *Set) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.m {
		if !t.read.Load() {
			return false
		}
	}
	return true
}

// WaitStarted waits until Started holds or the deadline passes, and says
// which. A server's goroutine for a connection it has just accepted is
// microseconds away from its first read, so it looks every millisecond.
func (s *Set) WaitStarted(deadline time.Time) bool {
	for !s.Started() {
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// Listener wraps ln so that every connection it accepts is tracked in s.
func (s *Set) Listener(ln net.Listener) net.Listener { return listener{ln, s} }

type listener struct {
	net.Listener
	set *Set
}

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.set.Track(c), nil
}

// Conn is a tracked connection: it records its first read and leaves its
// set when closed.
type Conn struct {
	net.Conn
	set  *Set
	read atomic.Bool
	once sync.Once
}

func (t *Conn) Read(p []byte) (int, error) {
	t.read.Store(true)
	return t.Conn.Read(p)
}

// Close leaves the set, then closes the connection.
func (t *Conn) Close() error {
	t.once.Do(func() {
		t.set.mu.Lock()
		delete(t.set.m, t)
		t.set.mu.Unlock()
	})
	return t.Conn.Close()
}
