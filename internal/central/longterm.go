package central

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/internal/longterm"
)

// tierBacklog exports how many level records the long-term tier has not
// folded in yet.
func tierBacklog(f *longterm.Follower) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sossego_longterm_backlog_records",
		Help: "Level records stored in the readings store but not yet folded into the long-term tier (longterm.db)."},
		func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := f.Backlog(ctx)
			if err != nil {
				return -1
			}
			return float64(n)
		})
}
