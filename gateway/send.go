package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sossego/sossego/internal/wire"
)

// Status is the retained status the gateway publishes now.
func (g *Gateway) Status() wire.Status {
	clk := g.currentClock()
	ob := g.box.Stats()
	ob.Memory = int(g.memRecords.Load())
	if ob.Memory > 0 {
		ob.Full = true
	}
	ob.AckRegressed = g.ackRegressed.Load()
	ob.AckRegressions = g.lowAcks.Load()
	return wire.Status{V: wire.Version, State: "online", At: g.now().UTC().Truncate(time.Millisecond),
		Clock: &clk, Outbox: &ob, Version: g.opts.Version}
}

// alarms is the part of the status whose change is published at once.
func (g *Gateway) alarms() wire.Outbox {
	st := g.Status().Outbox
	return wire.Outbox{Full: st.Full, StorageError: st.StorageError, AckRegressed: st.AckRegressed,
		Memory: min(st.Memory, 1)}
}

func (g *Gateway) publishStatus(ctx context.Context) error {
	payload, err := json.Marshal(g.Status())
	if err != nil {
		return fmt.Errorf("gateway: status: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, g.opts.PublishTimeout)
	defer cancel()
	return g.pub.Publish(pctx, g.statusTopic, payload, true)
}

// send publishes stored batches in seq order, no faster than ReplayRate and
// no more than Window ahead of the central service's ack; it replays from
// the last ack after every reconnect and after AckTimeout without progress.
func (g *Gateway) send(ctx context.Context) error {
	house := time.NewTicker(time.Second)
	defer house.Stop()
	interval := time.Duration(float64(time.Second) / g.opts.ReplayRate)
	ss := &sendState{lastProgress: g.now()}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-g.wake:
		case <-house.C:
		}
		now := g.now()
		// 1. Apply the newest ack.
		if err := g.applyAck(ctx, ss, now); err != nil {
			return err
		}
		g.retryMemory(context.WithoutCancel(ctx))
		if ss.cursor < g.box.Acked() {
			ss.cursor = g.box.Acked()
		}
		if !g.connected.Load() {
			continue
		}
		// 2. New connection: announce, then replay everything unacked.
		if !g.announce(ctx, ss, now) {
			continue
		}
		// 3. Resend after a repeated ack (HandleAck), or when the central
		// service has not moved for AckTimeout.
		g.rewind(ss, now)
		// 4. Publish within the window.
		if err := g.publishWindow(ctx, &ss.cursor, &ss.nextSend, interval); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			g.log.Warn("publicação falhou; nova tentativa em seguida", "seq", ss.cursor+1, "erro", err)
		}
	}
}

// sendState is what the send loop remembers between rounds.
type sendState struct {
	gen          uint64 // the connection the cursor belongs to
	cursor       uint64 // highest seq published on this connection
	nextSend     time.Time
	lastProgress time.Time
	lastStatus   time.Time
	lastAlarm    wire.Outbox
	statusDirty  bool
}

// applyAck removes from the outbox the batches up to the newest ack. An
// ack ahead of every batch sent (the state folder lost or copied)
// renumbers the pending batches; a storage failure is retried on the next
// round. Only other errors end the loop.
func (g *Gateway) applyAck(ctx context.Context, ss *sendState, now time.Time) error {
	a := g.ackSeq.Load()
	if a <= g.box.Acked() {
		return nil
	}
	n, err := g.box.Ack(context.WithoutCancel(ctx), a)
	var ahead *AckAheadError
	switch {
	case errors.As(err, &ahead):
		g.log.Error("o serviço central confirmou seqs que este gateway nunca enviou (pasta de estado perdida ou copiada?); renumerando os lotes pendentes",
			"ack", ahead.Ack, "last_seq", ahead.Last)
		if err := g.box.Renumber(context.WithoutCancel(ctx), ahead.Ack, g.reseal); err != nil {
			return err
		}
		ss.cursor = g.box.Acked()
	case errors.Is(err, ErrStorage):
		// Retried with the next ack or tick; batches stay until then.
		g.log.Warn("ack não pôde ser gravado na fila (outbox); nova tentativa em seguida", "ack", a, "erro", err)
	case err != nil:
		return err
	default:
		g.log.Debug("ack", "seq", a, "removed", n)
		g.retryMemory(context.WithoutCancel(ctx))
	}
	ss.lastProgress = now
	return nil
}

// announce starts the replay from the ack on a new connection and
// publishes the status when it changed or is due; false when that publish
// failed (the round ends there).
func (g *Gateway) announce(ctx context.Context, ss *sendState, now time.Time) bool {
	if cg := g.connGen.Load(); cg != ss.gen {
		ss.gen = cg
		ss.cursor = g.box.Acked()
		ss.lastProgress = now
		ss.statusDirty = true
	}
	if al := g.alarms(); al != ss.lastAlarm {
		ss.lastAlarm, ss.statusDirty = al, true
	}
	if ss.statusDirty || now.Sub(ss.lastStatus) >= g.opts.StatusInterval {
		if err := g.publishStatus(ctx); err != nil {
			g.log.Warn("publicação do status falhou", "erro", err)
			return false
		}
		ss.lastStatus, ss.statusDirty = now, false
	}
	return true
}

// rewind moves the cursor back to the ack after a repeated ack, or when
// the central service has not moved for AckTimeout, so that the batches
// above it are sent again.
func (g *Gateway) rewind(ss *sendState, now time.Time) {
	if fr := g.fastResend.Swap(0); fr != 0 && fr == g.box.Acked() && ss.cursor > fr {
		g.log.Info("ack repetido: lotes acima dele chegam e o seguinte não; reenviando a partir dele", "acked", fr, "sent", ss.cursor)
		g.recoverTo.Store(ss.cursor)
		ss.cursor = fr
		ss.lastProgress = now
	}
	if ss.cursor > g.box.Acked() && now.Sub(ss.lastProgress) >= g.opts.AckTimeout {
		g.log.Info("sem avanço de ack; reenviando os lotes não confirmados", "acked", g.box.Acked(), "sent", ss.cursor)
		ss.cursor = g.box.Acked()
		ss.lastProgress = now
	}
}

func (g *Gateway) publishWindow(ctx context.Context, cursor *uint64, nextSend *time.Time, interval time.Duration) error {
	start, inFlight := g.publisher()
	fl := &flights{ctx: ctx, cursor: cursor}
	for g.connected.Load() {
		inflight := int(*cursor - g.box.Acked())
		room := g.opts.Window - inflight
		if room <= 0 {
			return nil
		}
		entries, err := g.box.After(ctx, *cursor, min(room, 64))
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			return nil
		}
		for _, e := range entries {
			// An ack that arrived since: return so that Run applies it to
			// the outbox now, rather than after a whole window (at the
			// replay rate a window of 100 is seconds of acked batches that
			// a power cut would have resent).
			if g.ackSeq.Load() > g.box.Acked() || g.fastResend.Load() != 0 {
				return fl.settle(0)
			}
			if err := waitUntil(ctx, *nextSend); err != nil {
				return err
			}
			*nextSend = time.Now().Add(interval)
			fl.q = append(fl.q, flight{seq: e.Seq, wait: start(e.Topic, e.Payload), deadline: time.Now().Add(g.opts.PublishTimeout)})
			if err := fl.settle(inFlight - 1); err != nil {
				return err
			}
		}
		if err := fl.settle(0); err != nil {
			return err
		}
	}
	return nil
}

// publisher returns how to start a publish and how many may be in flight.
// Without an AsyncPublisher a publish waits for its PUBACK when it is
// settled: one in flight.
func (g *Gateway) publisher() (start func(topic string, payload []byte) func(context.Context) error, inFlight int) {
	if ap, ok := g.pub.(AsyncPublisher); ok {
		return func(topic string, payload []byte) func(context.Context) error {
			return ap.PublishAsync(topic, payload, false)
		}, g.opts.InFlight
	}
	return func(topic string, payload []byte) func(context.Context) error {
		return func(ctx context.Context) error { return g.pub.Publish(ctx, topic, payload, false) }
	}, 1
}

// waitUntil waits until t (the replay rate's next slot) or ctx ends.
func waitUntil(ctx context.Context, t time.Time) error {
	if d := time.Until(t); d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
	return nil
}

// flight is a publish handed to the connection and not yet PUBACKed.
type flight struct {
	seq      uint64
	wait     func(context.Context) error
	deadline time.Time
}

// flights are the publishes in flight, oldest first. The cursor moves only
// over PUBACKed ones, in order; after a failure the rest are abandoned and
// republished from the cursor (the central service ignores the
// duplicates).
type flights struct {
	ctx    context.Context
	cursor *uint64
	q      []flight
}

// settle waits for the oldest publishes until at most keep are in flight.
func (fl *flights) settle(keep int) error {
	for len(fl.q) > keep {
		f := fl.q[0]
		pctx, cancel := context.WithDeadline(fl.ctx, f.deadline)
		err := f.wait(pctx)
		cancel()
		if err != nil {
			fl.q = nil
			return err
		}
		*fl.cursor, fl.q = f.seq, fl.q[1:]
	}
	return nil
}
