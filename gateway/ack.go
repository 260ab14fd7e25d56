package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sossego/sossego/internal/wire"
)

// OnConnect is called by the transport once connected and subscribed to
// the ack topic.
func (g *Gateway) OnConnect() {
	g.connGen.Add(1)
	g.connected.Store(true)
	g.poke()
}

// OnConnectionLost is called by the transport when the connection drops.
func (g *Gateway) OnConnectionLost(error) {
	g.connected.Store(false)
	g.poke()
}

// HandleAck takes an ack payload from the transport. Malformed acks and
// acks for another gateway are counted and ignored.
func (g *Gateway) HandleAck(payload []byte) {
	a, err := ParseAck(payload)
	if err != nil || a.Gateway != g.opts.Gateway {
		g.badAcks.Add(1)
		return
	}
	g.watchRegression(a.Seq)
	for {
		cur := g.ackSeq.Load()
		if a.Seq <= cur || g.ackSeq.CompareAndSwap(cur, a.Seq) {
			break
		}
	}
	// The central service acks after every commit holding a batch of this
	// gateway; the same ack a third time in a row means batches above it
	// arrive while the next one does not — lost between this gateway and the
	// central service although the broker PUBACKed it (e.g. published while
	// the central service was not yet subscribed again after a broker
	// restart). Like TCP's fast retransmit, resend from there at once
	// instead of after AckTimeout; once, until everything sent by then is
	// acked.
	g.dupMu.Lock()
	switch {
	case a.Seq == g.dupVal:
		g.dupCount++
	case a.Seq > g.dupVal:
		g.dupVal, g.dupCount = a.Seq, 1
	}
	trigger := a.Seq == g.dupVal && g.dupCount == fastResendAcks && a.Seq >= g.recoverTo.Load()
	g.dupMu.Unlock()
	if trigger {
		g.fastResend.Store(a.Seq)
	}
	g.poke()
}

// fastResendAcks is how many times in a row the same ack must come for a
// fast resend (HandleAck).
const fastResendAcks = 3

// regressAcks is how many acks in a row below the watermark already
// applied raise the alarm: one stale ack redelivered after a reconnect is
// not a regression.
const regressAcks = 3

// watchRegression notices acks below the highest one seen (or applied at
// start): the central service's data went back to an older state (restored
// from a backup). The gateway never deletes anything on a lower ack; it
// keeps sending and replaying what is unacked, counts such acks
// (Status.Outbox.AckRegressions), raises AckRegressed after regressAcks of
// them in a row and clears it once an ack reaches the watermark again.
func (g *Gateway) watchRegression(seq uint64) {
	high := g.ackSeq.Load()
	if seq >= high {
		g.lowRun.Store(0)
		if g.ackRegressed.CompareAndSwap(true, false) {
			g.log.Info("o ack do serviço central voltou ao nível já confirmado", "ack", seq)
			g.poke()
		}
		return
	}
	g.lowAcks.Add(1)
	if g.lowRun.Add(1) >= regressAcks && g.ackRegressed.CompareAndSwap(false, true) {
		g.log.Warn("o serviço central confirma seqs abaixo do que já tinha confirmado (dados restaurados de um backup antigo?); "+
			"nada é apagado por isso e os lotes pendentes continuam sendo enviados",
			"ack", seq, "confirmado_antes", high, "lotes_perdidos_no_central", high-seq)
		g.poke()
	}
}

// ParseAck decodes an ack strictly: known fields only, v = 1, a gateway id
// and a seq ≥ 1.
func ParseAck(payload []byte) (wire.Ack, error) {
	var a wire.Ack
	if len(payload) > 4096 {
		return a, errors.New("gateway: ack too large")
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return wire.Ack{}, fmt.Errorf("gateway: ack: %w", err)
	}
	if dec.More() {
		return wire.Ack{}, errors.New("gateway: ack: data after the object")
	}
	if a.V != wire.Version || !wire.ValidID(a.Gateway) || a.Seq == 0 {
		return wire.Ack{}, fmt.Errorf("gateway: ack: v=%d gateway=%q seq=%d", a.V, a.Gateway, a.Seq)
	}
	return a, nil
}
