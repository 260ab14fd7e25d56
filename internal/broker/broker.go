// Package broker embeds a mochi-mqtt v2 broker for the zero-setup single
// node, with Sossego's authentication and ACL:
//
//   - anonymous clients are refused;
//   - a gateway authenticates as username = its id with the password whose
//     bcrypt hash is in the registry, or (on the TLS listener with client
//     certificates) by a certificate whose CN is its id;
//   - a gateway's client id is its id: another client id is refused, so
//     one gateway's credential cannot take over (or multiply) sessions;
//   - connections racing to take over one client id leave exactly one of
//     them connected and in mochi's session table, so that a storm of
//     takeovers never leaves the real gateway connected but deaf
//     (takeover.go);
//   - a gateway may publish only under sossego/v1/{its municipality}/{its
//     id}/ — its sensors' levels and env topics and its status topic — and
//     may subscribe only to its own ack topic;
//   - only its status topic may be retained (its Will included), and a
//     status message is at most wire.MaxStatusPayload bytes: the retained
//     store holds at most one small message per gateway;
//   - a disconnected persistent session expires after SessionExpiry;
//   - the central service's own client (an internal credential) may
//     subscribe to everything under sossego/v1/ and publish acks.
//
// Packets larger than wire.MaxPayload plus headroom for the topic are
// refused. With MQTT 3.1.1 a denied publish ends the client's connection
// (the protocol has no negative PUBACK), so tests must check what
// subscribers and the store received, never the publisher's return code.
// mochi's own log lines (a refused packet is logged whole) go through a
// handler that cuts long values, lowers mochi's chatter to debug,
// translates what an operator acts on and rate-limits it (logHandler); a
// refused login is logged with its reason, one line per interval.
//
// The same policy for an external Mosquitto is in docs/mosquitto/.
package broker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
	"golang.org/x/crypto/bcrypt"

	"github.com/sossego/sossego/internal/conntrack"
	"github.com/sossego/sossego/internal/wire"
)

// Gateway is what the broker needs to know about a gateway.
type Gateway struct {
	ID           string
	Municipality string
	PasswordHash []byte // bcrypt; nil: password login refused (certificate only)
}

// Directory looks gateways up; the registry implements it through an
// adapter in internal/central. It is consulted at every connect, so
// registry reloads take effect for new connections.
type Directory interface {
	Gateway(id string) (Gateway, bool)
}

// DirectoryFunc adapts a function to Directory.
type DirectoryFunc func(id string) (Gateway, bool)

// Gateway calls f.
func (f DirectoryFunc) Gateway(id string) (Gateway, bool) { return f(id) }

// Options configures the broker.
type Options struct {
	Listen    string      // TCP address, e.g. 127.0.0.1:1883; "" for none
	TLSListen string      // TLS address; "" for none
	TLS       *tls.Config // for TLSListen; set ClientAuth to require gateway certificates
	Directory Directory
	// ServiceUser and ServicePassword are the central service's own
	// credential (full read, ack publish).
	ServiceUser     string
	ServicePassword string
	// ConnectTimeout closes a connection that has not completed its TLS
	// handshake and sent CONNECT within this time (default
	// DefaultConnectTimeout). mochi itself waits forever for the CONNECT
	// packet, so without it any host on the LAN could hold connections
	// (goroutines, buffers, file descriptors) open by sending nothing.
	// After CONNECT the client's own keep-alive governs the connection.
	ConnectTimeout time.Duration
	// SessionExpiry is how long a disconnected persistent session (clean
	// session false: its subscriptions and queued messages) is kept
	// (default DefaultSessionExpiry). mochi's own default is 136 years:
	// abandoned sessions would pile up for ever.
	SessionExpiry time.Duration
	// ShutdownGrace bounds each step of Run's shutdown (default
	// DefaultShutdownGrace): the clients get that long to take their
	// DISCONNECT, then every connection left is closed, then Run returns
	// at the latest after as long again (shutdown.go).
	ShutdownGrace time.Duration
	Log           *slog.Logger
}

// DefaultConnectTimeout is Options.ConnectTimeout's default.
const DefaultConnectTimeout = 10 * time.Second

// DefaultSessionExpiry is Options.SessionExpiry's default. A gateway's
// session holds only the acks published while it was away, and the
// central service repeats its ack after the next batch, so nothing is lost
// when a session expires.
const DefaultSessionExpiry = time.Hour

// connectDeadline is a listener whose accepted connections must finish
// the TLS handshake and the CONNECT packet within d: mochi replaces the
// deadline with the keep-alive's once it has read CONNECT
// (Client.refreshDeadline).
//
// It also keeps accepting through errors: mochi's listener loop returns on
// any Accept error and never accepts again, so one "too many open files"
// (a flood of connections) or a connection reset before SetDeadline would
// leave the broker deaf for good. Like net/http, it backs off and retries;
// only a closed listener ends it.
type connectDeadline struct {
	net.Listener
	d   time.Duration
	log *slog.Logger
	// conns, when set, tracks the accepted connections (shutdown.go).
	conns *conntrack.Set
}

func (l connectDeadline) Accept() (net.Conn, error) {
	backoff := 5 * time.Millisecond
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			l.log.Warn("broker: falha ao aceitar conexão; tentando de novo", "erro", err, "espera", backoff)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		if err := c.SetDeadline(time.Now().Add(l.d)); err != nil {
			c.Close() // gone already; wait for the next one
			continue
		}
		if l.conns != nil {
			return l.conns.Track(c), nil
		}
		return c, nil
	}
}

// MaxPacket is the largest MQTT packet accepted: a full wire.MaxPayload
// body plus room for the fixed header and topic.
const MaxPacket = wire.MaxPayload + 4096

// Broker is the embedded broker.
type Broker struct {
	srv  *mqtt.Server
	hook *authHook
	tcp  net.Addr
	tls  net.Addr
	// raw are the TCP listeners under mochi's, closed first at shutdown;
	// conns the connections they accepted.
	raw     []net.Listener
	conns   *conntrack.Set
	closing atomic.Bool
	grace   time.Duration
	log     *slog.Logger
}

// New configures the broker and binds its listeners (so that the actual
// addresses are known before Run).
func New(o Options) (*Broker, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Directory == nil {
		return nil, errors.New("broker: no gateway directory")
	}
	if o.ServiceUser == "" || o.ServicePassword == "" {
		return nil, errors.New("broker: the central service credential is required")
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.SessionExpiry <= 0 {
		o.SessionExpiry = DefaultSessionExpiry
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	caps := mqtt.NewDefaultServerCapabilities()
	caps.MaximumPacketSize = MaxPacket
	caps.MaximumClientWritesPending = 64 * 1024
	caps.MaximumSessionExpiryInterval = uint32(min(max(o.SessionExpiry/time.Second, 1), 1<<32-1))
	log := slog.New(newLogHandler(o.Log.Handler()))
	srv := mqtt.New(&mqtt.Options{Capabilities: caps, Logger: log.With("componente", "broker"),
		InlineClient: true}) // the central service's in-process subscription and acks (Subscribe, Publish)
	h := &authHook{dir: o.Directory, svcUser: o.ServiceUser, svcPass: sha256.Sum256([]byte(o.ServicePassword)),
		who: map[*mqtt.Client]principal{}, live: map[string]map[*mqtt.Client]struct{}{}, cache: map[string][]byte{}, srv: srv, log: log.With("componente", "broker"),
		refusals: &logLimiter{every: 10 * time.Second}, logins: &logLimiter{every: 10 * time.Second}}
	if err := srv.AddHook(h, nil); err != nil {
		return nil, fmt.Errorf("broker: add auth hook: %w", err)
	}
	b := &Broker{srv: srv, hook: h, conns: conntrack.New(), grace: o.ShutdownGrace, log: o.Log}
	h.closing = &b.closing
	if o.Listen != "" {
		ln, err := net.Listen("tcp", o.Listen)
		if err != nil {
			return nil, fmt.Errorf("broker: listen %s: %w", o.Listen, err)
		}
		b.tcp = ln.Addr()
		b.raw = append(b.raw, ln)
		if err := srv.AddListener(listeners.NewNet("tcp", connectDeadline{ln, o.ConnectTimeout, o.Log, b.conns})); err != nil {
			ln.Close()
			return nil, fmt.Errorf("broker: add listener: %w", err)
		}
	}
	if o.TLSListen != "" {
		if o.TLS == nil {
			return nil, errors.New("broker: TLS listener without TLS configuration")
		}
		tcp, err := net.Listen("tcp", o.TLSListen)
		if err != nil {
			return nil, fmt.Errorf("broker: listen TLS %s: %w", o.TLSListen, err)
		}
		// The deadline is set on the TCP connection, so it bounds the TLS
		// handshake too.
		b.raw = append(b.raw, tcp)
		ln := tls.NewListener(connectDeadline{tcp, o.ConnectTimeout, o.Log, b.conns}, o.TLS)
		b.tls = ln.Addr()
		if err := srv.AddListener(listeners.NewNet("tls", ln)); err != nil {
			ln.Close()
			return nil, fmt.Errorf("broker: add TLS listener: %w", err)
		}
	}
	return b, nil
}

// Addr is the TCP listener's address (nil without one).
func (b *Broker) Addr() net.Addr { return b.tcp }

// TLSAddr is the TLS listener's address (nil without one).
func (b *Broker) TLSAddr() net.Addr { return b.tls }

// URL is a tcp:// URL for the TCP listener.
func (b *Broker) URL() string {
	if b.tcp == nil {
		return ""
	}
	return "tcp://" + b.tcp.String()
}

// Subscribe delivers every message whose topic matches filter to h, inside
// the broker: no network hop, no MQTT client, no session (the broker lives
// and dies with the central service; the gateways' outboxes replay whatever
// was not acknowledged by the application-level ack). id must be unique per
// subscription. Call it before Run.
//
// h runs on the publishing client's goroutine, after the broker has
// acknowledged the publish: while it blocks, that client's further packets
// wait (TCP back-pressure on that client alone). payload belongs to h.
func (b *Broker) Subscribe(filter string, id int, h func(topic string, payload []byte)) error {
	err := b.srv.Subscribe(filter, id, func(_ *mqtt.Client, _ packets.Subscription, pk packets.Packet) {
		h(pk.TopicName, bytes.Clone(pk.Payload))
	})
	if err != nil {
		return fmt.Errorf("broker: subscribe %s: %w", filter, err)
	}
	return nil
}

// Publish publishes payload on topic from the broker itself (not retained;
// QoS 1 towards subscribers). Used for the application-level acks; the
// ACL does not apply to the broker's own publishes.
func (b *Broker) Publish(topic string, payload []byte) error {
	if err := b.srv.Publish(topic, payload, false, 1); err != nil {
		return fmt.Errorf("broker: publish %s: %w", topic, err)
	}
	return nil
}

// Run serves until ctx ends, then closes every connection: within
// ShutdownGrace when the clients take their DISCONNECT, and in at most
// about three times ShutdownGrace whatever they do (shutdown.go).
func (b *Broker) Run(ctx context.Context) error {
	if err := b.srv.Serve(); err != nil {
		return fmt.Errorf("broker: serve: %w", err)
	}
	<-ctx.Done()
	b.shutdown()
	return nil
}

type principal struct {
	service      bool
	gateway      string
	municipality string
}

type authHook struct {
	mqtt.HookBase
	dir     Directory
	svcUser string
	svcPass [32]byte

	mu    sync.Mutex
	who   map[*mqtt.Client]principal
	live  map[string]map[*mqtt.Client]struct{} // client id → its connections past CONNACK (takeover.go)
	cache map[string][]byte                    // user + sha256(password) → the bcrypt hash it matched

	srv      *mqtt.Server // to disconnect a client whose publish breaks the policy
	log      *slog.Logger
	refusals *logLimiter
	logins   *logLimiter  // refused logins
	closing  *atomic.Bool // the broker is stopping: CONNECT refused
}

func (h *authHook) ID() string { return "sossego-auth" }

func (h *authHook) Provides(b byte) bool {
	return bytes.Contains([]byte{mqtt.OnConnect, mqtt.OnConnectAuthenticate, mqtt.OnSessionEstablished, mqtt.OnPacketRead,
		mqtt.OnACLCheck, mqtt.OnDisconnect, mqtt.OnPublish}, []byte{b})
}

// OnConnect refuses a connection that completes CONNECT while the broker
// stops: it would otherwise stay connected after the clients were told
// to leave, and mochi's Close would wait for it.
func (h *authHook) OnConnect(cl *mqtt.Client, _ packets.Packet) error {
	return refuseWhileClosing(h.closing, h.log, cl)
}

func peerCN(c net.Conn) (string, bool) {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return "", false
	}
	cs := tc.ConnectionState()
	if !cs.HandshakeComplete || len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return "", false
	}
	return cs.PeerCertificates[0].Subject.CommonName, true
}

// OnConnectAuthenticate decides who the client is. Refusals are logged
// with their reason, one line per interval standing for all of them (a
// stolen or guessed password can be tried a thousand times a second).
func (h *authHook) OnConnectAuthenticate(cl *mqtt.Client, pk packets.Packet) bool {
	p, why := h.authenticate(cl, pk)
	if why != "" {
		if n, ok := h.logins.allow(time.Now()); ok {
			h.log.Warn("broker: login MQTT recusado", "usuario", clip(string(pk.Connect.Username), maxLogValue),
				"cliente", clip(cl.ID, maxLogValue), "remoto", cl.Net.Remote, "motivo", why, "recusas_no_intervalo", n)
		}
		return false
	}
	h.remember(cl, p)
	return true
}

// authenticate returns the client's principal, or why it is refused.
func (h *authHook) authenticate(cl *mqtt.Client, pk packets.Packet) (principal, string) {
	user := string(pk.Connect.Username)
	pass := pk.Connect.Password
	if cn, ok := peerCN(cl.Net.Conn); ok {
		// Certificate login: the CN is the gateway id; a username, if
		// sent, must agree.
		if user != "" && user != cn {
			return principal{}, "usuário diferente do certificado"
		}
		return h.gateway(cn, cl.ID, pk, true, nil)
	}
	if user == "" {
		return principal{}, "conexão anônima"
	}
	if user == h.svcUser {
		sum := sha256.Sum256(pass)
		if subtle.ConstantTimeCompare(sum[:], h.svcPass[:]) != 1 {
			return principal{}, "senha errada"
		}
		return principal{service: true}, ""
	}
	return h.gateway(user, cl.ID, pk, false, pass)
}

// gateway checks a gateway's CONNECT: its certificate was verified
// (byCert), or pass must match its password.
func (h *authHook) gateway(id, clientID string, pk packets.Packet, byCert bool, pass []byte) (principal, string) {
	g, ok := h.dir.Gateway(id)
	switch {
	case !ok:
		return principal{}, "gateway desconhecido"
	case !byCert && len(g.PasswordHash) == 0:
		return principal{}, "gateway só entra com certificado"
	case !gatewayConnectAllowed(g, clientID, pk):
		return principal{}, "client id diferente do gateway ou Will fora do tópico de status"
	case !byCert && !h.checkPassword(id, pass, g.PasswordHash):
		return principal{}, "senha errada"
	}
	return principal{gateway: g.ID, municipality: g.Municipality}, ""
}

// gatewayConnectAllowed checks what a gateway's CONNECT may claim: its
// client id must be its gateway id, so that it can neither take over
// another client's session nor open sessions without number under its one
// credential, and its Will, if any, must be its status message (mochi
// publishes Wills, retained, without an ACL check).
func gatewayConnectAllowed(g Gateway, clientID string, pk packets.Packet) bool {
	if clientID != g.ID {
		return false
	}
	if pk.Connect.WillFlag && (pk.Connect.WillTopic != wire.StatusTopic(g.Municipality, g.ID) ||
		len(pk.Connect.WillPayload) > wire.MaxStatusPayload) {
		return false
	}
	return true
}

// OnPublish enforces what the topic ACL cannot see: a gateway may retain
// only its status topic, and a status message is at most
// wire.MaxStatusPayload bytes. Any retained message on an invented topic
// (levels under a made-up sensor id) would otherwise stay in memory until
// the broker stops. A breach ends the client's connection, as a denied
// publish does for MQTT 3.1.1 clients, and nothing is delivered or kept.
func (h *authHook) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if cl.Net.Inline {
		return pk, nil
	}
	h.mu.Lock()
	p, ok := h.who[cl]
	h.mu.Unlock()
	if !ok || p.service {
		return pk, nil // the ACL has judged the service's publishes
	}
	status := pk.TopicName == wire.StatusTopic(p.municipality, p.gateway)
	var why string
	switch {
	case pk.FixedHeader.Retain && !status:
		why = "mensagem retida fora do tópico de status"
	case status && len(pk.Payload) > wire.MaxStatusPayload:
		why = fmt.Sprintf("status com %d bytes (máximo %d)", len(pk.Payload), wire.MaxStatusPayload)
	default:
		return pk, nil
	}
	if n, ok := h.refusals.allow(time.Now()); ok {
		h.log.Warn("broker: publicação recusada; conexão encerrada", "gateway", p.gateway, "topico", clip(pk.TopicName, maxLogValue),
			"motivo", why, "recusas_no_intervalo", n)
	}
	_ = h.srv.DisconnectClient(cl, packets.ErrNotAuthorized)
	return pk, packets.ErrRejectPacket
}

// checkPassword runs bcrypt once per (user, password, hash) and caches
// success, so that reconnect storms do not burn CPU.
func (h *authHook) checkPassword(user string, pass, hash []byte) bool {
	sum := sha256.Sum256(pass)
	key := user + "\x00" + string(sum[:])
	h.mu.Lock()
	cached, ok := h.cache[key]
	h.mu.Unlock()
	if ok && bytes.Equal(cached, hash) {
		return true
	}
	if bcrypt.CompareHashAndPassword(hash, pass) != nil {
		return false
	}
	h.mu.Lock()
	if len(h.cache) > 100000 {
		clear(h.cache)
	}
	h.cache[key] = bytes.Clone(hash)
	h.mu.Unlock()
	return true
}

func (h *authHook) remember(cl *mqtt.Client, p principal) {
	keepSessionAtEnd(cl)
	h.mu.Lock()
	h.who[cl] = p
	h.mu.Unlock()
}

// OnDisconnect forgets the client.
func (h *authHook) OnDisconnect(cl *mqtt.Client, _ error, _ bool) {
	h.mu.Lock()
	delete(h.who, cl)
	h.forget(cl)
	h.mu.Unlock()
}

// OnACLCheck applies the topic policy. write is true for publishes; for
// subscriptions (and deliveries) topic is the filter or topic name.
func (h *authHook) OnACLCheck(cl *mqtt.Client, topic string, write bool) bool {
	h.mu.Lock()
	p, ok := h.who[cl]
	h.mu.Unlock()
	if !ok {
		return false
	}
	return Allowed(p.service, p.municipality, p.gateway, topic, write)
}

// Allowed is the ACL as a pure function: may this principal publish
// (write) to, or subscribe to / receive (read), topic?
func Allowed(service bool, municipality, gateway, topic string, write bool) bool {
	if service {
		if write {
			t, err := wire.ParseTopic(topic)
			return err == nil && t.Kind == wire.KindAck
		}
		f := strings.TrimPrefix(topic, "$share/")
		if f != topic { // $share/<group>/<filter>
			i := strings.IndexByte(f, '/')
			if i < 0 {
				return false
			}
			f = f[i+1:]
		}
		return f == "#" || strings.HasPrefix(f, wire.Root+"/v1/") || strings.HasPrefix(f, wire.Root+"/+/") ||
			f == wire.Root+"/#"
	}
	if gateway == "" {
		return false
	}
	if !write {
		return topic == wire.AckTopic(municipality, gateway)
	}
	if strings.ContainsAny(topic, "+#") {
		return false
	}
	t, err := wire.ParseTopic(topic)
	if err != nil || t.Municipality != municipality || t.Gateway != gateway {
		return false
	}
	switch t.Kind {
	case wire.KindLevels, wire.KindEnv, wire.KindCheck, wire.KindStatus:
		return true
	}
	return false
}
