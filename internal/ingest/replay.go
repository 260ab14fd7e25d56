package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// StoredChecks is the readings store as a check replay reads it
// (*sqlitestore.Store): the stored field-check batches by position.
type StoredChecks interface {
	ChecksAfter(ctx context.Context, after, upTo int64, fn func(pos int64, b store.StoredBatch) error) error
}

// ReplayChecks hands o every field check stored at a position in (after,
// upTo], in store order, as the ingester handed it when it stored it
// (CheckObserver): the check and the meter as its signed body gives them.
// An observer that died between the store's commit and ObserveCheck
// catches up with it; o must take a check it already has without harm. A
// stored body that does not decode (it did when it was stored) is logged
// and skipped. It returns how many checks it handed over; an error is the
// store's.
func ReplayChecks(ctx context.Context, src StoredChecks, after, upTo int64, o CheckObserver, log *slog.Logger) (int, error) {
	n := 0
	err := src.ChecksAfter(ctx, after, upTo, func(pos int64, b store.StoredBatch) error {
		c, err := storedCheck(b)
		if err != nil {
			log.Error("verificação de campo guardada ilegível; não foi reprocessada", "gateway", b.Gateway, "seq", b.Seq,
				"posicao", pos, "erro", err)
			return nil
		}
		o.ObserveCheck(ctx, c)
		n++
		return nil
	})
	return n, err
}

// storedCheck decodes a stored check batch's signed body (strictly, as
// ingest did: wire.Open) into what CheckObserver gets.
func storedCheck(b store.StoredBatch) (CheckReading, error) {
	body, err := storedBody(b)
	if err != nil {
		return CheckReading{}, err
	}
	if body.Check == nil {
		return CheckReading{}, fmt.Errorf("a mensagem guardada (%s) não traz verificação de campo", body.Kind)
	}
	return CheckReading{Sensor: b.Sensor, Gateway: b.Gateway, Municipality: b.Municipality, Device: body.Device, Check: *body.Check,
		Verified: b.Verified, Seq: b.Seq, ReceivedAt: b.ReceivedAt, Body: b.Body, Sig: b.Sig}, nil
}

// StoredLevels is the readings store as a levels replay reads it
// (*sqlitestore.Store): the stored levels batches by position.
type StoredLevels interface {
	LevelBatchesAfter(ctx context.Context, after, upTo int64, fn func(pos int64, b store.StoredBatch) error) error
}

// ReplayLevels hands fn, batch by batch and in store order, the readings
// of every levels batch stored at a position in (after, upTo], decoded
// from its signed body (strictly, as ingest did: wire.Open): sensor,
// gateway, municipality, device, clock, verification, seq, reception and
// each record. The fields ingest takes from the register of sensors (code,
// zone, place, establishments, the registered meter and the grade) are
// left empty: a replay is for an observer of what the gateways signed,
// such as the calibration register's device sightings. rs is only valid
// during the call. A stored body that does not decode is logged and
// skipped. It returns how many batches it handed over; an error is the
// store's or fn's.
func ReplayLevels(ctx context.Context, src StoredLevels, after, upTo int64, fn func(rs []Reading) error, log *slog.Logger) (int, error) {
	n := 0
	var rs []Reading
	err := src.LevelBatchesAfter(ctx, after, upTo, func(pos int64, b store.StoredBatch) error {
		body, err := storedBody(b)
		if err == nil && body.Kind != wire.KindLevels {
			err = fmt.Errorf("a mensagem guardada (%s) não traz níveis", body.Kind)
		}
		if err != nil {
			log.Error("lote de níveis guardado ilegível; não foi reprocessado", "gateway", b.Gateway, "seq", b.Seq,
				"posicao", pos, "erro", err)
			return nil
		}
		r := Reading{Sensor: b.Sensor, Gateway: b.Gateway, Municipality: b.Municipality, Device: body.Device, Clock: body.Clock,
			Verified: b.Verified, Seq: b.Seq, ReceivedAt: b.ReceivedAt}
		rs = rs[:0]
		for _, rec := range body.Records {
			r.Record = rec
			rs = append(rs, r)
		}
		n++
		return fn(rs)
	})
	return n, err
}

// storedBody decodes a stored batch's signed body strictly, as ingest did
// when it stored it.
func storedBody(b store.StoredBatch) (*wire.Batch, error) {
	env, err := json.Marshal(wire.Envelope{V: wire.Version, Kid: b.Gateway, Body: b.Body, Sig: b.Sig})
	if err != nil {
		return nil, err
	}
	_, body, err := wire.Open(env)
	return body, err
}
