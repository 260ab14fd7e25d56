// Package pahostore is the paho (github.com/eclipse/paho.mqtt.golang
// v1.5.1) session store for the central service's MQTT clients that publish
// only messages the application repeats by itself: the ingest's acks (a
// lost ack is repaired by the next one, acks are idempotent) and the load
// generator's batches (republished until acked, like a gateway's outbox).
//
// It is paho's in-memory store except that it never keeps an outbound
// PUBLISH packet, so paho has nothing to re-send after a reconnect. paho
// v1.5.1's resume of stored publishes races with the outgoing writer: a
// data race on the packet's DUP flag and a "close of closed channel"
// panic in messageIds.claimID, found by the gateway team
// (gateway/mqttconn) and reproduced here by the broker-restart tests of
// internal/ingest and the central service's kill -9 test. Everything else
// (subscriptions, inbound QoS 1 state) is kept as paho expects.
package pahostore

import (
	"strings"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// New returns an in-memory store that drops outbound PUBLISH packets.
func New() paho.Store { return store{paho.NewMemoryStore()} }

type store struct{ paho.Store }

// Put keeps m unless it is an outbound PUBLISH (key "o.<message id>").
func (s store) Put(key string, m packets.ControlPacket) {
	if _, ok := m.(*packets.PublishPacket); ok && strings.HasPrefix(key, "o.") {
		return
	}
	s.Store.Put(key, m)
}

var _ paho.Store = store{}
