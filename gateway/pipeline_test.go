package gateway

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/wire"
)

// slowLink is a broker and central service behind a long link, for an
// AsyncPublisher: each PUBACK comes delay after its publish; the first
// publish of seq failSeq gets none (the gateway's wait fails). Stored
// batches are acked with the contiguous watermark.
type slowLink struct {
	delay   time.Duration
	failSeq uint64
	lose    map[uint64]bool // first publish PUBACKed but never delivered
	g       *Gateway

	mu            sync.Mutex
	inflight, max int
	order         []uint64 // batch seqs in publish order (replays included)
	stored        map[uint64]bool
	wm            uint64
	failed        bool
}

func (l *slowLink) Publish(ctx context.Context, topic string, payload []byte, retained bool) error {
	return l.PublishAsync(topic, payload, retained)(ctx)
}

func (l *slowLink) PublishAsync(_ string, payload []byte, _ bool) func(context.Context) error {
	_, b, err := wire.Open(payload)
	if err != nil { // the retained status
		return func(context.Context) error { return nil }
	}
	l.mu.Lock()
	l.inflight++
	if !l.failed { // after a failure abandoned publishes are still on the wire
		l.max = max(l.max, l.inflight)
	}
	l.order = append(l.order, b.Seq)
	fail := b.Seq == l.failSeq && !l.failed
	l.failed = l.failed || fail
	lost := l.lose[b.Seq]
	delete(l.lose, b.Seq)
	l.mu.Unlock()
	done := make(chan error, 1)
	time.AfterFunc(l.delay, func() {
		l.mu.Lock()
		l.inflight--
		if fail {
			l.mu.Unlock()
			done <- errors.New("sem PUBACK")
			return
		}
		if lost { // the broker PUBACKs; nobody receives it
			l.mu.Unlock()
			done <- nil
			return
		}
		l.stored[b.Seq] = true
		for l.stored[l.wm+1] {
			l.wm++
		}
		wm := l.wm
		l.mu.Unlock()
		ack, _ := json.Marshal(wire.Ack{V: 1, Gateway: b.Gateway, Seq: wm})
		l.g.HandleAck(ack)
		done <- nil
	})
	return func(ctx context.Context) error {
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// runOverLink runs a gateway of one-record batches over link (with
// AckTimeout an hour away, so only what is under test resends) until link
// has stored n batches in a row, then stops it.
func runOverLink(t *testing.T, link *slowLink, inFlight int, n uint64) {
	t.Helper()
	box, err := OpenOutbox(filepath.Join(t.TempDir(), "o.db"), 100000)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	_, priv, _ := ed25519.GenerateKey(nil)
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	g, err := New(Options{Municipality: "lapa", Gateway: "gw", Sensor: "m1", SamplePeriod: time.Millisecond,
		BatchRecords: 1, ReplayRate: 100000, AckTimeout: time.Hour, PublishTimeout: time.Second, InFlight: inFlight},
		&stepMeter{start: start}, FixedSync(synced), box, priv, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	link.g = g
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	g.OnConnect()
	wait(t, fmt.Sprintf("%d batches stored in order", n), func() bool { link.mu.Lock(); defer link.mu.Unlock(); return link.wm >= n })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// With an AsyncPublisher the gateway keeps up to InFlight batches waiting
// for their PUBACK (counted until the first failure: the publishes it
// abandons stay on the wire until they end), publishes them in seq order,
// and after a lost PUBACK
// republishes from that batch on: every batch arrives.
func TestPipelinedPublish(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inFlight int
		wantMax  int
	}{
		{"one at a time", 1, 1},
		{"four in flight", 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link := &slowLink{delay: 15 * time.Millisecond, failSeq: 40, stored: map[uint64]bool{}}
			runOverLink(t, link, tc.inFlight, 60)
			link.mu.Lock()
			defer link.mu.Unlock()
			if link.max != tc.wantMax {
				t.Errorf("at most %d publishes in flight, want %d", link.max, tc.wantMax)
			}
			// First publishes in seq order; the lost one published again.
			first := map[uint64]bool{}
			var last uint64
			for _, s := range link.order {
				if first[s] {
					continue
				}
				if s != last+1 {
					t.Fatalf("publish order %v: seq %d first sent after %d", link.order, s, last)
				}
				first[s], last = true, s
			}
			if n := count(link.order, 40); n < 2 {
				t.Errorf("seq 40 (PUBACK lost) published %d times, want it again", n)
			}
		})
	}
}

func count(s []uint64, v uint64) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// Batches the broker PUBACKed but the central service never got (published
// while it was not subscribed, e.g. right after a broker restart) are
// resent as soon as the same ack comes three times in a row — not after
// AckTimeout (an hour here) — once, without a cascade of resends.
func TestFastResendOnRepeatedAcks(t *testing.T) {
	for _, inFlight := range []int{1, 4} {
		t.Run(fmt.Sprintf("in flight %d", inFlight), func(t *testing.T) {
			link := &slowLink{delay: 5 * time.Millisecond, stored: map[uint64]bool{}, lose: map[uint64]bool{21: true, 22: true}}
			runOverLink(t, link, inFlight, 80) // past 21 and 22 only if they were resent
			link.mu.Lock()
			defer link.mu.Unlock()
			times := map[uint64]int{}
			for _, s := range link.order {
				times[s]++
			}
			if times[21] != 2 || times[22] != 2 {
				t.Errorf("lost seqs 21 and 22 published %d and %d times, want 2 each", times[21], times[22])
			}
			for s, n := range times {
				if n > 2 {
					t.Errorf("seq %d published %d times: resends cascade", s, n)
				}
			}
		})
	}
}
