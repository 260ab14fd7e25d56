package notify

import (
	"context"
	"encoding/json"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	queued        prometheus.Counter
	notifications *prometheus.CounterVec
	deliveries    *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	attemptTime   *prometheus.HistogramVec
	undeliverable prometheus.Counter
}

var pendingDesc = prometheus.NewDesc("sossego_notify_outbox_pending", "Deliveries waiting in the durable outbox (new or awaiting a retry), by receiver.",
	[]string{"receiver"}, nil)

// pendingCollector reads the outbox at each scrape.
type pendingCollector struct{ s *Service }

func (c pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pendingDesc }

func (c pendingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := c.s.st.pendingCounts(ctx)
	if err != nil {
		return
	}
	for _, r := range receiverNames(c.s.policy.Load()) {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(counts[r]), r)
		delete(counts, r)
	}
	for r, n := range counts {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(n), r)
	}
}

func newMetrics(s *Service, reg prometheus.Registerer) *metrics {
	m := &metrics{
		queued: prometheus.NewCounter(prometheus.CounterOpts{Name: "sossego_notify_inputs_total",
			Help: "Alert transitions and acknowledgements handed to the notifications (never blocking the caller)."}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sossego_notify_messages_total",
			Help: "Messages decided by the notification engine, by type (firing, escalation, resolved)."}, []string{"type"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sossego_notify_deliveries_total",
			Help: "Delivery attempts by receiver and outcome: sent, retry (failed, tried again later), failed (given up), test_sent, test_failed."},
			[]string{"receiver", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sossego_notify_latency_seconds",
			Help:    "From the service receiving an alert transition to the receiver accepting the message, by kind of receiver.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 15, 60, 300, 1800}}, []string{"receiver"}),
		attemptTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sossego_notify_attempt_seconds",
			Help: "Duration of one successful delivery attempt, by kind of receiver.", Buckets: prometheus.DefBuckets}, []string{"receiver"}),
		undeliverable: prometheus.NewCounter(prometheus.CounterOpts{Name: "sossego_notify_undeliverable_total",
			Help: "Messages nobody could receive: nobody on duty and no coordinator, or a user without any channel (alert on it)."}),
	}
	if reg != nil {
		reg.MustRegister(m.queued, m.notifications, m.deliveries, m.latency, m.attemptTime, m.undeliverable, pendingCollector{s},
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sossego_notify_queue_length",
				Help: "Inputs received and not yet stepped by the notification engine."}, func() float64 { return float64(s.QueueLen()) }))
	}
	return m
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
