package ingest

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// Admission: what a message must pass before it takes room in the ingest
// queue. One gateway's credential could otherwise send 1 MiB messages at
// will: 3,000 of them took the central service to 7.3 GB of memory and
// grew the database by 3.1 GB in 20 s.
//
//   - Each gateway (the topic's gateway segment, which the broker's ACL
//     ties to the publishing credential) has two token buckets, messages
//     and bytes (Quota). A message over either is refused: it does not
//     enter the queue, it is counted (sossego_ingest_quota_refused_total),
//     and at most one refused message per gateway per QuotaSampleEvery is
//     kept as a dead letter (reason quota, the payload cut to
//     quotaSampleBytes) with a log line counting the others. Keeping every
//     refused message would be the attack itself (the database filling at
//     the attacker's rate), so only samples are kept. A gateway's batch is
//     never lost to a refusal: its outbox keeps it until acked and sends it
//     again.
//   - The queue is bounded by bytes as well as by messages
//     (Options.QueueBytes): a message waits for room while the payloads of
//     the messages not yet committed take more than that.

// Quota is a gateway's allowance, as token buckets: a burst, refilled at a
// steady rate. Zero fields take the defaults (DefaultQuota).
type Quota struct {
	MessagesPerSecond float64
	MessageBurst      float64
	BytesPerSecond    float64
	ByteBurst         float64
	// Off disables the quota (load tests that drive a few gateways far
	// beyond any real one).
	Off bool
}

// DefaultQuota is sized from what a gateway sends. At rest: one batch of
// 10 records every 10 s (~1.6 KB) and a status a minute. Replaying its
// outbox after an outage: at most replay.rate_per_second (default 50)
// messages per second, ~80 KB/s; a full outbox of 3 days is ~26,000
// batches, ~42 MB. The bursts take a whole outbox at once, the rates
// four times the default replay; an abusive credential gets at most 64 MiB
// plus 128 KiB/s (~11 GB a day) into the store instead of whatever it
// can send.
var DefaultQuota = Quota{MessagesPerSecond: 200, MessageBurst: 100_000, BytesPerSecond: 128 << 10, ByteBurst: 64 << 20}

// DefaultQueueBytes is Options.QueueBytes's default.
const DefaultQueueBytes = 64 << 20

// QuotaSampleEvery is how often, at most, a gateway's refused message is
// kept as a dead letter (and logged).
const QuotaSampleEvery = time.Minute

// quotaSampleBytes is how much of a refused message's payload is kept.
const quotaSampleBytes = 4096

func (q Quota) withDefaults() Quota {
	d := DefaultQuota
	if q.MessagesPerSecond <= 0 {
		q.MessagesPerSecond = d.MessagesPerSecond
	}
	if q.MessageBurst <= 0 {
		q.MessageBurst = d.MessageBurst
	}
	if q.BytesPerSecond <= 0 {
		q.BytesPerSecond = d.BytesPerSecond
	}
	if q.ByteBurst <= 0 {
		q.ByteBurst = d.ByteBurst
	}
	q.ByteBurst = max(q.ByteBurst, wire.MaxPayload+4096) // a largest message always fits a full bucket
	return q
}

// bucket is a token bucket.
type bucket struct {
	tokens float64
	last   time.Time
}

func (b *bucket) refill(now time.Time, rate, burst float64) {
	if b.last.IsZero() {
		b.tokens, b.last = burst, now
		return
	}
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = min(burst, b.tokens+dt*rate)
		b.last = now
	}
}

// gwQuota is one gateway's buckets and refusals.
type gwQuota struct {
	msgs, bytes bucket
	// Refused since the last sample, and when the last one was.
	refused, refusedBytes int64
	sampledAt             time.Time
	lastRefused           time.Time
}

// admission holds every gateway's quota.
type admission struct {
	q  Quota
	mu sync.Mutex
	gw map[string]*gwQuota
}

func newAdmission(q Quota) *admission {
	return &admission{q: q.withDefaults(), gw: map[string]*gwQuota{}}
}

// refusal is what admit says about a refused message.
type refusal struct {
	limit  string // "messages" or "bytes"
	sample bool   // keep this one as a dead letter
	// Refused since the previous sample, this one included.
	count, bytes int64
	since        time.Time
}

// admit takes a message of size bytes from gateway key out of its
// buckets, or reports why not.
func (a *admission) admit(key string, size int, now time.Time) (refusal, bool) {
	if a.q.Off {
		return refusal{}, true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.gw[key]
	if g == nil {
		g = &gwQuota{}
		a.gw[key] = g
	}
	g.msgs.refill(now, a.q.MessagesPerSecond, a.q.MessageBurst)
	g.bytes.refill(now, a.q.BytesPerSecond, a.q.ByteBurst)
	var limit string
	switch {
	case g.msgs.tokens < 1:
		limit = "messages"
	case g.bytes.tokens < float64(size):
		limit = "bytes"
	default:
		g.msgs.tokens--
		g.bytes.tokens -= float64(size)
		return refusal{}, true
	}
	g.refused++
	g.refusedBytes += int64(size)
	g.lastRefused = now
	r := refusal{limit: limit}
	if g.sampledAt.IsZero() || now.Sub(g.sampledAt) >= QuotaSampleEvery {
		r.sample, r.count, r.bytes, r.since = true, g.refused, g.refusedBytes, g.sampledAt
		g.refused, g.refusedBytes, g.sampledAt = 0, 0, now
	}
	return r, false
}

// refusedSince reports whether gateway key had a message refused at or
// after t.
func (a *admission) refusedSince(key string, t time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.gw[key]
	return g != nil && !g.lastRefused.Before(t)
}

// quotaKey is the gateway a message is charged to: the topic's gateway
// segment when it is registered, else one shared key (topics an external
// broker's ACL should not have let through), so that the map stays as
// small as the register.
func (in *Ingester) quotaKey(topic string) string {
	p := strings.SplitN(topic, "/", 5)
	if len(p) < 4 || p[0] != wire.Root || p[1] != "v1" {
		return ""
	}
	if _, ok := in.o.Registry.Current().Gateway(p[3]); !ok {
		return ""
	}
	return p[3]
}

// quotaDeadLetter is the sample kept of a refused message.
func (in *Ingester) quotaDeadLetter(m Message, key string, r refusal) *store.DeadLetter {
	q := in.adm.q
	what := fmt.Sprintf("%.0f mensagens/s (rajada de %.0f)", q.MessagesPerSecond, q.MessageBurst)
	if r.limit == "bytes" {
		what = fmt.Sprintf("%.0f KiB/s (rajada de %.0f MiB)", q.BytesPerSecond/1024, q.ByteBurst/(1<<20))
	}
	gw := key
	if gw == "" {
		gw = "(não cadastrado)"
	}
	since := "o início"
	if !r.since.IsZero() {
		since = r.since.UTC().Format(time.RFC3339)
	}
	msg := fmt.Sprintf("gateway %s excedeu a cota de %s: mensagem recusada, não gravada (%d recusadas, %d bytes, desde %s; "+
		"esta é uma amostra, cortada em %d bytes). Um gateway normal reenvia o lote depois; muitas recusas indicam abuso da credencial.",
		gw, what, r.count, r.bytes, since, quotaSampleBytes)
	p, trunc := m.Payload, false
	if len(p) > quotaSampleBytes {
		p, trunc = p[:quotaSampleBytes], true
	}
	in.o.Metrics.rejections.WithLabelValues(wire.ReasonQuota).Inc()
	return &store.DeadLetter{ReceivedAt: m.ReceivedAt, Topic: clipTopic(m.Topic), Reason: wire.ReasonQuota, Message: msg,
		Gateway: key, Payload: append([]byte(nil), p...), Truncated: trunc}
}

// maxTopic is the longest topic kept or logged (MQTT allows 64 KiB; a v1
// topic has at most ~220 bytes).
const maxTopic = 256

func clipTopic(t string) string {
	if len(t) <= maxTopic {
		return t
	}
	return t[:maxTopic]
}

// byteGate bounds the payload bytes between admission and commit.
type byteGate struct {
	max  int64
	mu   sync.Mutex
	used int64
	wake chan struct{} // closed (and replaced) when bytes are released
}

func newByteGate(max int64) *byteGate { return &byteGate{max: max, wake: make(chan struct{})} }

// acquire takes n bytes (at most max: a message larger than the whole
// gate waits until the gate is empty), waiting for room until stop is
// closed; it returns what it took (0 when stopped).
func (g *byteGate) acquire(n int64, stop <-chan struct{}) int64 {
	n = min(n, g.max)
	for {
		g.mu.Lock()
		if g.used+n <= g.max {
			g.used += n
			g.mu.Unlock()
			return n
		}
		w := g.wake
		g.mu.Unlock()
		select {
		case <-w:
		case <-stop:
			return 0
		}
	}
}

// tryAcquire is acquire without waiting.
func (g *byteGate) tryAcquire(n int64) (int64, bool) {
	n = min(n, g.max)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.used+n > g.max {
		return 0, false
	}
	g.used += n
	return n, true
}

func (g *byteGate) release(n int64) {
	if n == 0 {
		return
	}
	g.mu.Lock()
	g.used -= n
	close(g.wake)
	g.wake = make(chan struct{})
	g.mu.Unlock()
}

func (g *byteGate) inUse() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.used
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
