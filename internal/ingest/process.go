package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

// item is a processed message on its way to the writer.
type item struct {
	msg    Message
	batch  *store.Batch
	dead   *store.DeadLetter
	status *store.GatewayStatus
	sensor registry.Sensor
	grade  string
	check  *wire.Check // a check message's check
	// municipality is where to ack a settling dead letter.
	municipality string
}

// Batches of signatures (signature.BatchVerifier): a worker takes the message
// it waits for and whatever else is already queued, up to maxVerifyBatch.
// Under load messages rarely queue up (an idle worker takes each at once),
// so when this worker has been taking messages faster than one per
// lingerGap it also waits up to maxLinger for the batch to reach
// lingerBatch. Below that rate (~4,000 messages/s per worker) nothing
// waits: a lone message is handled at once.
const (
	maxVerifyBatch = 64
	lingerBatch    = 16
	maxLinger      = 2 * time.Millisecond
	lingerGap      = 2 * maxLinger / lingerBatch
)

// work is one decode/verify/validate worker (see the batching constants).
func (in *Ingester) work(ctx context.Context) {
	var bv signature.BatchVerifier
	ms := make([]Message, 0, maxVerifyBatch)
	linger := time.NewTimer(maxLinger)
	linger.Stop()
	gap := time.Second // moving average of the time per message taken
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-in.queue:
			ms = append(ms[:0], m)
		}
	more:
		for len(ms) < maxVerifyBatch {
			select {
			case m := <-in.queue:
				ms = append(ms, m)
			default:
				break more
			}
		}
		if len(ms) < lingerBatch && gap <= lingerGap {
			linger.Reset(maxLinger)
		wait:
			for len(ms) < lingerBatch {
				select {
				case m := <-in.queue:
					ms = append(ms, m)
				case <-linger.C:
					break wait
				case <-ctx.Done():
					linger.Stop()
					return
				}
			}
			linger.Stop()
		}
		now := time.Now()
		gap = (3*gap + now.Sub(last)/time.Duration(len(ms))) / 4
		last = now
		in.o.Metrics.verifyBatch.Observe(float64(len(ms)))
		for _, it := range in.processAll(ms, &bv) {
			select {
			case in.items <- it:
			case <-ctx.Done():
				return
			}
		}
	}
}

// processAll decodes, authenticates and validates messages, their
// signatures verified together with bv. It never panics on input and
// yields exactly one item per message, in order.
func (in *Ingester) processAll(ms []Message, bv *signature.BatchVerifier) []item {
	ops := make([]opened, len(ms))
	idx := make([]int, len(ms))
	for i, m := range ms {
		ops[i] = in.open(m)
		idx[i] = -1
		if ops[i].verify {
			idx[i] = bv.Add(ops[i].gw.VerifyKeyAt(m.ReceivedAt), ops[i].env)
		}
	}
	verdicts := in.verifyBatch(bv)
	items := make([]item, len(ms))
	for i := range ops {
		op := &ops[i]
		verify := func() error {
			if verdicts != nil {
				return verdicts[idx[i]]
			}
			return op.gw.VerifyKeyAt(op.m.ReceivedAt).Verify(op.env)
		}
		items[i] = in.finish(op, verify)
	}
	return items
}

// verifyBatch returns bv's verdicts, or nil if verifying panicked (each
// message is then verified on its own, under finish's recover).
func (in *Ingester) verifyBatch(bv *signature.BatchVerifier) (verdicts []error) {
	defer func() {
		if r := recover(); r != nil {
			in.o.Log.Error("verificação de assinaturas em lote falhou; verificando uma a uma", "erro", r)
			verdicts = nil
		}
	}()
	return bv.Verify()
}

// opened is a message between decoding and signature verification.
type opened struct {
	it     item // the outcome, when done
	done   bool
	m      Message
	tp     wire.Topic
	env    *wire.Envelope
	b      *wire.Batch
	reg    *registry.Registry
	gw     registry.Gateway
	verify bool // the signature must be checked
}

// internalError is the dead letter for a message whose handling panicked.
func (in *Ingester) internalError(m Message, r any) item {
	return item{msg: m, dead: in.dead(m, "", 0, &wire.Error{Reason: "internal", Msg: fmt.Sprintf("erro interno ao processar a mensagem: %v", r)})}
}

// open does everything before the signature check: size, topic, status
// messages, decoding, the gateway's registration.
func (in *Ingester) open(m Message) (op opened) {
	op.m = m
	op.it.msg = m
	done := func() opened { op.done = true; return op }
	defer func() {
		if r := recover(); r != nil {
			op = opened{m: m, it: in.internalError(m, r), done: true}
		}
	}()
	if m.pre != nil {
		op.it.dead = m.pre
		return done()
	}
	if len(m.Payload) > wire.MaxPayload {
		op.it.dead = in.dead(m, "", 0, &wire.Error{Reason: wire.ReasonSize,
			Msg: fmt.Sprintf("mensagem com %d bytes excede o máximo de %d", len(m.Payload), wire.MaxPayload)})
		return done()
	}
	tp, err := wire.ParseTopic(m.Topic)
	if err != nil {
		op.it.dead = in.dead(m, "", 0, err)
		return done()
	}
	op.tp = tp
	reg := in.o.Registry.Current()
	gw, known := reg.Gateway(tp.Gateway)
	op.reg, op.gw = reg, gw
	switch tp.Kind {
	case wire.KindStatus:
		st, err := decodeStatus(m.Payload)
		if err == nil && !known {
			err = &wire.Error{Reason: wire.ReasonUnknown, Msg: fmt.Sprintf("gateway %q não está cadastrado", tp.Gateway)}
		}
		if err == nil && gw.Municipality != tp.Municipality {
			err = &wire.Error{Reason: wire.ReasonMismatch, Msg: fmt.Sprintf("gateway %q é do município %q, não %q", tp.Gateway, gw.Municipality, tp.Municipality)}
		}
		if err != nil {
			op.it.dead = in.dead(m, tp.Gateway, 0, err)
			return done()
		}
		at := st.At
		if at.IsZero() {
			at = m.ReceivedAt
		}
		op.it.status = &store.GatewayStatus{Gateway: tp.Gateway, Municipality: tp.Municipality, State: st.State, At: at,
			ReceivedAt: m.ReceivedAt, Clock: st.Clock, Outbox: st.Outbox, Version: st.Version}
		return done()
	case wire.KindAck:
		op.it.dead = in.dead(m, tp.Gateway, 0, &wire.Error{Reason: wire.ReasonTopic, Msg: "o serviço central não aceita acks"})
		return done()
	}
	env, b, err := wire.Open(m.Payload)
	if err != nil {
		op.it.dead = in.dead(m, tp.Gateway, 0, err)
		return done()
	}
	op.env, op.b = env, b
	if !known {
		op.it.dead = in.dead(m, tp.Gateway, b.Seq, &wire.Error{Reason: wire.ReasonUnknown,
			Msg: fmt.Sprintf("gateway %q não está cadastrado; inclua-o no cadastro (registry)", tp.Gateway)})
		return done()
	}
	if gw.Municipality != tp.Municipality {
		op.it.dead = in.dead(m, tp.Gateway, b.Seq, &wire.Error{Reason: wire.ReasonMismatch,
			Msg: fmt.Sprintf("gateway %q é do município %q no cadastro, mas publicou em %q", tp.Gateway, gw.Municipality, tp.Municipality)})
		return done()
	}
	op.verify = len(env.Sig) > 0 || gw.SignatureRequired()
	return op
}

// finish does everything from the signature check on (verify gives its
// verdict) and yields the message's item.
func (in *Ingester) finish(op *opened, verify func() error) (it item) {
	if op.done {
		return op.it
	}
	m, tp, env, b, gw := op.m, op.tp, op.env, op.b, op.gw
	it.msg = m
	defer func() {
		if r := recover(); r != nil {
			it = in.internalError(m, r)
		}
	}()
	verified := false
	if op.verify {
		verr := verify()
		if verr != nil && gw.SignatureRequired() {
			it.dead = in.dead(m, tp.Gateway, b.Seq, verr)
			return it
		}
		verified = verr == nil
	}
	// The batch has authenticated: its signature verified with the
	// registered key, or the gateway is registered without
	// require_signature. When the envelope and the body name the topic's
	// gateway, its (gateway, seq) can be trusted, so a rejection from here
	// on settles the seq: it is kept as a dead letter and the ack watermark
	// moves over it (docs/wire.md, Ack), or one bad batch would stall the
	// gateway's outbox for ever.
	settles := b.Seq > 0 && b.Seq <= wire.MaxSeq && env.Kid == tp.Gateway && b.Gateway == tp.Gateway
	reject := func(err error) item {
		it.dead = in.dead(m, tp.Gateway, b.Seq, err)
		if settles {
			it.dead.Settles = true
			it.municipality = tp.Municipality
		}
		return it
	}
	if err := wire.Validate(tp, env, b, m.ReceivedAt, in.o.Skew, in.o.Stale); err != nil {
		return reject(err)
	}
	if err := wire.CheckSize(len(m.Payload), b); err != nil {
		return reject(err)
	}
	sn, ok := op.reg.Sensor(tp.Sensor)
	if !ok {
		return reject(&wire.Error{Reason: wire.ReasonUnknown,
			Msg: fmt.Sprintf("sensor %q não está cadastrado; inclua-o no cadastro (registry)", tp.Sensor)})
	}
	if sn.Gateway != tp.Gateway {
		return reject(&wire.Error{Reason: wire.ReasonUnknown,
			Msg: fmt.Sprintf("sensor %q está cadastrado no gateway %q, não em %q", tp.Sensor, sn.Gateway, tp.Gateway)})
	}
	it.sensor = sn
	it.grade = worseGrade(sn.Meter.Grade, b.Device.Grade)
	it.check = b.Check
	it.batch = &store.Batch{Gateway: tp.Gateway, Municipality: tp.Municipality, Sensor: tp.Sensor, Kind: tp.Kind,
		Topic: m.Topic, Seq: b.Seq, Body: env.Body, Sig: env.Sig, Verified: verified, ReceivedAt: m.ReceivedAt,
		Device: b.Device, Clock: b.Clock, Records: b.Records, Env: b.Env, Raw: m.Payload}
	return it
}

func worseGrade(a, b string) string {
	rank := map[string]int{"class1": 1, "class2": 2, "screening": 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func decodeStatus(p []byte) (*wire.Status, error) {
	var st wire.Status
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, &wire.Error{Reason: wire.ReasonJSON, Msg: fmt.Sprintf("status JSON inválido: %v", err)}
	}
	if dec.More() {
		return nil, &wire.Error{Reason: wire.ReasonJSON, Msg: "status JSON inválido: dados depois do objeto"}
	}
	if st.V != wire.Version {
		return nil, &wire.Error{Reason: wire.ReasonSchema, Msg: fmt.Sprintf("status com v=%d não suportado (esperado %d)", st.V, wire.Version)}
	}
	if st.State != "online" && st.State != "offline" {
		return nil, &wire.Error{Reason: wire.ReasonSchema, Msg: fmt.Sprintf("status state %q inválido; use online ou offline", st.State)}
	}
	return &st, nil
}

func (in *Ingester) dead(m Message, gateway string, seq uint64, err error) *store.DeadLetter {
	reason := wire.ReasonOf(err)
	msg := err.Error()
	var we *wire.Error
	if errors.As(err, &we) {
		msg = we.Msg
	}
	if len(msg) > 2048 { // a message quoting a 64 KiB topic, say
		msg = msg[:2048] + "…"
	}
	p, trunc := m.Payload, false
	if len(p) > wire.MaxPayload {
		p, trunc = p[:wire.MaxPayload], true
	}
	in.o.Metrics.rejections.WithLabelValues(reason).Inc()
	if seq > wire.MaxSeq {
		seq = 0 // not storable (SQLite integers are int64); the payload has it
	}
	return &store.DeadLetter{ReceivedAt: m.ReceivedAt, Topic: clipTopic(m.Topic), Reason: reason, Message: msg,
		Gateway: gateway, Seq: seq, Payload: bytes.Clone(p), Truncated: trunc}
}
