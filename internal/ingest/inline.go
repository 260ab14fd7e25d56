package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

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
// redelivery. Acks are published by the broker itself.
type Inline struct {
	in      *Ingester
	b       Broker
	done    chan struct{}
	running atomic.Bool
	stopped atomic.Bool
}

// NewInline subscribes in to the broker's level, env, status and check topics.
// Call it before the broker serves; messages wait for Run.
func NewInline(in *Ingester, b Broker) (*Inline, error) {
	s := &Inline{in: in, b: b, done: make(chan struct{})}
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

// Run keeps the subscription active until ctx ends.
func (s *Inline) Run(ctx context.Context) error {
	s.running.Store(true)
	<-ctx.Done()
	s.running.Store(false)
	if !s.stopped.Swap(true) {
		close(s.done)
	}
	return nil
}

// Connected reports whether Run is active (there is no connection to lose).
func (s *Inline) Connected() bool { return s.running.Load() }

// Ack publishes the application-level ack through the broker.
func (s *Inline) Ack(municipality, gateway string, seq uint64) error {
	if !s.running.Load() {
		return errors.New("ingest: ack: inline subscription not running")
	}
	b, err := ackPayload(gateway, seq)
	if err != nil {
		return err
	}
	if err := s.b.Publish(wire.AckTopic(municipality, gateway), b); err != nil {
		return fmt.Errorf("ingest: ack: %w", err)
	}
	return nil
}
