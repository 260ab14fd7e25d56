package gateway

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/wire"
)

// restore makes the central service forget every batch above l, as when
// its data folder is restored from an older backup, and returns the
// highest seq it had acked until then. Acks are sent under c.mu, so that
// is exactly the gateway's highest ack: the outbox may not have applied
// it yet, so the outbox's own count is not the same figure.
func (c *central) restore(l uint64) (acked uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	acked = c.wm
	for seq := range c.stored {
		if seq > l {
			delete(c.stored, seq)
		}
	}
	c.wm = l
	return acked
}

func (c *central) storedAbove(l uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for seq := range c.stored {
		if seq > l {
			n++
		}
	}
	return n
}

// TestGatewayAckWentBackwards: the central service acks up to N, then its
// data goes back to an older backup and it acks L < N. The gateway must
// raise the alarm (status flag, counter), delete nothing on the lower ack,
// keep sending and replaying what is unacked, and clear the flag once the
// acks reach its watermark again.
func TestGatewayAckWentBackwards(t *testing.T) {
	box, err := OpenOutbox(filepath.Join(t.TempDir(), "o.db"), 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	pub, key, _ := ed25519.GenerateKey(nil)
	c := newCentral(pub)
	c.acking.Store(true)
	// The meter makes a 1-s record every 5 ms (200× real time): starting
	// 10 days back it stays in the past for over an hour of test time. From
	// 2 h back it reached the future (refused by the central service, so no
	// more acks) after 36 s, which a loaded machine spent before the last step.
	meter := &countMeter{start: time.Now().Add(-10 * 24 * time.Hour).Truncate(time.Second)}
	g, err := New(Options{Municipality: "lapa", Gateway: "gw", Sensor: "m1", SamplePeriod: 5 * time.Millisecond,
		BatchRecords: 5, ReplayRate: 1000, AckTimeout: 300 * time.Millisecond, StatusInterval: time.Hour},
		meter, FixedSync(synced), box, key, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.attach(g)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	g.OnConnect()
	wait(t, "20 batches acked", func() bool { return box.Acked() >= 20 })

	// The central service's data goes back to seq 10. n is what it had
	// acked: read with the restore in one step, as the gateway goes on
	// publishing and being acked meanwhile (a box.Acked() read before the
	// restore could be below an ack already sent, and the batches between
	// would then be neither in the outbox nor brought back below).
	n := c.restore(10)
	if g.Status().Outbox.AckRegressed {
		t.Fatal("flag raised before any low ack")
	}
	wait(t, "the last ack before the restore applied to the outbox", func() bool { return box.Acked() >= n })
	// Lower acks arrive as the gateway keeps publishing new batches and
	// resending after ack_timeout.
	wait(t, "the regression flagged", func() bool { return g.Status().Outbox.AckRegressed })
	st := g.Status().Outbox
	if st.AckRegressions < regressAcks {
		t.Errorf("ack_regressions %d, want ≥ %d", st.AckRegressions, regressAcks)
	}
	// Nothing deleted on the lower acks; what is unacked goes on being sent.
	if a := box.Acked(); a != n {
		t.Fatalf("outbox acked %d after lower acks, want the %d acked before the restore", a, n)
	}
	es, _ := box.After(context.Background(), 0, 1)
	if len(es) == 0 || es[0].Seq != box.Acked()+1 {
		t.Fatalf("pending batches %v after acked %d", es, box.Acked())
	}
	sent := c.storedAbove(n)
	wait(t, "unacked batches resent and new ones sent", func() bool { return c.storedAbove(n) > sent+3 })
	wait(t, "status with ack_regressed", func() bool {
		s, ok := c.lastStatus()
		return ok && s.Outbox != nil && s.Outbox.AckRegressed && s.Outbox.AckRegressions >= regressAcks
	})

	// The lost batches come back (from the gateway's own backup, say): the
	// central service acks above the watermark again and the flag clears.
	c.mu.Lock()
	for seq := uint64(11); seq <= n; seq++ {
		c.stored[seq] = &wire.Batch{Seq: seq}
	}
	c.mu.Unlock()
	wait(t, "the flag cleared", func() bool { return !g.Status().Outbox.AckRegressed && box.Acked() > n })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// One stale ack alone is not a regression.
	before := g.lowAcks.Load()
	ack, _ := json.Marshal(wire.Ack{V: 1, Gateway: "gw", Seq: 1})
	g.HandleAck(ack)
	if g.ackRegressed.Load() || g.lowAcks.Load() != before+1 {
		t.Errorf("one stale ack: flagged %v, counted %d", g.ackRegressed.Load(), g.lowAcks.Load()-before)
	}
}
