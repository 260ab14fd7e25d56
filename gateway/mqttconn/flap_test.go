package mqttconn_test

import (
	"crypto/ed25519"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/gateway/gatewaytest"
)

// flakyProxy stands between the gateway and the broker: it forwards TCP
// both ways and can cut every connection (a network flap: both ends see a
// reset) or freeze forwarding for a while without closing anything (a
// stall, as heavy packet loss looks to TCP).
type flakyProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	frozen chan struct{} // closed while traffic flows
}

func startFlakyProxy(t *testing.T, target string) *flakyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &flakyProxy{ln: ln, target: target, conns: map[net.Conn]bool{}, frozen: make(chan struct{})}
	close(p.frozen)
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *flakyProxy) url() string { return "tcp://" + p.ln.Addr().String() }

func (p *flakyProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[u] = true, true
		p.mu.Unlock()
		go p.pipe(c, u)
		go p.pipe(u, c)
	}
}

// pipe copies src to dst, waiting while the proxy is frozen.
func (p *flakyProxy) pipe(src, dst net.Conn) {
	defer func() {
		src.Close()
		dst.Close()
		p.mu.Lock()
		delete(p.conns, src)
		delete(p.conns, dst)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.frozen
			p.mu.Unlock()
			<-gate
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// cut closes every proxied connection.
func (p *flakyProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// freeze stops forwarding for d, keeping the connections open.
func (p *flakyProxy) freeze(d time.Duration) {
	p.mu.Lock()
	gate := make(chan struct{})
	p.frozen = gate
	p.mu.Unlock()
	time.Sleep(d)
	close(gate)
}

// TestNetworkFlaps is the lossy-link goal without tc netem (which
// would disturb every other test on the loopback): the gateway reaches the
// broker through a proxy that, each time batches got through again, either
// cuts all connections or stalls all traffic for 1–3 s, eight times. Every record is stored once,
// in order, with nothing lost.
func TestNetworkFlaps(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts brokers")
	}
	for name, start := range brokers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := start(t)
			px := startFlakyProxy(t, strings.TrimPrefix(b.url(), "tcp://"))
			id := "gw-flap-" + name
			dir := t.TempDir()
			h := startGateway(t, px.url(), id, dir, gwOpts{})
			c := gatewaytest.StartCentral(t, b.url(), "central-"+id, map[string]ed25519.PublicKey{id: h.key.Public().(ed25519.PublicKey)})
			if !gatewaytest.WaitFor(20*time.Second, func() bool { return c.Contiguous(id) >= 10 }) {
				t.Fatalf("no traffic before the flaps: contiguous %d", c.Contiguous(id))
			}
			for i := range 8 {
				// Each flap comes once the link carried traffic again.
				want := c.Contiguous(id) + 5
				if !gatewaytest.WaitFor(60*time.Second, func() bool { return c.Contiguous(id) >= want }) {
					t.Fatalf("flap %d: no traffic since the last one (contiguous %d, want %d)", i, c.Contiguous(id), want)
				}
				if i%2 == 0 {
					px.cut()
				} else {
					px.freeze(time.Duration(1+i%3) * time.Second)
				}
			}
			if !gatewaytest.WaitFor(60*time.Second, func() bool { return c.Contiguous(id) >= h.box.LastSeq()-2 }) {
				t.Fatalf("not caught up after the flaps: central contiguous %d, gateway last seq %d", c.Contiguous(id), h.box.LastSeq())
			}
			drainAndCheck(t, c, h, b, dir)
		})
	}
}
