package ingest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// write is the single writer: it group-commits whatever is waiting, then
// acknowledges and notifies observers.
func (in *Ingester) write(ctx context.Context) error {
	// The observers (alerts, dashboard) and the broker-level
	// acknowledgements of a group run on their own goroutine while the next
	// group is stored: the single writer is the ingest's narrowest point,
	// and it spent a fifth of its time there. Groups reach the observers
	// in commit order; Run returns after the last committed group was
	// observed.
	committed := make(chan committedGroup, 1)
	observed := make(chan struct{})
	go func() {
		defer close(observed)
		for c := range committed {
			in.observe(ctx, c)
		}
	}()
	defer func() {
		close(committed)
		<-observed
	}()
	buf := make([]item, 0, in.o.MaxGroup)
	for {
		buf = buf[:0]
		select {
		case <-ctx.Done():
			return nil
		case it := <-in.items:
			buf = append(buf, it)
		}
	drain:
		for len(buf) < in.o.MaxGroup {
			select {
			case it := <-in.items:
				buf = append(buf, it)
			default:
				break drain
			}
		}
		// The group goes on to the observers while buf fills again: a copy
		// of its size (a fresh MaxGroup-sized slice per commit was ~150 KB
		// of garbage per message at paced rates, one message per commit).
		group := slices.Clone(buf)
		clear(buf)
		c, err := in.commit(ctx, group)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		committed <- c
	}
}

// committedGroup is a stored group on its way to the observers.
type committedGroup struct {
	group  []item
	w      store.Write
	idx    []int // group index of each batch in w.Batches
	res    store.Result
	events []Event
}

// commit stores a group, sends the application-level acks and counts
// what was stored; observe does the rest.
func (in *Ingester) commit(ctx context.Context, group []item) (committedGroup, error) {
	in.budgetDeadLetters(group, in.o.Now())
	w, idx := groupWrite(group)
	res, err := in.apply(ctx, w)
	if err != nil {
		return committedGroup{}, err
	}
	now := in.o.Now()
	for _, it := range group {
		in.o.Metrics.receiveToStore.Observe(now.Sub(it.msg.ReceivedAt).Seconds())
	}
	events := in.conflictEvents(w, res, now)
	if skips := in.trackGaps(now, w, res); len(skips) > 0 {
		r2, evs := in.applySkips(ctx, skips, now)
		for gw, v := range r2.Watermarks {
			res.Watermarks[gw] = v
		}
		events = append(events, evs...)
	}
	in.ack(group, w, res, now)
	in.countCommitted(w, res)
	return committedGroup{group: group, w: w, idx: idx, res: res, events: events}, nil
}

// groupWrite gathers a group's batches, dead letters and statuses into one
// store write; idx is the group index of each batch in w.Batches.
func groupWrite(group []item) (w store.Write, idx []int) {
	for i, it := range group {
		switch {
		case it.batch != nil:
			w.Batches = append(w.Batches, *it.batch)
			idx = append(idx, i)
		case it.dead != nil:
			w.DeadLetters = append(w.DeadLetters, *it.dead)
		case it.status != nil:
			w.Statuses = append(w.Statuses, *it.status)
		}
	}
	return w, idx
}

// apply stores w, retrying with a growing backoff (up to 5 s) until the
// store takes it or ctx ends: nothing is acked before it is stored.
func (in *Ingester) apply(ctx context.Context, w store.Write) (store.Result, error) {
	backoff := 50 * time.Millisecond
	for {
		start := time.Now()
		res, err := in.o.Store.Apply(ctx, w)
		if err == nil {
			in.o.Metrics.storeLatency.Observe(time.Since(start).Seconds())
			return res, nil
		}
		in.o.Metrics.storeErrors.Inc()
		if ctx.Err() != nil {
			return store.Result{}, ctx.Err()
		}
		in.o.Log.Error("falha ao gravar; nada foi confirmado, nova tentativa", "erro", err, "espera", backoff)
		select {
		case <-ctx.Done():
			return store.Result{}, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// countCommitted counts a commit's messages by kind and outcome (stored,
// duplicate, conflict, rejected) and the records it stored.
func (in *Ingester) countCommitted(w store.Write, res store.Result) {
	stored := -res.RecordsIgnored
	for j, b := range w.Batches {
		if res.SeqConflict[j] {
			in.o.Metrics.messages.WithLabelValues(b.Kind, "conflict").Inc()
			continue
		}
		if !res.New[j] {
			in.o.Metrics.messages.WithLabelValues(b.Kind, "duplicate").Inc()
			continue
		}
		in.o.Metrics.messages.WithLabelValues(b.Kind, "stored").Inc()
		stored += len(b.Records) + len(b.Env)
	}
	if stored > 0 {
		in.o.Metrics.records.Add(float64(stored))
	}
	for j := range w.DeadLetters {
		if res.DeadLetterNew[j] {
			in.o.Metrics.messages.WithLabelValues("any", "rejected").Inc()
		} else { // a replay of the rejection that settled its seq
			in.o.Metrics.messages.WithLabelValues("any", "duplicate").Inc()
		}
	}
	for range w.Statuses {
		in.o.Metrics.messages.WithLabelValues(wire.KindStatus, "stored").Inc()
	}
}

// conflictEvents counts, logs and reports what a commit kept instead of
// applying: batches under a stored seq with another body, records for a
// second the sensor already had with other values, quota samples.
func (in *Ingester) conflictEvents(w store.Write, res store.Result, now time.Time) []Event {
	var evs []Event
	for j, b := range w.Batches {
		if !res.SeqConflict[j] {
			continue
		}
		in.o.Metrics.seqConflicts.Inc()
		in.o.Log.Error("lote assinado com um seq já gravado e corpo diferente; o primeiro continua valendo, os dois ficam guardados (chave do gateway comprometida?)",
			"gateway", b.Gateway, "seq", b.Seq, "sensor", b.Sensor)
		evs = append(evs, Event{Kind: EventSeqConflict, Gateway: b.Gateway, Municipality: b.Municipality, Sensor: b.Sensor,
			Seq: b.Seq, At: now, Message: fmt.Sprintf("o gateway %s enviou outro lote com o seq %d, com conteúdo diferente do já gravado; "+
				"o primeiro continua valendo e o segundo está nas mensagens rejeitadas (seq_conflict)", b.Gateway, b.Seq)})
	}
	type key struct{ gw, sensor, kind string }
	type span struct {
		n           int
		first, last time.Time
		seq         uint64
	}
	per := map[key]*span{}
	var order []key
	for _, c := range res.RecordConflicts {
		in.o.Metrics.recordConflicts.WithLabelValues(c.Kind).Inc()
		k := key{c.New.Gateway, c.Sensor, c.Kind}
		sp := per[k]
		if sp == nil {
			sp = &span{first: c.T, last: c.T}
			per[k] = sp
			order = append(order, k)
		}
		sp.n++
		sp.first, sp.last, sp.seq = minTime(sp.first, c.T), maxTime(sp.last, c.T), c.New.Seq
	}
	for _, k := range order {
		sp := per[k]
		in.o.Log.Warn("registros para segundos que o sensor já tinha, com valores diferentes: o gravado continua valendo, o novo fica guardado como conflito (relógio do gateway voltou?)",
			"gateway", k.gw, "sensor", k.sensor, "tipo", k.kind, "registros", sp.n,
			"de", sp.first.UTC().Format(time.RFC3339), "ate", sp.last.UTC().Format(time.RFC3339), "seq", sp.seq)
		evs = append(evs, Event{Kind: EventRecordConflict, Gateway: k.gw, Sensor: k.sensor, Seq: sp.seq, T: sp.first, At: now,
			Message: fmt.Sprintf("%d registros do sensor %s (%s a %s) chegaram de novo com valores diferentes dos já gravados; "+
				"os gravados continuam valendo e os novos ficam guardados como conflito", sp.n, k.sensor,
				sp.first.UTC().Format(time.RFC3339), sp.last.UTC().Format(time.RFC3339))})
	}
	for _, d := range w.DeadLetters {
		if d.Reason == wire.ReasonQuota {
			evs = append(evs, Event{Kind: EventQuota, Gateway: d.Gateway, At: now, Message: d.Message})
		}
	}
	return evs
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
