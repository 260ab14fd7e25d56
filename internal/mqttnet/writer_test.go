package mqttnet

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recordingConn is a fake connection that records each write; the first
// write takes a while, as a write does when the socket is busy, so that
// what comes meanwhile queues up.
type recordingConn struct {
	net.Conn // nil: only the methods below are used
	mu       sync.Mutex
	writes   [][]byte
	slow     time.Duration
	gate     func(p []byte) // when set, called before every write: holds it on the wire
	fail     error          // returned by every write when set
	closed   bool
}

func (c *recordingConn) Write(p []byte) (int, error) {
	if c.gate != nil {
		c.gate(p)
	}
	c.mu.Lock()
	first, fail := len(c.writes) == 0, c.fail
	c.writes = append(c.writes, bytes.Clone(p))
	c.mu.Unlock()
	if first {
		time.Sleep(c.slow)
	}
	if fail != nil {
		return 0, fail
	}
	return len(p), nil
}

func (c *recordingConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (c *recordingConn) SetReadDeadline(time.Time) error  { return nil }
func (c *recordingConn) SetWriteDeadline(time.Time) error { return nil }
func (c *recordingConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *recordingConn) sent() ([]byte, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Join(c.writes, nil), len(c.writes)
}

// TestWritesCoalesced: packets written while a write is on the wire go out
// together, in order, and Close sends whatever is still queued.
func TestWritesCoalesced(t *testing.T) {
	for _, tc := range []struct {
		name    string
		packets int
		size    int
	}{
		{"1000 PUBACKs", 1000, 4},
		{"200 PUBLISHes of 600 B", 200, 600},
		{"past maxPending", 40, 16 << 10}, // 640 KiB: Write waits for room
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each write stays on the wire until the writer has queued
			// all it can meanwhile: every packet, or maxPending bytes
			// beyond what the writes took. How many writes carry the
			// packets is then fixed, whatever the scheduler does.
			total := int64(tc.packets * tc.size)
			var queued, taken atomic.Int64
			fake := &recordingConn{gate: func(p []byte) {
				took := taken.Add(int64(len(p)))
				for q := queued.Load(); q < total && q-took < maxPending; q = queued.Load() {
					time.Sleep(100 * time.Microsecond)
				}
			}}
			c := buffered(fake, 0)
			var want []byte
			for i := range tc.packets {
				p := bytes.Repeat([]byte{byte(i)}, tc.size)
				want = append(want, p...)
				if n, err := c.Write(p); n != len(p) || err != nil {
					t.Fatalf("write %d = %d, %v", i, n, err)
				}
				queued.Add(int64(len(p)))
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			got, writes := fake.sent()
			if !bytes.Equal(got, want) {
				t.Fatalf("sent %d bytes, not the %d written in order", len(got), len(want))
			}
			// The first write takes what was queued when the writer woke
			// (one packet or more); each later one a full maxPending, or
			// the rest.
			perWrite := max(1, maxPending/tc.size)
			if limit := 1 + (tc.packets-1+perWrite-1)/perWrite; writes > limit {
				t.Errorf("%d packets took %d writes; want them coalesced into at most %d", tc.packets, writes, limit)
			}
			if _, err := c.Write([]byte{1}); !errors.Is(err, net.ErrClosed) {
				t.Errorf("write after Close: %v, want net.ErrClosed", err)
			}
		})
	}
}

// TestWriteErrorSticks: a failed write closes the connection (so the
// reader fails and paho reconnects) and every later Write returns the
// error.
func TestWriteErrorSticks(t *testing.T) {
	boom := errors.New("connection reset")
	fake := &recordingConn{fail: boom}
	c := buffered(fake, 0)
	defer c.Close()
	if _, err := c.Write([]byte("first")); err != nil {
		t.Fatalf("the first write only queues: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.Write([]byte("next"))
		if errors.Is(err, boom) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes after the failure still return %v", err)
		}
		time.Sleep(time.Millisecond)
	}
	fake.mu.Lock()
	closed := fake.closed
	fake.mu.Unlock()
	if !closed {
		t.Error("the real connection was not closed after the failed write")
	}
}

// TestStuckPeer: a peer that reads nothing. With a WriteTimeout the write
// on the wire fails after it and a Write waiting for room returns the
// error; Close then returns at once. net.Pipe's writes block until read.
func TestStuckPeer(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := buffered(a, 100*time.Millisecond)
	big := make([]byte, maxPending)
	if _, err := c.Write(big); err != nil {
		t.Fatalf("first write only queues: %v", err)
	}
	errc := make(chan error, 1)
	go func() {
		var err error
		for err == nil {
			_, err = c.Write(big) // waits for room, then for the failure
		}
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write to a stuck peer: %v, want the write timeout", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write to a stuck peer never failed")
	}
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung after the write failed")
	}
}

// TestCloseSendsQueued: Close sends what is queued before it closes (the
// DISCONNECT paho writes just before closing must reach the broker), and
// gives up after closeFlush when the peer reads nothing.
func TestCloseSendsQueued(t *testing.T) {
	a, b := net.Pipe()
	c := buffered(a, 0)
	msg := []byte("disconnect")
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		all, _ := io.ReadAll(b)
		got <- all
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if g := <-got; !bytes.Equal(g, msg) {
		t.Fatalf("peer got %q, want %q", g, msg)
	}

	// Bytes queued behind a write in flight when Close comes are sent too
	// (the writer may see the stop before the kick: 20 rounds).
	for round := range 20 {
		fake := &recordingConn{slow: 5 * time.Millisecond}
		c := buffered(fake, 0)
		c.Write([]byte("a")) // taken by the writer, which is then busy
		time.Sleep(time.Millisecond)
		c.Write([]byte("b")) // queued behind it
		c.Close()
		if got, _ := fake.sent(); string(got) != "ab" {
			t.Fatalf("round %d: sent %q before closing, want \"ab\"", round, got)
		}
	}

	// Nobody reads: Close waits closeFlush, then closes anyway.
	a2, b2 := net.Pipe()
	defer b2.Close()
	c2 := buffered(a2, 0)
	if _, err := c2.Write(msg); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { c2.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeFlush + 10*time.Second):
		t.Fatal("Close hung on a peer that reads nothing")
	}
}

// TestWriteDeadlineIgnored: paho sets a write deadline around each
// PUBLISH; a Write only queues, so a past deadline must not fail it.
func TestWriteDeadlineIgnored(t *testing.T) {
	fake := &recordingConn{}
	c := buffered(fake, 0)
	if err := c.SetWriteDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("pub")); err != nil {
		t.Fatalf("write past a write deadline: %v", err)
	}
	c.Close()
	if got, _ := fake.sent(); string(got) != "pub" {
		t.Fatalf("sent %q", got)
	}
}
