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
package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
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
	in := &Ingester{o: o, queue: make(chan Message, o.QueueSize), items: make(chan item, o.MaxGroup),
		adm: newAdmission(o.Quota), gate: newByteGate(o.QueueBytes), gaps: map[string]*gapState{}}
	o.Metrics.queueDepth(func() float64 { return float64(len(in.queue)) }, func() float64 { return float64(in.gate.inUse()) })
	return in
}

// admit applies the gateway's quota to m. It returns false when m was
// refused: it is then done with (counted, maybe sampled, Done called), and
// only the sample, if any, is returned to be queued.
func (in *Ingester) admit(m Message) (Message, bool) {
	key := in.quotaKey(m.Topic)
	r, ok := in.adm.admit(key, len(m.Payload), in.o.Now())
	if ok {
		return m, true
	}
	in.o.Metrics.quotaRefused.WithLabelValues(r.limit).Inc()
	if m.Done != nil {
		m.Done()
	}
	if !r.sample {
		return Message{}, false
	}
	d := in.quotaDeadLetter(m, key, r)
	in.o.Log.Warn("gateway excedeu a cota; mensagens recusadas (o gateway as reenvia; uma amostra fica nas rejeitadas)",
		"gateway", key, "limite", r.limit, "recusadas", r.count, "bytes", r.bytes)
	return Message{Topic: d.Topic, ReceivedAt: m.ReceivedAt, pre: d}, false
}

// Offer queues m without blocking. It returns false when the queue is
// full (by messages or bytes): the caller must then not acknowledge m (see
// the package doc). A message refused over its gateway's quota counts as
// handled (true; Done has been called).
func (in *Ingester) Offer(m Message) bool {
	if m.ReceivedAt.IsZero() {
		m.ReceivedAt = in.o.Now()
	}
	m, ok := in.admit(m)
	if !ok {
		if m.pre != nil {
			in.offer(m, nil)
		}
		return true
	}
	return in.tryOffer(m)
}

func (in *Ingester) tryOffer(m Message) bool {
	held, ok := in.gate.tryAcquire(int64(len(m.Payload)))
	if !ok {
		in.o.Metrics.overflow.Inc()
		return false
	}
	m.held = held
	select {
	case in.queue <- m:
		return true
	default:
		in.gate.release(held)
		in.o.Metrics.overflow.Inc()
		return false
	}
}

// offerWait is Offer that, when the queue is full, waits for room until
// stop is closed (the overflow is still counted).
func (in *Ingester) offerWait(m Message, stop <-chan struct{}) {
	if m.ReceivedAt.IsZero() {
		m.ReceivedAt = in.o.Now()
	}
	m, ok := in.admit(m)
	if !ok && m.pre == nil {
		return
	}
	in.offer(m, stop)
}

// offer queues m, waiting for room (bytes, then a queue slot) until stop
// is closed.
func (in *Ingester) offer(m Message, stop <-chan struct{}) {
	if in.tryOffer(m) {
		return
	}
	held := in.gate.acquire(int64(len(m.Payload)), stop)
	if held == 0 && len(m.Payload) > 0 {
		return // stopped
	}
	m.held = held
	select {
	case in.queue <- m:
	case <-stop:
		in.gate.release(held)
	}
}

// QueueLen is the number of messages waiting.
func (in *Ingester) QueueLen() int { return len(in.queue) }

// item is a processed message on its way to the writer.
type item struct {
	msg    Message
	batch  *store.Batch
	dead   *store.DeadLetter
	status *store.GatewayStatus
	sensor registry.Sensor
	grade  string
	check  *wire.Check // a check message's check
	// municipality is where to ack a settling dead letter.
	municipality string
}

// Batches of signatures (signature.BatchVerifier): a worker takes the message
// it waits for and whatever else is already queued, up to maxVerifyBatch.
// Under load messages rarely queue up (an idle worker takes each at once),
// so when this worker has been taking messages faster than one per
// lingerGap it also waits up to maxLinger for the batch to reach
// lingerBatch. Below that rate (~4,000 messages/s per worker) nothing
// waits: a lone message is handled at once.
const (
	maxVerifyBatch = 64
	lingerBatch    = 16
	maxLinger      = 2 * time.Millisecond
	lingerGap      = 2 * maxLinger / lingerBatch
)

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

// work is one decode/verify/validate worker (see the batching constants).
func (in *Ingester) work(ctx context.Context) {
	var bv signature.BatchVerifier
	ms := make([]Message, 0, maxVerifyBatch)
	linger := time.NewTimer(maxLinger)
	linger.Stop()
	gap := time.Second // moving average of the time per message taken
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-in.queue:
			ms = append(ms[:0], m)
		}
	more:
		for len(ms) < maxVerifyBatch {
			select {
			case m := <-in.queue:
				ms = append(ms, m)
			default:
				break more
			}
		}
		if len(ms) < lingerBatch && gap <= lingerGap {
			linger.Reset(maxLinger)
		wait:
			for len(ms) < lingerBatch {
				select {
				case m := <-in.queue:
					ms = append(ms, m)
				case <-linger.C:
					break wait
				case <-ctx.Done():
					linger.Stop()
					return
				}
			}
			linger.Stop()
		}
		now := time.Now()
		gap = (3*gap + now.Sub(last)/time.Duration(len(ms))) / 4
		last = now
		in.o.Metrics.verifyBatch.Observe(float64(len(ms)))
		for _, it := range in.processAll(ms, &bv) {
			select {
			case in.items <- it:
			case <-ctx.Done():
				return
			}
		}
	}
}

// processAll decodes, authenticates and validates messages, their
// signatures verified together with bv. It never panics on input and
// yields exactly one item per message, in order.
func (in *Ingester) processAll(ms []Message, bv *signature.BatchVerifier) []item {
	ops := make([]opened, len(ms))
	idx := make([]int, len(ms))
	for i, m := range ms {
		ops[i] = in.open(m)
		idx[i] = -1
		if ops[i].verify {
			idx[i] = bv.Add(ops[i].gw.VerifyKeyAt(m.ReceivedAt), ops[i].env)
		}
	}
	verdicts := in.verifyBatch(bv)
	items := make([]item, len(ms))
	for i := range ops {
		op := &ops[i]
		verify := func() error {
			if verdicts != nil {
				return verdicts[idx[i]]
			}
			return op.gw.VerifyKeyAt(op.m.ReceivedAt).Verify(op.env)
		}
		items[i] = in.finish(op, verify)
	}
	return items
}

// verifyBatch returns bv's verdicts, or nil if verifying panicked (each
// message is then verified on its own, under finish's recover).
func (in *Ingester) verifyBatch(bv *signature.BatchVerifier) (verdicts []error) {
	defer func() {
		if r := recover(); r != nil {
			in.o.Log.Error("verificação de assinaturas em lote falhou; verificando uma a uma", "erro", r)
			verdicts = nil
		}
	}()
	return bv.Verify()
}

// opened is a message between decoding and signature verification.
type opened struct {
	it     item // the outcome, when done
	done   bool
	m      Message
	tp     wire.Topic
	env    *wire.Envelope
	b      *wire.Batch
	reg    *registry.Registry
	gw     registry.Gateway
	verify bool // the signature must be checked
}

// internalError is the dead letter for a message whose handling panicked.
func (in *Ingester) internalError(m Message, r any) item {
	return item{msg: m, dead: in.dead(m, "", 0, &wire.Error{Reason: "internal", Msg: fmt.Sprintf("erro interno ao processar a mensagem: %v", r)})}
}

// open does everything before the signature check: size, topic, status
// messages, decoding, the gateway's registration.
func (in *Ingester) open(m Message) (op opened) {
	op.m = m
	op.it.msg = m
	done := func() opened { op.done = true; return op }
	defer func() {
		if r := recover(); r != nil {
			op = opened{m: m, it: in.internalError(m, r), done: true}
		}
	}()
	if m.pre != nil {
		op.it.dead = m.pre
		return done()
	}
	if len(m.Payload) > wire.MaxPayload {
		op.it.dead = in.dead(m, "", 0, &wire.Error{Reason: wire.ReasonSize,
			Msg: fmt.Sprintf("mensagem com %d bytes excede o máximo de %d", len(m.Payload), wire.MaxPayload)})
		return done()
	}
	tp, err := wire.ParseTopic(m.Topic)
	if err != nil {
		op.it.dead = in.dead(m, "", 0, err)
		return done()
	}
	op.tp = tp
	reg := in.o.Registry.Current()
	gw, known := reg.Gateway(tp.Gateway)
	op.reg, op.gw = reg, gw
	switch tp.Kind {
	case wire.KindStatus:
		st, err := decodeStatus(m.Payload)
		if err == nil && !known {
			err = &wire.Error{Reason: wire.ReasonUnknown, Msg: fmt.Sprintf("gateway %q não está cadastrado", tp.Gateway)}
		}
		if err == nil && gw.Municipality != tp.Municipality {
			err = &wire.Error{Reason: wire.ReasonMismatch, Msg: fmt.Sprintf("gateway %q é do município %q, não %q", tp.Gateway, gw.Municipality, tp.Municipality)}
		}
		if err != nil {
			op.it.dead = in.dead(m, tp.Gateway, 0, err)
			return done()
		}
		at := st.At
		if at.IsZero() {
			at = m.ReceivedAt
		}
		op.it.status = &store.GatewayStatus{Gateway: tp.Gateway, Municipality: tp.Municipality, State: st.State, At: at,
			ReceivedAt: m.ReceivedAt, Clock: st.Clock, Outbox: st.Outbox, Version: st.Version}
		return done()
	case wire.KindAck:
		op.it.dead = in.dead(m, tp.Gateway, 0, &wire.Error{Reason: wire.ReasonTopic, Msg: "o serviço central não aceita acks"})
		return done()
	}
	env, b, err := wire.Open(m.Payload)
	if err != nil {
		op.it.dead = in.dead(m, tp.Gateway, 0, err)
		return done()
	}
	op.env, op.b = env, b
	if !known {
		op.it.dead = in.dead(m, tp.Gateway, b.Seq, &wire.Error{Reason: wire.ReasonUnknown,
			Msg: fmt.Sprintf("gateway %q não está cadastrado; inclua-o no cadastro (registry)", tp.Gateway)})
		return done()
	}
	if gw.Municipality != tp.Municipality {
		op.it.dead = in.dead(m, tp.Gateway, b.Seq, &wire.Error{Reason: wire.ReasonMismatch,
			Msg: fmt.Sprintf("gateway %q é do município %q no cadastro, mas publicou em %q", tp.Gateway, gw.Municipality, tp.Municipality)})
		return done()
	}
	op.verify = len(env.Sig) > 0 || gw.SignatureRequired()
	return op
}

// finish does everything from the signature check on (verify gives its
// verdict) and yields the message's item.
func (in *Ingester) finish(op *opened, verify func() error) (it item) {
	if op.done {
		return op.it
	}
	m, tp, env, b, gw := op.m, op.tp, op.env, op.b, op.gw
	it.msg = m
	defer func() {
		if r := recover(); r != nil {
			it = in.internalError(m, r)
		}
	}()
	verified := false
	if op.verify {
		verr := verify()
		if verr != nil && gw.SignatureRequired() {
			it.dead = in.dead(m, tp.Gateway, b.Seq, verr)
			return it
		}
		verified = verr == nil
	}
	// The batch has authenticated: its signature verified with the
	// registered key, or the gateway is registered without
	// require_signature. When the envelope and the body name the topic's
	// gateway, its (gateway, seq) can be trusted, so a rejection from here
	// on settles the seq: it is kept as a dead letter and the ack watermark
	// moves over it (docs/wire.md, Ack), or one bad batch would stall the
	// gateway's outbox for ever.
	settles := b.Seq > 0 && b.Seq <= wire.MaxSeq && env.Kid == tp.Gateway && b.Gateway == tp.Gateway
	reject := func(err error) item {
		it.dead = in.dead(m, tp.Gateway, b.Seq, err)
		if settles {
			it.dead.Settles = true
			it.municipality = tp.Municipality
		}
		return it
	}
	if err := wire.Validate(tp, env, b, m.ReceivedAt, in.o.Skew, in.o.Stale); err != nil {
		return reject(err)
	}
	if err := wire.CheckSize(len(m.Payload), b); err != nil {
		return reject(err)
	}
	sn, ok := op.reg.Sensor(tp.Sensor)
	if !ok {
		return reject(&wire.Error{Reason: wire.ReasonUnknown,
			Msg: fmt.Sprintf("sensor %q não está cadastrado; inclua-o no cadastro (registry)", tp.Sensor)})
	}
	if sn.Gateway != tp.Gateway {
		return reject(&wire.Error{Reason: wire.ReasonUnknown,
			Msg: fmt.Sprintf("sensor %q está cadastrado no gateway %q, não em %q", tp.Sensor, sn.Gateway, tp.Gateway)})
	}
	it.sensor = sn
	it.grade = worseGrade(sn.Meter.Grade, b.Device.Grade)
	it.check = b.Check
	it.batch = &store.Batch{Gateway: tp.Gateway, Municipality: tp.Municipality, Sensor: tp.Sensor, Kind: tp.Kind,
		Topic: m.Topic, Seq: b.Seq, Body: env.Body, Sig: env.Sig, Verified: verified, ReceivedAt: m.ReceivedAt,
		Device: b.Device, Clock: b.Clock, Records: b.Records, Env: b.Env, Raw: m.Payload}
	return it
}

func worseGrade(a, b string) string {
	rank := map[string]int{"class1": 1, "class2": 2, "screening": 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func decodeStatus(p []byte) (*wire.Status, error) {
	var st wire.Status
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, &wire.Error{Reason: wire.ReasonJSON, Msg: fmt.Sprintf("status JSON inválido: %v", err)}
	}
	if dec.More() {
		return nil, &wire.Error{Reason: wire.ReasonJSON, Msg: "status JSON inválido: dados depois do objeto"}
	}
	if st.V != wire.Version {
		return nil, &wire.Error{Reason: wire.ReasonSchema, Msg: fmt.Sprintf("status com v=%d não suportado (esperado %d)", st.V, wire.Version)}
	}
	if st.State != "online" && st.State != "offline" {
		return nil, &wire.Error{Reason: wire.ReasonSchema, Msg: fmt.Sprintf("status state %q inválido; use online ou offline", st.State)}
	}
	return &st, nil
}

func (in *Ingester) dead(m Message, gateway string, seq uint64, err error) *store.DeadLetter {
	reason := wire.ReasonOf(err)
	msg := err.Error()
	var we *wire.Error
	if errors.As(err, &we) {
		msg = we.Msg
	}
	if len(msg) > 2048 { // a message quoting a 64 KiB topic, say
		msg = msg[:2048] + "…"
	}
	p, trunc := m.Payload, false
	if len(p) > wire.MaxPayload {
		p, trunc = p[:wire.MaxPayload], true
	}
	in.o.Metrics.rejections.WithLabelValues(reason).Inc()
	if seq > wire.MaxSeq {
		seq = 0 // not storable (SQLite integers are int64); the payload has it
	}
	return &store.DeadLetter{ReceivedAt: m.ReceivedAt, Topic: clipTopic(m.Topic), Reason: reason, Message: msg,
		Gateway: gateway, Seq: seq, Payload: bytes.Clone(p), Truncated: trunc}
}

// write is the single writer: it group-commits whatever is waiting, then
// acknowledges and notifies observers.
func (in *Ingester) write(ctx context.Context) error {
	// The observers (alerts, dashboard) and the broker-level
	// acknowledgements of a group run on their own goroutine while the next
	// group is stored: the single writer is the ingest's narrowest point,
	// and it spent a fifth of its time there. Groups reach the observers
	// in commit order; Run returns after the last committed group was
	// observed.
	committed := make(chan committedGroup, 1)
	observed := make(chan struct{})
	go func() {
		defer close(observed)
		for c := range committed {
			in.observe(ctx, c)
		}
	}()
	defer func() {
		close(committed)
		<-observed
	}()
	buf := make([]item, 0, in.o.MaxGroup)
	for {
		buf = buf[:0]
		select {
		case <-ctx.Done():
			return nil
		case it := <-in.items:
			buf = append(buf, it)
		}
	drain:
		for len(buf) < in.o.MaxGroup {
			select {
			case it := <-in.items:
				buf = append(buf, it)
			default:
				break drain
			}
		}
		// The group goes on to the observers while buf fills again: a copy
		// of its size (a fresh MaxGroup-sized slice per commit was ~150 KB
		// of garbage per message at paced rates, one message per commit).
		group := slices.Clone(buf)
		clear(buf)
		c, err := in.commit(ctx, group)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		committed <- c
	}
}

// committedGroup is a stored group on its way to the observers.
type committedGroup struct {
	group  []item
	w      store.Write
	idx    []int // group index of each batch in w.Batches
	res    store.Result
	events []Event
}

// commit stores a group, sends the application-level acks and counts
// what was stored; observe does the rest.
func (in *Ingester) commit(ctx context.Context, group []item) (committedGroup, error) {
	w, idx := groupWrite(group)
	res, err := in.apply(ctx, w)
	if err != nil {
		return committedGroup{}, err
	}
	now := in.o.Now()
	for _, it := range group {
		in.o.Metrics.receiveToStore.Observe(now.Sub(it.msg.ReceivedAt).Seconds())
	}
	events := in.conflictEvents(w, res, now)
	if skips := in.trackGaps(now, w, res); len(skips) > 0 {
		r2, evs := in.applySkips(ctx, skips, now)
		for gw, v := range r2.Watermarks {
			res.Watermarks[gw] = v
		}
		events = append(events, evs...)
	}
	in.ack(group, w, res, now)
	in.countCommitted(w, res)
	return committedGroup{group: group, w: w, idx: idx, res: res, events: events}, nil
}

// groupWrite gathers a group's batches, dead letters and statuses into one
// store write; idx is the group index of each batch in w.Batches.
func groupWrite(group []item) (w store.Write, idx []int) {
	for i, it := range group {
		switch {
		case it.batch != nil:
			w.Batches = append(w.Batches, *it.batch)
			idx = append(idx, i)
		case it.dead != nil:
			w.DeadLetters = append(w.DeadLetters, *it.dead)
		case it.status != nil:
			w.Statuses = append(w.Statuses, *it.status)
		}
	}
	return w, idx
}

// apply stores w, retrying with a growing backoff (up to 5 s) until the
// store takes it or ctx ends: nothing is acked before it is stored.
func (in *Ingester) apply(ctx context.Context, w store.Write) (store.Result, error) {
	backoff := 50 * time.Millisecond
	for {
		start := time.Now()
		res, err := in.o.Store.Apply(ctx, w)
		if err == nil {
			in.o.Metrics.storeLatency.Observe(time.Since(start).Seconds())
			return res, nil
		}
		in.o.Metrics.storeErrors.Inc()
		if ctx.Err() != nil {
			return store.Result{}, ctx.Err()
		}
		in.o.Log.Error("falha ao gravar; nada foi confirmado, nova tentativa", "erro", err, "espera", backoff)
		select {
		case <-ctx.Done():
			return store.Result{}, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// ack publishes the application-level acks of a commit: one per gateway
// with a new watermark, on its municipality's topic.
func (in *Ingester) ack(group []item, w store.Write, res store.Result, now time.Time) {
	muni := map[string]string{}
	for _, it := range group {
		if it.dead != nil && it.dead.Settles {
			muni[it.dead.Gateway] = it.municipality
		}
	}
	for _, b := range w.Batches {
		muni[b.Gateway] = b.Municipality
	}
	for gw, seq := range res.Watermarks {
		m, ok := muni[gw]
		if !ok || in.o.Acks == nil || seq == 0 {
			continue
		}
		if err := in.o.Acks.Ack(m, gw, seq); err != nil {
			in.o.Metrics.ackErrors.Inc()
			if in.ackFails == 0 {
				in.ackFailErr, in.ackFailGW = err, gw
			}
			in.ackFails++
		} else {
			in.o.Metrics.acks.Inc()
		}
	}
	in.logAckFailures(now)
}

// countCommitted counts a commit's messages by kind and outcome (stored,
// duplicate, conflict, rejected) and the records it stored.
func (in *Ingester) countCommitted(w store.Write, res store.Result) {
	stored := -res.RecordsIgnored
	for j, b := range w.Batches {
		if res.SeqConflict[j] {
			in.o.Metrics.messages.WithLabelValues(b.Kind, "conflict").Inc()
			continue
		}
		if !res.New[j] {
			in.o.Metrics.messages.WithLabelValues(b.Kind, "duplicate").Inc()
			continue
		}
		in.o.Metrics.messages.WithLabelValues(b.Kind, "stored").Inc()
		stored += len(b.Records) + len(b.Env)
	}
	if stored > 0 {
		in.o.Metrics.records.Add(float64(stored))
	}
	for j := range w.DeadLetters {
		if res.DeadLetterNew[j] {
			in.o.Metrics.messages.WithLabelValues("any", "rejected").Inc()
		} else { // a replay of the rejection that settled its seq
			in.o.Metrics.messages.WithLabelValues("any", "duplicate").Inc()
		}
	}
	for range w.Statuses {
		in.o.Metrics.messages.WithLabelValues(wire.KindStatus, "stored").Inc()
	}
}

// conflictEvents counts, logs and reports what a commit kept instead of
// applying: batches under a stored seq with another body, records for a
// second the sensor already had with other values, quota samples.
func (in *Ingester) conflictEvents(w store.Write, res store.Result, now time.Time) []Event {
	var evs []Event
	for j, b := range w.Batches {
		if !res.SeqConflict[j] {
			continue
		}
		in.o.Metrics.seqConflicts.Inc()
		in.o.Log.Error("lote assinado com um seq já gravado e corpo diferente; o primeiro continua valendo, os dois ficam guardados (chave do gateway comprometida?)",
			"gateway", b.Gateway, "seq", b.Seq, "sensor", b.Sensor)
		evs = append(evs, Event{Kind: EventSeqConflict, Gateway: b.Gateway, Municipality: b.Municipality, Sensor: b.Sensor,
			Seq: b.Seq, At: now, Message: fmt.Sprintf("o gateway %s enviou outro lote com o seq %d, com conteúdo diferente do já gravado; "+
				"o primeiro continua valendo e o segundo está nas mensagens rejeitadas (seq_conflict)", b.Gateway, b.Seq)})
	}
	type key struct{ gw, sensor, kind string }
	type span struct {
		n           int
		first, last time.Time
		seq         uint64
	}
	per := map[key]*span{}
	var order []key
	for _, c := range res.RecordConflicts {
		in.o.Metrics.recordConflicts.WithLabelValues(c.Kind).Inc()
		k := key{c.New.Gateway, c.Sensor, c.Kind}
		sp := per[k]
		if sp == nil {
			sp = &span{first: c.T, last: c.T}
			per[k] = sp
			order = append(order, k)
		}
		sp.n++
		sp.first, sp.last, sp.seq = minTime(sp.first, c.T), maxTime(sp.last, c.T), c.New.Seq
	}
	for _, k := range order {
		sp := per[k]
		in.o.Log.Warn("registros para segundos que o sensor já tinha, com valores diferentes: o gravado continua valendo, o novo fica guardado como conflito (relógio do gateway voltou?)",
			"gateway", k.gw, "sensor", k.sensor, "tipo", k.kind, "registros", sp.n,
			"de", sp.first.UTC().Format(time.RFC3339), "ate", sp.last.UTC().Format(time.RFC3339), "seq", sp.seq)
		evs = append(evs, Event{Kind: EventRecordConflict, Gateway: k.gw, Sensor: k.sensor, Seq: sp.seq, T: sp.first, At: now,
			Message: fmt.Sprintf("%d registros do sensor %s (%s a %s) chegaram de novo com valores diferentes dos já gravados; "+
				"os gravados continuam valendo e os novos ficam guardados como conflito", sp.n, k.sensor,
				sp.first.UTC().Format(time.RFC3339), sp.last.UTC().Format(time.RFC3339))})
	}
	for _, d := range w.DeadLetters {
		if d.Reason == wire.ReasonQuota {
			evs = append(evs, Event{Kind: EventQuota, Gateway: d.Gateway, At: now, Message: d.Message})
		}
	}
	return evs
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// observe hands a committed group's new readings and statuses to the
// observers, then acknowledges its messages to the broker.
func (in *Ingester) observe(ctx context.Context, c committedGroup) {
	group, w, idx, res := c.group, c.w, c.idx, c.res
	var readings []Reading
	for j, b := range w.Batches {
		if !res.New[j] {
			continue
		}
		if b.Kind == wire.KindEnv {
			in.observeEnv(ctx, b)
			continue
		}
		if b.Kind == wire.KindCheck {
			in.observeCheck(ctx, b, group[idx[j]].check)
			continue
		}
		if len(in.o.Observers) == 0 || b.Kind != wire.KindLevels {
			continue
		}
		it := group[idx[j]]
		sn := it.sensor
		r := Reading{Sensor: b.Sensor, Gateway: b.Gateway, Municipality: b.Municipality, Code: sn.Code, Zone: sn.Zone,
			Location: sn.Location, Address: sn.Address, Establishments: sn.Establishments, Grade: it.grade,
			Meter: sn.Meter, Device: b.Device, Clock: b.Clock, Verified: b.Verified, Seq: b.Seq,
			ReceivedAt: b.ReceivedAt}
		readings = readings[:0]
		for _, rec := range b.Records {
			r.Record = rec
			readings = append(readings, r)
		}
		for _, o := range in.o.Observers {
			if bo, ok := o.(BatchObserver); ok {
				bo.ObserveBatch(ctx, readings)
				continue
			}
			for i := range readings {
				o.Observe(ctx, readings[i])
			}
		}
	}
	for _, st := range w.Statuses {
		for _, o := range in.o.Observers {
			if so, ok := o.(StatusObserver); ok {
				so.ObserveStatus(ctx, st)
			}
		}
	}
	for _, e := range c.events {
		for _, o := range in.o.Observers {
			if eo, ok := o.(EventObserver); ok {
				eo.ObserveEvent(ctx, e)
			}
		}
	}
	// The broker-level acknowledgements go last: a message counts as handled
	// once it is stored, acked to its gateway and evaluated, so whoever waits
	// for them (the MQTT session, a test) sees all of that.
	for _, it := range group {
		in.gate.release(it.msg.held)
		if it.msg.Done != nil {
			it.msg.Done()
		}
	}
}

// logAckFailures logs the acks that could not be published since the
// last such line, at most once per ackLogEvery. A gateway whose ack is lost
// keeps its batches and republishes them; the next ack covers them.
func (in *Ingester) logAckFailures(now time.Time) {
	if in.ackFails == 0 || now.Sub(in.ackLoggedAt) < ackLogEvery {
		return
	}
	in.o.Log.Warn("acks não publicados; os gateways reenviam e o próximo ack os cobre", "quantos", in.ackFails,
		"primeiro_gateway", in.ackFailGW, "erro", in.ackFailErr)
	in.ackFails, in.ackFailErr, in.ackFailGW, in.ackLoggedAt = 0, nil, "", now
}

// observeEnv hands a newly stored env batch's records to the observers
// that implement EnvObserver.
func (in *Ingester) observeEnv(ctx context.Context, b store.Batch) {
	for _, o := range in.o.Observers {
		eo, ok := o.(EnvObserver)
		if !ok {
			continue
		}
		for _, rec := range b.Env {
			eo.ObserveEnv(ctx, EnvReading{Sensor: b.Sensor, Gateway: b.Gateway, Municipality: b.Municipality,
				Device: b.Device, Clock: b.Clock, Verified: b.Verified, Seq: b.Seq, ReceivedAt: b.ReceivedAt, Record: rec})
		}
	}
}

// observeCheck hands a newly stored check to the observers that implement
// CheckObserver.
func (in *Ingester) observeCheck(ctx context.Context, b store.Batch, c *wire.Check) {
	if c == nil {
		return
	}
	for _, o := range in.o.Observers {
		if co, ok := o.(CheckObserver); ok {
			co.ObserveCheck(ctx, CheckReading{Sensor: b.Sensor, Gateway: b.Gateway, Municipality: b.Municipality, Device: b.Device,
				Check: *c, Verified: b.Verified, Seq: b.Seq, ReceivedAt: b.ReceivedAt, Body: b.Body, Sig: b.Sig})
		}
	}
}

// SetAcker sets the ack publisher after construction (the MQTT subscriber
// needs the Ingester first). Call it before Run.
func (in *Ingester) SetAcker(a Acker) { in.o.Acks = a }
