// Package store is what the central service keeps of what it receives, as
// types and without a driver: the raw signed batches exactly as they
// arrived (evidence), the parsed 1-s level records and environmental
// readings, rejected messages with their reason (dead letters), gateway
// status, and the per-gateway ack watermark (the highest contiguous seq
// stored, which the gateway's outbox depends on); window queries
// (Readings) and their fallback.
//
// The backends live in their own packages, wired by internal/central:
// sqlitestore is the authoritative local store (SQLite, always used);
// influxstore mirrors its records into InfluxDB with its own persisted
// cursors and retries, so an InfluxDB outage of any length loses nothing
// and catches up afterwards, and answers window queries with Flux.
// Consumers (ingest, retention, the long-term tier, the dashboard) import
// only this package.
//
// Levels are combined in the energy domain only (internal/level):
// LAeq,T = 10·lg(Σ Tᵢ·10^(Lᵢ/10) / Σ Tᵢ); LAFmax is the max of maxima and
// LAFmin the min of minima; Ln comes from merged 0.1 dB histograms.
//
// Overview of its parts: what the readings store keeps, as types and without a
// driver (batches, level and env records, dead letters, gateway statuses,
// watermarks, conflicts and skipped seqs, prune requests, the mirrors' cursor
// names and the long-term tier's hour rows), `Aggregate` (energy-correct
// buckets), the `Readings` window-query interface and `Fallback` (window
// queries from the local store while InfluxDB is down); what the consumers
// import.
package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/wire"
)

// Batch is one accepted levels or env message.
type Batch struct {
	Gateway      string
	Municipality string
	Sensor       string
	Kind         string // wire.KindLevels or wire.KindEnv
	Topic        string
	Seq          uint64
	Body         []byte // the exact signed body bytes
	Sig          []byte
	Verified     bool // the ed25519 signature verified against the registered key
	ReceivedAt   time.Time
	Device       wire.Device
	Clock        wire.Clock
	Records      []wire.Record
	Env          []wire.EnvRecord
	// Raw is the message as received (the envelope). Apply keeps it as the
	// dead letter of a seq conflict; nil: the envelope is rebuilt from Body
	// and Sig.
	Raw []byte
}

// DeadLetter is a rejected message, kept with its reason.
type DeadLetter struct {
	ID         int64     `json:"id"`
	ReceivedAt time.Time `json:"received_at"`
	Topic      string    `json:"topic"`
	Reason     string    `json:"reason"`  // wire.Reason* or "internal"
	Message    string    `json:"message"` // Portuguese, says what to fix
	Gateway    string    `json:"gateway,omitempty"`
	Seq        uint64    `json:"seq,omitempty"`
	Payload    []byte    `json:"payload"`
	Truncated  bool      `json:"truncated,omitempty"` // payload cut at wire.MaxPayload
	// Settles, on a write, says the message authenticated before it was
	// rejected (its signature verified with the registered key, or the
	// gateway is registered without require_signature and the topic, kid
	// and body name it), so its (Gateway, Seq) can be trusted: Apply
	// records the seq as settled and the ack watermark moves over it
	// (docs/wire.md, Ack). False for forged, unknown or undecodable
	// messages, which must not move anything.
	Settles bool `json:"-"`
	// Settled, when read back, says this dead letter settled its seq.
	Settled bool `json:"settled,omitempty"`
}

// GatewayStatus is what the central service knows about a gateway.
type GatewayStatus struct {
	Gateway      string       `json:"gateway"`
	Municipality string       `json:"municipality"`
	State        string       `json:"state"`                  // online | offline | "" (never reported)
	At           time.Time    `json:"at,omitzero"`            // gateway's own timestamp of the status
	ReceivedAt   time.Time    `json:"received_at,omitzero"`   // when the status arrived
	Clock        *wire.Clock  `json:"clock,omitempty"`        // last clock state (status or batch)
	Outbox       *wire.Outbox `json:"outbox,omitempty"`       // last outbox report
	Version      string       `json:"version,omitempty"`      // gateway software version
	LastSeen     time.Time    `json:"last_seen,omitzero"`     // last accepted batch
	LastSeq      uint64       `json:"last_seq,omitempty"`     // seq of the last accepted batch
	Watermark    uint64       `json:"ack_watermark"`          // highest contiguous seq stored
	PendingAbove int          `json:"pending_above,omitzero"` // stored seqs above a gap
	// Conflicts counts this gateway's records (and batches) that disagreed
	// with what was stored for the same second (or seq): kept, not applied.
	Conflicts int64 `json:"conflicts,omitzero"`
	// SkippedSeqs counts seqs the watermark moved over without them (the
	// gateway no longer had them; see SeqSkip).
	SkippedSeqs uint64 `json:"skipped_seqs,omitzero"`
}

// Write is everything one group commit stores.
type Write struct {
	Batches     []Batch
	DeadLetters []DeadLetter
	Statuses    []GatewayStatus // State/At/Clock/Outbox/Version from the status topic
	Skips       []SeqSkip       // watermarks to move over seqs that will not arrive, applied first
}

// Result reports what a Write did.
type Result struct {
	// New[i] is false when Batches[i] was a duplicate of a stored (gateway, seq).
	New []bool
	// DeadLetterNew[i] is false when DeadLetters[i] was a replay of the
	// dead letter that already settled its (gateway, seq) with the same
	// payload, and so was not stored again.
	DeadLetterNew []bool
	// Watermarks holds, for every gateway in the write, the highest
	// contiguous seq now durably stored.
	Watermarks map[string]uint64
	// RecordsIgnored counts level/env records skipped because the sensor
	// already had a record with the same start time (identical ones and
	// conflicts).
	RecordsIgnored int
	// SeqConflict[i] is true when Batches[i] was not new and its body
	// differs from the stored batch's: it was kept as a dead letter
	// (wire.ReasonSeqConflict).
	SeqConflict []bool
	// RecordConflicts are the records skipped because their sensor had a
	// different record at the same start; both are in record_conflicts.
	RecordConflicts []RecordConflict
	// Skipped holds, per gateway, the seqs a SeqSkip moved the watermark
	// over without them.
	Skipped map[string]SeqRange
	// LowestAbove holds, for every gateway in Watermarks with seqs settled
	// above a gap, the lowest of them (the gap is Watermarks+1 … it−1).
	LowestAbove map[string]uint64
}

// Record is one stored 1-s (or longer) level record.
type Record struct {
	ID       int64            `json:"-"`
	Sensor   string           `json:"sensor"`
	Gateway  string           `json:"gateway"`
	Seq      uint64           `json:"seq"`
	T        time.Time        `json:"t"`
	DurMs    int64            `json:"dur_ms"`
	LAeq     float64          `json:"laeq_db"`
	LAFmax   float64          `json:"lafmax_db"`
	LAFmin   float64          `json:"lafmin_db"`
	LCpeak   *float64         `json:"lcpeak_db,omitempty"`
	Overload bool             `json:"overload,omitempty"`
	Grade    string           `json:"grade"`
	Synced   bool             `json:"clock_synced"`
	Hist     *level.Histogram `json:"-"`
}

// EnvRecord is one stored environmental reading (wire.KindEnv). A quantity
// the sensor did not report is nil.
type EnvRecord struct {
	ID           int64     `json:"-"`
	Sensor       string    `json:"sensor"`
	Gateway      string    `json:"gateway"`
	Seq          uint64    `json:"seq"`
	T            time.Time `json:"t"`
	TemperatureC *float64  `json:"temperature_c,omitempty"`
	HumidityPct  *float64  `json:"humidity_pct,omitempty"`
	PressureHPa  *float64  `json:"pressure_hpa,omitempty"`
}

// Bucket is an energy-correct aggregate of the records whose start time
// falls in [Start, Start+step).
type Bucket struct {
	Start  time.Time `json:"start"`
	DurMs  int64     `json:"dur_ms"` // time covered by records
	Count  int       `json:"count"`
	LAeq   float64   `json:"laeq_db"`
	LAFmax float64   `json:"lafmax_db"`
	LAFmin float64   `json:"lafmin_db"`
	// L10, L50, L90 are present only when every record in the bucket
	// carried a histogram.
	L10 *float64 `json:"l10_db,omitempty"`
	L50 *float64 `json:"l50_db,omitempty"`
	L90 *float64 `json:"l90_db,omitempty"`
}

// DeadLetterFilter selects dead letters, newest first.
type DeadLetterFilter struct {
	Reason   string
	Gateway  string
	BeforeID int64 // page: only ids below this (0 = from the newest)
	Limit    int
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("store: closed")

// Aggregate folds records (any order) into buckets of step aligned to
// multiples of step since the Unix epoch, in time order.
func Aggregate(recs []Record, step time.Duration) []Bucket {
	if step <= 0 {
		return nil
	}
	type agg struct {
		acc     level.Accumulator
		max     float64
		min     float64
		hist    level.Histogram
		allHist bool
		n       int
		dur     int64
	}
	byStart := map[int64]*agg{}
	var starts []int64
	stepMs := step.Milliseconds()
	if stepMs <= 0 {
		stepMs = 1
	}
	for _, r := range recs {
		ms := r.T.UnixMilli()
		k := ms - ((ms%stepMs)+stepMs)%stepMs
		a := byStart[k]
		if a == nil {
			a = &agg{max: r.LAFmax, min: r.LAFmin, allHist: true}
			byStart[k] = a
			starts = append(starts, k)
		}
		a.acc.Add(r.LAeq, float64(r.DurMs))
		a.max = max(a.max, r.LAFmax)
		a.min = min(a.min, r.LAFmin)
		a.n++
		a.dur += r.DurMs
		if r.Hist == nil {
			a.allHist = false
		} else {
			a.hist.Merge(*r.Hist)
		}
	}
	slices.Sort(starts)
	out := make([]Bucket, 0, len(starts))
	for _, k := range starts {
		a := byStart[k]
		leq, _ := a.acc.Leq()
		b := Bucket{Start: time.UnixMilli(k).UTC(), DurMs: a.dur, Count: a.n, LAeq: leq, LAFmax: a.max, LAFmin: a.min}
		if a.allHist {
			for _, p := range []struct {
				n   float64
				dst **float64
			}{{10, &b.L10}, {50, &b.L50}, {90, &b.L90}} {
				if v, ok := a.hist.Percentile(p.n); ok {
					*p.dst = &v
				}
			}
		}
		out = append(out, b)
	}
	return out
}

// Readings answers window queries; SQLite and InfluxDB implement it.
type Readings interface {
	Records(ctx context.Context, sensor string, from, to time.Time, limit int) ([]Record, error)
	Buckets(ctx context.Context, sensor string, from, to time.Time, step time.Duration) ([]Bucket, error)
}
