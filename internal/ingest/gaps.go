package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// Gaps the gateway cannot fill. The ack is the highest contiguous seq
// stored; a gateway drops a batch only once an ack covers it, and stops
// publishing once Window batches await one. A data folder restored from an
// older backup (or rebuilt) therefore stalled every gateway for good: the
// store's watermark is below seqs the gateway was acked by the store's
// later life and deleted, so nothing ever fills the gap and the ack never
// moves.
//
// A gap that the gateway can fill does not last: it replays every unacked
// batch, in seq order from its own ack, after each reconnect and after
// ack_timeout (default 30 s) without ack progress, so a lost batch comes
// again within about that time, before the later ones. A gap is taken as
// unfillable — and the watermark moved over it, with a pt-BR log line, a
// metric, an Event and the seqs recorded (store.SeqSkip) — when, for
// GapTimeout, it has stayed where it is while the gateway replayed the
// seqs above it in at least two rounds GapTimeout/2 apart (duplicates of
// stored seqs above the gap: its replays start above the gap, so it holds
// nothing below), with nothing of the gateway refused meanwhile (no quota
// refusal, no rejection that did not settle its seq). A broker redelivering
// unacknowledged messages to the central service after a reconnect gives
// one round, not two.

// DefaultGapTimeout is Options.GapTimeout's default: four of the gateway's
// default ack_timeout.
const DefaultGapTimeout = 2 * time.Minute

// gapState is what the writer knows of one gateway's gap.
type gapState struct {
	wm, low uint64    // the watermark and the lowest seq stored above it
	since   time.Time // when this gap was first seen (or last disturbed)
	round1  time.Time // first replay round seen after since + GapTimeout/2
}

// trackGaps updates the gateways' gaps after a commit and returns the
// skips that are due.
func (in *Ingester) trackGaps(now time.Time, w store.Write, res store.Result) []store.SeqSkip {
	for _, d := range w.DeadLetters {
		if d.Gateway != "" && !d.Settles {
			if g := in.gaps[d.Gateway]; g != nil {
				g.since, g.round1 = now, time.Time{} // something of the gateway did not settle: wait again
			}
		}
	}
	var skips []store.SeqSkip
	for gw, wm := range res.Watermarks {
		low := res.LowestAbove[gw]
		if low == 0 {
			delete(in.gaps, gw)
			continue
		}
		g := in.gaps[gw]
		if g == nil || g.wm != wm || g.low != low {
			in.gaps[gw] = &gapState{wm: wm, low: low, since: now}
			continue
		}
		replayed := false
		for j, b := range w.Batches {
			if b.Gateway == gw && !res.New[j] && !res.SeqConflict[j] && b.Seq >= low {
				replayed = true
				break
			}
		}
		if !replayed || in.adm.refusedSince(gw, g.since) {
			continue
		}
		switch half := in.o.GapTimeout / 2; {
		case now.Sub(g.since) < half:
		case g.round1.IsZero():
			g.round1 = now
		case now.Sub(g.round1) >= half && now.Sub(g.since) >= in.o.GapTimeout:
			skips = append(skips, store.SeqSkip{Gateway: gw, Upto: low - 1, Reason: fmt.Sprintf(
				"o gateway reenvia a partir do seq %d há %s sem nunca enviar %d…%d: ele já os apagou (confirmados por um estado anterior deste banco, restaurado de cópia?)",
				low, now.Sub(g.since).Round(time.Second), wm+1, low-1)})
			delete(in.gaps, gw)
		}
	}
	return skips
}

// applySkips stores the skips due and reports them; it returns the new
// watermarks (nil on failure: the skips are retried after the next
// commit).
func (in *Ingester) applySkips(ctx context.Context, skips []store.SeqSkip, now time.Time) (store.Result, []Event) {
	res, err := in.o.Store.Apply(ctx, store.Write{Skips: skips})
	if err != nil {
		in.o.Log.Error("falha ao gravar o salto de seqs; nova tentativa no próximo lote", "erro", err)
		return store.Result{}, nil
	}
	var evs []Event
	for gw, r := range res.Skipped {
		n := r.Last - r.First + 1
		in.o.Metrics.seqsSkipped.Add(float64(n))
		in.o.Log.Warn("seqs que o gateway não tem mais foram saltados; os lotes acima deles voltam a ser confirmados (pasta de dados restaurada de cópia antiga?)",
			"gateway", gw, "de", r.First, "ate", r.Last, "quantos", n, "novo_ack", res.Watermarks[gw])
		evs = append(evs, Event{Kind: EventSeqSkip, Gateway: gw, Seq: r.Last, At: now,
			Message: fmt.Sprintf("seqs %d a %d do gateway %s nunca chegaram e o gateway não os tem mais; a confirmação (ack) passou por cima deles e segue em %d",
				r.First, r.Last, gw, res.Watermarks[gw])})
	}
	return res, evs
}

// Event is something ingest did that an operator should see: a conflict
// kept instead of applied, seqs skipped, a gateway over its quota. Events
// reach observers that implement EventObserver, after the commit that
// recorded them (the store keeps them too: record_conflicts, seq-conflict
// and quota dead letters, seq_skips).
type Event struct {
	Kind         string // EventRecordConflict, EventSeqConflict, EventSeqSkip, EventQuota
	Gateway      string
	Municipality string
	Sensor       string
	Seq          uint64
	T            time.Time // the record's start (record conflicts)
	At           time.Time
	Message      string // Portuguese, for the operator
}

// Event kinds.
const (
	EventRecordConflict = "record_conflict"
	EventSeqConflict    = wire.ReasonSeqConflict
	EventSeqSkip        = "seq_skip"
	EventQuota          = wire.ReasonQuota
)

// EventObserver optionally receives Events (on the observers' goroutine,
// in commit order; it must return quickly).
type EventObserver interface {
	ObserveEvent(ctx context.Context, e Event)
}
