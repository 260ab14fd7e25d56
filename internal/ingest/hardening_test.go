package ingest

import (
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// events records Events.
type events struct {
	mu  sync.Mutex
	evs []Event
}

func (e *events) Observe(context.Context, Reading) {}

func (e *events) ObserveEvent(_ context.Context, ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, ev)
}

func (e *events) kinds() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for _, ev := range e.evs {
		out[ev.Kind]++
	}
	return out
}

// clockHarness is a harness whose receive time the test moves (seconds
// after now), with metrics, a log and an event recorder.
type clockHarness struct {
	*harness
	clock  atomic.Int64
	reg    *prometheus.Registry
	logs   *testenv.SyncBuffer
	events *events
	cancel func()
}

func newClockHarness(t *testing.T, path string, o Options) *clockHarness {
	t.Helper()
	st, err := sqlitestore.Open(path, sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	h := &clockHarness{harness: &harness{st: st, acks: &fakeAcks{}, obs: &recorder{}, done: map[string]int{}},
		reg: prometheus.NewRegistry(), logs: &testenv.SyncBuffer{}, events: &events{}}
	o.Store, o.Acks, o.Observers = st, h.acks, []Observer{h.obs, h.events}
	if o.Registry == nil {
		o.Registry = testRegistry(t, "gw-a", "gw-b")
	}
	o.Metrics, o.Log = NewMetrics(h.reg), slog.New(slog.NewTextHandler(h.logs, nil))
	o.Now = func() time.Time { return now.Add(time.Duration(h.clock.Load()) * time.Second) }
	if o.Workers == 0 {
		o.Workers = 2
	}
	h.in = New(o)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- h.in.Run(ctx) }()
	var once sync.Once
	h.cancel = func() {
		once.Do(func() {
			cancel()
			if err := <-errc; err != nil {
				t.Errorf("Run: %v", err)
			}
			st.Close()
		})
	}
	t.Cleanup(h.cancel)
	return h
}

// send offers payloads at the harness's current time and waits until all
// are handled.
func (h *clockHarness) send(t *testing.T, topic string, payloads ...[]byte) {
	t.Helper()
	at := now.Add(time.Duration(h.clock.Load()) * time.Second)
	for _, p := range payloads {
		h.mu.Lock()
		h.total++
		h.mu.Unlock()
		h.in.offerWait(Message{Topic: topic, Payload: p, ReceivedAt: at, Done: func() {
			h.mu.Lock()
			h.done[topic]++
			h.mu.Unlock()
		}}, nil)
	}
	h.waitDone(t)
}

func deadLetters(t *testing.T, st *sqlitestore.Store, reason string) []store.DeadLetter {
	t.Helper()
	dls, err := st.DeadLetters(context.Background(), store.DeadLetterFilter{Reason: reason, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return dls
}

func gatewayStatus(t *testing.T, st *sqlitestore.Store, gw string) store.GatewayStatus {
	t.Helper()
	sts, err := st.GatewayStatuses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range sts {
		if g.Gateway == gw {
			return g
		}
	}
	return store.GatewayStatus{}
}

// TestSeqConflictKeptAndAlarmed is the attack: a holder of gw-a's key
// signs a second batch under a seq already stored (to make the gateway
// drop an undelivered batch, or to replace what it said). It used to be
// dropped as a duplicate without a trace. Now it is a conflict: kept as a
// dead letter, logged, counted, reported as an Event, on the gateway's
// row; the stored batch stays. The same body again is a plain duplicate,
// acked.
func TestSeqConflictKeptAndAlarmed(t *testing.T) {
	h := newClockHarness(t, filepath.Join(t.TempDir(), "s.db"), Options{})
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	real := seal(t, mkBatch("gw-a", "gw-a-s1", 1, now.Add(-time.Hour), 60, 61), key)
	forged := seal(t, mkBatch("gw-a", "gw-a-s1", 1, now.Add(-time.Hour), 90, 91), key)
	h.send(t, topic, real)
	h.send(t, topic, real)
	if n := len(deadLetters(t, h.st, wire.ReasonSeqConflict)); n != 0 {
		t.Fatalf("an exact duplicate made %d conflicts", n)
	}
	h.send(t, topic, forged)
	dls := deadLetters(t, h.st, wire.ReasonSeqConflict)
	if len(dls) != 1 || string(dls[0].Payload) != string(forged) || dls[0].Seq != 1 || dls[0].Gateway != "gw-a" {
		t.Fatalf("seq-conflict dead letters: %+v", dls)
	}
	if body, _, _, _ := h.st.RawBatch(context.Background(), "gw-a", 1); !strings.Contains(string(real), string(body)) {
		t.Error("the stored batch is no longer the first one")
	}
	if got := counter(t, h.reg, "sossego_ingest_seq_conflicts_total"); got != 1 {
		t.Errorf("sossego_ingest_seq_conflicts_total = %v", got)
	}
	if len(linesWith(h.logs, "seq já gravado")) != 1 || h.events.kinds()[EventSeqConflict] != 1 {
		t.Errorf("not alarmed: log %q, events %v", h.logs.String(), h.events.kinds())
	}
	if g := gatewayStatus(t, h.st, "gw-a"); g.Conflicts != 1 {
		t.Errorf("gateway conflicts %d", g.Conflicts)
	}
	if acks := h.acks.all("gw-a"); len(acks) != 3 || acks[2] != 1 {
		t.Errorf("acks %v, want 1 three times", acks)
	}
}

// TestClockSteppedBack: a gateway whose clock stepped back measures again
// seconds it has already sent. Those records used to vanish (the first per
// second won, silently); now each is a counted, logged, visible conflict,
// kept with the record it disagrees with. A batch whose records are out of
// order, repeat a second or span more than an hour is rejected as a dead
// letter with its reason (and settles its seq: the gateway is acked past
// it).
func TestClockSteppedBack(t *testing.T) {
	h := newClockHarness(t, filepath.Join(t.TempDir(), "s.db"), Options{})
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	t0 := now.Add(-time.Hour)
	h.send(t, topic, seal(t, mkBatch("gw-a", "gw-a-s1", 1, t0, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60), key))
	// Stepped back 5 s: seconds 5–9 again, with other levels.
	h.send(t, topic, seal(t, mkBatch("gw-a", "gw-a-s1", 2, t0.Add(5*time.Second), 70, 70, 70, 70, 70, 70, 70, 70, 70, 70), key))
	if n, _ := h.st.CountLevels(context.Background(), "gw-a-s1"); n != 15 {
		t.Errorf("%d records in the readings, want 15", n)
	}
	cs, err := h.st.RecordConflicts(context.Background(), "gw-a-s1", 0, 0)
	if err != nil || len(cs) != 5 {
		t.Fatalf("%d conflicts kept (%v), want 5", len(cs), err)
	}
	if got := counter(t, h.reg, "sossego_ingest_record_conflicts_total"); got != 5 {
		t.Errorf("sossego_ingest_record_conflicts_total = %v", got)
	}
	if len(linesWith(h.logs, "valores diferentes")) != 1 || h.events.kinds()[EventRecordConflict] != 1 {
		t.Errorf("not reported: log %q, events %v", h.logs.String(), h.events.kinds())
	}
	if g := gatewayStatus(t, h.st, "gw-a"); g.Conflicts != 5 {
		t.Errorf("gateway conflicts %d, want 5", g.Conflicts)
	}

	// Within one batch: out of order, repeated, too long.
	bad := []*wire.Batch{mkBatch("gw-a", "gw-a-s1", 3, t0.Add(time.Minute), 60, 60, 60),
		mkBatch("gw-a", "gw-a-s1", 4, t0.Add(2*time.Minute), 60, 60), mkBatch("gw-a", "gw-a-s1", 5, t0.Add(3*time.Minute), 60, 60)}
	bad[0].Records[2].T = bad[0].Records[0].T.Add(-time.Second)
	bad[1].Records[1].T = bad[1].Records[0].T
	bad[2].Records[1].T = bad[2].Records[0].T.Add(wire.MaxBatchSpan + time.Second)
	for _, b := range bad {
		h.send(t, topic, seal(t, b, key))
	}
	if dls := deadLetters(t, h.st, wire.ReasonTime); len(dls) != 3 {
		t.Errorf("%d timestamp dead letters, want 3: %+v", len(dls), dls)
	}
	if got := h.acks.last("gw-a"); got != 5 {
		t.Errorf("ack %d, want 5 (rejected batches settle)", got)
	}
}

// TestForgedFutureRecordsReplaceNothing: records dated ahead (within the
// allowed clock skew) that reach the store before the real ones used to
// take their seconds for good. They still come first in the readings, but
// the real records are kept as conflicts beside them, and records beyond
// the skew are rejected with their reason.
func TestForgedFutureRecordsReplaceNothing(t *testing.T) {
	h := newClockHarness(t, filepath.Join(t.TempDir(), "s.db"), Options{})
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	ahead := now.Add(5 * time.Minute)
	h.send(t, topic, seal(t, mkBatch("gw-a", "gw-a-s1", 1, ahead, 99, 99), key))
	h.send(t, topic, seal(t, mkBatch("gw-a", "gw-a-s1", 2, now.Add(wire.DefaultSkew+time.Minute), 99), key))
	h.clock.Store(int64(6 * 60))
	h.send(t, topic, seal(t, mkBatch("gw-a", "gw-a-s1", 3, ahead, 55, 56), key))
	cs, _ := h.st.RecordConflicts(context.Background(), "gw-a-s1", 0, 0)
	if len(cs) != 2 || cs[0].New.Seq != 3 || cs[0].Kept.Seq != 1 {
		t.Errorf("the real records are not kept beside the forged ones: %+v", cs)
	}
	if dls := deadLetters(t, h.st, wire.ReasonTime); len(dls) != 1 || dls[0].Seq != 2 {
		t.Errorf("far-future batch not rejected: %+v", dls)
	}
}

// TestSeqBeyondInt64Rejected: seqs from 2^63 used to be stored negative
// (SQLite integers are int64). The contract's range is 1..2^63−1; a seq
// beyond is rejected, kept with seq 0 (the payload has it) and settles
// nothing.
func TestSeqBeyondInt64Rejected(t *testing.T) {
	h := newClockHarness(t, filepath.Join(t.TempDir(), "s.db"), Options{})
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	h.send(t, topic, seal(t, mkBatch("gw-a", "gw-a-s1", 1, now.Add(-time.Hour), 60), key))
	for _, seq := range []uint64{math.MaxInt64 + 1, math.MaxUint64} {
		h.send(t, topic, seal(t, mkBatch("gw-a", "gw-a-s1", seq, now.Add(-time.Hour).Add(time.Minute), 60), key))
	}
	dls := deadLetters(t, h.st, wire.ReasonSchema)
	if len(dls) != 2 {
		t.Fatalf("%d schema dead letters, want 2", len(dls))
	}
	for _, d := range dls {
		if d.Seq != 0 || d.Settled {
			t.Errorf("dead letter seq %d settled %v, want 0 and false", d.Seq, d.Settled)
		}
	}
	if g := gatewayStatus(t, h.st, "gw-a"); g.Watermark != 1 || g.PendingAbove != 0 {
		t.Errorf("gateway row %+v", g)
	}
	seqs, _ := h.st.StoredSeqs(context.Background(), "gw-a")
	for q := range seqs {
		if q > math.MaxInt64 {
			t.Errorf("stored seq %d", q)
		}
	}
}

// TestQuotaRefusesAndSamples: over its burst a gateway's messages are
// refused (not queued, not stored, PUBACKed), counted by limit; one per
// minute is kept as a truncated dead letter and logged. Another gateway is
// not affected, and the bucket refills with time.
func TestQuotaRefusesAndSamples(t *testing.T) {
	h := newClockHarness(t, filepath.Join(t.TempDir(), "s.db"),
		Options{Quota: Quota{MessagesPerSecond: 1, MessageBurst: 5, BytesPerSecond: 1, ByteBurst: 1}})
	keyA, keyB := loadgen.Key(seed, "gw-a"), loadgen.Key(seed, "gw-b")
	topicA, topicB := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), wire.LevelsTopic("lapa", "gw-b", "gw-b-s1")
	var msgs [][]byte
	for i := range 10 {
		msgs = append(msgs, seal(t, mkBatch("gw-a", "gw-a-s1", uint64(i+1), now.Add(-time.Hour).Add(time.Duration(i)*time.Minute), 60), keyA))
	}
	h.send(t, topicA, msgs...)
	h.send(t, topicB, seal(t, mkBatch("gw-b", "gw-b-s1", 1, now.Add(-time.Hour), 60), keyB))
	if got := h.acks.last("gw-a"); got != 5 {
		t.Errorf("gw-a acked to %d, want 5 (the burst)", got)
	}
	if got := h.acks.last("gw-b"); got != 1 {
		t.Errorf("gw-b acked to %d: another gateway's flood held it back", got)
	}
	if got := counter(t, h.reg, "sossego_ingest_quota_refused_total"); got != 5 {
		t.Errorf("%v refusals counted, want 5", got)
	}
	dls := deadLetters(t, h.st, wire.ReasonQuota)
	if len(dls) != 1 || dls[0].Gateway != "gw-a" || dls[0].Settled {
		t.Fatalf("quota samples %+v, want one of gw-a", dls)
	}
	if len(linesWith(h.logs, "excedeu a cota")) != 1 || h.events.kinds()[EventQuota] != 1 {
		t.Errorf("refusals not reported once: %q %v", h.logs.String(), h.events.kinds())
	}
	// A minute later the bucket has refilled: the gateway's replay goes in.
	h.clock.Store(60)
	h.send(t, topicA, msgs[5:]...)
	if got := h.acks.last("gw-a"); got != 10 {
		t.Errorf("gw-a acked to %d after the refill, want 10", got)
	}
}

// TestQueueBoundedByBytes: with the store stalled, messages wait for room
// once the queued payloads reach QueueBytes, whatever their count.
func TestQueueBoundedByBytes(t *testing.T) {
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gate := make(chan struct{})
	in := New(Options{Store: gatedStore{st, gate}, Registry: testRegistry(t, "gw-a"), Workers: 1, QueueBytes: 1 << 20,
		Now: func() time.Time { return now }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go in.Run(ctx) //nolint:errcheck // ends with ctx
	const n, size = 8, 300 << 10
	var offered atomic.Int32
	var wg sync.WaitGroup
	done := make(chan struct{}, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in.offerWait(Message{Topic: wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), Payload: make([]byte, size),
				Done: func() { done <- struct{}{} }}, nil)
			offered.Add(1)
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for offered.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := offered.Load(); got != 3 {
		t.Fatalf("%d messages of %d KiB admitted with QueueBytes 1 MiB and the store stalled, want 3", got, size>>10)
	}
	if b := in.gate.inUse(); b > 1<<20 {
		t.Errorf("%d bytes held", b)
	}
	close(gate)
	wg.Wait()
	for range n {
		<-done
	}
}

// TestRestoredStoreAcksAgain is the attack-free disaster: the data folder
// is restored from an older backup. The gateway was acked to 50 by the
// store's later life and deleted those batches; the restored store knows
// 10. It used to hold 51… above a gap nothing would ever fill, ack 10 for
// ever, and the gateway stopped after its window. Now, once the gateway
// has replayed the seqs above the gap for GapTimeout (two rounds), the
// watermark moves over 11…50 and the gateway is acked again, with a log
// line, a metric, an Event and the skip on the gateway's row. A gap the
// gateway fills by replaying is never skipped, nor is one with a single
// round of duplicates (a broker redelivering after a reconnect).
func TestRestoredStoreAcksAgain(t *testing.T) {
	dir := t.TempDir()
	path, backup := filepath.Join(dir, "s.db"), filepath.Join(dir, "backup.db")
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	t0 := now.Add(-2 * time.Hour)
	batch := func(seq uint64) []byte {
		return seal(t, mkBatch("gw-a", "gw-a-s1", seq, t0.Add(time.Duration(seq)*10*time.Second), 60), key)
	}
	seqs := func(from, to uint64) [][]byte {
		var out [][]byte
		for q := from; q <= to; q++ {
			out = append(out, batch(q))
		}
		return out
	}
	h := newClockHarness(t, path, Options{})
	h.send(t, topic, seqs(1, 10)...)
	h.cancel() // the backup is taken
	copyFile(t, path, backup)
	h = newClockHarness(t, path, Options{})
	h.send(t, topic, seqs(11, 50)...)
	if got := h.acks.last("gw-a"); got != 50 {
		t.Fatalf("acked %d before the restore", got)
	}
	h.cancel()
	copyFile(t, backup, path) // the restore

	h = newClockHarness(t, path, Options{GapTimeout: 2 * time.Minute})
	// The gateway sends its window (51–60), then replays it every 30 s.
	h.send(t, topic, seqs(51, 60)...)
	for round := 1; round <= 3; round++ {
		h.clock.Add(30)
		h.send(t, topic, seqs(51, 60)...)
		if got := h.acks.last("gw-a"); got != 10 {
			t.Fatalf("round %d (%ds): ack %d, want 10 (too early to skip)", round, h.clock.Load(), got)
		}
	}
	h.clock.Add(30) // 2 min since the gap opened, the fourth round
	h.send(t, topic, seqs(51, 60)...)
	if got := h.acks.last("gw-a"); got != 60 {
		t.Fatalf("after 2 min of replays: ack %d, want 60", got)
	}
	h.send(t, topic, seqs(61, 62)...)
	if got := h.acks.last("gw-a"); got != 62 {
		t.Errorf("ack %d, want 62: the gateway is acked as usual again", got)
	}
	if got := counter(t, h.reg, "sossego_ingest_seqs_skipped_total"); got != 40 {
		t.Errorf("sossego_ingest_seqs_skipped_total = %v, want 40", got)
	}
	if len(linesWith(h.logs, "saltados")) != 1 || h.events.kinds()[EventSeqSkip] != 1 {
		t.Errorf("skip not reported: %q %v", h.logs.String(), h.events.kinds())
	}
	if g := gatewayStatus(t, h.st, "gw-a"); g.SkippedSeqs != 40 || g.Watermark != 62 {
		t.Errorf("gateway row: skipped %d, watermark %d", g.SkippedSeqs, g.Watermark)
	}
	if sk, _ := h.st.SeqSkips(context.Background(), "gw-a"); len(sk) != 1 || sk[0].First != 11 || sk[0].Last != 50 {
		t.Errorf("recorded skips %+v", sk)
	}

	t.Run("a gap the gateway fills is not skipped", func(t *testing.T) {
		h := newClockHarness(t, filepath.Join(t.TempDir(), "s.db"), Options{GapTimeout: 2 * time.Minute})
		h.send(t, topic, seqs(1, 5)...)
		h.send(t, topic, seqs(7, 9)...) // 6 lost
		h.clock.Add(30)
		h.send(t, topic, seqs(6, 9)...) // the replay brings it
		if got := h.acks.last("gw-a"); got != 9 {
			t.Errorf("ack %d, want 9", got)
		}
	})
	t.Run("one round of duplicates is not enough", func(t *testing.T) {
		h := newClockHarness(t, filepath.Join(t.TempDir(), "s.db"), Options{GapTimeout: 2 * time.Minute})
		h.send(t, topic, seqs(1, 5)...)
		h.send(t, topic, seqs(7, 9)...) // 6 lost, and the gateway away
		h.clock.Add(600)
		h.send(t, topic, seqs(7, 9)...) // a broker redelivers once
		if got := h.acks.last("gw-a"); got != 5 {
			t.Errorf("ack %d, want 5: skipped on a single round", got)
		}
		if got := counter(t, h.reg, "sossego_ingest_seqs_skipped_total"); got != 0 {
			t.Errorf("%v seqs skipped", got)
		}
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	for _, sfx := range []string{"", "-wal", "-shm"} {
		os.Remove(to + sfx)
		src, err := os.Open(from + sfx)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(to + sfx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
