package loadgen

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/mochitest"
)

// openBroker starts an in-process broker that admits anyone.
func openBroker(t *testing.T) string { return mochitest.Start(t).URL }

// With Spread, paced gateways start one after the other across a period
// (gateway i at i/N of it); without, they all publish on the same tick.
func TestSpreadStaggersGateways(t *testing.T) {
	url := openBroker(t)
	var gws []Gateway
	for i := 1; i <= 4; i++ {
		id := GatewayID(i)
		gws = append(gws, Gateway{ID: id, Municipality: "lapa", Sensors: []string{id + "-s1"}, Key: Key(DefaultSeed, id)})
	}
	for _, tc := range []struct {
		spread  bool
		minSpan time.Duration // first publish of the last gateway − of the first
	}{
		{spread: true, minSpan: 250 * time.Millisecond}, // 3/4 of a 500 ms period = 375 ms
		{spread: false},
	} {
		var mu sync.Mutex
		first := map[string]time.Time{}
		var order []string
		// A bound on the whole run: a hang fails here, with Run's error,
		// instead of at the package's timeout.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := Run(ctx, Options{URL: url, Gateways: gws, Rate: 2, Batches: 1, Spread: tc.spread,
			WaitAcks: time.Millisecond, OnPublish: func(gw string, _ uint64, at time.Time) {
				mu.Lock()
				defer mu.Unlock()
				if _, ok := first[gw]; !ok {
					first[gw] = at
					order = append(order, gw)
				}
			}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if len(order) != len(gws) {
			t.Fatalf("spread=%v: %d gateways published, want %d", tc.spread, len(order), len(gws))
		}
		if !tc.spread {
			continue
		}
		for i, g := range gws {
			if order[i] != g.ID {
				t.Fatalf("spread: publish order %v, want the gateways in order", order)
			}
		}
		if span := first[gws[3].ID].Sub(first[gws[0].ID]); span < tc.minSpan {
			t.Errorf("spread: the last gateway started %v after the first, want ≥ %v", span, tc.minSpan)
		}
	}
}

// PublishElapsed spans the first to the last first publish, so a paced
// run's PublishRate cannot exceed the offered rate (the ticker sets it).
func TestPublishRate(t *testing.T) {
	url := openBroker(t)
	var gws []Gateway
	for i := 1; i <= 2; i++ {
		id := GatewayID(i)
		gws = append(gws, Gateway{ID: id, Municipality: "lapa", Sensors: []string{id + "-s1"}, Key: Key(DefaultSeed, id)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // see TestSpreadStaggersGateways
	defer cancel()
	st, err := Run(ctx, Options{URL: url, Gateways: gws, Rate: 20, Batches: 10, WaitAcks: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if st.Published != 20 {
		t.Fatalf("published %d, want 20", st.Published)
	}
	// Ten ticks of 50 ms: the last first publish comes ≥ 500 ms after the start.
	if st.PublishElapsed < 500*time.Millisecond || st.PublishElapsed > st.Elapsed {
		t.Errorf("PublishElapsed %v, want ≥ 500ms and ≤ Elapsed %v", st.PublishElapsed, st.Elapsed)
	}
	if r := st.PublishRate(); r <= 0 || r > 40 {
		t.Errorf("PublishRate %.1f/s, want (0, 40] for 2 gateways at 20/s", r)
	}
}
