package gateway

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/wire"
)

// Publisher sends one MQTT message at QoS 1 and waits for the broker's
// PUBACK or ctx. A PUBACK is not proof of delivery: batches leave the outbox
// only on the central service's ack.
type Publisher interface {
	Publish(ctx context.Context, topic string, payload []byte, retained bool) error
}

// AsyncPublisher is a Publisher that can also hand a QoS 1 publish to the
// connection without waiting for its PUBACK, in call order; the returned
// func waits for it. The gateway then keeps up to Options.InFlight batches
// in flight, so on a lossy or long link a batch does not wait for the
// previous one's PUBACK (one at a time, a 30 %-loss link carried ~10
// batches/s: BENCHMARKS.md, packet loss).
type AsyncPublisher interface {
	Publisher
	PublishAsync(topic string, payload []byte, retained bool) (wait func(context.Context) error)
}

// FullPolicy says what the gateway does when the outbox has no room.
type FullPolicy string

// Full-outbox policies. Both count what is lost in Status.Outbox.Dropped and
// set Status.Outbox.Full; neither drops acknowledged-order data silently.
// They apply when the outbox's capacity (records, or bytes) is reached, and
// when the disk refuses writes and the bounded memory buffer that takes the
// batches meanwhile (Options.MemoryRecords) is full.
const (
	// DropNew keeps measuring and discards each new batch that does not
	// fit, counting its records.
	DropNew FullPolicy = "drop-new"
	// StopSampling stops reading the meter while the outbox is full and
	// counts each second not measured.
	StopSampling FullPolicy = "stop-sampling"
)

// Valid reports whether p is a known policy.
func (p FullPolicy) Valid() bool { return p == DropNew || p == StopSampling }

// Options configure a Gateway. Zero values take the documented defaults
// (see DefaultOptions).
type Options struct {
	Municipality, Gateway, Sensor string

	SamplePeriod   time.Duration // meter read interval (default 100 ms = 10 Hz)
	BatchRecords   int           // records per batch (default 10)
	BatchMaxAge    time.Duration // max record-time span of a batch (default 10 s)
	FullPolicy     FullPolicy    // default drop-new
	ReplayRate     float64       // max messages per second to the broker (default 50)
	Window         int           // max batches published and not yet acked (default 100)
	AckTimeout     time.Duration // resend unacked batches after this long without ack progress (default 30 s)
	StatusInterval time.Duration // retained status refresh (default 60 s)
	PublishTimeout time.Duration // wait for a PUBACK (default 10 s)
	InFlight       int           // batches awaiting their PUBACK at once, with an AsyncPublisher (default 8)
	MemoryRecords  int           // records held in memory while the disk refuses writes (default 1800: 30 min)
	Version        string        // software version in the status

	// Env configures the optional environmental sensor (SetEnvSensor).
	Env EnvOptions

	// CheckDir is where recorded calibrator checks wait to be sent
	// (state_dir/checks, RecordCheck); empty: no field checks.
	CheckDir string
}

// DefaultOptions returns the documented defaults for everything but ids.
func DefaultOptions() Options {
	return Options{
		SamplePeriod: 100 * time.Millisecond, BatchRecords: 10, BatchMaxAge: 10 * time.Second,
		FullPolicy: DropNew, ReplayRate: 50, Window: 100, AckTimeout: 30 * time.Second,
		StatusInterval: 60 * time.Second, PublishTimeout: 10 * time.Second, InFlight: 8, MemoryRecords: 1800,
	}
}

func (o *Options) fill() {
	d := DefaultOptions()
	if o.SamplePeriod <= 0 {
		o.SamplePeriod = d.SamplePeriod
	}
	if o.BatchRecords <= 0 {
		o.BatchRecords = d.BatchRecords
	}
	if o.BatchMaxAge <= 0 {
		o.BatchMaxAge = d.BatchMaxAge
	}
	if o.FullPolicy == "" {
		o.FullPolicy = d.FullPolicy
	}
	if o.ReplayRate <= 0 {
		o.ReplayRate = d.ReplayRate
	}
	if o.Window <= 0 {
		o.Window = d.Window
	}
	if o.AckTimeout <= 0 {
		o.AckTimeout = d.AckTimeout
	}
	if o.StatusInterval <= 0 {
		o.StatusInterval = d.StatusInterval
	}
	if o.PublishTimeout <= 0 {
		o.PublishTimeout = d.PublishTimeout
	}
	if o.InFlight <= 0 {
		o.InFlight = d.InFlight
	}
	if o.MemoryRecords <= 0 {
		o.MemoryRecords = d.MemoryRecords
	}
	o.Env.fill(o.Sensor)
}

// Validate checks the options without I/O.
func (o Options) Validate() error {
	for _, id := range []struct{ name, v string }{{"municipality", o.Municipality}, {"gateway", o.Gateway}, {"sensor", o.Sensor}} {
		if !wire.ValidID(id.v) {
			return fmt.Errorf("gateway: %s id %q must match [a-z0-9][a-z0-9_-]{0,63}", id.name, id.v)
		}
	}
	if o.FullPolicy != "" && !o.FullPolicy.Valid() {
		return fmt.Errorf("gateway: full policy %q unknown; use %s or %s", o.FullPolicy, DropNew, StopSampling)
	}
	if o.BatchRecords > wire.MaxRecords {
		return fmt.Errorf("gateway: batch of %d records exceeds the wire limit of %d", o.BatchRecords, wire.MaxRecords)
	}
	if o.SamplePeriod > time.Second {
		return fmt.Errorf("gateway: sample period %s is longer than the 1-s record", o.SamplePeriod)
	}
	return o.Env.Validate()
}

// Gateway samples a meter and delivers signed batches through the outbox.
// Create it with New and run it with Run; the MQTT transport reports
// connections and acks through OnConnect, OnConnectionLost and HandleAck,
// which never block.
type Gateway struct {
	opts  Options
	meter bridge.Meter
	sync  SyncSource
	box   *Outbox
	key   ed25519.PrivateKey
	pub   Publisher
	log   *slog.Logger
	now   func() time.Time

	levelsTopic, statusTopic string

	connected atomic.Bool
	connGen   atomic.Uint64
	ackSeq    atomic.Uint64
	wake      chan struct{} // connection change, ack, new batch, full-state change

	// Repeated acks (fast resend, see HandleAck).
	dupMu      sync.Mutex
	dupVal     uint64        // the latest ack value
	dupCount   int           // how many times in a row it came
	recoverTo  atomic.Uint64 // after a fast resend: no other until the ack reaches this
	fastResend atomic.Uint64 // ack value to resend after (0: none)

	clockMu sync.Mutex
	clock   wire.Clock

	senseErrors atomic.Uint64
	badAcks     atomic.Uint64

	// Acks below the watermark already applied (HandleAck).
	lowAcks      atomic.Uint64 // count since start
	lowRun       atomic.Int64  // in a row
	ackRegressed atomic.Bool

	// Batches the disk refused, oldest first, waiting to be stored
	// (store); memRecords counts their records.
	memMu      sync.Mutex
	mem        []held
	memRecords atomic.Int64
	memDrops   uint64      // batches refused for a full memory buffer (log pacing)
	diskDown   atomic.Bool // the last store attempt met a storage error

	envState
	checkState
}

// held is a batch waiting in memory for the disk.
type held struct {
	kind, topic string
	n           int
	until       time.Time
	build       func(seq uint64, now time.Time) wire.Batch
}

// New builds a gateway. log may be nil (discard).
func New(opts Options, m bridge.Meter, s SyncSource, box *Outbox, key ed25519.PrivateKey, pub Publisher, log *slog.Logger) (*Gateway, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.fill()
	if m == nil || box == nil || pub == nil || len(key) != ed25519.PrivateKeySize {
		return nil, errors.New("gateway: meter, outbox, key and publisher are required")
	}
	if s == nil {
		s = FixedSync(unsyncedClock)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{
		opts: opts, meter: m, sync: s, box: box, key: key, pub: pub, log: log, now: time.Now,
		levelsTopic: wire.LevelsTopic(opts.Municipality, opts.Gateway, opts.Sensor),
		statusTopic: wire.StatusTopic(opts.Municipality, opts.Gateway),
		wake:        make(chan struct{}, 1),
		clock:       unsyncedClock,
		envState:    envState{envTopic: wire.EnvTopic(opts.Municipality, opts.Gateway, opts.Env.Sensor)},
	}
	g.ackSeq.Store(box.Acked()) // the watermark already applied: a lower ack went backwards
	return g, nil
}

// AckTopic is the topic the transport must subscribe to (QoS 1).
func (g *Gateway) AckTopic() string { return wire.AckTopic(g.opts.Municipality, g.opts.Gateway) }

// StatusTopic is the retained status topic (the Will goes there too).
func (g *Gateway) StatusTopic() string { return g.statusTopic }

func (g *Gateway) poke() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Run samples and sends until ctx ends. On the way out the record and batch
// being built are flushed into the outbox, so a clean stop loses nothing.
func (g *Gateway) Run(ctx context.Context) error {
	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() error { return g.sample(ctx) })
	eg.Go(func() error { return g.sampleEnv(ctx) })
	eg.Go(func() error { return g.send(ctx) })
	if g.opts.CheckDir != "" {
		eg.Go(func() error { return g.watchChecks(ctx, g.opts.CheckDir) })
	}
	err := eg.Wait()
	g.abandonMemory(context.WithoutCancel(ctx))
	return err
}
