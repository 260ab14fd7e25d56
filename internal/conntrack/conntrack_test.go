package conntrack

import (
	"net"
	"sync"
	"testing"
	"time"
)

// TestSet: a connection is open from Accept until Close (closed twice, it
// leaves once); the set is started only once every open connection has
// been read from; a closed connection that was never read no longer holds
// it back.
func TestSet(t *testing.T) {
	s := New()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl := s.Listener(ln)
	defer tl.Close()
	const n = 3
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	var accepted []net.Conn
	for range n {
		c, err := tl.Accept()
		if err != nil {
			t.Fatal(err)
		}
		accepted = append(accepted, c)
	}
	if got := len(s.Open()); got != n {
		t.Fatalf("open = %d, want %d", got, n)
	}
	if s.Started() || s.WaitStarted(time.Now()) {
		t.Fatal("started before any read")
	}
	buf := make([]byte, 1)
	for _, c := range accepted[:n-1] {
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	if s.Started() {
		t.Fatal("started with one connection never read")
	}
	_ = accepted[n-1].Close()
	_ = accepted[n-1].Close()
	if got := len(s.Open()); got != n-1 || !s.Started() || !s.WaitStarted(time.Now()) {
		t.Fatalf("after closing the unread one: open = %d, started = %v", got, s.Started())
	}
	for _, c := range accepted[:n-1] {
		_ = c.Close()
	}
	if got := len(s.Open()); got != 0 {
		t.Fatalf("open = %d after closing all", got)
	}
}

// TestWaitStartedConcurrent: WaitStarted returns true once goroutines
// reading their connections (as a server's would) have all begun, while
// others keep connecting and closing.
func TestWaitStartedConcurrent(t *testing.T) {
	s := New()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl := s.Listener(ln)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				buf := make([]byte, 8)
				for {
					if _, err := c.Read(buf); err != nil {
						_ = c.Close()
						return
					}
				}
			})
		}
	})
	for range 50 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	}
	_ = tl.Close()
	if !s.WaitStarted(time.Now().Add(time.Minute)) {
		t.Error("WaitStarted timed out with every connection's reader running")
	}
	wg.Wait()
	if got := len(s.Open()); got != 0 {
		t.Errorf("open = %d after every reader closed its connection", got)
	}
}
