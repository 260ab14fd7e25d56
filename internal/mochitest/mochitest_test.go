package mochitest

import (
	"crypto/tls"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/testenv"
)

// connect sends an MQTT 3.1.1 CONNECT (clean session, client id id) on c
// and returns the CONNACK's return code.
func connect(c net.Conn, id string) (byte, error) {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	vh := []byte{0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 60, 0, byte(len(id))}
	pk := append([]byte{0x10, byte(len(vh) + len(id))}, vh...)
	pk = append(pk, id...)
	if _, err := c.Write(pk); err != nil {
		return 0, err
	}
	ack := make([]byte, 4)
	if _, err := io.ReadFull(c, ack); err != nil {
		return 0, err
	}
	return ack[3], nil
}

func TestConnect(t *testing.T) {
	pki := testenv.NewPKI(t)
	cert := pki.Issue("127.0.0.1", true)
	for _, tc := range []struct {
		name string
		cfg  *tls.Config
		dial func(addr string) (net.Conn, error)
	}{
		{"tcp", nil, func(addr string) (net.Conn, error) { return net.Dial("tcp", addr) }},
		{"tls", &tls.Config{Certificates: []tls.Certificate{cert}}, func(addr string) (net.Conn, error) {
			return tls.Dial("tcp", addr, pki.ClientTLS(""))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := StartTLS(t, tc.cfg)
			for round := range 2 { // and again after a restart on the same port
				c, err := tc.dial(b.Addr)
				if err != nil {
					t.Fatalf("round %d: dial: %v", round, err)
				}
				code, err := connect(c, "c"+strconv.Itoa(round))
				c.Close()
				if err != nil || code != 0 {
					t.Fatalf("round %d: CONNACK code %d, err %v", round, code, err)
				}
				b.Stop()
				if c, err := net.DialTimeout("tcp", b.Addr, time.Second); err == nil {
					c.Close()
					t.Fatalf("round %d: a stopped broker still accepts connections", round)
				}
				if err := b.Start(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// Stopping the broker while clients keep connecting must neither hang nor
// race (mochi's own Close does both, now and then, under -race).
func TestStopWhileClientsConnect(t *testing.T) {
	b := Start(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := 0
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.DialTimeout("tcp", b.Addr, time.Second)
				if err != nil {
					continue // stopped for the moment
				}
				if code, err := connect(c, "w"+strconv.Itoa(w)+"-"+strconv.Itoa(i)); err == nil && code == 0 {
					mu.Lock()
					acked++
					mu.Unlock()
				}
				c.Close()
			}
		}()
	}
	for range 30 {
		b.Stop()
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		// Let some clients in before the next stop.
		mu.Lock()
		want := acked + 1
		mu.Unlock()
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			n := acked
			mu.Unlock()
			if n >= want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no client got in for 30 s after a restart")
			}
			time.Sleep(time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
}
