// Package ingest turns the MQTT messages gateways publish into durable
// records: decode (wire.Open), look the gateway and sensor up in the
// registry, verify the ed25519 signature, validate values and timestamps
// against the receive time, dedupe on (gateway, seq), store, and only then
// acknowledge — both the MQTT PUBACK and the application-level wire.Ack
// (the highest contiguous seq durably stored) that lets the gateway drop
// the batch from its outbox. Rejected messages go to the dead-letter table
// with their reason; nothing a gateway sends can crash or stall ingest.
//
// A batch rejected after it authenticated (signature verified with the
// registered key, or a gateway registered without require_signature, and
// the envelope's kid and the body naming the topic's gateway) settles its
// seq: the dead letter and the seq are stored in one transaction and the
// ack watermark moves over it, so that one bad batch cannot stall the
// gateway's outbox. Forged, unknown-source and undecodable messages move
// nothing (docs/wire.md, Ack).
//
// Before a message takes room in the queue it passes its gateway's quota
// (admission.go: token buckets for messages and bytes; over it the message
// is refused, counted and sampled) and the queue's byte bound. Batches
// under a stored seq with another body, records for seconds already held
// with other values, and gaps the gateway cannot fill (gaps.go) are kept,
// counted, logged and reported as Events rather than dropped.
//
// Flow and back-pressure:
//
//	MQTT callback ─(waits while full)─► bounded queue ─► N workers (decode,
//	verify — what is queued together, in one batch — validate) ─► one
//	writer (group commit: one SQLite transaction for
//	everything waiting) ─► PUBACK + wire.Ack ─► Observers (alerts, dashboard;
//	env records to those that are EnvObservers)
//
// With the embedded broker the link is Inline: the broker hands each
// message to ingest in process (after it has PUBACKed the gateway) and,
// when the queue is full, that gateway's connection waits for room; acks
// are published by the broker itself. Durability rests, as always, on the
// application-level ack and the gateway's outbox.
//
// With an external broker the link is Subscriber, which disables paho's
// automatic PUBACK: a message is
// acknowledged to the broker only after it has been stored (or
// dead-lettered). If the queue is full, the subscriber's message handler
// waits for room, and paho's reader with it: the broker holds the rest in
// the persistent session (QoS 1, CleanSession=false) and, should the
// connection end meanwhile, redelivers what was not acknowledged. The
// gateway's outbox is a second safety net: it keeps every
// batch until the application-level ack covers it. Nothing is dropped; the
// cost of overload is latency, never data. If the store fails, the writer
// retries with backoff and acknowledges nothing meanwhile, so the queue
// fills and the same back-pressure applies.
//
// Where each stage lives, in pipeline order:
//
//   - link: inline.go (the embedded broker), mqtt.go (Subscriber, an
//     external broker);
//   - admission: admission.go (per-gateway quotas, Offer and the queue's
//     bounds);
//   - decode, verify, validate: process.go (the workers and their
//     signature batches; dead letters are made here);
//   - store: write.go (the one writer, its group commit, counters and
//     conflict events), gaps.go (seqs the gateway cannot fill);
//   - ack: ack.go (PUBACK and wire.Ack after the commit);
//   - observers: observe.go (alerts, dashboard, env and check observers),
//     replay.go (stored checks handed again to a check observer that
//     missed them);
//   - metrics.go: the Prometheus collectors over all of them.
//
// ingest.go holds the types the stages share, New and Run.
package ingest

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// Reading is one stored level record with what the registry says about its
// sensor: everything the alerts monitor and the live dashboard need.
type Reading struct {
	Sensor         string
	Gateway        string
	Municipality   string // topic segment (the gateway's municipality)
	Code           string // municipal code id for the codes engine, e.g. "lapa"
	Zone           string // codes-eval.md zone
	Location       registry.Location
	Address        string
	Establishments []registry.Establishment
	// Grade is the less trustworthy of the registered meter grade and the
	// grade the device reports (screening < class2 < class1).
	Grade      string
	Meter      registry.Meter // as registered
	Device     wire.Device    // as reported in the batch
	Clock      wire.Clock     // gateway clock state when the batch was built
	Verified   bool           // the batch's signature verified
	Seq        uint64
	ReceivedAt time.Time
	Record     wire.Record
}

// Observer receives every newly stored level record, after the write is
// durable. Observe is called from one goroutine, in store order: it must
// return quickly (hand off if it has real work to do).
type Observer interface {
	Observe(ctx context.Context, r Reading)
}

// BatchObserver is an Observer that takes the readings of one stored batch
// together, in the batch's order; it gets ObserveBatch instead of Observe.
// rs is only valid during the call.
type BatchObserver interface {
	Observer
	ObserveBatch(ctx context.Context, rs []Reading)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(ctx context.Context, r Reading)

// Observe calls f.
func (f ObserverFunc) Observe(ctx context.Context, r Reading) { f(ctx, r) }

// EnvReading is one stored environmental record (wire.KindEnv) with the
// batch it came in.
type EnvReading struct {
	Sensor       string
	Gateway      string
	Municipality string      // topic segment (the gateway's municipality)
	Device       wire.Device // as reported in the batch
	Clock        wire.Clock  // gateway clock state when the batch was built
	Verified     bool        // the batch's signature verified
	Seq          uint64
	ReceivedAt   time.Time
	Record       wire.EnvRecord
}

// EnvObserver optionally receives every newly stored environmental record
// (the dashboard shows them). Like Observe, ObserveEnv is called from the
// ingest writer goroutine after the write is durable, in store order, and
// must return quickly.
type EnvObserver interface {
	ObserveEnv(ctx context.Context, r EnvReading)
}

// CheckReading is one newly stored calibrator field check (wire.KindCheck)
// with the signed message it came in.
type CheckReading struct {
	Sensor       string
	Gateway      string
	Municipality string      // topic segment (the gateway's municipality)
	Device       wire.Device // the meter, as the check reports it
	Check        wire.Check
	Verified     bool // the message's signature verified
	Seq          uint64
	ReceivedAt   time.Time
	Body, Sig    []byte // the signed body and its signature, as received
}

// CheckObserver optionally receives every newly stored field check (the
// calibration register keeps them). Like Observe, ObserveCheck is called
// from one goroutine after the write is durable, in store order.
type CheckObserver interface {
	ObserveCheck(ctx context.Context, c CheckReading)
}

// StatusObserver optionally receives gateway status changes (the alerts
// monitor uses them for no_data; the dashboard shows them).
type StatusObserver interface {
	ObserveStatus(ctx context.Context, s store.GatewayStatus)
}

// Store is where ingest writes.
type Store interface {
	Apply(ctx context.Context, w store.Write) (store.Result, error)
}

// Registry gives the register in force.
type Registry interface {
	Current() *registry.Registry
}

// Acker publishes the application-level ack to a gateway. It must not
// block for long: a lost ack is repaired by the next one.
type Acker interface {
	Ack(municipality, gateway string, seq uint64) error
}

// Message is one MQTT message as received.
type Message struct {
	Topic      string
	Payload    []byte
	ReceivedAt time.Time
	// Done is called once the message has been stored or dead-lettered,
	// its gateway acked and its readings observed (the MQTT PUBACK), or at
	// once when it is refused over its gateway's quota. May be nil.
	Done func()

	held int64             // bytes taken from the queue's byte gate
	pre  *store.DeadLetter // already judged (a quota sample): stored as is
}

// Options configures an Ingester. Zero values take the documented defaults.
type Options struct {
	Store     Store
	Registry  Registry
	Acks      Acker      // may be nil (no acks, e.g. tests)
	Observers []Observer // each also gets statuses (StatusObserver) and env records (EnvObserver) if it implements them
	Log       *slog.Logger
	Metrics   *Metrics // may be nil

	Workers   int           // decode/verify workers; default GOMAXPROCS
	QueueSize int           // messages waiting for a worker; default 4096
	MaxGroup  int           // messages per group commit; default 512
	Skew      time.Duration // how far in the future a record may be; default wire.DefaultSkew
	Stale     time.Duration // how old a record may be; default wire.DefaultStale
	Now       func() time.Time

	// QueueBytes bounds the payload bytes admitted and not yet committed
	// (default DefaultQueueBytes); past it, a message waits for room like
	// a message finding the queue full.
	QueueBytes int64
	// Quota is each gateway's allowance (admission.go; zero: DefaultQuota).
	Quota Quota
	// DeadLetterBytesPerHour is each gateway's dead-letter budget per
	// clock hour (deadbudget.go; default DefaultDeadLetterBytesPerHour).
	DeadLetterBytesPerHour int64
	// GapTimeout is how long a gap below a gateway's stored seqs must stay
	// open, while the gateway keeps replaying the seqs above it, before the
	// watermark moves over it (gaps.go; default DefaultGapTimeout).
	GapTimeout time.Duration
}

// Ingester is the ingest pipeline. Create with New, feed with Offer, run
// with Run.
type Ingester struct {
	o     Options
	queue chan Message
	items chan item
	adm   *admission
	gate  *byteGate
	gaps  map[string]*gapState // the writer's goroutine only

	budget   *deadBudget // the writer's goroutine only (deadbudget.go)
	deadMu   sync.Mutex
	deadByGW map[string]int64 // dead letters past their gateway's budget

	// Acks that could not be published, not yet logged (the writer's
	// goroutine only): one line per ackLogEvery instead of one per gateway
	// and commit while the broker is away.
	ackFails    int
	ackFailErr  error
	ackFailGW   string
	ackLoggedAt time.Time
}

// ackLogEvery is how often, at most, failed acks are logged.
const ackLogEvery = 10 * time.Second

// New returns an Ingester with defaults applied.
func New(o Options) *Ingester {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 4096
	}
	if o.MaxGroup <= 0 {
		o.MaxGroup = 512
	}
	if o.Skew <= 0 {
		o.Skew = wire.DefaultSkew
	}
	if o.Stale <= 0 {
		o.Stale = wire.DefaultStale
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.GapTimeout <= 0 {
		o.GapTimeout = DefaultGapTimeout
	}
	if o.DeadLetterBytesPerHour <= 0 {
		o.DeadLetterBytesPerHour = DefaultDeadLetterBytesPerHour
	}
	in := &Ingester{o: o, queue: make(chan Message, o.QueueSize), items: make(chan item, o.MaxGroup),
		adm: newAdmission(o.Quota), gate: newByteGate(o.QueueBytes), gaps: map[string]*gapState{},
		budget: &deadBudget{perHour: o.DeadLetterBytesPerHour}, deadByGW: map[string]int64{}}
	o.Metrics.queueDepth(func() float64 { return float64(len(in.queue)) }, func() float64 { return float64(in.gate.inUse()) })
	return in
}

// Run processes messages until ctx ends. Messages not yet stored when it
// returns were not acknowledged and will be redelivered.
func (in *Ingester) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range in.o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in.work(ctx)
		}()
	}
	err := in.write(ctx)
	wg.Wait()
	return err
}
