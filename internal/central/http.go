package central

// The HTTP server's construction: timeouts, request body bounds and the
// connection cap, so that no client (logged in or not) can hold more of the
// server than its share.
//
//   - A new connection has HeaderTimeout to send its request line and
//     headers, a body BodyTimeout from the end of its headers (a read
//     deadline set per request through http.ResponseController) and at most
//     MaxBody bytes (http.MaxBytesReader; a larger Content-Length is refused
//     with 413 before anything is read).
//   - A response must be taken within WriteTimeout. The live feed (/ws) is
//     long-lived: the write deadline is cleared before its upgrade (and
//     gorilla/websocket clears both after the handshake) and the hub then sets
//     its own on every connection — a write deadline on each frame and ping
//     (HubOptions.WriteWait) and a read deadline renewed by every pong
//     (HubOptions.PongWait) — so a quiet but healthy browser stays.
//   - A keep-alive connection idle for IdleTimeout is closed.
//   - At most MaxConns connections are open, and at most MaxConnsPerIP from
//     one source (its address, or its /64 for IPv6; trusted proxies are
//     exempt, their clients are told apart by the login limiter). One over
//     the cap is accepted, answered at once with 503, Retry-After and a
//     pt-BR message, and closed: the kernel's queue never fills with
//     connections waiting for a turn.

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/registry"
)

// HTTPLimits bound what clients may hold of the HTTP server; zero fields
// take the defaults shown.
type HTTPLimits struct {
	HeaderTimeout time.Duration // to send the request line and headers; 10 s
	BodyTimeout   time.Duration // to send a request body, from the end of its headers; 60 s
	WriteTimeout  time.Duration // to take a response, from the end of the request's headers (not /ws); 5 min
	IdleTimeout   time.Duration // a keep-alive connection between requests; 60 s
	MaxBody       int64         // bytes of a request body; the largest register file (registry.MaxFileSize) plus one
	MaxConns      int           // open connections; DefaultHTTPMaxConns
	MaxConnsPerIP int           // open connections from one source; DefaultHTTPMaxConnsPerIP
}

// Defaults of the connection caps (sossego central --http-max-conns, --http-max-conns-per-ip).
const (
	DefaultHTTPMaxConns      = 1024
	DefaultHTTPMaxConnsPerIP = 128 // an office behind one NAT address: a dozen browsers at ~7 connections each
)

func (l HTTPLimits) withDefaults() HTTPLimits {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&l.HeaderTimeout, 10*time.Second)
	def(&l.BodyTimeout, 60*time.Second)
	def(&l.WriteTimeout, 5*time.Minute)
	def(&l.IdleTimeout, 60*time.Second)
	if l.MaxBody <= 0 {
		l.MaxBody = registry.MaxFileSize + 1 // PUT /api/v1/registry tells a too large file itself
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultHTTPMaxConns
	}
	if l.MaxConnsPerIP <= 0 {
		l.MaxConnsPerIP = DefaultHTTPMaxConnsPerIP
	}
	return l
}

// newHTTPServer returns the server of h with lim's timeouts and body bounds
// (serve it on listenHTTP's listener for the connection caps).
func newHTTPServer(h http.Handler, lim HTTPLimits, log *slog.Logger) *http.Server {
	lim = lim.withDefaults()
	return &http.Server{
		Handler:           boundRequests(h, lim),
		ReadHeaderTimeout: lim.HeaderTimeout,
		// The whole request, as a backstop to the per-request body deadline.
		ReadTimeout:    lim.HeaderTimeout + lim.BodyTimeout,
		WriteTimeout:   lim.WriteTimeout,
		IdleTimeout:    lim.IdleTimeout,
		MaxHeaderBytes: 64 << 10,
		// net/http's own messages (malformed requests, hijack misuse) are
		// English and say nothing an operator acts on.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}

// boundRequests applies the body bounds and, for the live feed, hands the
// connection's deadlines over to the hub.
func boundRequests(next http.Handler, lim HTTPLimits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.ContentLength > lim.MaxBody {
			w.Header().Set("Connection", "close")
			dashboard.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("corpo da requisição maior que %d bytes", lim.MaxBody))
			// Nothing of the body will be read: the server must not wait
			// for it before closing (it would, to drain a small one).
			_ = rc.Flush()
			_ = rc.SetReadDeadline(time.Now())
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			// Only with a body: without one the server is already
			// reading the connection in the background (to notice the
			// client leave), and a deadline would end that read and
			// cancel the request.
			r.Body = http.MaxBytesReader(w, r.Body, lim.MaxBody)
			_ = rc.SetReadDeadline(time.Now().Add(lim.BodyTimeout))
		}
		if r.URL.Path == "/ws" {
			// The hub sets a deadline on every write of the socket; the
			// server's response deadline must not end the feed.
			_ = rc.SetWriteDeadline(time.Time{})
		}
		next.ServeHTTP(w, r)
	})
}

// connCap is a listener that keeps at most max connections open, at most
// perSource from one source, refusing the others at once.
type connCap struct {
	net.Listener
	max, perSource int
	proxies        *dashboard.Proxies
	log            *slog.Logger

	mu      sync.Mutex
	open    int
	sources map[netip.Prefix]int

	openGauge prometheus.Gauge
	refused   *prometheus.CounterVec
	lastLog   atomic.Int64 // unix seconds of the last refusal logged
}

// capConns wraps ln with lim's connection caps; the gauge and counter go to reg.
func capConns(ln net.Listener, lim HTTPLimits, proxies *dashboard.Proxies, reg prometheus.Registerer, log *slog.Logger) *connCap {
	lim = lim.withDefaults()
	c := &connCap{Listener: ln, max: lim.MaxConns, perSource: lim.MaxConnsPerIP, proxies: proxies, log: log,
		sources: map[netip.Prefix]int{},
		openGauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sossego_http_connections",
			Help: "Open HTTP connections (dashboard, API, live feed)."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sossego_http_connections_refused_total",
			Help: "HTTP connections refused at once because a cap was reached: reason total (--http-max-conns) or source (--http-max-conns-per-ip)."},
			[]string{"reason"}),
	}
	if reg != nil {
		reg.MustRegister(c.openGauge, c.refused)
	}
	return c
}

// Accept returns the next connection within the caps; those over a cap are
// answered and closed here.
func (c *connCap) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src, counted := c.source(conn)
		c.mu.Lock()
		reason := ""
		switch {
		case c.open >= c.max:
			reason = "total"
		case counted && c.sources[src] >= c.perSource:
			reason = "source"
		default:
			c.open++
			if counted {
				c.sources[src]++
			}
		}
		open := c.open
		c.mu.Unlock()
		if reason == "" {
			c.openGauge.Set(float64(open))
			return &cappedConn{Conn: conn, c: c, src: src, counted: counted}, nil
		}
		c.refuse(conn, reason, src)
	}
}

// source is the block a connection's peer controls; counted is false for
// trusted proxies (and non-IP peers).
func (c *connCap) source(conn net.Conn) (netip.Prefix, bool) {
	ta, ok := conn.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}, false
	}
	a := ta.AddrPort().Addr().Unmap()
	if !a.IsValid() || c.proxies.Trusted(a) {
		return netip.Prefix{}, false
	}
	return dashboard.SourceOf(a), true
}

const refusedBody = `{"erro":"servidor com conexões demais abertas: tente de novo em alguns segundos"}` + "\n"

var refusedResponse = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n" +
	"Retry-After: 5\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(refusedBody)) + "\r\n\r\n" + refusedBody)

// refuse answers 503 without waiting for the request (a fresh socket's send
// buffer takes it at once; the deadline covers a peer that shrank it) and
// closes the connection.
func (c *connCap) refuse(conn net.Conn, reason string, src netip.Prefix) {
	c.refused.WithLabelValues(reason).Inc()
	_ = conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = conn.Write(refusedResponse)
	_ = conn.Close()
	if now := time.Now().Unix(); c.lastLog.Load() < now-60 {
		c.lastLog.Store(now)
		what := "total (--http-max-conns)"
		if reason == "source" {
			what = "por origem (--http-max-conns-per-ip), origem " + src.String()
		}
		c.log.Warn("conexões HTTP recusadas: limite "+what+" atingido; veja sossego_http_connections_refused_total",
			"abertas", c.Open())
	}
}

// Open is the number of connections open now.
func (c *connCap) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

func (c *connCap) release(src netip.Prefix, counted bool) {
	c.mu.Lock()
	c.open--
	if counted {
		if c.sources[src]--; c.sources[src] <= 0 {
			delete(c.sources, src)
		}
	}
	open := c.open
	c.mu.Unlock()
	c.openGauge.Set(float64(open))
}

// cappedConn gives its place back when closed (also after a hijack: the
// hub closes the same connection).
type cappedConn struct {
	net.Conn
	c       *connCap
	src     netip.Prefix
	counted bool
	once    sync.Once
}

func (k *cappedConn) Close() error {
	err := k.Conn.Close()
	k.once.Do(func() { k.c.release(k.src, k.counted) })
	return err
}
