// Package mqttnet opens paho's network connections with buffered reads
// and coalesced writes.
//
// # Reads
//
// paho.mqtt.golang v1.5.1 reads every packet straight from the net.Conn
// (packets.ReadPacket): one read for the type byte, one per byte of the
// remaining length, one for the body — about four read system calls per
// received PUBLISH. Open dials the connection the way paho's own opener
// does and puts a bufio.Reader in front of it, so that a burst of packets
// costs one read per burst instead of four per packet.
//
// Read deadlines keep their meaning: paho v1.5.1 sets one only around the
// CONNECT/CONNACK handshake (SetDeadline, cleared once connected); the
// keepalive is a timer that closes the connection, not a read deadline.
// A deadline bounds the underlying Read calls, and the bufio.Reader makes
// one only when its buffer is empty — exactly the reads that wait on the
// network. A read that buffered data can satisfy returns it without
// waiting, as it should. bufio.Reader.Read makes at most one underlying
// Read per call and returns whatever that read got, so buffering adds no
// latency; it hands an underlying error (a timeout, a closed connection)
// to the caller once and does not keep it, as a bare conn would.
//
// paho reads the connection from one goroutine at a time (the CONNACK in
// the connecting goroutine, then its single incoming-packets goroutine),
// so the unsynchronised bufio.Reader is safe; each (re)connection gets a
// new one.
//
// # Writes
//
// paho writes each packet with its own write system call, from one
// goroutine that takes the next packet only when the write has returned:
// a subscriber acknowledging a group of messages (the central service
// sends its PUBACKs after each group commit) or a gateway draining its
// outbox makes one write per packet. Open's connection queues what paho
// writes and a goroutine per connection sends it: everything queued while
// the previous write was on the wire goes out in the next one. Write
// returns once its bytes are queued (at most maxPending wait; beyond that
// Write blocks until the writer has taken them), in order.
//
// What a write error or a stuck peer does is kept: each write on the real
// connection is bounded by the client's WriteTimeout (paho bounds each
// PUBLISH write by it), a failed write closes the connection — the reader
// fails at once, with the write's error, and paho reconnects, as after its
// own failed write (a bare "use of closed network connection" would not
// do: paho's reader reports nothing for it) — and every later Write
// returns the error. Write deadlines set on the
// connection are ignored (a Write only queues; see conn.SetWriteDeadline).
// Close first sends what is queued (paho's DISCONNECT), waiting at most
// closeFlush, then closes. A packet queued just before a write failed is
// lost with the connection, as one in the kernel's socket buffer would be:
// QoS 1 and 2 packets are resent after the reconnect, QoS 0 ones are not
// (paho gives those no guarantee either).
//
// Schemes: tcp and mqtt (plain TCP); ssl, tls, mqtts, mqtt+ssl and tcps
// (TLS). ws and wss, unix, and any broker reached through an ALL_PROXY
// proxy stay on paho's own opener: Use installs Open only where it does
// what paho would.
//
// Overview of its parts: paho's connection opener (`Use`/`Open`) for tcp and
// TLS brokers with buffered reads (paho v1.5.1 reads each packet in ~4
// syscalls) and coalesced writes (a goroutine per connection sends what paho
// queued meanwhile in one write; each write bounded by WriteTimeout; a failed
// write ends the connection and the next read returns its error, so paho
// reconnects at once; Close sends what is queued); ws/wss stay on paho's own;
// used by `internal/ingest.Subscriber`, `gateway/mqttconn` and
// `internal/ingest/loadgen`.
package mqttnet

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// defaultDialTimeout is paho's when its options carry no dialer.
const defaultDialTimeout = 30 * time.Second

// Supports reports whether Open handles scheme (a broker URL's scheme,
// lower case as url.Parse leaves it).
func Supports(scheme string) bool {
	return isTCP(scheme) || isTLS(scheme)
}

func isTCP(scheme string) bool { return scheme == "tcp" || scheme == "mqtt" }

func isTLS(scheme string) bool {
	switch scheme {
	case "ssl", "tls", "mqtts", "mqtt+ssl", "tcps":
		return true
	}
	return false
}

// Use installs Open as opts' connection opener (SetCustomOpenConnectionFn)
// when Open can reach every broker in opts the way paho's own opener
// would, and leaves opts alone otherwise: a ws:// or wss:// broker, an
// OnConnectAttempt handler (it chooses the TLS config per attempt and paho
// passes its choice only to its own opener), a custom opener already set,
// or an ALL_PROXY/all_proxy proxy in the environment (paho dials through
// it; Open does not). Call it after AddBroker and the other settings, just
// before paho.NewClient. It returns opts.
func Use(opts *paho.ClientOptions) *paho.ClientOptions {
	if len(opts.Servers) == 0 || opts.OnConnectAttempt != nil || opts.CustomOpenConnectionFn != nil ||
		os.Getenv("ALL_PROXY") != "" || os.Getenv("all_proxy") != "" {
		return opts
	}
	for _, u := range opts.Servers {
		if !Supports(u.Scheme) {
			return opts
		}
	}
	return opts.SetCustomOpenConnectionFn(Open)
}

// Open dials uri and returns a connection whose reads are buffered (see
// the package doc); it is a
// paho.OpenConnectionFunc. As paho's opener does, it dials with
// o.Dialer (whose Timeout SetConnectTimeout sets; without a dialer, one
// with o.ConnectTimeout, or 30 s) and, for TLS, uses o.TLSConfig — cloned,
// with ServerName set to the broker's host name when empty, as
// tls.DialWithDialer (what paho calls) does itself; a nil config is the
// default one. The TLS handshake happens here, within the dial timeout.
func Open(uri *url.URL, o paho.ClientOptions) (net.Conn, error) {
	c, err := dial(uri, o)
	if err != nil {
		return nil, err
	}
	return buffered(c, o.WriteTimeout), nil
}

// dial opens the real connection for Open.
func dial(uri *url.URL, o paho.ClientOptions) (net.Conn, error) {
	dialer := o.Dialer
	if dialer == nil {
		d := o.ConnectTimeout
		if d <= 0 {
			d = defaultDialTimeout
		}
		dialer = &net.Dialer{Timeout: d}
	}
	var (
		c   net.Conn
		err error
	)
	switch {
	case isTCP(uri.Scheme):
		c, err = dialer.Dial("tcp", uri.Host)
	case isTLS(uri.Scheme):
		cfg := o.TLSConfig.Clone()
		if cfg == nil {
			cfg = new(tls.Config)
		}
		if cfg.ServerName == "" {
			cfg.ServerName = uri.Hostname()
		}
		c, err = tls.DialWithDialer(dialer, "tcp", uri.Host, cfg)
	default:
		return nil, fmt.Errorf("mqttnet: open %s: unsupported scheme %q", uri.Host, uri.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("mqttnet: open %s://%s: %w", uri.Scheme, uri.Host, err)
	}
	return c, nil
}
