// Package gatewaytest holds reusable doubles for testing the gateway end to
// end: a deterministic fake meter, an in-process mochi-mqtt broker that can
// be stopped and restarted on the same port, and Central, a test subscriber
// that validates, stores and acknowledges batches the way the central
// service does (idempotent on (gateway, seq); ack = highest contiguous seq).
package gatewaytest

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/gateway/mqttconn"
	"github.com/sossego/sossego/internal/mochitest"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

// Meter is a deterministic fake meter. Each Sense returns a 1-s LAeq sample
// ending Step after the previous one, starting at Start+Step; levels cycle
// through 40.0…79.9 dB. It runs as fast as the gateway samples it, so tests
// produce hours of records in seconds.
type Meter struct {
	Start time.Time
	Step  time.Duration // default 1 s
	Dev   bridge.Device
	n     atomic.Int64
}

var _ bridge.Meter = (*Meter)(nil)

// Sense implements bridge.Meter.
func (m *Meter) Sense(s *bridge.Sample) error {
	step := m.Step
	if step == 0 {
		step = time.Second
	}
	n := m.n.Add(1)
	db := 40 + float64(n%400)/10
	dev := m.Dev
	if dev.Model == "" {
		dev = bridge.Device{Model: "gatewaytest", Serial: "fake-1", Grade: bridge.GradeScreening}
	}
	*s = bridge.Sample{At: m.Start.Add(time.Duration(n) * step), Duration: step, Weighting: bridge.WeightingA,
		TimeWeighting: bridge.Leq, Level: db, Max: db + 2, Min: db - 2, HasMax: true, HasMin: true, Device: dev}
	return nil
}

// Count is the number of samples produced.
func (m *Meter) Count() int64 { return m.n.Load() }

// Halt implements bridge.Meter.
func (m *Meter) Halt() error { return nil }

func (m *Meter) String() string { return "gatewaytest.Meter" }

// Stored is one batch as Central keeps it.
type Stored struct {
	Seq     uint64
	Kind    string // wire.KindLevels or wire.KindEnv
	Sensor  string
	Body    []byte
	Device  wire.Device
	Records []wire.Record
	Env     []wire.EnvRecord
	// SentAt is the batch's sent_at: when the gateway sealed it into its
	// outbox (it stays the same when the batch is published again).
	SentAt time.Time
	// StoredAt is when Central first stored the batch.
	StoredAt time.Time
}

// Central validates, stores and acks batches (levels and env, one seq
// space per gateway) like the central service.
type Central struct {
	t    testing.TB
	keys map[string]ed25519.PublicKey
	c    mqtt.Client

	acking atomic.Bool

	mu         sync.Mutex
	store      map[string]map[uint64]Stored // gateway → seq → batch
	contiguous map[string]uint64
	topics     map[string]string // gateway → ack topic
	dups       int
	rejected   []string
	status     map[string]wire.Status
	statusLog  map[string][]wire.Status
	stop       chan struct{}
	done       chan struct{}
}

// StartCentral connects a persistent-session subscriber (client id id) to
// broker and starts storing and acking. keys maps gateway id → public key.
func StartCentral(t testing.TB, broker, id string, keys map[string]ed25519.PublicKey) *Central {
	t.Helper()
	c := &Central{t: t, keys: keys, store: map[string]map[uint64]Stored{}, contiguous: map[string]uint64{},
		topics: map[string]string{}, status: map[string]wire.Status{}, statusLog: map[string][]wire.Status{},
		stop: make(chan struct{}), done: make(chan struct{})}
	c.acking.Store(true)
	// Acks are repeated every 300 ms, so the client keeps no outbound
	// publishes (paho v1.5.1 races when it resumes them; see mqttconn).
	opts := mqtt.NewClientOptions().AddBroker(broker).SetClientID(id).SetCleanSession(false).
		SetStore(mqttconn.NewStore()).
		SetAutoReconnect(true).SetConnectRetry(true).SetConnectRetryInterval(100 * time.Millisecond).
		SetMaxReconnectInterval(300 * time.Millisecond).SetOrderMatters(false).SetKeepAlive(5 * time.Second).
		SetDefaultPublishHandler(c.onMessage).
		SetOnConnectHandler(func(cl mqtt.Client) {
			cl.SubscribeMultiple(map[string]byte{wire.SubLevels: 1, wire.SubEnv: 1, wire.SubStatus: 1}, c.onMessage)
		})
	c.c = mqtt.NewClient(opts)
	tok := c.c.Connect()
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("gatewaytest: central connect: %v", tok.Error())
	}
	go c.reack()
	t.Cleanup(c.Close)
	return c
}

// Close disconnects.
func (c *Central) Close() {
	select {
	case <-c.stop:
		return
	default:
	}
	close(c.stop)
	<-c.done
	c.c.Disconnect(100)
}

// SetAcking turns acknowledgements on or off (off: a central service that
// stores nothing, e.g. down).
func (c *Central) SetAcking(on bool) { c.acking.Store(on) }

func (c *Central) onMessage(_ mqtt.Client, m mqtt.Message) {
	tp, err := wire.ParseTopic(m.Topic())
	if err != nil {
		c.reject(err.Error())
		return
	}
	if tp.Kind == wire.KindStatus {
		var s wire.Status
		if err := json.Unmarshal(m.Payload(), &s); err != nil {
			c.reject("status: " + err.Error())
			return
		}
		c.mu.Lock()
		c.status[tp.Gateway] = s
		c.statusLog[tp.Gateway] = append(c.statusLog[tp.Gateway], s)
		c.mu.Unlock()
		return
	}
	if !c.acking.Load() {
		return // "down": nothing stored, nothing acked
	}
	env, b, err := wire.Open(m.Payload())
	if err == nil {
		err = signature.Verify(env, c.keys[env.Kid])
	}
	if err == nil {
		err = wire.Validate(tp, env, b, time.Now(), wire.DefaultSkew, wire.DefaultStale)
	}
	if err != nil {
		c.reject(err.Error())
		return
	}
	c.mu.Lock()
	gw := c.store[b.Gateway]
	if gw == nil {
		gw = map[uint64]Stored{}
		c.store[b.Gateway] = gw
		c.topics[b.Gateway] = wire.AckTopic(b.Municipality, b.Gateway)
	}
	if old, ok := gw[b.Seq]; ok {
		c.dups++
		if string(old.Body) != string(env.Body) {
			c.rejected = append(c.rejected, fmt.Sprintf("seq %d redelivered with a different body", b.Seq))
		}
	} else {
		gw[b.Seq] = Stored{Seq: b.Seq, Kind: b.Kind, Sensor: b.Sensor, Body: env.Body, Device: b.Device,
			Records: b.Records, Env: b.Env, SentAt: b.SentAt, StoredAt: time.Now()}
	}
	n := c.contiguous[b.Gateway]
	for {
		if _, ok := gw[n+1]; !ok {
			break
		}
		n++
	}
	c.contiguous[b.Gateway] = n
	topic := c.topics[b.Gateway]
	c.mu.Unlock()
	c.ack(topic, b.Gateway, n)
}

func (c *Central) ack(topic, gw string, seq uint64) {
	if seq == 0 || !c.acking.Load() {
		return
	}
	p, _ := json.Marshal(wire.Ack{V: wire.Version, Gateway: gw, Seq: seq})
	c.c.Publish(topic, 1, false, p) // not waited for: the next ack repeats it
}

// reack repeats the current ack every 300 ms, as acks may be lost.
func (c *Central) reack() {
	defer close(c.done)
	tk := time.NewTicker(300 * time.Millisecond)
	defer tk.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tk.C:
		}
		c.mu.Lock()
		type a struct {
			topic, gw string
			seq       uint64
		}
		var as []a
		for gw, n := range c.contiguous {
			as = append(as, a{c.topics[gw], gw, n})
		}
		c.mu.Unlock()
		for _, x := range as {
			c.ack(x.topic, x.gw, x.seq)
		}
	}
}

func (c *Central) reject(why string) {
	c.mu.Lock()
	c.rejected = append(c.rejected, why)
	c.mu.Unlock()
}

// Contiguous is the highest seq n such that 1..n are all stored.
func (c *Central) Contiguous(gw string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.contiguous[gw]
}

// Batches returns the stored batches of gw in seq order.
func (c *Central) Batches(gw string) []Stored {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Stored
	for _, s := range c.store[gw] {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Stored) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
	return out
}

// Duplicates is how many redelivered batches were ignored.
func (c *Central) Duplicates() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dups
}

// Rejected lists the reasons of rejected messages.
func (c *Central) Rejected() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.rejected)
}

// Status is the latest status seen for gw.
func (c *Central) Status(gw string) (wire.Status, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.status[gw]
	return s, ok
}

// StatusLog is every status seen for gw, in arrival order.
func (c *Central) StatusLog(gw string) []wire.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.statusLog[gw])
}

// WaitProgress polls cond every 20 ms until it holds; it gives up only
// when progress (a counter that grows while the work advances) has not
// moved for stall. On a busy machine the work takes as long as it takes;
// what fails is work that stopped. It reports whether cond held.
func WaitProgress(stall time.Duration, progress func() uint64, cond func() bool) bool {
	last, moved := progress(), time.Now()
	for {
		if cond() {
			return true
		}
		if p := progress(); p != last {
			last, moved = p, time.Now()
		} else if time.Since(moved) > stall {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitFor polls cond every 20 ms until it holds or d passes; it reports
// whether cond held. It is a wait, not a timing assertion.
func WaitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Mochi is the in-process test broker (internal/mochitest): allow-all,
// restartable on its port, with a shutdown safe under the race detector.
type Mochi = mochitest.Broker

// StartMochi starts a broker on a free port and stops it at the end of the
// test.
func StartMochi(t testing.TB) *Mochi { return mochitest.Start(t) }
