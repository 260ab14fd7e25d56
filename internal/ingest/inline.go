package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sossego/sossego/internal/wire"
)

// Broker is what Inline needs from an in-process broker
// (internal/broker.Broker).
type Broker interface {
	Subscribe(filter string, id int, h func(topic string, payload []byte)) error
	Publish(topic string, payload []byte) error
}

// Inline feeds the Ingester straight from the embedded broker: no MQTT
// client, no TCP hop, no PUBACK round trip (the broker has already
// acknowledged each publish to the gateway; durability rests on the
// application-level ack, as with any broker). When the ingest queue is
// full the broker's handler waits for room, which holds back the reads of
// that one gateway's connection: back-pressure without dropping or
// redelivery.
//
// Acks are published by the broker itself, which writes to a client while
// holding that client's lock: a publish to a gateway that stopped reading
// waits until the gateway reads again or the broker cuts it. So each
// gateway has its own ack sender (started by its first ack, ended with
// Run) publishing the newest ack not yet sent: a slow gateway delays only
// its own acks, a newer ack replaces an unsent older one (acks are
// cumulative), a lower ack never follows a higher one, and a gateway
// costs one pending value whatever it does.
type Inline struct {
	in      *Ingester
	b       Broker
	done    chan struct{}
	running atomic.Bool
	stopped atomic.Bool

	mu      sync.Mutex
	open    bool                  // Run is active: Ack takes acks
	senders map[ackKey]*ackSender // by gateway, while open
	wg      sync.WaitGroup        // the senders' goroutines
}

type ackKey struct{ municipality, gateway string }

// ackSender is one gateway's pending ack.
type ackSender struct {
	pending uint64        // newest seq handed to Ack (guarded by Inline.mu)
	wake    chan struct{} // capacity 1: a pending ack to look at
}

// NewInline subscribes in to the broker's level, env, status and check topics.
// Call it before the broker serves; messages wait for Run.
func NewInline(in *Ingester, b Broker) (*Inline, error) {
	s := &Inline{in: in, b: b, done: make(chan struct{}), senders: map[ackKey]*ackSender{}}
	for i, f := range []string{wire.SubLevels, wire.SubEnv, wire.SubStatus, wire.SubCheck} {
		if err := b.Subscribe(f, i+1, s.handle); err != nil {
			return nil, fmt.Errorf("ingest: inline: %w", err)
		}
	}
	return s, nil
}

func (s *Inline) handle(topic string, payload []byte) {
	// When the queue is full, wait for room (or shutdown: the gateway
	// replays what was not acknowledged).
	s.in.offerWait(Message{Topic: topic, Payload: payload}, s.done)
}

// Run keeps the subscription active until ctx ends, then waits for the ack
// senders: one in the middle of a publish returns when the broker's own
// shutdown cuts its gateway.
func (s *Inline) Run(ctx context.Context) error {
	s.mu.Lock()
	s.open = true
	s.mu.Unlock()
	s.running.Store(true)
	<-ctx.Done()
	s.running.Store(false)
	s.mu.Lock()
	s.open = false
	for _, a := range s.senders {
		close(a.wake) // no ack is taken any more: each sender sends its last and ends
	}
	s.senders = map[ackKey]*ackSender{}
	s.mu.Unlock()
	if !s.stopped.Swap(true) {
		close(s.done)
	}
	s.wg.Wait()
	return nil
}

// Connected reports whether Run is active (there is no connection to lose).
func (s *Inline) Connected() bool { return s.running.Load() }

// Ack hands the application-level ack to gateway's sender and returns at
// once (the Ingester counts it as published). A publish that fails is
// counted (ack errors) and logged by the sender: the gateway republishes
// what stays unacked, and the next ack covers it.
func (s *Inline) Ack(municipality, gateway string, seq uint64) error {
	if _, err := ackPayload(gateway, seq); err != nil {
		return err
	}
	s.mu.Lock()
	if !s.open {
		s.mu.Unlock()
		return errors.New("ingest: ack: inline subscription not running")
	}
	k := ackKey{municipality, gateway}
	a := s.senders[k]
	if a == nil {
		a = &ackSender{wake: make(chan struct{}, 1)}
		s.senders[k] = a
		s.wg.Add(1)
		go s.send(k, a)
	}
	if seq > a.pending {
		a.pending = seq
	}
	select { // under mu: Run closes wake under mu
	case a.wake <- struct{}{}:
	default: // already woken: it will read the newest pending
	}
	s.mu.Unlock()
	return nil
}

// send publishes k's newest pending ack each time it is woken, until Run
// closes wake (then it sends what is still pending and ends).
func (s *Inline) send(k ackKey, a *ackSender) {
	defer s.wg.Done()
	var (
		sent     uint64
		fails    int // not yet logged
		firstErr error
		loggedAt time.Time
	)
	topic := wire.AckTopic(k.municipality, k.gateway)
	for {
		_, ok := <-a.wake
		s.mu.Lock()
		seq := a.pending
		s.mu.Unlock()
		if seq > sent {
			sent = seq // a failed ack is not retried: the next one covers it
			if err := s.publish(topic, k.gateway, seq); err != nil {
				s.in.o.Metrics.ackErrors.Inc()
				if fails == 0 {
					firstErr = err
				}
				fails++
			}
		}
		// One line per ackLogEvery and gateway, and the rest when it ends.
		if fails > 0 && (!ok || time.Since(loggedAt) >= ackLogEvery) {
			s.in.o.Log.Warn("acks não publicados; o gateway reenvia e o próximo ack os cobre", "gateway", k.gateway,
				"quantos", fails, "erro", firstErr)
			fails, firstErr, loggedAt = 0, nil, time.Now()
		}
		if !ok {
			return
		}
	}
}

func (s *Inline) publish(topic, gateway string, seq uint64) error {
	b, err := ackPayload(gateway, seq)
	if err != nil {
		return err
	}
	if err := s.b.Publish(topic, b); err != nil {
		return fmt.Errorf("ingest: ack: %w", err)
	}
	return nil
}
