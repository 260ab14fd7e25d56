package ingest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

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
type Subscriber struct {
	o          SubscriberOptions
	in         *Ingester
	client     paho.Client
	overflowed atomic.Bool
	connected  atomic.Bool
}

// NewSubscriber prepares a subscriber feeding in.
func NewSubscriber(in *Ingester, o SubscriberOptions) *Subscriber {
	if o.ClientID == "" {
		o.ClientID = "sossego-central"
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Subscriber{o: o, in: in}
	opts := paho.NewClientOptions().AddBroker(o.URL).SetClientID(o.ClientID).
		SetCleanSession(false).   // persistent session: the broker keeps what we have not PUBACKed
		SetAutoAckDisabled(true). // PUBACK after durable storage, not on receipt
		SetOrderMatters(true).    // the handler only enqueues, it never blocks
		SetAutoReconnect(true).SetConnectRetry(true).SetConnectRetryInterval(time.Second).
		SetMaxReconnectInterval(10 * time.Second).SetKeepAlive(30 * time.Second).
		SetWriteTimeout(10 * time.Second).SetUsername(o.Username).SetPassword(o.Password).
		SetOnConnectHandler(s.onConnect).
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			s.connected.Store(false)
			o.Log.Warn("conexão MQTT perdida; reconectando", "erro", err)
		})
	if o.TLSConfig != nil {
		opts.SetTLSConfig(o.TLSConfig)
	}
	s.client = paho.NewClient(opts)
	return s
}

func (s *Subscriber) filter(f string) string {
	if s.o.Shared != "" {
		return "$share/" + s.o.Shared + "/" + f
	}
	return f
}

func (s *Subscriber) onConnect(c paho.Client) {
	filters := map[string]byte{s.filter(wire.SubLevels): 1, s.filter(wire.SubEnv): 1, s.filter(wire.SubStatus): 1}
	tok := c.SubscribeMultiple(filters, s.handle)
	go func() {
		if !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
			s.o.Log.Error("assinatura MQTT falhou; reconectando", "erro", tok.Error())
			return
		}
		s.connected.Store(true)
		s.o.Log.Info("ingestão conectada ao broker", "url", s.o.URL, "client_id", s.o.ClientID)
	}()
}

func (s *Subscriber) handle(_ paho.Client, m paho.Message) {
	msg := Message{Topic: m.Topic(), Payload: m.Payload(), ReceivedAt: time.Now(), Done: m.Ack}
	if !s.in.Offer(msg) {
		// Not acknowledged: the broker keeps it in our session and
		// redelivers it after the reconnect Run forces once drained.
		s.overflowed.Store(true)
	}
}

// Connected reports whether the subscriptions are active.
func (s *Subscriber) Connected() bool { return s.connected.Load() && s.client.IsConnectionOpen() }

// Ack publishes the application-level ack (QoS 1, not retained). It does
// not wait for the broker: a lost ack is repaired by the next one.
func (s *Subscriber) Ack(municipality, gateway string, seq uint64) error {
	b, err := json.Marshal(wire.Ack{V: wire.Version, Gateway: gateway, Seq: seq})
	if err != nil {
		return fmt.Errorf("ingest: ack: %w", err)
	}
	s.client.Publish(wire.AckTopic(municipality, gateway), 1, false, b)
	return nil
}

// Run connects and stays connected until ctx ends. After a queue overflow
// it reconnects once the queue has drained, so that the broker redelivers
// the messages that were refused.
func (s *Subscriber) Run(ctx context.Context) error {
	tok := s.client.Connect()
	select {
	case <-ctx.Done():
		s.client.Disconnect(250)
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
			s.client.Disconnect(250)
			return nil
		case <-tk.C:
			if s.overflowed.Load() && s.in.QueueLen() < s.in.QueueCap()/2 {
				s.overflowed.Store(false)
				s.o.Log.Warn("fila de ingestão encheu; reconectando para o broker reenviar as mensagens não confirmadas")
				s.client.Disconnect(250)
				t := s.client.Connect()
				t.Wait()
				if err := t.Error(); err != nil {
					s.o.Log.Error("reconexão falhou", "erro", err)
				}
			}
		}
	}
}

var _ Acker = (*Subscriber)(nil)
