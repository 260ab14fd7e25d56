package central

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/wire"
)

type fakeHub struct{ levels []dashboard.Level }

func (h *fakeHub) PublishLevel(l dashboard.Level)         { h.levels = append(h.levels, l) }
func (h *fakeHub) PublishEnv(dashboard.Env)               {}
func (h *fakeHub) PublishGateway(dashboard.GatewayStatus) {}
func (h *fakeHub) PublishIngest(dashboard.IngestEvent)    {}

// countingLimits is a fixed limit that counts its lookups.
type countingLimits struct{ calls int }

func (c *countingLimits) LimitAt(_, _, _, _ string, _ time.Time) (alerts.Limit, bool, error) {
	c.calls++
	return alerts.Limit{DB: 60, Period: "noturno"}, true, nil
}

// TestHubFeedPublishesEachBatchLatest: the hub keeps one level per sensor,
// so of a batch only its latest reading is published (with its limit),
// whatever the order of the records in the batch.
func TestHubFeedPublishesEachBatchLatest(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	reading := func(sec int, laeq float64) ingest.Reading {
		return ingest.Reading{Sensor: "s", Gateway: "g", Municipality: "lapa",
			Record: wire.Record{T: t0.Add(time.Duration(sec) * time.Second), DurMs: 1000, LAeq: laeq}}
	}
	cases := []struct {
		name     string
		batch    []ingest.Reading
		wantLAeq []float64
	}{
		{"in order", []ingest.Reading{reading(0, 50), reading(1, 51), reading(2, 52)}, []float64{52}},
		{"latest in the middle", []ingest.Reading{reading(3, 53), reading(9, 59), reading(4, 54)}, []float64{59}},
		{"one reading", []ingest.Reading{reading(10, 70)}, []float64{70}},
		{"empty", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, lim := &fakeHub{}, &countingLimits{}
			feed := hubFeed{hub: h, limits: lim}
			var obs ingest.BatchObserver = feed
			obs.ObserveBatch(context.Background(), tc.batch)
			var got []float64
			for _, l := range h.levels {
				got = append(got, float64(l.LAeq))
				if l.Limit == nil || float64(*l.Limit) != 60 {
					t.Errorf("published level without its limit: %+v", l)
				}
			}
			if !slices.Equal(got, tc.wantLAeq) {
				t.Errorf("published LAeq %v, want %v", got, tc.wantLAeq)
			}
			if lim.calls != len(tc.wantLAeq) {
				t.Errorf("%d limit lookups for %d published levels", lim.calls, len(tc.wantLAeq))
			}
		})
	}
}
