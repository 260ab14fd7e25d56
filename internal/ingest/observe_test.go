package ingest

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

// gatedObserver blocks on its first reading until released, and records
// the seqs it saw.
type gatedObserver struct {
	mu      sync.Mutex
	seen    []uint64
	blocked chan struct{} // closed when the first reading is blocked
	release chan struct{}
	once    sync.Once
}

func (g *gatedObserver) Observe(_ context.Context, r Reading) {
	g.once.Do(func() {
		close(g.blocked)
		<-g.release
	})
	g.mu.Lock()
	g.seen = append(g.seen, r.Seq)
	g.mu.Unlock()
}

func (g *gatedObserver) saw(seq uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.seen, seq)
}

// countingStore is the SQLite store with a count of the groups committed.
type countingStore struct {
	*sqlitestore.Store
	mu      sync.Mutex
	applied int
}

func (c *countingStore) Apply(ctx context.Context, w store.Write) (store.Result, error) {
	res, err := c.Store.Apply(ctx, w)
	if err == nil {
		c.mu.Lock()
		c.applied++
		c.mu.Unlock()
	}
	return res, err
}

func (c *countingStore) groups() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applied
}

// TestObserversRunAfterCommitInOrder: the observers run on their own
// goroutine, so the writer stores further groups while they work — one
// group handed over and one more committed, then it waits (the hand-over
// is bounded: a stuck observer holds back the writer, not memory); a
// message is acknowledged to the broker (Done) only after its readings were
// observed, groups reach the observers in commit order, and Run returns only
// after the last committed group was observed.
//
// The test counts committed groups rather than records: how many messages
// a group holds depends on how fast the decoders fill the queue, which a
// busy machine changes.
func TestObserversRunAfterCommitInOrder(t *testing.T) {
	sq, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	st := &countingStore{Store: sq}
	obs := &gatedObserver{blocked: make(chan struct{}), release: make(chan struct{})}
	in := New(Options{Store: st, Registry: testRegistry(t, "gw-a"), Acks: &fakeAcks{}, Observers: []Observer{obs},
		Now: func() time.Time { return now }, Workers: 2, MaxGroup: 8})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- in.Run(ctx) }()

	const n = 120
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	var mu sync.Mutex
	done, early := 0, []uint64{}
	for seq := uint64(1); seq <= n; seq++ {
		p := seal(t, mkBatch("gw-a", "gw-a-s1", seq, now.Add(-time.Hour).Add(time.Duration(seq)*time.Second), 60), key)
		if !in.Offer(Message{Topic: topic, Payload: p, ReceivedAt: now, Done: func() {
			mu.Lock()
			defer mu.Unlock()
			done++
			if !obs.saw(seq) {
				early = append(early, seq)
			}
		}}) {
			t.Fatal("queue full")
		}
	}
	<-obs.blocked
	// While the observer is stuck on the first group, the writer commits
	// the next two: one waits in the hand-over, the writer holds the other.
	deadline := time.Now().Add(30 * time.Second)
	for st.groups() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d groups committed while the observer was blocked, want 3", st.groups())
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	if done != 0 {
		t.Errorf("%d messages acknowledged before their readings were observed", done)
	}
	mu.Unlock()
	// Run does not return while a committed group waits for the observers.
	cancel()
	select {
	case err := <-errc:
		t.Fatalf("Run returned (%v) while the observer still held a group", err)
	case <-time.After(200 * time.Millisecond):
	}
	// Nothing beyond those two: the hand-over bounds what a stuck observer
	// holds back.
	if g := st.groups(); g != 3 {
		t.Errorf("%d groups committed while the observer was blocked, want 3 (one observed, one handed over, one held)", g)
	}
	close(obs.release)
	if err := <-errc; err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(early) > 0 {
		t.Errorf("acknowledged before observed: seqs %v", early)
	}
	// Commit order is record id order (ids are given at commit).
	recs, err := st.LevelsAfter(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var committed []uint64
	for _, r := range recs {
		committed = append(committed, r.Seq)
	}
	obs.mu.Lock()
	seen := append([]uint64(nil), obs.seen...)
	obs.mu.Unlock()
	if !slices.Equal(seen, committed[:len(seen)]) {
		t.Errorf("observed %v\nnot in commit order %v", seen, committed)
	}
	if len(seen) != done {
		t.Errorf("%d readings observed, %d messages acknowledged", len(seen), done)
	}
}

// batchRecorder records the batches it is given, by seq.
type batchRecorder struct {
	mu      sync.Mutex
	batches map[uint64][]float64 // LAeq of each reading, in the order given
	single  int                  // Observe calls (there must be none)
}

func (b *batchRecorder) Observe(context.Context, Reading) {
	b.mu.Lock()
	b.single++
	b.mu.Unlock()
}

func (b *batchRecorder) ObserveBatch(_ context.Context, rs []Reading) {
	b.mu.Lock()
	defer b.mu.Unlock()
	seq := rs[0].Seq
	if _, dup := b.batches[seq]; dup {
		b.batches[seq] = nil // given twice: the test fails on it
		return
	}
	for _, r := range rs {
		b.batches[seq] = append(b.batches[seq], r.Record.LAeq)
	}
}

// TestBatchObserverGetsWholeBatches: an observer that takes batches gets
// each stored batch's readings in one call, in the batch's order, and never
// Observe; a plain observer alongside still gets every reading.
func TestBatchObserverGetsWholeBatches(t *testing.T) {
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	br, plain := &batchRecorder{batches: map[uint64][]float64{}}, &recorder{}
	in := New(Options{Store: st, Registry: testRegistry(t, "gw-a"), Observers: []Observer{br, plain},
		Now: func() time.Time { return now }, Workers: 2})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- in.Run(ctx) }()
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	var wg sync.WaitGroup
	for seq := uint64(1); seq <= 20; seq++ {
		levels := []float64{float64(seq), float64(seq) + 0.1, float64(seq) + 0.2}
		wg.Add(1)
		p := seal(t, mkBatch("gw-a", "gw-a-s1", seq, now.Add(-time.Hour).Add(time.Duration(seq)*10*time.Second), levels...), key)
		if !in.Offer(Message{Topic: topic, Payload: p, ReceivedAt: now, Done: wg.Done}) {
			t.Fatal("queue full")
		}
	}
	wg.Wait()
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.single != 0 {
		t.Errorf("Observe called %d times on a batch observer", br.single)
	}
	for seq := uint64(1); seq <= 20; seq++ {
		want := []float64{float64(seq), float64(seq) + 0.1, float64(seq) + 0.2}
		if got := br.batches[seq]; !slices.Equal(got, want) {
			t.Errorf("batch %d: readings %v, want %v", seq, got, want)
		}
	}
	if n := plain.len(); n != 60 {
		t.Errorf("plain observer got %d readings, want 60", n)
	}
}
