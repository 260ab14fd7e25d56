package ingest

import (
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// Dead letters are bounded per gateway. Whatever a gateway's credential
// sends under its quota and fails to decode or verify was kept whole: junk
// just under the quota filled the store at ~146 kB/s, ~12 GB a day per
// stolen password. Each gateway (the dead letter's gateway; "" for
// messages whose topic names none) has a byte budget per clock hour
// (Options.DeadLetterBytesPerHour). Within it, dead letters are kept as
// they come. Past it, until the next hour:
//
//   - a dead letter that settles its seq (the batch authenticated) is kept,
//     since its row moves the ack watermark, with its payload cut to
//     quotaSampleBytes;
//   - any other is kept only as a sample, one per gateway per
//     QuotaSampleEvery with its payload cut likewise; the rest are
//     counted, not stored.
//
// Every dead letter past the budget is counted
// (sossego_ingest_dead_letters_over_budget_total, by gateway and whether it
// was stored cut or dropped; Ingester.DeadLettersOverBudget per gateway),
// and the first one of a gateway in an hour is logged. Quota samples
// (reason quota) are bounded already and do not count.

// DefaultDeadLetterBytesPerHour is Options.DeadLetterBytesPerHour's
// default: room for a few hundred rejected batches of a misconfigured
// gateway an hour, kept whole; ~190 MiB a day at most per gateway.
const DefaultDeadLetterBytesPerHour = 8 << 20

// deadLetterOverhead is what a dead letter's row takes beside its payload,
// message and topic.
const deadLetterOverhead = 128

// deadBudget is every gateway's dead-letter budget for the current hour.
// Only the writer uses it.
type deadBudget struct {
	perHour int64
	hour    time.Time // start of the current hour
	gw      map[string]*gwDeadBudget
}

type gwDeadBudget struct {
	used      int64
	over      int64 // past the budget this hour
	sampledAt time.Time
}

// deadVerdict is what the budget decides about one dead letter.
type deadVerdict int

const (
	deadKeep    deadVerdict = iota // within the budget: stored whole
	deadCut                        // past it: stored with its payload cut
	deadDropped                    // past it: counted only
)

// judge decides about d (received at now) and cuts its payload when it is
// stored past the budget.
func (b *deadBudget) judge(d *store.DeadLetter, now time.Time) deadVerdict {
	if d.Reason == wire.ReasonQuota {
		return deadKeep
	}
	if h := now.Truncate(time.Hour); !h.Equal(b.hour) {
		b.hour, b.gw = h, map[string]*gwDeadBudget{}
	}
	g := b.gw[d.Gateway]
	if g == nil {
		g = &gwDeadBudget{}
		b.gw[d.Gateway] = g
	}
	cost := int64(len(d.Payload)+len(d.Message)+len(d.Topic)) + deadLetterOverhead
	if g.used+cost <= b.perHour {
		g.used += cost
		return deadKeep
	}
	g.over++
	if !d.Settles && !g.sampledAt.IsZero() && now.Sub(g.sampledAt) < QuotaSampleEvery {
		return deadDropped
	}
	if !d.Settles {
		g.sampledAt = now
	}
	if len(d.Payload) > quotaSampleBytes {
		d.Payload, d.Truncated = d.Payload[:quotaSampleBytes], true
	}
	return deadCut
}

// budgetDeadLetters applies the dead-letter budget to a group before it
// is stored: dead letters dropped leave their item with nothing to store
// (its message is still acknowledged to the broker).
func (in *Ingester) budgetDeadLetters(group []item, now time.Time) {
	for i := range group {
		d := group[i].dead
		if d == nil {
			continue
		}
		v := in.budget.judge(d, now)
		if v == deadKeep {
			continue
		}
		g := in.budget.gw[d.Gateway]
		label := "cortada"
		if v == deadDropped {
			label = "descartada"
			group[i].dead = nil
		}
		in.o.Metrics.deadOverBudget.WithLabelValues(in.metricGateway(d.Gateway), label).Inc()
		if g.over == 1 {
			in.o.Log.Warn("ingest: cota de mensagens rejeitadas do gateway esgotada nesta hora; as próximas são contadas e só amostras guardadas",
				"gateway", clipTopic(d.Gateway), "cota_bytes_por_hora", in.budget.perHour, "motivo", d.Reason)
		}
		in.deadMu.Lock()
		in.deadByGW[d.Gateway]++
		in.deadMu.Unlock()
	}
}

// metricGateway is gw as a metric label: a registered gateway's id, else
// "" (a label per invented id would let junk grow the metrics).
func (in *Ingester) metricGateway(gw string) string {
	if _, ok := in.o.Registry.Current().Gateway(gw); ok {
		return gw
	}
	return ""
}

// DeadLettersOverBudget is, per gateway, how many dead letters came past
// its hourly budget since the ingester started (stored cut or dropped).
func (in *Ingester) DeadLettersOverBudget() map[string]int64 {
	in.deadMu.Lock()
	defer in.deadMu.Unlock()
	out := make(map[string]int64, len(in.deadByGW))
	for k, v := range in.deadByGW {
		out[k] = v
	}
	return out
}
