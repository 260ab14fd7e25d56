package ingest

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the ingest pipeline's Prometheus collectors.
type Metrics struct {
	messages        *prometheus.CounterVec
	records         prometheus.Counter
	rejections      *prometheus.CounterVec
	overflow        prometheus.Counter
	connects        prometheus.Counter
	acks            prometheus.Counter
	ackErrors       prometheus.Counter
	storeErrors     prometheus.Counter
	storeLatency    prometheus.Histogram
	receiveToStore  prometheus.Histogram
	verifyBatch     prometheus.Histogram
	quotaRefused    *prometheus.CounterVec
	deadOverBudget  *prometheus.CounterVec
	seqConflicts    prometheus.Counter
	recordConflicts *prometheus.CounterVec
	seqsSkipped     prometheus.Counter
	reg             prometheus.Registerer
}

// NewMetrics creates the collectors and registers them with reg (nil: not
// registered, e.g. in tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sossego_ingest_messages_total",
			Help: "MQTT messages handled, by kind (levels, env, status; any for rejections) and result (stored, duplicate, conflict, rejected, empty).",
		}, []string{"kind", "result"}),
		records: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sossego_ingest_records_total",
			Help: "Level and environment records newly stored.",
		}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sossego_ingest_rejections_total",
			Help: "Messages rejected to the dead-letter table, by reason.",
		}, []string{"reason"}),
		overflow: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sossego_ingest_queue_overflow_total",
			Help: "Messages that found the ingest queue full and waited for room (the broker connection, or the embedded broker's client, waited with them).",
		}),
		connects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sossego_ingest_mqtt_connects_total",
			Help: "Connections to an external broker with the subscriptions in place (the first one and every reconnect).",
		}),
		acks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sossego_ingest_acks_published_total",
			Help: "Application-level acks published to gateways.",
		}),
		ackErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sossego_ingest_acks_failed_total",
			Help: "Application-level acks that could not be published (broker connection down); the gateway republishes and the next ack covers it.",
		}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sossego_store_write_errors_total",
			Help: "Failed store transactions (retried; nothing is acknowledged until they succeed).",
		}),
		storeLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sossego_store_write_seconds",
			Help:    "Duration of one group-commit store transaction.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		receiveToStore: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sossego_ingest_receive_to_store_seconds",
			Help:    "Time from receiving a message to its durable storage.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		verifyBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sossego_ingest_verify_batch_messages",
			Help:    "Messages a worker handled together (their signatures verified in one batch).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
		}),
		quotaRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sossego_ingest_quota_refused_total",
			Help: "Messages refused because their gateway was over its quota, by limit (messages, bytes); one per gateway and minute is kept as a dead letter (reason quota).",
		}, []string{"limit"}),
		deadOverBudget: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sossego_ingest_dead_letters_over_budget_total",
			Help: "Dead letters past their gateway's hourly byte budget, by gateway (\"\" for unregistered ones) and outcome (cortada: stored with its payload cut; descartada: counted only).",
		}, []string{"gateway", "resultado"}),
		seqConflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sossego_ingest_seq_conflicts_total",
			Help: "Validly signed batches under a stored (gateway, seq) with a different body: kept as dead letters (reason seq_conflict), not applied. Alert on any.",
		}),
		recordConflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sossego_ingest_record_conflicts_total",
			Help: "Records (kind levels or env) for a second their sensor already had, with other values: kept in the conflicts table, not applied.",
		}, []string{"kind"}),
		seqsSkipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sossego_ingest_seqs_skipped_total",
			Help: "Seqs the ack watermark moved over because the gateway no longer had them (a data folder restored from an older backup).",
		}),
		reg: reg,
	}
	if reg != nil {
		reg.MustRegister(m.messages, m.records, m.rejections, m.overflow, m.connects, m.acks, m.ackErrors, m.storeErrors,
			m.storeLatency, m.receiveToStore, m.verifyBatch, m.quotaRefused, m.deadOverBudget, m.seqConflicts, m.recordConflicts, m.seqsSkipped)
	}
	return m
}

func (m *Metrics) queueDepth(depth, bytes func() float64) {
	if m.reg == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sossego_ingest_queue_depth",
		Help: "Messages waiting in the ingest queue.",
	}, depth), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sossego_ingest_queue_bytes",
		Help: "Payload bytes admitted and not yet committed (bounded; see the ingest's QueueBytes).",
	}, bytes))
}
