// Package loadgen simulates gateways for tests and benchmarks: each one
// connects to a broker with its own credentials, publishes signed batches of
// 1-s records on its levels topic at a given rate with a per-gateway seq,
// keeps every batch until the central service's application-level ack
// covers it (as the real gateway's outbox does) and republishes what stays
// unacknowledged. It measures publish→ack latency, the end-to-end figure
// (broker → validate → store → ack).
package loadgen

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/sossego/sossego/internal/ingest/pahostore"
	"github.com/sossego/sossego/internal/mqttnet"
	"github.com/sossego/sossego/internal/wire"
)

// Gateway is one simulated gateway.
type Gateway struct {
	ID           string
	Municipality string
	Sensors      []string
	Key          ed25519.PrivateKey // nil: unsigned batches
	Password     string             // MQTT password (username = ID); "" for none
}

// Options configures Run.
type Options struct {
	URL      string
	Gateways []Gateway
	// Rate is batches per second per gateway (spread over its sensors);
	// 0 publishes as fast as the window allows.
	Rate float64
	// Spread staggers the paced gateways over one period (gateway i of N
	// starts i/N of a period late), as independent gateways are; without it
	// every gateway publishes in the same instant, a burst of N messages
	// per period (the worst case: gateways batching on the same clock
	// boundary).
	Spread          bool
	RecordsPerBatch int           // default 1
	Batches         int           // batches per gateway; 0 = until ctx ends or Duration
	Duration        time.Duration // 0 = until ctx ends or Batches
	Window          int           // max unacknowledged batches per gateway; default 1000
	ResendAfter     time.Duration // republish unacked batches older than this; default 5s
	StartSeq        uint64        // first seq; default 1
	// Start is the time of the first record; default: now minus the span
	// the run will cover, so that records end near the present.
	Start time.Time
	// Level gives the LAeq of a record; default a deterministic pattern
	// between 45 and 75 dB.
	Level func(gateway, sensor string, t time.Time) float64
	// WaitAcks, after the last publish, waits this long for the acks to
	// cover everything; default 30s.
	WaitAcks time.Duration
	// Unsynced makes the simulated gateways report an unsynchronised clock
	// in every batch (a Pi that booted without a time source).
	Unsynced bool
	// Prepare builds and signs every batch before the clock starts, so that
	// a benchmark measures the broker and the central service, not the
	// simulator's JSON encoding and ed25519 signing. Needs Batches > 0.
	Prepare bool
	// OnAck is called (from paho's goroutine) with every ack received.
	OnAck func(gateway string, seq uint64)
	// OnPublish is called just before each first publish of a batch (from
	// the gateway's publishing goroutine), e.g. to time its way through
	// the central service.
	OnPublish func(gateway string, seq uint64, at time.Time)
}

// Stats is the outcome of a run.
type Stats struct {
	Gateways    int
	Published   uint64 // distinct batches published
	Republished uint64
	Records     uint64        // records in distinct batches
	Acked       uint64        // distinct batches covered by acks
	Elapsed     time.Duration // first publish to last ack (or end)
	// PublishElapsed is first publish to the last first publish of a
	// batch: with Rate set, Published/PublishElapsed under the offered
	// rate means the simulator itself fell behind (a paced gateway skips
	// the ticks it missed).
	PublishElapsed time.Duration
	// Latencies from first publish to the ack covering each batch, sorted.
	Latencies []time.Duration
	// AckedSeq is the final ack watermark per gateway.
	AckedSeq map[string]uint64
}

// Percentile returns the p-th percentile (0–100) latency.
func (s Stats) Percentile(p float64) time.Duration {
	if len(s.Latencies) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(s.Latencies)))) - 1
	return s.Latencies[max(0, min(i, len(s.Latencies)-1))]
}

// PublishRate is distinct batches published per second.
func (s Stats) PublishRate() float64 {
	if s.PublishElapsed <= 0 {
		return 0
	}
	return float64(s.Published) / s.PublishElapsed.Seconds()
}

// MsgRate is acknowledged batches per second.
func (s Stats) MsgRate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Acked) / s.Elapsed.Seconds()
}

type pending struct {
	payload []byte
	topic   string
	first   time.Time
	last    time.Time
}

type gwState struct {
	g       Gateway
	client  paho.Client
	mu      sync.Mutex
	cond    *sync.Cond
	unacked map[uint64]*pending
	acked   uint64
	lat     []time.Duration
	lastAck time.Time
	lastPub time.Time // last first publish of a batch
	nAcked  uint64
	done    chan struct{} // closed when the publisher has finished waiting for acks
	pre     [][]byte      // prepared payloads (Options.Prepare), by n
}

// Run drives the gateways until every batch is published and acked (or
// WaitAcks expires, or ctx ends).
func Run(ctx context.Context, o Options) (Stats, error) {
	o.setDefaults()
	states := make([]*gwState, len(o.Gateways))
	for i, g := range o.Gateways {
		st, err := connect(ctx, o, g)
		if err != nil {
			return Stats{}, err
		}
		states[i] = st
	}
	defer func() {
		for _, st := range states {
			st.client.Disconnect(100)
		}
	}()
	// Give the ack subscriptions a moment to be in place.
	time.Sleep(100 * time.Millisecond)

	var published, records, republished atomic.Uint64
	runCtx := ctx
	var cancel context.CancelFunc
	if o.Duration > 0 {
		runCtx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	if o.Prepare && o.Batches > 0 {
		if err := prepare(o, states); err != nil {
			return Stats{}, err
		}
	}
	begin := time.Now()
	var wg sync.WaitGroup
	for i, st := range states {
		var phase time.Duration
		if o.Spread && o.Rate > 0 {
			phase = time.Duration(float64(time.Second) / o.Rate * float64(i) / float64(len(states)))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(st.done)
			st.publishLoop(runCtx, o, phase, &published, &records)
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.resendLoop(ctx, o, &republished)
		}()
	}
	// Wait for the publishers, then for the acks.
	wg.Wait()
	stats := Stats{Gateways: len(states), Published: published.Load(), Records: records.Load(),
		Republished: republished.Load(), AckedSeq: map[string]uint64{}}
	stats.collect(states, begin)
	return stats, nil
}

// setDefaults fills the options left zero.
func (o *Options) setDefaults() {
	if o.RecordsPerBatch <= 0 {
		o.RecordsPerBatch = 1
	}
	if o.Window <= 0 {
		o.Window = 1000
	}
	if o.ResendAfter <= 0 {
		o.ResendAfter = 5 * time.Second
	}
	if o.StartSeq == 0 {
		o.StartSeq = 1
	}
	if o.WaitAcks <= 0 {
		o.WaitAcks = 30 * time.Second
	}
	if o.Level == nil {
		o.Level = DefaultLevel
	}
	if o.Start.IsZero() {
		span := o.Duration.Seconds() * max(o.Rate, 1)
		if o.Batches > 0 {
			span = float64(o.Batches)
		}
		o.Start = time.Now().UTC().Truncate(time.Second).Add(-time.Duration(span*float64(o.RecordsPerBatch)) * time.Second)
	}
}

// connect connects gateway g to the broker, subscribed to its acks.
func connect(ctx context.Context, o Options, g Gateway) (*gwState, error) {
	st := &gwState{g: g, unacked: map[uint64]*pending{}, acked: o.StartSeq - 1, done: make(chan struct{})}
	st.cond = sync.NewCond(&st.mu)
	opts := paho.NewClientOptions().AddBroker(o.URL).SetClientID(g.ID).
		SetUsername(g.ID).SetPassword(g.Password).SetCleanSession(true).
		SetAutoReconnect(true).SetConnectRetry(true).SetConnectRetryInterval(200 * time.Millisecond).
		SetMaxReconnectInterval(time.Second).SetOrderMatters(false).SetWriteTimeout(10 * time.Second).
		SetMaxResumePubInFlight(o.Window).
		// No paho resume of publishes: this simulator republishes
		// whatever stays unacked (as a gateway's outbox does), and
		// paho v1.5.1's resume races with its writer (pahostore).
		SetStore(pahostore.New())
	ackTopic := wire.AckTopic(g.Municipality, g.ID)
	opts.SetOnConnectHandler(func(c paho.Client) {
		c.Subscribe(ackTopic, 1, func(_ paho.Client, m paho.Message) { st.onAck(m.Payload(), o.OnAck) })
	})
	// Reads through a buffer, as the real gateway's connection does
	// (gateway/mqttconn): a simulated gateway costs what a real one
	// would, not paho's four read calls per received packet.
	mqttnet.Use(opts)
	st.client = paho.NewClient(opts)
	tok := st.client.Connect()
	select {
	case <-tok.Done():
		if tok.Error() != nil {
			return nil, fmt.Errorf("loadgen: connect %s: %w", g.ID, tok.Error())
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return st, nil
}

// prepare builds every gateway's o.Batches payloads before the run
// (Options.Prepare).
func prepare(o Options, states []*gwState) error {
	for _, st := range states {
		st.pre = make([][]byte, o.Batches)
		for n := range o.Batches {
			p, err := st.build(o, n, o.StartSeq+uint64(n))
			if err != nil {
				return err
			}
			st.pre[n] = p
		}
	}
	return nil
}

// collect adds to s what the gateways measured in a run that began at
// begin: acks, latencies (sorted), acked seqs and elapsed times.
func (s *Stats) collect(states []*gwState, begin time.Time) {
	var last, lastPub time.Time
	for _, st := range states {
		st.mu.Lock()
		if st.lastPub.After(lastPub) {
			lastPub = st.lastPub
		}
		s.Acked += st.nAcked
		s.Latencies = append(s.Latencies, st.lat...)
		s.AckedSeq[st.g.ID] = st.acked
		if st.lastAck.After(last) {
			last = st.lastAck
		}
		st.mu.Unlock()
	}
	if last.IsZero() {
		last = time.Now()
	}
	s.Elapsed = last.Sub(begin)
	if !lastPub.IsZero() {
		s.PublishElapsed = lastPub.Sub(begin)
	}
	slices.Sort(s.Latencies)
}

func (st *gwState) onAck(p []byte, cb func(string, uint64)) {
	var a wire.Ack
	if json.Unmarshal(p, &a) != nil || a.Gateway != st.g.ID {
		return
	}
	now := time.Now()
	st.mu.Lock()
	for seq, pd := range st.unacked {
		if seq <= a.Seq {
			st.lat = append(st.lat, now.Sub(pd.first))
			delete(st.unacked, seq)
			st.nAcked++
			st.lastAck = now
		}
	}
	if a.Seq > st.acked {
		st.acked = a.Seq
	}
	st.cond.Broadcast()
	st.mu.Unlock()
	if cb != nil {
		cb(a.Gateway, a.Seq)
	}
}

func (st *gwState) publishLoop(ctx context.Context, o Options, phase time.Duration, published, records *atomic.Uint64) {
	var tick *time.Ticker
	if phase > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(phase):
		}
	}
	if o.Rate > 0 {
		tick = time.NewTicker(time.Duration(float64(time.Second) / o.Rate))
		defer tick.Stop()
	}
	// Wake waiters when ctx ends.
	stop := context.AfterFunc(ctx, func() { st.mu.Lock(); st.cond.Broadcast(); st.mu.Unlock() })
	defer stop()
	seq := o.StartSeq
publish:
	for n := 0; o.Batches == 0 || n < o.Batches; n++ {
		if tick != nil {
			select {
			case <-ctx.Done():
				break publish
			case <-tick.C:
			}
		}
		st.mu.Lock()
		for len(st.unacked) >= o.Window && ctx.Err() == nil {
			st.cond.Wait()
		}
		st.mu.Unlock()
		if ctx.Err() != nil {
			break publish
		}
		sensor := st.g.Sensors[n%len(st.g.Sensors)]
		var payload []byte
		if st.pre != nil {
			payload = st.pre[n]
		} else {
			p, err := st.build(o, n, seq)
			if err != nil {
				return
			}
			payload = p
		}
		topic := wire.LevelsTopic(st.g.Municipality, st.g.ID, sensor)
		now := time.Now()
		if o.OnPublish != nil {
			o.OnPublish(st.g.ID, seq, now)
		}
		st.mu.Lock()
		if seq > st.acked {
			st.unacked[seq] = &pending{payload: payload, topic: topic, first: now, last: now}
		}
		st.lastPub = now
		st.mu.Unlock()
		st.client.Publish(topic, 1, false, payload)
		published.Add(1)
		records.Add(uint64(o.RecordsPerBatch))
		seq++
	}
	// Wait for the acks to cover everything.
	deadline := time.Now().Add(o.WaitAcks)
	for time.Now().Before(deadline) {
		st.mu.Lock()
		left := len(st.unacked)
		st.mu.Unlock()
		if left == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (st *gwState) resendLoop(ctx context.Context, o Options, republished *atomic.Uint64) {
	tk := time.NewTicker(o.ResendAfter / 4)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.done:
			return
		case <-tk.C:
		}
		st.mu.Lock()
		now := time.Now()
		var seqs []uint64
		for seq, pd := range st.unacked {
			if now.Sub(pd.last) >= o.ResendAfter {
				seqs = append(seqs, seq)
				pd.last = now
			}
		}
		slices.Sort(seqs)
		outs := make([]*pending, 0, len(seqs))
		for _, s := range seqs {
			outs = append(outs, st.unacked[s])
		}
		st.mu.Unlock()
		for _, x := range outs {
			st.client.Publish(x.topic, 1, false, x.payload)
			republished.Add(1)
		}
	}
}

// build makes and signs the n-th batch (sequence seq).
func (st *gwState) build(o Options, n int, seq uint64) ([]byte, error) {
	sensor := st.g.Sensors[n%len(st.g.Sensors)]
	b := &wire.Batch{V: wire.Version, Kind: wire.KindLevels, Municipality: st.g.Municipality, Gateway: st.g.ID,
		Sensor: sensor, Seq: seq, SentAt: time.Now().UTC().Truncate(time.Millisecond),
		Device: wire.Device{Model: "loadgen", Serial: st.g.ID + "-" + sensor, Grade: "class2", CalibratedAt: "2026-01-15"},
		Clock:  wire.Clock{Synced: true, Source: "ntp"}}
	if o.Unsynced {
		b.Clock = wire.Clock{Synced: false, Source: "none"}
	}
	for i := range o.RecordsPerBatch {
		t := o.Start.Add(time.Duration(int(seq-o.StartSeq)*o.RecordsPerBatch+i) * time.Second)
		l := math.Round(o.Level(st.g.ID, sensor, t)*10) / 10
		b.Records = append(b.Records, wire.Record{T: t, DurMs: 1000, LAeq: l, LAFmax: l + 4.2, LAFmin: math.Max(0, l-6.1)})
	}
	return wire.Seal(b, st.g.Key)
}

// DefaultLevel is a deterministic level pattern between 45 and 75 dB.
func DefaultLevel(gateway, sensor string, t time.Time) float64 {
	h := 0
	for _, c := range gateway + sensor {
		h = h*31 + int(c)
	}
	x := float64(t.Unix()%3600)/3600*2*math.Pi + float64(h%628)/100
	return 60 + 15*math.Sin(x)
}
