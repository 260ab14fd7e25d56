package ingest

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

// now is the fixed receive time of the unit tests.
var now = time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC)

const seed = "ingest-test"

func testRegistryYAML(gws ...string) string {
	var b strings.Builder
	b.WriteString("version: 1\ngateways:\n")
	for _, g := range gws {
		fmt.Fprintf(&b, "  - {id: %s, municipality: lapa, public_key: %s}\n", g, loadgen.PublicKeyBase64(seed, g))
	}
	b.WriteString("  - {id: gw-unsigned, municipality: lapa, require_signature: false}\n")
	b.WriteString("sensors:\n")
	for _, g := range append(gws, "gw-unsigned") {
		fmt.Fprintf(&b, "  - {id: %s-s1, gateway: %s, zone: other, location: {lat: -25.7, lon: -49.7}, address: Rua A, meter: {grade: class2, calibrated_at: 2026-01-01}, establishments: [{name: Bar, document: 12.345.678/0001-95, address: Rua A, type: bar, mechanism: sound_system}]}\n", g, g)
	}
	return b.String()
}

func testRegistry(t testing.TB, gws ...string) *registry.Live {
	t.Helper()
	r, err := registry.Parse([]byte(testRegistryYAML(gws...)))
	if err != nil {
		t.Fatal(err)
	}
	return registry.NewLive(r)
}

type fakeAcks struct {
	mu   sync.Mutex
	acks map[string][]uint64
}

func (f *fakeAcks) Ack(m, gw string, seq uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.acks == nil {
		f.acks = map[string][]uint64{}
	}
	f.acks[gw] = append(f.acks[gw], seq)
	return nil
}

func (f *fakeAcks) all(gw string) []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]uint64(nil), f.acks[gw]...)
}

func (f *fakeAcks) last(gw string) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.acks[gw]
	if len(a) == 0 {
		return 0
	}
	return a[len(a)-1]
}

type recorder struct {
	mu       sync.Mutex
	readings []Reading
	env      []EnvReading
}

func (r *recorder) ObserveEnv(_ context.Context, e EnvReading) {
	r.mu.Lock()
	r.env = append(r.env, e)
	r.mu.Unlock()
}

var _ EnvObserver = (*recorder)(nil)

func (r *recorder) Observe(_ context.Context, rd Reading) {
	r.mu.Lock()
	r.readings = append(r.readings, rd)
	r.mu.Unlock()
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.readings)
}

type harness struct {
	in    *Ingester
	st    *sqlitestore.Store
	acks  *fakeAcks
	obs   *recorder
	done  map[string]int
	mu    sync.Mutex
	total int
}

func newHarness(t *testing.T, reg Registry) *harness {
	t.Helper()
	return newHarnessWith(t, reg, nil)
}

// newHarnessWith is newHarness with its options changed by opt (nil: none).
func newHarnessWith(t *testing.T, reg Registry, opt func(*Options)) *harness {
	t.Helper()
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{st: st, acks: &fakeAcks{}, obs: &recorder{}, done: map[string]int{}}
	o := Options{Store: st, Registry: reg, Acks: h.acks, Observers: []Observer{h.obs},
		Now: func() time.Time { return now }, Workers: 2}
	if opt != nil {
		opt(&o)
	}
	h.in = New(o)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- h.in.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return h
}

// offer queues a message and counts its PUBACK.
func (h *harness) offer(t *testing.T, topic string, payload []byte) {
	t.Helper()
	h.mu.Lock()
	h.total++
	h.mu.Unlock()
	ok := h.in.Offer(Message{Topic: topic, Payload: payload, ReceivedAt: now, Done: func() {
		h.mu.Lock()
		h.done[topic]++
		h.mu.Unlock()
	}})
	if !ok {
		t.Fatal("queue full")
	}
}

func (h *harness) waitDone(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // generous: thousands of messages under -race on a busy 2-core machine
	for {
		h.mu.Lock()
		n := 0
		for _, v := range h.done {
			n += v
		}
		total := h.total
		h.mu.Unlock()
		if n == total {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages acknowledged", n, total)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func mkBatch(gw, sensor string, seq uint64, t time.Time, levels ...float64) *wire.Batch {
	b := &wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: gw, Sensor: sensor, Seq: seq, SentAt: now,
		Device: wire.Device{Model: "m", Serial: "s", Grade: "class2"}, Clock: wire.Clock{Synced: true}}
	for i, l := range levels {
		b.Records = append(b.Records, wire.Record{T: t.Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: l, LAFmax: l + 1, LAFmin: l - 1})
	}
	return b
}

func seal(t testing.TB, b *wire.Batch, key ed25519.PrivateKey) []byte {
	p, err := wire.Seal(b, key)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadInputIsDeadLetteredAndIngestGoesOn(t *testing.T) {
	h := newHarness(t, testRegistry(t, "gw-a", "gw-b"))
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	good := func(seq uint64) []byte {
		return seal(t, mkBatch("gw-a", "gw-a-s1", seq, now.Add(-time.Hour).Add(time.Duration(seq)*time.Second), 60), key)
	}
	full := good(1)
	lastYear := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		topic   string
		payload []byte
		reason  string
	}{
		{"truncated JSON", topic, full[:len(full)/2], wire.ReasonJSON},
		{"not JSON", topic, []byte("hello"), wire.ReasonJSON},
		{"empty", topic, nil, wire.ReasonJSON},
		{"wrong signature", topic, seal(t, mkBatch("gw-a", "gw-a-s1", 2, now.Add(-time.Hour), 60), loadgen.Key(seed, "gw-b")), wire.ReasonSignature},
		{"unsigned", topic, seal(t, mkBatch("gw-a", "gw-a-s1", 2, now.Add(-time.Hour), 60), nil), wire.ReasonSignature},
		{"unknown sensor", wire.LevelsTopic("lapa", "gw-a", "nope"), seal(t, mkBatch("gw-a", "nope", 2, now.Add(-time.Hour), 60), key), wire.ReasonUnknown},
		{"sensor of another gateway", wire.LevelsTopic("lapa", "gw-a", "gw-b-s1"), seal(t, mkBatch("gw-a", "gw-b-s1", 2, now.Add(-time.Hour), 60), key), wire.ReasonUnknown},
		{"unknown gateway", wire.LevelsTopic("lapa", "gw-x", "s"), seal(t, mkBatch("gw-x", "s", 2, now.Add(-time.Hour), 60), key), wire.ReasonUnknown},
		{"900 dB", topic, seal(t, mkBatch("gw-a", "gw-a-s1", 2, now.Add(-time.Hour), 900), key), wire.ReasonRange},
		{"negative dB", topic, seal(t, mkBatch("gw-a", "gw-a-s1", 2, now.Add(-time.Hour), -5), key), wire.ReasonRange},
		{"from 1970", topic, seal(t, mkBatch("gw-a", "gw-a-s1", 2, lastYear, 60), key), wire.ReasonTime},
		{"from next year", topic, seal(t, mkBatch("gw-a", "gw-a-s1", 2, now.AddDate(1, 0, 0), 60), key), wire.ReasonTime},
		{"topic mismatch", wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), seal(t, mkBatch("gw-a", "gw-b-s1", 93, now.Add(-time.Hour), 60), key), wire.ReasonMismatch},
		{"other municipality", wire.LevelsTopic("campos-altos", "gw-a", "gw-a-s1"), good(92), wire.ReasonMismatch},
		{"bad topic", "sossego/v1/lapa", good(91), wire.ReasonTopic},
		{"ack topic", wire.AckTopic("lapa", "gw-a"), []byte(`{"v":1}`), wire.ReasonTopic},
		{"too big", topic, make([]byte, wire.MaxPayload+1), wire.ReasonSize},
		{"bad status", wire.StatusTopic("lapa", "gw-a"), []byte(`{"v":1,"state":"sleepy"}`), wire.ReasonSchema},
		{"status of unknown gateway", wire.StatusTopic("lapa", "gw-x"), wire.OfflinePayload, wire.ReasonUnknown},
	}
	// Good messages interleaved with the bad ones: ingest must keep going.
	h.offer(t, topic, full)
	for i, tc := range cases {
		h.offer(t, tc.topic, tc.payload)
		h.offer(t, topic, good(uint64(2+i)))
	}
	h.waitDone(t)
	ctx := context.Background()
	dls, err := h.st.DeadLetters(ctx, store.DeadLetterFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != len(cases) {
		t.Fatalf("%d dead letters, want %d: %+v", len(dls), len(cases), dls)
	}
	// Workers run in parallel, so match dead letters by payload.
	byPayload := map[string]store.DeadLetter{}
	for _, d := range dls {
		byPayload[string(d.Payload)] = d
	}
	for _, tc := range cases {
		key := string(tc.payload)
		if len(tc.payload) > wire.MaxPayload {
			key = string(tc.payload[:wire.MaxPayload])
		}
		d, ok := byPayload[key]
		if !ok {
			t.Errorf("%s: no dead letter with the payload kept verbatim", tc.name)
			continue
		}
		if d.Reason != tc.reason {
			t.Errorf("%s: reason %q (%s), want %q", tc.name, d.Reason, d.Message, tc.reason)
		}
		if d.Topic != tc.topic || d.Message == "" || !d.ReceivedAt.Equal(now) {
			t.Errorf("%s: dead letter topic %q message %q at %v", tc.name, d.Topic, d.Message, d.ReceivedAt)
		}
		if d.Truncated != (len(tc.payload) > wire.MaxPayload) {
			t.Errorf("%s: truncated = %v", tc.name, d.Truncated)
		}
	}
	n, _ := h.st.CountLevels(ctx, "gw-a-s1")
	if want := int64(len(cases) + 1); n != want {
		t.Errorf("stored %d good records, want %d", n, want)
	}
	if got, want := h.acks.last("gw-a"), uint64(len(cases)+1); got != want {
		t.Errorf("ack watermark %d, want %d", got, want)
	}
}

func TestDuplicatesStoredOnceAndAcksTrackGaps(t *testing.T) {
	h := newHarness(t, testRegistry(t, "gw-a"))
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	send := func(seqs ...uint64) {
		for _, s := range seqs {
			h.offer(t, topic, seal(t, mkBatch("gw-a", "gw-a-s1", s, now.Add(-time.Hour).Add(time.Duration(s)*time.Minute), 60, 61), key))
		}
		h.waitDone(t)
	}
	steps := []struct {
		seqs   []uint64
		wantWM uint64
	}{
		{[]uint64{1, 2}, 2},
		{[]uint64{2, 1, 2}, 2}, // duplicates: acked again, stored once
		{[]uint64{5, 4}, 2},    // gap at 3
		{[]uint64{3}, 5},
		{[]uint64{5}, 5},
	}
	for i, st := range steps {
		send(st.seqs...)
		if got := h.acks.last("gw-a"); got != st.wantWM {
			t.Errorf("step %d: ack %d, want %d", i, got, st.wantWM)
		}
	}
	n, _ := h.st.CountLevels(context.Background(), "gw-a-s1")
	if n != 10 {
		t.Errorf("stored %d records, want 10 (5 batches × 2)", n)
	}
	if h.obs.len() != 10 {
		t.Errorf("observed %d readings, want 10 (duplicates not re-observed)", h.obs.len())
	}
}

func TestObserverReading(t *testing.T) {
	h := newHarness(t, testRegistry(t, "gw-a"))
	// The unsigned gateway (require_signature: false) is accepted but not
	// verified; a signed batch from gw-a is verified.
	b := mkBatch("gw-unsigned", "gw-unsigned-s1", 1, now.Add(-time.Minute), 70)
	b.Device.Grade = "screening"
	h.offer(t, wire.LevelsTopic("lapa", "gw-unsigned", "gw-unsigned-s1"), seal(t, b, nil))
	h.offer(t, wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), seal(t, mkBatch("gw-a", "gw-a-s1", 1, now.Add(-time.Minute), 65), loadgen.Key(seed, "gw-a")))
	h.waitDone(t)
	h.obs.mu.Lock()
	defer h.obs.mu.Unlock()
	if len(h.obs.readings) != 2 {
		t.Fatalf("readings = %+v", h.obs.readings)
	}
	for _, r := range h.obs.readings {
		switch r.Gateway {
		case "gw-unsigned":
			if r.Verified || r.Grade != "screening" || r.Record.LAeq != 70 {
				t.Errorf("unsigned reading = %+v", r)
			}
		case "gw-a":
			if !r.Verified || r.Grade != "class2" || r.Code != "lapa" || r.Zone != "other" || len(r.Establishments) != 1 ||
				r.Establishments[0].Type != "bar" || r.Sensor != "gw-a-s1" || r.Seq != 1 {
				t.Errorf("signed reading = %+v", r)
			}
		}
	}
}

func TestStatusStored(t *testing.T) {
	h := newHarness(t, testRegistry(t, "gw-a"))
	h.offer(t, wire.StatusTopic("lapa", "gw-a"), []byte(`{"v":1,"state":"online","at":"2026-11-30T23:29:00Z","clock":{"synced":false,"offset_ms":1200,"source":"rtc"},"outbox":{"pending":5,"capacity":100,"dropped":0,"full":false}}`))
	h.waitDone(t)
	h.offer(t, wire.StatusTopic("lapa", "gw-a"), wire.OfflinePayload)
	h.waitDone(t)
	gs, err := h.st.GatewayStatuses(context.Background())
	if err != nil || len(gs) != 1 {
		t.Fatalf("%+v %v", gs, err)
	}
	g := gs[0]
	if g.State != "offline" || g.Clock == nil || g.Clock.Synced || g.Clock.OffsetMs != 1200 || g.Outbox == nil || g.Outbox.Pending != 5 {
		t.Errorf("status = %+v clock=%+v", g, g.Clock)
	}
}

// FuzzProcess: any payload on any topic yields exactly one outcome and
// never panics, alone or verified in a batch with others; accepted batches
// are internally consistent.
func FuzzProcess(f *testing.F) {
	reg := testRegistry(f, "gw-a")
	key := loadgen.Key(seed, "gw-a")
	good := seal(f, mkBatch("gw-a", "gw-a-s1", 1, now.Add(-time.Hour), 60, 61), key)
	f.Add(wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), good)
	f.Add(wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), good[:40])
	f.Add(wire.StatusTopic("lapa", "gw-a"), wire.OfflinePayload)
	f.Add(wire.EnvTopic("lapa", "gw-a", "gw-a-s1"), []byte(`{"v":1,"kid":"gw-a","body":{"v":1}}`))
	f.Add(wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), seal(f, mkBatch("gw-a", "gw-a-s1", 7, now.Add(-time.Hour), 900), key))
	f.Add(wire.LevelsTopic("lapa", "gw-unsigned", "gw-unsigned-s1"), seal(f, mkBatch("gw-unsigned", "gw-unsigned-s1", 3, now.Add(-time.Hour), 900), nil))
	f.Add("sossego/v1/lapa/gw-a/gw-a-s1/levels", []byte(`{"v":1,"kid":"gw-a","body":{"v":1,"kind":"levels","records":[{"t":"2026-11-30T22:00:00Z","dur_ms":1000,"laeq_db":1e308}]}}`))
	in := New(Options{Registry: reg, Now: func() time.Time { return now }})
	var bv signature.BatchVerifier
	goodMsg := Message{Topic: wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), Payload: good, ReceivedAt: now}
	f.Fuzz(func(t *testing.T, topic string, payload []byte) {
		it := in.process(Message{Topic: topic, Payload: payload, ReceivedAt: now})
		// The same message between two valid ones, verified in one batch,
		// gets the same outcome, and so do they.
		three := in.processAll([]Message{goodMsg, {Topic: topic, Payload: payload, ReceivedAt: now}, goodMsg}, &bv)
		if outcome(three[1]) != outcome(it) || outcome(three[0]) != "stored verified" || outcome(three[2]) != "stored verified" {
			t.Fatalf("in a batch: %s / %s / %s, alone %s", outcome(three[0]), outcome(three[1]), outcome(three[2]), outcome(it))
		}
		outcomes := 0
		for _, x := range []bool{it.batch != nil, it.dead != nil, it.status != nil} {
			if x {
				outcomes++
			}
		}
		if outcomes != 1 {
			t.Fatalf("%d outcomes for %q", outcomes, payload)
		}
		if it.dead != nil && (it.dead.Reason == "" || it.dead.Message == "") {
			t.Fatalf("dead letter without reason: %+v", it.dead)
		}
		// A rejection settles a seq only for a batch that authenticated
		// and names the topic's gateway (docs/wire.md, Ack).
		if d := it.dead; d != nil && d.Settles {
			tp, terr := wire.ParseTopic(topic)
			env, b, oerr := wire.Open(payload)
			if terr != nil || oerr != nil {
				t.Fatalf("undecodable message settles: %+v", d)
			}
			gw, known := reg.Current().Gateway(tp.Gateway)
			if !known || (gw.SignatureRequired() && signature.Verify(env, gw.Key()) != nil) {
				t.Fatalf("unauthenticated message settles %s/%d", d.Gateway, d.Seq)
			}
			if b.Gateway != tp.Gateway || env.Kid != tp.Gateway || d.Gateway != tp.Gateway || d.Seq != b.Seq || d.Seq == 0 ||
				it.municipality != tp.Municipality || gw.Municipality != tp.Municipality {
				t.Fatalf("settles %s/%d for a batch of %s/%d (kid %s, topic %s)", d.Gateway, d.Seq, b.Gateway, b.Seq, env.Kid, topic)
			}
		}
		if b := it.batch; b != nil {
			if b.Verified != (b.Gateway == "gw-a") || (b.Gateway != "gw-a" && b.Gateway != "gw-unsigned") || b.Seq == 0 ||
				len(b.Records)+len(b.Env) == 0 {
				t.Fatalf("accepted inconsistent batch %+v", b)
			}
			for _, r := range b.Records {
				if r.LAeq < 0 || r.LAeq > 160 {
					t.Fatalf("accepted %v dB", r.LAeq)
				}
			}
		}
	})
}
