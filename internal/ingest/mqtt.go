package ingest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/sossego/sossego/internal/ingest/pahostore"
	"github.com/sossego/sossego/internal/mqttnet"
	"github.com/sossego/sossego/internal/wire"
)

// SubscriberOptions configures the MQTT side of ingest.
type SubscriberOptions struct {
	URL       string // tcp://host:port, ssl://host:port, …
	ClientID  string // stable: the broker keeps the session under it; default "sossego-central"
	Username  string
	Password  string
	TLSConfig *tls.Config
	// Shared, when set, subscribes through a shared subscription group
	// ($share/<Shared>/…) so that several central workers split the load.
	Shared string
	Log    *slog.Logger
}

// Subscriber connects ingest to a broker: QoS 1 subscriptions on a
// persistent session, PUBACK only after storage, acks published on
// wire.AckTopic. It implements Acker.
//
// paho (v1.5.1) workarounds, each covered by TestAcksThroughBrokerRestarts
// or TestAckMessageIDsExhausted:
//   - The session store keeps no outbound publishes (pahostore): paho's
//     resume of stored publishes after a reconnect races with its writer.
//     A lost ack is repaired by the next one (acks are idempotent and the
//     gateway republishes what stays unacked).
//   - Acks are published only while the connection is open: a publish
//     made while paho reconnects would claim a message id that, with
//     nothing stored to resume, is never released.
//   - The recovery from exhausted message ids (acks in flight when a
//     connection drops keep theirs) replaces the paho client with a fresh
//     one: Disconnect during paho's own auto-reconnect leaves a client
//     that refuses every later Connect ("status can only transition to
//     connecting from disconnected"), which would stop ingest for good.
//
// When the ingest queue is full the message handler waits for room (see
// handle): paho's reader stops, TCP pushes back, and the broker keeps the
// rest in the session.
type Subscriber struct {
	o         SubscriberOptions
	in        *Ingester
	client    atomic.Pointer[pahoClient]
	reset     atomic.Bool // replace the client (message ids exhausted)
	connected atomic.Bool
	stop      chan struct{} // closed when Run returns: handle stops waiting
	stopOnce  sync.Once

	clearMu   sync.Mutex
	clearedAt map[string]time.Time // data topics, when their retained message was last cleared
}

type pahoClient struct{ paho.Client }

// NewSubscriber prepares a subscriber feeding in.
func NewSubscriber(in *Ingester, o SubscriberOptions) *Subscriber {
	if o.ClientID == "" {
		o.ClientID = "sossego-central"
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Subscriber{o: o, in: in, stop: make(chan struct{})}
	s.client.Store(s.newClient())
	return s
}

func (s *Subscriber) newClient() *pahoClient {
	o := s.o
	opts := paho.NewClientOptions().AddBroker(o.URL).SetClientID(o.ClientID).
		SetCleanSession(false).    // persistent session: the broker keeps what we have not PUBACKed
		SetStore(pahostore.New()). // no paho resume of outbound publishes (see Subscriber)
		SetAutoAckDisabled(true).  // PUBACK after durable storage, not on receipt
		SetOrderMatters(true).     // one handler at a time; it waits while the queue is full (see handle)
		SetAutoReconnect(true).SetConnectRetry(true).SetConnectRetryInterval(time.Second).
		SetMaxReconnectInterval(10 * time.Second).SetKeepAlive(30 * time.Second).
		SetWriteTimeout(10 * time.Second).SetUsername(o.Username).SetPassword(o.Password).
		SetOnConnectHandler(s.onConnect).
		// The broker resends the session's unacknowledged messages right
		// after CONNACK, before onConnect has re-added the subscription
		// routes: paho drops a message without a route and without a
		// default handler, unacknowledged, and the broker never resends
		// it on this connection — with its in-flight window full of such
		// messages, delivery to us stops (TestSubscriberOverflowRedelivers).
		SetDefaultPublishHandler(s.handle).
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			s.connected.Store(false)
			o.Log.Warn("conexão MQTT perdida; reconectando", "erro", err)
		})
	if o.TLSConfig != nil {
		opts.SetTLSConfig(o.TLSConfig)
	}
	// Buffered reads: paho makes ~4 read syscalls per received PUBLISH
	// without them (tcp and TLS brokers; ws stays on paho's opener).
	mqttnet.Use(opts)
	return &pahoClient{paho.NewClient(opts)}
}

func (s *Subscriber) filter(f string) string {
	if s.o.Shared != "" {
		return "$share/" + s.o.Shared + "/" + f
	}
	return f
}

func (s *Subscriber) onConnect(c paho.Client) {
	filters := map[string]byte{s.filter(wire.SubLevels): 1, s.filter(wire.SubEnv): 1, s.filter(wire.SubStatus): 1, s.filter(wire.SubCheck): 1}
	tok := c.SubscribeMultiple(filters, s.handle)
	go func() {
		if !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
			s.o.Log.Error("assinatura MQTT falhou; reconectando", "erro", tok.Error())
			return
		}
		s.connected.Store(true)
		s.in.o.Metrics.connects.Inc()
		s.o.Log.Info("ingestão conectada ao broker", "url", s.o.URL, "client_id", s.o.ClientID)
	}()
}

// handle queues m for ingest. When the queue is full it waits for room
// (counted in sossego_ingest_queue_overflow_total): paho's router, and so
// its reader, waits with it, the socket's buffers fill and the broker
// holds the rest in our persistent session — back-pressure that costs
// latency and nothing else. paho's acknowledgements do not pass through
// the router (the committer's PUBACKs and acks go out while it waits), so
// the queue drains. A wait longer than the keepalive (a store stalled for
// 40 s or more) ends the connection at paho's ping; paho's reconnect waits
// for this handler, and the broker redelivers what was not PUBACKed
// (deduplicated on (gateway, seq)).
//
// The design before this refused the message and reconnected once the
// queue had drained, to make the broker redeliver it. Under a backlog
// that loops: the redelivered backlog refills the queue while the
// PUBACKs of what is still queued go to the closed connection, so every
// reconnect makes the next one more likely (a soak after a broker restart
// fell to ~100 msg/s that way).
func (s *Subscriber) handle(_ paho.Client, m paho.Message) {
	if len(m.Payload()) == 0 {
		// An empty message is how MQTT deletes a retained one; the clears
		// below come back this way. There is nothing in it to keep.
		s.in.o.Metrics.messages.WithLabelValues("any", "empty").Inc()
		m.Ack()
		return
	}
	s.clearRetained(m)
	s.in.offerWait(Message{Topic: m.Topic(), Payload: m.Payload(), ReceivedAt: time.Now(), Done: m.Ack}, s.stop)
}

// clearRetainedEvery is how often, at most, a data topic's retained
// message is cleared while messages keep arriving on it.
const clearRetainedEvery = time.Minute

// clearRetained deletes (an empty retained publish, QoS 0) what a gateway
// may have retained where nothing should be: Mosquitto cannot limit
// retained messages to some topics (docs/mosquitto), and each would stay in
// its memory. A data topic (levels, env) is cleared when its message came
// retained (a new subscription's delivery), the first time it is seen and
// then at most every clearRetainedEvery: MQTT 3.1.1 does not say whether a
// live message was published retained. A status topic is cleared when its
// message is larger than wire.MaxStatusPayload or not from a registered
// gateway of that municipality.
func (s *Subscriber) clearRetained(m paho.Message) {
	topic := m.Topic()
	tp, err := wire.ParseTopic(topic)
	clear := false
	switch {
	case err != nil:
		clear = m.Retained()
	case tp.Kind == wire.KindStatus:
		g, ok := s.in.o.Registry.Current().Gateway(tp.Gateway)
		clear = len(m.Payload()) > wire.MaxStatusPayload || !ok || g.Municipality != tp.Municipality
	case tp.Kind == wire.KindLevels || tp.Kind == wire.KindEnv || tp.Kind == wire.KindCheck:
		now := time.Now()
		s.clearMu.Lock()
		if s.clearedAt == nil || len(s.clearedAt) > 10000 {
			s.clearedAt = map[string]time.Time{}
		}
		if at, seen := s.clearedAt[topic]; m.Retained() || !seen || now.Sub(at) >= clearRetainedEvery {
			s.clearedAt[topic], clear = now, true
		}
		s.clearMu.Unlock()
	default:
		clear = m.Retained()
	}
	if !clear {
		return
	}
	if c := s.client.Load(); c.IsConnectionOpen() {
		c.Publish(topic, 0, true, []byte{}) // not waited for: the next message on the topic clears again
	}
}

// Connected reports whether the subscriptions are active.
func (s *Subscriber) Connected() bool {
	return s.connected.Load() && s.client.Load().IsConnectionOpen()
}

// errNotConnected is returned by Ack while the broker connection is down.
var errNotConnected = errors.New("ingest: ack: not connected to the broker")

// Ack publishes the application-level ack (QoS 1, not retained). It does
// not wait for the broker: a lost ack is repaired by the next one. While
// the connection is down it publishes nothing and returns an error.
func (s *Subscriber) Ack(municipality, gateway string, seq uint64) error {
	b, err := ackPayload(gateway, seq)
	if err != nil {
		return err
	}
	c := s.client.Load()
	if !c.IsConnectionOpen() {
		return errNotConnected
	}
	return s.publish(c, wire.AckTopic(municipality, gateway), b)
}

// publish sends an ack without waiting for its PUBACK. A publish that fails
// at once on an open connection ("no message IDs available") asks Run for
// a fresh client.
func (s *Subscriber) publish(c *pahoClient, topic string, payload []byte) error {
	tok := c.Publish(topic, 1, false, payload)
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			if !errors.Is(err, paho.ErrNotConnected) {
				s.reset.Store(true)
			}
			return fmt.Errorf("ingest: ack %s: %w", topic, err)
		}
	default:
	}
	return nil
}

// Run connects and stays connected until ctx ends.
func (s *Subscriber) Run(ctx context.Context) error {
	// A handler waiting for room stops waiting when ctx ends, wherever Run
	// is then: paho's Disconnect (here or in reconnect) waits for it.
	stopWaiting := func() { s.stopOnce.Do(func() { close(s.stop) }) }
	defer context.AfterFunc(ctx, stopWaiting)()
	defer stopWaiting()
	tok := s.client.Load().Connect()
	select {
	case <-ctx.Done():
		s.client.Load().Disconnect(250)
		return nil
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return fmt.Errorf("ingest: connect %s: %w", s.o.URL, err)
		}
	}
	tk := time.NewTicker(500 * time.Millisecond)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			s.client.Load().Disconnect(250)
			return nil
		case <-tk.C:
			if s.reset.Swap(false) {
				s.o.Log.Warn("cliente MQTT sem identificadores de mensagem livres; reconectando com um cliente novo")
				s.reconnect(ctx)
			}
		}
	}
}

// reconnect replaces the paho client with a fresh one on the same
// persistent session (see Subscriber for why not Disconnect and Connect
// again) and waits until it is connected or ctx ends. Messages the old
// client received but did not PUBACK are redelivered by the broker.
func (s *Subscriber) reconnect(ctx context.Context) {
	s.connected.Store(false)
	old := s.client.Load()
	old.Disconnect(250) // also stops its auto-reconnect, whatever its state
	c := s.newClient()
	s.client.Store(c)
	t := c.Connect() // with ConnectRetry it completes once connected
	select {
	case <-ctx.Done():
	case <-t.Done():
		if err := t.Error(); err != nil {
			s.o.Log.Error("reconexão MQTT falhou", "erro", err)
		}
	}
}

var _ Acker = (*Subscriber)(nil)

// ackPayload is the application-level ack (docs/wire.md) for gateway's seq.
func ackPayload(gateway string, seq uint64) ([]byte, error) {
	b, err := json.Marshal(wire.Ack{V: wire.Version, Gateway: gateway, Seq: seq})
	if err != nil {
		return nil, fmt.Errorf("ingest: ack: %w", err)
	}
	return b, nil
}
