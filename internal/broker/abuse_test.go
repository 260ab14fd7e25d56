package broker

import (
	"errors"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/wire"
)

// closedWithin reports whether the broker closes c (a read ends in EOF or a
// reset rather than our own deadline) within d.
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 64)
	for {
		if _, err := c.Read(buf); err != nil {
			return !errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
}

// TestMQTTAbuse is the MQTT-abuse goal against the embedded broker,
// with raw bytes: connections that never send CONNECT are closed after
// ConnectTimeout (mochi alone would wait forever), a PUBLISH before CONNECT
// and a header claiming a 256 MB packet are refused without delivering or
// allocating anything, and the broker keeps serving; a client that did
// CONNECT is not cut by the connect deadline.
func TestMQTTAbuse(t *testing.T) {
	const timeout = 500 * time.Millisecond
	b := startBroker(t, Options{ConnectTimeout: timeout})
	svc := mustConnect(t, b.URL(), "svc", svcUser, svcPass)
	all := &collector{msgs: map[string][]string{}}
	subscribe(t, svc, "sossego/v1/#", all)
	addr := b.Addr().String()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	t.Run("idle connections closed", func(t *testing.T) {
		base := runtime.NumGoroutine()
		conns := make([]net.Conn, 200)
		for i := range conns {
			conns[i] = dial()
		}
		for i, c := range conns {
			if !closedWithin(c, 10*timeout) {
				t.Fatalf("idle connection %d still open after %v", i, 10*timeout)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > base+10 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > base+10 {
			t.Errorf("%d goroutines after the idle connections were closed, %d before", n, base)
		}
	})

	t.Run("PUBLISH before CONNECT", func(t *testing.T) {
		c := dial()
		topic := wire.LevelsTopic("lapa", "gw-a", "s1")
		payload := []byte("sneaky")
		rem := 2 + len(topic) + len(payload) // QoS 0: topic length, topic, payload
		pk := append([]byte{0x30, byte(rem), byte(len(topic) >> 8), byte(len(topic))}, topic...)
		pk = append(pk, payload...)
		if _, err := c.Write(pk); err != nil {
			t.Fatal(err)
		}
		if !closedWithin(c, 10*timeout) {
			t.Fatal("connection that published before CONNECT still open")
		}
	})

	t.Run("256 MB header", func(t *testing.T) {
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := dial()
		// CONNECT with remaining length 268,435,455 (the MQTT maximum).
		if _, err := c.Write([]byte{0x10, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x04, 'M', 'Q', 'T', 'T'}); err != nil {
			t.Fatal(err)
		}
		if !closedWithin(c, 10*timeout) {
			t.Fatal("connection announcing a 256 MB packet still open")
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 32<<20 {
			t.Errorf("heap grew %d MB after a 256 MB header", grew>>20)
		}
	})

	// A client that did CONNECT lives by its keep-alive, not by the
	// connect deadline; and the broker still serves.
	a := mustConnect(t, b.URL(), "gw-a", "gw-a", "pa")
	time.Sleep(3 * timeout)
	if !a.IsConnectionOpen() {
		t.Fatal("a connected client was cut by the connect deadline")
	}
	barrier(t, a, wire.StatusTopic("lapa", "gw-a"), all)
	if n := all.count(wire.LevelsTopic("lapa", "gw-a", "s1")); n != 0 {
		t.Errorf("%d messages published before CONNECT were delivered", n)
	}
}
