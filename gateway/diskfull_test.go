package gateway

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

// countMeter produces one 1-s Leq sample per Sense, from start, until
// stopped; it counts what it produced (each sample is one record).
type countMeter struct {
	start   time.Time
	n       atomic.Int64
	stopped atomic.Bool
}

func (m *countMeter) Sense(s *bridge.Sample) error {
	if m.stopped.Load() {
		return errors.New("countMeter: stopped")
	}
	n := m.n.Add(1)
	db := 40 + float64(n%300)/10
	*s = bridge.Sample{At: m.start.Add(time.Duration(n) * time.Second), Duration: time.Second, Weighting: bridge.WeightingA,
		TimeWeighting: bridge.Leq, Level: db, Max: db + 3, Min: db - 3, HasMax: true, HasMin: true, Device: dev}
	return nil
}
func (m *countMeter) Halt() error    { return nil }
func (m *countMeter) String() string { return "countMeter" }

// central is a broker plus central service in one Publisher: it checks,
// stores (idempotent on seq) and acks batches with the highest contiguous
// seq while acking is on, and loses them (PUBACKed, never stored) while it
// is off; statuses are kept in order.
type central struct {
	pub    ed25519.PublicKey
	acking atomic.Bool

	mu       sync.Mutex
	g        *Gateway
	stored   map[uint64]*wire.Batch
	wm       uint64
	statuses []wire.Status
	rejected []string
}

func newCentral(pub ed25519.PublicKey) *central {
	return &central{pub: pub, stored: map[uint64]*wire.Batch{}}
}

func (c *central) attach(g *Gateway) {
	c.mu.Lock()
	c.g = g
	c.mu.Unlock()
}

func (c *central) Publish(_ context.Context, topic string, payload []byte, _ bool) error {
	tp, err := wire.ParseTopic(topic)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if tp.Kind == wire.KindStatus {
		var st wire.Status
		if err := json.Unmarshal(payload, &st); err != nil {
			c.rejected = append(c.rejected, err.Error())
		}
		c.statuses = append(c.statuses, st)
		return nil
	}
	if !c.acking.Load() {
		return nil
	}
	env, b, err := wire.Open(payload)
	if err == nil {
		err = signature.Verify(env, c.pub)
	}
	if err == nil {
		err = wire.Validate(tp, env, b, time.Now(), wire.DefaultSkew, wire.DefaultStale)
	}
	if err != nil {
		c.rejected = append(c.rejected, err.Error())
		return nil
	}
	if _, ok := c.stored[b.Seq]; !ok {
		c.stored[b.Seq] = b
	}
	for c.stored[c.wm+1] != nil {
		c.wm++
	}
	if c.wm > 0 && c.g != nil {
		ack, _ := json.Marshal(wire.Ack{V: 1, Gateway: b.Gateway, Seq: c.wm})
		c.g.HandleAck(ack)
	}
	return nil
}

func (c *central) watermark() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wm
}

func (c *central) lastStatus() (wire.Status, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.statuses) == 0 {
		return wire.Status{}, false
	}
	return c.statuses[len(c.statuses)-1], true
}

// TestGatewayFullDiskLosesNothing runs the gateway with its outbox on a
// real 3 MiB file system while the broker is away, until the disk refuses
// writes and the memory buffer overflows; restarts it on the full disk;
// fills the disk to the last byte; brings the broker back (the status shows
// the alarm, acks drain the outbox on the full disk), then the room; and
// checks that every record the meter produced is stored at the central
// service or counted as dropped, exactly once.
func TestGatewayFullDiskLosesNothing(t *testing.T) {
	dir := testenv.SmallFS(t, "3m")
	path := filepath.Join(dir, "outbox.db")
	bopts := OutboxOptions{CapacityRecords: 1_000_000, Reserve: 256 << 10}
	pub, key, _ := ed25519.GenerateKey(nil)
	// 1,000× real time: from 10 days back it stays in the past for 14 min.
	meter := &countMeter{start: time.Now().Add(-10 * 24 * time.Hour).Truncate(time.Second)}
	c := newCentral(pub)
	opts := Options{Municipality: "lapa", Gateway: "gw", Sensor: "m1", SamplePeriod: time.Millisecond,
		BatchRecords: 10, BatchMaxAge: 10 * time.Second, ReplayRate: 2000, Window: 200, AckTimeout: time.Second,
		StatusInterval: time.Hour, MemoryRecords: 300}

	type run struct {
		box    *Outbox
		g      *Gateway
		cancel context.CancelFunc
		done   chan error
	}
	start := func() *run {
		t.Helper()
		box, err := OpenOutboxOptions(path, bopts)
		if err != nil {
			t.Fatalf("open outbox: %v", err)
		}
		g, err := New(opts, meter, FixedSync(synced), box, key, c, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})))
		if err != nil {
			t.Fatal(err)
		}
		c.attach(g)
		ctx, cancel := context.WithCancel(context.Background())
		r := &run{box: box, g: g, cancel: cancel, done: make(chan error, 1)}
		go func() { r.done <- g.Run(ctx) }()
		t.Cleanup(func() { // after a failure: release the file system before it is unmounted
			cancel()
			<-r.done
			r.box.Close()
		})
		return r
	}
	stop := func(r *run) {
		t.Helper()
		r.cancel()
		err := <-r.done
		r.done <- err
		if err != nil {
			t.Fatalf("Run ended with %v; a full disk must not end it", err)
		}
		if err := r.box.Close(); err != nil {
			t.Fatalf("close outbox: %v", err)
		}
	}

	// Most of the volume is taken by another file: the outbox fills the rest.
	r := start()
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, max(freeBytes(t, dir)-700<<10, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	full := func(r *run, minDropped uint64) func() bool {
		return func() bool {
			st := r.g.Status().Outbox
			return st.StorageError != "" && st.Full && st.Memory > 0 && st.Dropped >= minDropped
		}
	}
	wait(t, "disk refusing writes, memory buffer full, drops counted", full(r, 1))
	if _, ok := c.lastStatus(); ok {
		t.Fatal("status published while disconnected")
	}

	// Restart on the full disk: the stop counts what memory held; the new
	// process opens the outbox and goes on.
	stop(r)
	r = start()
	before := r.box.Stats().Dropped
	wait(t, "the restarted gateway refusing and counting again", full(r, before+1))

	// The last bytes go too.
	fill(t, dir, "filler2")
	if n := freeBytes(t, dir); n != 0 {
		t.Fatalf("%d bytes free after filling", n)
	}

	// The broker comes back, the central service does not ack yet: the
	// retained status carries the alarm.
	r.g.OnConnect()
	wait(t, "status with the storage alarm", func() bool {
		st, ok := c.lastStatus()
		return ok && st.Outbox != nil && st.Outbox.StorageError != "" && st.Outbox.Full && st.Outbox.Memory > 0 && st.Outbox.Dropped > 0
	})
	st, _ := c.lastStatus()
	t.Logf("status while full: %+v", *st.Outbox)

	// The central service acks: the outbox drains on the full disk.
	if n := freeBytes(t, dir); n != 0 {
		t.Fatalf("%d bytes free before the acks", n)
	}
	last := r.box.LastSeq()
	c.acking.Store(true)
	wait(t, "acks applied on a 100% full disk", func() bool { return r.box.Acked() >= last })

	// Room comes back: memory goes to disk, the alarm clears.
	os.Remove(filepath.Join(dir, "filler2"))
	os.Remove(filler)
	wait(t, "memory stored and alarm cleared", func() bool {
		st := r.g.Status().Outbox
		return st.Memory == 0 && st.StorageError == "" && !st.Full
	})

	// The meter stops; the last open record and batch are flushed on the
	// way out and sent by the next run.
	meter.stopped.Store(true)
	stop(r)
	r = start()
	r.g.OnConnect()
	wait(t, "everything acked", func() bool {
		return r.box.LastSeq() > 0 && c.watermark() == r.box.LastSeq() && r.box.Acked() == r.box.LastSeq()
	})
	dropped := r.box.Stats().Dropped
	stop(r)

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.rejected) > 0 {
		t.Fatalf("central rejected %d messages: %v", len(c.rejected), c.rejected[:min(3, len(c.rejected))])
	}
	seen := map[time.Time]uint64{}
	stored := 0
	for seq, b := range c.stored {
		for _, rec := range b.Records {
			if prev, dup := seen[rec.T]; dup {
				t.Fatalf("record %v stored twice (seqs %d and %d)", rec.T, prev, seq)
			}
			seen[rec.T] = seq
			stored++
		}
	}
	produced := meter.n.Load()
	if produced != int64(stored)+int64(dropped) {
		t.Fatalf("produced %d records; stored %d + dropped %d = %d", produced, stored, dropped, stored+int(dropped))
	}
	t.Logf("produced %d records = %d stored at the central service + %d counted as dropped (%d batches stored)",
		produced, stored, dropped, len(c.stored))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
