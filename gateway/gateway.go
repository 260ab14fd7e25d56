package gateway

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
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

// OnConnect is called by the transport once connected and subscribed to
// the ack topic.
func (g *Gateway) OnConnect() {
	g.connGen.Add(1)
	g.connected.Store(true)
	g.poke()
}

// OnConnectionLost is called by the transport when the connection drops.
func (g *Gateway) OnConnectionLost(error) {
	g.connected.Store(false)
	g.poke()
}

// HandleAck takes an ack payload from the transport. Malformed acks and
// acks for another gateway are counted and ignored.
func (g *Gateway) HandleAck(payload []byte) {
	a, err := ParseAck(payload)
	if err != nil || a.Gateway != g.opts.Gateway {
		g.badAcks.Add(1)
		return
	}
	g.watchRegression(a.Seq)
	for {
		cur := g.ackSeq.Load()
		if a.Seq <= cur || g.ackSeq.CompareAndSwap(cur, a.Seq) {
			break
		}
	}
	// The central service acks after every commit holding a batch of this
	// gateway; the same ack a third time in a row means batches above it
	// arrive while the next one does not — lost between this gateway and the
	// central service although the broker PUBACKed it (e.g. published while
	// the central service was not yet subscribed again after a broker
	// restart). Like TCP's fast retransmit, resend from there at once
	// instead of after AckTimeout; once, until everything sent by then is
	// acked.
	g.dupMu.Lock()
	switch {
	case a.Seq == g.dupVal:
		g.dupCount++
	case a.Seq > g.dupVal:
		g.dupVal, g.dupCount = a.Seq, 1
	}
	trigger := a.Seq == g.dupVal && g.dupCount == fastResendAcks && a.Seq >= g.recoverTo.Load()
	g.dupMu.Unlock()
	if trigger {
		g.fastResend.Store(a.Seq)
	}
	g.poke()
}

// fastResendAcks is how many times in a row the same ack must come for a
// fast resend (HandleAck).
const fastResendAcks = 3

// regressAcks is how many acks in a row below the watermark already
// applied raise the alarm: one stale ack redelivered after a reconnect is
// not a regression.
const regressAcks = 3

// watchRegression notices acks below the highest one seen (or applied at
// start): the central service's data went back to an older state (restored
// from a backup). The gateway never deletes anything on a lower ack; it
// keeps sending and replaying what is unacked, counts such acks
// (Status.Outbox.AckRegressions), raises AckRegressed after regressAcks of
// them in a row and clears it once an ack reaches the watermark again.
func (g *Gateway) watchRegression(seq uint64) {
	high := g.ackSeq.Load()
	if seq >= high {
		g.lowRun.Store(0)
		if g.ackRegressed.CompareAndSwap(true, false) {
			g.log.Info("o ack do serviço central voltou ao nível já confirmado", "ack", seq)
			g.poke()
		}
		return
	}
	g.lowAcks.Add(1)
	if g.lowRun.Add(1) >= regressAcks && g.ackRegressed.CompareAndSwap(false, true) {
		g.log.Warn("o serviço central confirma seqs abaixo do que já tinha confirmado (dados restaurados de um backup antigo?); "+
			"nada é apagado por isso e os lotes pendentes continuam sendo enviados",
			"ack", seq, "confirmado_antes", high, "lotes_perdidos_no_central", high-seq)
		g.poke()
	}
}

// ParseAck decodes an ack strictly: known fields only, v = 1, a gateway id
// and a seq ≥ 1.
func ParseAck(payload []byte) (wire.Ack, error) {
	var a wire.Ack
	if len(payload) > 4096 {
		return a, errors.New("gateway: ack too large")
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return wire.Ack{}, fmt.Errorf("gateway: ack: %w", err)
	}
	if dec.More() {
		return wire.Ack{}, errors.New("gateway: ack: data after the object")
	}
	if a.V != wire.Version || !wire.ValidID(a.Gateway) || a.Seq == 0 {
		return wire.Ack{}, fmt.Errorf("gateway: ack: v=%d gateway=%q seq=%d", a.V, a.Gateway, a.Seq)
	}
	return a, nil
}

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

func (g *Gateway) readClock(now time.Time) wire.Clock {
	c, err := g.sync.SyncState()
	if err != nil {
		g.log.Warn("estado do relógio ilegível; registros marcados como não sincronizados", "erro", err)
		c = unsyncedClock
	}
	g.clockMu.Lock()
	g.clock = c
	g.clockMu.Unlock()
	return c
}

func (g *Gateway) currentClock() wire.Clock {
	g.clockMu.Lock()
	defer g.clockMu.Unlock()
	return g.clock
}

func (g *Gateway) sample(ctx context.Context) error {
	// Database writes finish even when ctx ends mid-way: a batch that has
	// been cut must reach the outbox (they take milliseconds).
	sp := &sampler{dbctx: context.WithoutCancel(ctx), agg: NewAggregator(g.opts.SamplePeriod)}
	sp.agg.Seed(g.box.High())
	sp.bat = &Batcher{MaxRecords: g.opts.BatchRecords, MaxAge: g.opts.BatchMaxAge}
	tick := time.NewTicker(g.opts.SamplePeriod)
	defer tick.Stop()

	sp.clk = g.readClock(g.now())
	sp.lastClock = g.now()
	for {
		select {
		case <-ctx.Done():
			// Persist what is in memory, even though the run is over.
			g.flushSampler(sp)
			return nil
		case <-tick.C:
		}
		g.sampleTick(sp)
	}
}

// sampler is the state of the sampling loop between ticks.
type sampler struct {
	dbctx     context.Context // never cancelled: a cut batch reaches the outbox
	agg       *Aggregator
	bat       *Batcher
	clk       wire.Clock // the clock's state, read again at most once a second
	lastClock time.Time
	skipped   time.Duration // sampling time skipped while the outbox is full, under 1 s
	wasFull   bool
}

// flushSampler cuts the seconds and the batch in progress and stores them.
func (g *Gateway) flushSampler(sp *sampler) {
	for _, o := range sp.agg.Flush() {
		for _, p := range sp.bat.Add(o, g.now()) {
			g.enqueue(sp.dbctx, p)
		}
	}
	if p, ok := sp.bat.Flush(); ok {
		g.enqueue(sp.dbctx, p)
	}
}

// sampleTick is one tick of the sampling loop: it follows the clock and
// the outbox's room, reads the meter and stores the batches completed.
// With the outbox full under stop-sampling it counts the seconds not
// measured instead.
func (g *Gateway) sampleTick(sp *sampler) {
	now := g.now()
	if now.Round(0).Sub(sp.lastClock.Round(0)).Abs() >= time.Second {
		sp.clk = g.readClock(now)
		sp.lastClock = now
	}
	if full := g.noRoom(); full != sp.wasFull {
		sp.wasFull = full
		g.poke() // status changes
	}
	if g.opts.FullPolicy == StopSampling && sp.wasFull {
		g.flushSampler(sp)
		sp.skipped += g.opts.SamplePeriod
		if s := int(sp.skipped / time.Second); s > 0 {
			sp.skipped -= time.Duration(s) * time.Second
			_ = g.box.Drop(sp.dbctx, s)
		}
		return
	}
	s, ok := g.readMeter(now)
	if !ok {
		return
	}
	outs, err := sp.agg.Add(s, sp.clk)
	if err != nil {
		g.meterFailed("amostra do medidor recusada", err)
		return
	}
	for _, st := range sp.agg.Steps() {
		g.log.Warn("o relógio voltou no tempo; os segundos medidos de novo vão em lotes marcados (clock.source=step, synced=false)",
			"at", st.At, "back", st.Back.Round(time.Millisecond))
	}
	for _, o := range outs {
		for _, p := range sp.bat.Add(o, g.now()) {
			g.enqueue(sp.dbctx, p)
		}
	}
	if p, ok := sp.bat.Due(now); ok {
		g.enqueue(sp.dbctx, p)
	}
	for _, m := range sp.agg.Minutes() {
		g.log.Debug("minute", "start", m.Start, "laeq_db", m.LAeq, "lafmax_db", m.LAFmax,
			"l10_db", m.L10, "l50_db", m.L50, "l90_db", m.L90, "records", m.NumRecords)
	}
}

// readMeter reads one sample, stamped now when the meter does not stamp
// it; a failure is counted and logged.
func (g *Gateway) readMeter(now time.Time) (bridge.Sample, bool) {
	var s bridge.Sample
	if err := g.meter.Sense(&s); err != nil {
		g.meterFailed("leitura do medidor falhou", err)
		return s, false
	}
	if s.At.IsZero() {
		s.At = now
	}
	return s, true
}

// meterFailed counts a failed or refused reading and logs the first and
// every 600th.
func (g *Gateway) meterFailed(msg string, err error) {
	if n := g.senseErrors.Add(1); n == 1 || n%600 == 0 {
		g.log.Warn(msg, "meter", g.meter.String(), "erro", err, "failures", n)
	}
}

// enqueue numbers, seals and stores a levels batch.
func (g *Gateway) enqueue(ctx context.Context, p Pending) {
	g.store(ctx, held{kind: wire.KindLevels, topic: g.levelsTopic, n: len(p.Records), until: p.Until(),
		build: func(seq uint64, now time.Time) wire.Batch { return g.batch(p, seq, now) }})
}

// store numbers, seals and stores a batch (levels and env batches share the
// outbox and its seq space). Nothing here ends the run: a full outbox is
// counted and reported in the status; when the disk refuses the write the
// batch waits in memory, behind any batch already waiting, and is stored
// once the disk takes writes again (retryMemory); beyond
// Options.MemoryRecords it is dropped and counted.
func (g *Gateway) store(ctx context.Context, h held) {
	g.memMu.Lock()
	defer g.memMu.Unlock()
	g.flushMemoryLocked(ctx)
	if len(g.mem) == 0 && g.storeOne(ctx, h) {
		return
	}
	if int(g.memRecords.Load())+h.n > g.opts.MemoryRecords {
		_ = g.box.Drop(ctx, h.n)
		if g.memDrops++; g.memDrops == 1 || g.memDrops%60 == 0 {
			g.log.Warn("disco recusa gravações e a memória de espera está cheia; lote descartado (contado em dropped)",
				"kind", h.kind, "records", h.n, "memory_records", g.memRecords.Load(), "dropped_total", g.box.Stats().Dropped)
		}
		g.poke()
		return
	}
	g.mem = append(g.mem, h)
	g.memRecords.Add(int64(h.n))
	g.poke()
}

// storeOne tries to store h; false means the disk refused it (the caller
// keeps it). A refusal by the full policy or a batch that cannot be sealed
// counts as done: both are counted as dropped.
func (g *Gateway) storeOne(ctx context.Context, h held) bool {
	now := g.now().UTC()
	seq, err := g.box.Store(ctx, now, Put{Topic: h.topic, Records: h.n, Until: h.until, Seal: func(seq uint64) ([]byte, error) {
		b := h.build(seq, now)
		return wire.Seal(&b, g.key)
	}})
	switch {
	case err == nil:
		if g.diskDown.CompareAndSwap(true, false) {
			g.log.Info("a fila (outbox) voltou a gravar no disco", "memory_records", g.memRecords.Load())
			g.poke()
		}
		g.log.Debug("batch stored", "kind", h.kind, "seq", seq, "records", h.n)
		g.poke()
		return true
	case errors.Is(err, ErrFull):
		st := g.box.Stats()
		g.log.Warn("fila (outbox) cheia; lote descartado", "kind", h.kind, "policy", g.opts.FullPolicy, "records", h.n,
			"dropped_total", st.Dropped, "pending", st.Pending, "capacity", st.Capacity)
		g.poke()
		return true
	case errors.Is(err, ErrStorage):
		if g.diskDown.CompareAndSwap(false, true) {
			g.log.Error("o disco recusa gravar a fila (outbox); lotes guardados na memória até haver espaço, acks continuam sendo aplicados",
				"erro", err, "memory_limit_records", g.opts.MemoryRecords)
			g.poke()
		}
		return false
	default:
		_ = g.box.Drop(ctx, h.n)
		g.log.Error("lote não pôde ser selado; descartado e contado", "kind", h.kind, "records", h.n, "erro", err)
		return true
	}
}

// flushMemoryLocked stores waiting batches, oldest first, until the disk
// refuses one.
func (g *Gateway) flushMemoryLocked(ctx context.Context) {
	for len(g.mem) > 0 && g.storeOne(ctx, g.mem[0]) {
		g.memRecords.Add(-int64(g.mem[0].n))
		g.mem[0] = held{}
		g.mem = g.mem[1:]
	}
	if len(g.mem) == 0 {
		g.mem = nil
	}
}

// retryMemory tries the waiting batches again (the sender calls it every
// second and after acks).
func (g *Gateway) retryMemory(ctx context.Context) {
	if g.memRecords.Load() == 0 && !g.diskDown.Load() {
		return
	}
	g.memMu.Lock()
	defer g.memMu.Unlock()
	g.flushMemoryLocked(ctx)
}

// abandonMemory runs after the loops have stopped: one last try, then the
// batches the disk still refuses are counted as dropped (the outbox writes
// the count on Close, from its reserve if need be).
func (g *Gateway) abandonMemory(ctx context.Context) {
	g.memMu.Lock()
	defer g.memMu.Unlock()
	g.flushMemoryLocked(ctx)
	if n := g.memRecords.Load(); n > 0 {
		_ = g.box.Drop(ctx, int(n))
		g.log.Error("parada com lotes na memória que o disco não aceitou; contados como descartados", "records", n)
		g.mem = nil
		g.memRecords.Store(0)
	}
}

// noRoom reports whether a new batch would be lost: the outbox is at its
// capacity, or the disk refuses writes and the memory buffer is full.
func (g *Gateway) noRoom() bool {
	if g.box.Full() {
		return true
	}
	return g.box.StorageErr() != nil && int(g.memRecords.Load()) >= g.opts.MemoryRecords
}

func (g *Gateway) batch(p Pending, seq uint64, now time.Time) wire.Batch {
	g.checkState.setDevice(p.Device) // the device a field check reports
	return wire.Batch{
		V: wire.Version, Kind: wire.KindLevels, Municipality: g.opts.Municipality, Gateway: g.opts.Gateway,
		Sensor: g.opts.Sensor, Seq: seq, SentAt: now.Truncate(time.Millisecond), Device: p.Device, Clock: p.Clock,
		Records: p.Records,
	}
}

// reseal gives a stored batch a new seq (see Outbox.Renumber). The batch
// is one this gateway sealed, so encoding/json reads it back: wire.Open's
// strict decoder is for the central service, and leaving it out keeps its
// JSON module out of the gateway binary (BENCHMARKS.md, gateway memory).
func (g *Gateway) reseal(old []byte, seq uint64) ([]byte, error) {
	var env wire.Envelope
	if err := json.Unmarshal(old, &env); err != nil {
		return nil, fmt.Errorf("gateway: reseal: %w", err)
	}
	var b wire.Batch
	if err := json.Unmarshal(env.Body, &b); err != nil {
		return nil, fmt.Errorf("gateway: reseal: %w", err)
	}
	b.Seq = seq
	return wire.Seal(&b, g.key)
}

// Status is the retained status the gateway publishes now.
func (g *Gateway) Status() wire.Status {
	clk := g.currentClock()
	ob := g.box.Stats()
	ob.Memory = int(g.memRecords.Load())
	if ob.Memory > 0 {
		ob.Full = true
	}
	ob.AckRegressed = g.ackRegressed.Load()
	ob.AckRegressions = g.lowAcks.Load()
	return wire.Status{V: wire.Version, State: "online", At: g.now().UTC().Truncate(time.Millisecond),
		Clock: &clk, Outbox: &ob, Version: g.opts.Version}
}

// alarms is the part of the status whose change is published at once.
func (g *Gateway) alarms() wire.Outbox {
	st := g.Status().Outbox
	return wire.Outbox{Full: st.Full, StorageError: st.StorageError, AckRegressed: st.AckRegressed,
		Memory: min(st.Memory, 1)}
}

func (g *Gateway) publishStatus(ctx context.Context) error {
	payload, err := json.Marshal(g.Status())
	if err != nil {
		return fmt.Errorf("gateway: status: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, g.opts.PublishTimeout)
	defer cancel()
	return g.pub.Publish(pctx, g.statusTopic, payload, true)
}

// send publishes stored batches in seq order, no faster than ReplayRate and
// no more than Window ahead of the central service's ack; it replays from
// the last ack after every reconnect and after AckTimeout without progress.
func (g *Gateway) send(ctx context.Context) error {
	house := time.NewTicker(time.Second)
	defer house.Stop()
	interval := time.Duration(float64(time.Second) / g.opts.ReplayRate)
	ss := &sendState{lastProgress: g.now()}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-g.wake:
		case <-house.C:
		}
		now := g.now()
		// 1. Apply the newest ack.
		if err := g.applyAck(ctx, ss, now); err != nil {
			return err
		}
		g.retryMemory(context.WithoutCancel(ctx))
		if ss.cursor < g.box.Acked() {
			ss.cursor = g.box.Acked()
		}
		if !g.connected.Load() {
			continue
		}
		// 2. New connection: announce, then replay everything unacked.
		if !g.announce(ctx, ss, now) {
			continue
		}
		// 3. Resend after a repeated ack (HandleAck), or when the central
		// service has not moved for AckTimeout.
		g.rewind(ss, now)
		// 4. Publish within the window.
		if err := g.publishWindow(ctx, &ss.cursor, &ss.nextSend, interval); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			g.log.Warn("publicação falhou; nova tentativa em seguida", "seq", ss.cursor+1, "erro", err)
		}
	}
}

// sendState is what the send loop remembers between rounds.
type sendState struct {
	gen          uint64 // the connection the cursor belongs to
	cursor       uint64 // highest seq published on this connection
	nextSend     time.Time
	lastProgress time.Time
	lastStatus   time.Time
	lastAlarm    wire.Outbox
	statusDirty  bool
}

// applyAck removes from the outbox the batches up to the newest ack. An
// ack ahead of every batch sent (the state folder lost or copied)
// renumbers the pending batches; a storage failure is retried on the next
// round. Only other errors end the loop.
func (g *Gateway) applyAck(ctx context.Context, ss *sendState, now time.Time) error {
	a := g.ackSeq.Load()
	if a <= g.box.Acked() {
		return nil
	}
	n, err := g.box.Ack(context.WithoutCancel(ctx), a)
	var ahead *AckAheadError
	switch {
	case errors.As(err, &ahead):
		g.log.Error("o serviço central confirmou seqs que este gateway nunca enviou (pasta de estado perdida ou copiada?); renumerando os lotes pendentes",
			"ack", ahead.Ack, "last_seq", ahead.Last)
		if err := g.box.Renumber(context.WithoutCancel(ctx), ahead.Ack, g.reseal); err != nil {
			return err
		}
		ss.cursor = g.box.Acked()
	case errors.Is(err, ErrStorage):
		// Retried with the next ack or tick; batches stay until then.
		g.log.Warn("ack não pôde ser gravado na fila (outbox); nova tentativa em seguida", "ack", a, "erro", err)
	case err != nil:
		return err
	default:
		g.log.Debug("ack", "seq", a, "removed", n)
		g.retryMemory(context.WithoutCancel(ctx))
	}
	ss.lastProgress = now
	return nil
}

// announce starts the replay from the ack on a new connection and
// publishes the status when it changed or is due; false when that publish
// failed (the round ends there).
func (g *Gateway) announce(ctx context.Context, ss *sendState, now time.Time) bool {
	if cg := g.connGen.Load(); cg != ss.gen {
		ss.gen = cg
		ss.cursor = g.box.Acked()
		ss.lastProgress = now
		ss.statusDirty = true
	}
	if al := g.alarms(); al != ss.lastAlarm {
		ss.lastAlarm, ss.statusDirty = al, true
	}
	if ss.statusDirty || now.Sub(ss.lastStatus) >= g.opts.StatusInterval {
		if err := g.publishStatus(ctx); err != nil {
			g.log.Warn("publicação do status falhou", "erro", err)
			return false
		}
		ss.lastStatus, ss.statusDirty = now, false
	}
	return true
}

// rewind moves the cursor back to the ack after a repeated ack, or when
// the central service has not moved for AckTimeout, so that the batches
// above it are sent again.
func (g *Gateway) rewind(ss *sendState, now time.Time) {
	if fr := g.fastResend.Swap(0); fr != 0 && fr == g.box.Acked() && ss.cursor > fr {
		g.log.Info("ack repetido: lotes acima dele chegam e o seguinte não; reenviando a partir dele", "acked", fr, "sent", ss.cursor)
		g.recoverTo.Store(ss.cursor)
		ss.cursor = fr
		ss.lastProgress = now
	}
	if ss.cursor > g.box.Acked() && now.Sub(ss.lastProgress) >= g.opts.AckTimeout {
		g.log.Info("sem avanço de ack; reenviando os lotes não confirmados", "acked", g.box.Acked(), "sent", ss.cursor)
		ss.cursor = g.box.Acked()
		ss.lastProgress = now
	}
}

func (g *Gateway) publishWindow(ctx context.Context, cursor *uint64, nextSend *time.Time, interval time.Duration) error {
	start, inFlight := g.publisher()
	fl := &flights{ctx: ctx, cursor: cursor}
	for g.connected.Load() {
		inflight := int(*cursor - g.box.Acked())
		room := g.opts.Window - inflight
		if room <= 0 {
			return nil
		}
		entries, err := g.box.After(ctx, *cursor, min(room, 64))
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			return nil
		}
		for _, e := range entries {
			// An ack that arrived since: return so that Run applies it to
			// the outbox now, rather than after a whole window (at the
			// replay rate a window of 100 is seconds of acked batches that
			// a power cut would have resent).
			if g.ackSeq.Load() > g.box.Acked() || g.fastResend.Load() != 0 {
				return fl.settle(0)
			}
			if err := waitUntil(ctx, *nextSend); err != nil {
				return err
			}
			*nextSend = time.Now().Add(interval)
			fl.q = append(fl.q, flight{seq: e.Seq, wait: start(e.Topic, e.Payload), deadline: time.Now().Add(g.opts.PublishTimeout)})
			if err := fl.settle(inFlight - 1); err != nil {
				return err
			}
		}
		if err := fl.settle(0); err != nil {
			return err
		}
	}
	return nil
}

// publisher returns how to start a publish and how many may be in flight.
// Without an AsyncPublisher a publish waits for its PUBACK when it is
// settled: one in flight.
func (g *Gateway) publisher() (start func(topic string, payload []byte) func(context.Context) error, inFlight int) {
	if ap, ok := g.pub.(AsyncPublisher); ok {
		return func(topic string, payload []byte) func(context.Context) error {
			return ap.PublishAsync(topic, payload, false)
		}, g.opts.InFlight
	}
	return func(topic string, payload []byte) func(context.Context) error {
		return func(ctx context.Context) error { return g.pub.Publish(ctx, topic, payload, false) }
	}, 1
}

// waitUntil waits until t (the replay rate's next slot) or ctx ends.
func waitUntil(ctx context.Context, t time.Time) error {
	if d := time.Until(t); d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
	return nil
}

// flight is a publish handed to the connection and not yet PUBACKed.
type flight struct {
	seq      uint64
	wait     func(context.Context) error
	deadline time.Time
}

// flights are the publishes in flight, oldest first. The cursor moves only
// over PUBACKed ones, in order; after a failure the rest are abandoned and
// republished from the cursor (the central service ignores the
// duplicates).
type flights struct {
	ctx    context.Context
	cursor *uint64
	q      []flight
}

// settle waits for the oldest publishes until at most keep are in flight.
func (fl *flights) settle(keep int) error {
	for len(fl.q) > keep {
		f := fl.q[0]
		pctx, cancel := context.WithDeadline(fl.ctx, f.deadline)
		err := f.wait(pctx)
		cancel()
		if err != nil {
			fl.q = nil
			return err
		}
		*fl.cursor, fl.q = f.seq, fl.q[1:]
	}
	return nil
}
