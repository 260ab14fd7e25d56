// Package retention deletes readings older than the configured retention
// from the central service's readings store (`sossego central
// --retain-days`), keeping what an alert rests on: every exceedance
// alert's span of records, with a margin, stays — readings and the signed
// batch bodies that are the evidence behind a notice or an auto de
// infração — and so does anything the InfluxDB mirror has not written yet.
// Dead letters older than the retention go too, except those that settled
// a seq (docs/wire.md, Ack). Off by default: nothing is ever deleted
// unless an operator sets a retention.
//
// Overview of its parts: `--retain-days` (default 90): hourly passes deleting
// old batches, their readings and dead letters from the readings store,
// keeping every alert's span ± 1 day while its case is open and
// `--evidence-years` after it closed (`Expiry`), and anything InfluxDB or the
// long-term tier has not received (`sqlitestore`'s `PruneOldest` does the
// chunked deletes).
package retention

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/internal/store"
)

// EvidenceMargin is kept on each side of an alert's span: the readings
// around an exceedance that its chart and evidence package show (the
// notice workflow uses 10 minutes) and a day of context.
const EvidenceMargin = 24 * time.Hour

// Store is what retention needs of the readings store.
type Store interface {
	PruneOldest(ctx context.Context, p store.Prune) (store.PruneResult, error)
}

// Span is a stretch of one sensor's records an alert rests on; a zero From
// or To is open on that side.
type Span struct {
	Sensor   string
	From, To time.Time
	// Until, when set, ends the protection: from then on the span's
	// records are pruned like any others (the alert's case closed and its
	// legal retention ran out; see Expiry). Zero: kept for good.
	Until time.Time
}

// DefaultEvidenceRetention is how long the records a closed case rests on
// stay after it closed: five years, the usual prescription of a municipal
// fine.
const DefaultEvidenceRetention = 5 * 365 * 24 * time.Hour

// Case is what Expiry needs of an alert's case: whether it is still open
// and when it closed.
type Case struct {
	Exists   bool // a document (notice, auto, constatação) was drafted for the alert
	Open     bool // some document of it is not in a final state
	ClosedAt time.Time
}

// Expiry is when an alert's span stops being protected: never while the
// alert is open or its case is; legal after the case closed, or after the
// alert ended when no case was ever opened from it.
func Expiry(alertEnd time.Time, c Case, legal time.Duration) time.Time {
	switch {
	case alertEnd.IsZero() || c.Exists && c.Open:
		return time.Time{}
	case c.Exists && !c.ClosedAt.IsZero():
		return latestOf(c.ClosedAt, alertEnd).Add(legal)
	}
	return alertEnd.Add(legal)
}

func latestOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Options configures a Pruner.
type Options struct {
	Store Store
	// Spans lists every alert's span (read again at each pass).
	Spans func(ctx context.Context) ([]Span, error)
	// Mirror, when the InfluxDB mirror runs, returns its cursors (level and
	// env record ids written to InfluxDB); nil without a mirror.
	Mirror func(ctx context.Context) (levels, env int64, err error)
	// Followers return the level-record cursors of the stores that fold
	// the readings in (the long-term tier): a batch with a level record
	// above the lowest cursor is kept until every follower has passed it.
	Followers []func(ctx context.Context) (int64, error)
	Retain    time.Duration // > 0
	Margin    time.Duration // around each span; default EvidenceMargin
	Every     time.Duration // between passes; default 1 h
	Delay     time.Duration // before the first pass; default 1 min
	Pause     time.Duration // between two chunks of a pass, so ingest goes first; default 20 ms
	Chunk     int           // batches per chunk; default 500
	Now       func() time.Time
	Log       *slog.Logger
	// Deleted counts what passes delete, by kind (batches, levels, env,
	// dead_letters); optional.
	Deleted *prometheus.CounterVec
}

// Pruner runs retention passes.
type Pruner struct {
	o Options
	// Where the next pass starts: every batch up to from and every dead
	// letter up to deadFrom was deleted or is kept for good (an alert's
	// window, a seq it settled), so passes do not read them again; record
	// conflicts up to conflictFrom likewise. Kept in memory: the first pass
	// after a start reads from the beginning, and so does the first pass
	// after a span's protection ended.
	from, deadFrom, conflictFrom int64
	lastPass                     time.Time
}

// New returns a Pruner; o.Retain must be positive.
func New(o Options) *Pruner {
	if o.Margin <= 0 {
		o.Margin = EvidenceMargin
	}
	if o.Every <= 0 {
		o.Every = time.Hour
	}
	if o.Delay <= 0 {
		o.Delay = time.Minute
	}
	if o.Pause <= 0 {
		o.Pause = 20 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Pruner{o: o}
}

// Protect returns the predicate a prune pass keeps batches by: true when a
// sensor's records over [from, to) come within margin of one of its spans.
func Protect(spans []Span, margin time.Duration) func(sensor string, from, to time.Time) bool {
	by := map[string][]Span{}
	for _, s := range spans {
		by[s.Sensor] = append(by[s.Sensor], s)
	}
	return func(sensor string, from, to time.Time) bool {
		for _, s := range by[sensor] {
			if (s.To.IsZero() || from.Before(s.To.Add(margin))) && (s.From.IsZero() || s.From.Add(-margin).Before(to)) {
				return true
			}
		}
		return false
	}
}

// Totals is what one pass deleted and kept.
type Totals struct {
	Before                            time.Time
	Batches, Levels, Env, DeadLetters int64
	Conflicts                         int64 // record conflicts (store.RecordConflict)
	Kept                              int64
}

// Pass deletes, chunk by chunk, what is older than the retention and not
// protected. Passes must not run concurrently (Run runs them one by one):
// each starts where the previous one decided everything.
func (p *Pruner) Pass(ctx context.Context) (Totals, error) {
	now := p.o.Now()
	tot := Totals{Before: now.Add(-p.o.Retain)}
	all, err := p.o.Spans(ctx)
	if err != nil {
		return tot, fmt.Errorf("retention: alert spans: %w", err)
	}
	// Spans whose protection ended are left out; one that ended since the
	// last pass makes this pass read from the beginning again (it kept
	// batches that earlier passes took as kept for good).
	spans := all[:0:0]
	for _, sp := range all {
		if sp.Until.IsZero() || sp.Until.After(now) {
			spans = append(spans, sp)
		} else if sp.Until.After(p.lastPass) {
			p.from, p.conflictFrom = 0, 0
		}
	}
	p.lastPass = now
	pr := store.Prune{Before: tot.Before, Keep: Protect(spans, p.o.Margin), Limit: p.o.Chunk,
		After: p.from, AfterDeadLetter: p.deadFrom, AfterConflict: p.conflictFrom}
	if p.o.Mirror != nil {
		lv, env, err := p.o.Mirror(ctx)
		if err != nil {
			return tot, fmt.Errorf("retention: InfluxDB mirror cursors: %w", err)
		}
		pr.Mirror, pr.MirroredLevelID, pr.MirroredEnvID = true, lv, env
	}
	for _, f := range p.o.Followers {
		lv, err := f(ctx)
		if err != nil {
			return tot, fmt.Errorf("retention: long-term tier cursor: %w", err)
		}
		if !pr.Mirror {
			// Only the level records are followed: env records go by age.
			pr.Mirror, pr.MirroredLevelID, pr.MirroredEnvID = true, lv, math.MaxInt64
		}
		pr.MirroredLevelID = min(pr.MirroredLevelID, lv)
	}
	decided := true // every batch examined so far in this pass decided for good
	for {
		r, err := p.o.Store.PruneOldest(ctx, pr)
		if err != nil {
			return tot, fmt.Errorf("retention: %w", err)
		}
		if decided {
			p.from, decided = r.Decided, r.Decided == r.Next
		}
		p.deadFrom, p.conflictFrom = r.NextDeadLetter, r.NextConflict
		tot.Batches += r.Batches
		tot.Levels += r.Levels
		tot.Env += r.Env
		tot.DeadLetters += r.DeadLetters
		tot.Conflicts += r.Conflicts
		tot.Kept += r.Kept
		if p.o.Deleted != nil {
			for kind, n := range map[string]int64{"batches": r.Batches, "levels": r.Levels, "env": r.Env, "dead_letters": r.DeadLetters,
				"conflicts": r.Conflicts} {
				p.o.Deleted.WithLabelValues(kind).Add(float64(n))
			}
		}
		if r.Done {
			return tot, nil
		}
		pr.After, pr.AfterDeadLetter, pr.AfterConflict = r.Next, r.NextDeadLetter, r.NextConflict
		select {
		case <-ctx.Done():
			return tot, ctx.Err()
		case <-time.After(p.o.Pause):
		}
	}
}

// Run passes after Delay and then every Every until ctx ends. A failed pass
// is logged and tried again at the next one.
func (p *Pruner) Run(ctx context.Context) error {
	wait := p.o.Delay
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = p.o.Every
		t, err := p.Pass(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			p.o.Log.Error("limpeza por retenção interrompida por erro; tenta de novo na próxima passada",
				"erro", err, "proxima_em", p.o.Every)
		case t.Batches+t.DeadLetters+t.Conflicts > 0:
			p.o.Log.Info("limpeza por retenção: leituras antigas apagadas", "anteriores_a", t.Before.Format(time.RFC3339),
				"lotes", t.Batches, "leituras", t.Levels, "ambientais", t.Env, "cartas_mortas", t.DeadLetters, "conflitos", t.Conflicts,
				"lotes_mantidos", t.Kept)
		}
	}
}
