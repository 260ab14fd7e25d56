// Package mqttconn is the gateway's MQTT transport, the only gateway code
// that imports paho (github.com/eclipse/paho.mqtt.golang v1.5.1).
//
// Settings and why:
//   - QoS 1 for batches, status and the ack subscription.
//   - CleanSession=false with a stable client id (the gateway id), so that
//     acks the central service publishes while the gateway is away wait in
//     the broker session.
//   - paho's in-memory store, not its FileStore, and one that never keeps
//     outbound PUBLISH packets: the gateway's SQLite outbox is the durable
//     buffer and replays every unacked batch after a reconnect or restart.
//     paho's own resume of stored publishes would only duplicate that, and
//     in v1.5.1 it races with the outgoing writer on fast reconnects (a data
//     race on the packet's DUP flag and a "close of closed channel" panic in
//     messageIds.claimID, both reproduced by this package's broker-kill
//     tests). Cost: the token of a publish in flight when the connection
//     drops never completes (Publish returns on its ctx) and its message id
//     stays claimed — at most one per connection loss, since the gateway
//     publishes one message at a time.
//   - Auto-reconnect with paho's exponential backoff (1 s doubling up to
//     MaxReconnectInterval) and connect-retry for the first connection.
//   - The Will is wire.OfflinePayload, retained, QoS 1, on the status topic;
//     a clean stop publishes the same payload before disconnecting, since a
//     clean DISCONNECT does not fire the Will.
//   - The ack topic is subscribed in OnConnect (and routed by the default
//     handler too, for acks the broker delivers from the stored session
//     before the subscription call returns).
//   - Optional TLS (CA, client certificate and key, TLS ≥ 1.2) and
//     username/password.
//   - Reads through a buffer (internal/mqttnet) for tcp:// and mqtts://
//     brokers: paho alone makes about four read calls per received packet.
//     ws:// stays on paho's own opener.
package mqttconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/internal/mqttnet"
	"github.com/sossego/sossego/internal/wire"
)

// Handler receives connection events and acks. Its methods must not block.
type Handler interface {
	OnConnect()
	OnConnectionLost(error)
	HandleAck(payload []byte)
}

var (
	_ Handler           = (*gateway.Gateway)(nil)
	_ gateway.Publisher = (*Client)(nil)
)

// Options configure the connection.
type Options struct {
	Broker   string // tcp://host:1883, mqtts://host:8883, ws://…
	ClientID string // stable; the gateway id
	Username string
	Password string
	TLS      *tls.Config // nil: plain (or system roots for mqtts://)

	StatusTopic string // Will and offline status
	AckTopic    string

	KeepAlive            time.Duration // default 30 s
	ConnectTimeout       time.Duration // default 10 s
	ConnectRetryInterval time.Duration // default 5 s
	MaxReconnectInterval time.Duration // default 1 min
}

// Client is a paho client wired for the gateway.
type Client struct {
	opts Options
	c    mqtt.Client
	h    Handler
	log  *slog.Logger

	mu     sync.Mutex // serialises Disconnect (paho's is not concurrency-safe)
	closed bool       // Run has disconnected for good
}

// New prepares a client; it connects in Run. log may be nil.
func New(o Options, h Handler, log *slog.Logger) (*Client, error) {
	if o.Broker == "" || o.ClientID == "" || o.StatusTopic == "" || o.AckTopic == "" {
		return nil, errors.New("mqttconn: broker, client id, status and ack topics are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.KeepAlive, 30*time.Second)
	def(&o.ConnectTimeout, 10*time.Second)
	def(&o.ConnectRetryInterval, 5*time.Second)
	def(&o.MaxReconnectInterval, time.Minute)
	cl := &Client{opts: o, h: h, log: log}
	onAck := func(_ mqtt.Client, m mqtt.Message) {
		if m.Topic() == o.AckTopic {
			h.HandleAck(m.Payload())
		}
	}
	po := mqtt.NewClientOptions().
		AddBroker(o.Broker).
		SetClientID(o.ClientID).
		SetCleanSession(false).
		SetStore(NewStore()).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(o.ConnectRetryInterval).
		SetMaxReconnectInterval(o.MaxReconnectInterval).
		SetConnectTimeout(o.ConnectTimeout).
		SetKeepAlive(o.KeepAlive).
		SetPingTimeout(10*time.Second).
		SetWriteTimeout(10*time.Second).
		SetOrderMatters(false).
		SetBinaryWill(o.StatusTopic, wire.OfflinePayload, 1, true).
		SetDefaultPublishHandler(onAck).
		SetOnConnectHandler(func(c mqtt.Client) {
			t := c.Subscribe(o.AckTopic, 1, onAck)
			if !t.WaitTimeout(o.ConnectTimeout) || t.Error() != nil {
				log.Warn("assinatura do tópico de ack falhou; reconectando", "topic", o.AckTopic, "erro", t.Error())
				// Force a reconnect cycle: without the ack subscription nothing
				// would ever leave the outbox.
				go cl.forceReconnect()
				return
			}
			log.Info("conectado", "broker", o.Broker)
			h.OnConnect()
		}).
		SetConnectionLostHandler(func(_ mqtt.Client, err error) {
			log.Warn("conexão perdida", "erro", err)
			h.OnConnectionLost(err)
		})
	if o.Username != "" {
		po.SetUsername(o.Username).SetPassword(o.Password)
	}
	if o.TLS != nil {
		po.SetTLSConfig(o.TLS)
	}
	mqttnet.Use(po) // buffered reads for tcp:// and mqtts://; ws:// keeps paho's opener
	cl.c = mqtt.NewClient(po)
	return cl, nil
}

// NewStore returns a paho in-memory store that drops outbound PUBLISH
// packets (keys "o.<id>") and keeps everything else, for clients whose
// publishes are made durable and repeated by the application (see the
// package comment).
func NewStore() mqtt.Store { return noOutboundPublish{mqtt.NewMemoryStore()} }

type noOutboundPublish struct{ mqtt.Store }

func (s noOutboundPublish) Put(key string, m packets.ControlPacket) {
	if _, ok := m.(*packets.PublishPacket); ok && strings.HasPrefix(key, "o.") {
		return
	}
	s.Store.Put(key, m)
}

// forceReconnect drops and re-opens the connection so that OnConnect runs
// again (paho has no "reconnect now"). paho's Disconnect is not safe to
// call concurrently, so every Disconnect goes through c.mu, and none
// happens after Run has closed the client.
func (c *Client) forceReconnect() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.c.Disconnect(0)
	c.c.Connect()
}

// Run connects (retrying in the background) and stays until ctx ends; then
// it publishes the offline status and disconnects.
func (c *Client) Run(ctx context.Context) error {
	c.c.Connect() // with ConnectRetry the token completes only once connected
	<-ctx.Done()
	c.mu.Lock()
	c.closed = true
	if c.c.IsConnectionOpen() {
		t := c.c.Publish(c.opts.StatusTopic, 1, true, wire.OfflinePayload)
		t.WaitTimeout(2 * time.Second)
	}
	c.c.Disconnect(250)
	c.mu.Unlock()
	c.h.OnConnectionLost(ctx.Err())
	return nil
}

// Publish sends payload at QoS 1 and waits for the PUBACK or ctx.
func (c *Client) Publish(ctx context.Context, topic string, payload []byte, retained bool) error {
	return c.PublishAsync(topic, payload, retained)(ctx)
}

// PublishAsync hands a QoS 1 publish to paho without waiting: paho writes
// publishes in call order on the one connection; the returned func waits
// for the PUBACK (gateway.AsyncPublisher).
func (c *Client) PublishAsync(topic string, payload []byte, retained bool) func(context.Context) error {
	t := c.c.Publish(topic, 1, retained, payload)
	return func(ctx context.Context) error {
		select {
		case <-t.Done():
			if err := t.Error(); err != nil {
				return fmt.Errorf("mqttconn: publish %s: %w", topic, err)
			}
			return nil
		case <-ctx.Done():
			return fmt.Errorf("mqttconn: publish %s: %w", topic, ctx.Err())
		}
	}
}

var _ gateway.AsyncPublisher = (*Client)(nil)

// TLSFiles are PEM files for an mqtts:// connection.
type TLSFiles struct {
	CA   string // broker CA; empty = system roots
	Cert string // client certificate (optional, with Key)
	Key  string
	// ServerName overrides the name checked in the broker certificate.
	ServerName string
}

// LoadTLS builds a client TLS config (TLS 1.2 minimum) from PEM files.
func LoadTLS(f TLSFiles) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("mqttconn: tls ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mqttconn: tls ca %s holds no PEM certificate", f.CA)
		}
		cfg.RootCAs = pool
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, errors.New("mqttconn: tls client certificate and key go together")
	}
	if f.Cert != "" {
		cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("mqttconn: tls client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
