package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// checksIndex indexes the few field-check batches among the many levels
// ones, so that ChecksAfter reads only them.
const checksIndex = `CREATE INDEX IF NOT EXISTS batches_checks ON batches (kind) WHERE kind = '` + wire.KindCheck + `'`

const checksAfterSQL = `SELECT rowid, gateway, seq, municipality, sensor, body, sig, verified, received_at FROM batches
	WHERE kind = ? AND rowid > ? AND rowid <= ? ORDER BY rowid`

// ChecksAfter calls fn with every stored field-check batch (wire.KindCheck)
// whose position (the batches table's rowid, which grows with each stored
// batch) is above after and at most upTo, in store order, with its
// position. The calibration register catches up from it at startup.
func (s *Store) ChecksAfter(ctx context.Context, after, upTo int64, fn func(pos int64, b store.StoredBatch) error) error {
	return s.batchesAfter(ctx, checksAfterSQL, wire.KindCheck, after, upTo, fn, wire.KindCheck)
}

// batchesAfter runs query (ChecksAfter's or LevelBatchesAfter's, whose
// rows are batches of kind) with args, after and upTo, and calls fn with
// each batch in order.
func (s *Store) batchesAfter(ctx context.Context, query, kind string, after, upTo int64, fn func(pos int64, b store.StoredBatch) error, args ...any) error {
	rows, err := s.r.QueryContext(ctx, query, append(args, after, upTo)...)
	if err != nil {
		return fmt.Errorf("store: %s batches after %d: %w", kind, after, err)
	}
	defer rows.Close()
	for rows.Next() {
		b := store.StoredBatch{Kind: kind}
		var pos, seq, at int64
		if err := rows.Scan(&pos, &b.Gateway, &seq, &b.Municipality, &b.Sensor, &b.Body, &b.Sig, &b.Verified, &at); err != nil {
			return fmt.Errorf("store: %s batches after %d: %w", kind, after, err)
		}
		b.Seq, b.ReceivedAt = uint64(seq), time.UnixMilli(at).UTC()
		if err := fn(pos, b); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: %s batches after %d: %w", kind, after, err)
	}
	return nil
}

const levelsAfterSQL = `SELECT rowid, gateway, seq, municipality, sensor, body, sig, verified, received_at FROM batches
	WHERE rowid > ? AND rowid <= ? AND kind = '` + wire.KindLevels + `' ORDER BY rowid`

// LevelBatchesAfter calls fn with every stored levels batch whose
// position is above after and at most upTo, in store order, with its
// position: the calibration register reads again the devices of the
// batches its observer had not handled when the service stopped. It reads
// the range of positions, so it is meant for the few batches after a
// recent one.
func (s *Store) LevelBatchesAfter(ctx context.Context, after, upTo int64, fn func(pos int64, b store.StoredBatch) error) error {
	return s.batchesAfter(ctx, levelsAfterSQL, wire.KindLevels, after, upTo, fn)
}

// BatchPos is the position of the stored batch gateway/seq (0: not
// stored, or deleted by retention).
func (s *Store) BatchPos(ctx context.Context, gateway string, seq uint64) (int64, error) {
	var pos int64
	err := s.r.QueryRowContext(ctx, `SELECT rowid FROM batches WHERE gateway = ? AND seq = ?`, gateway, int64(seq)).Scan(&pos)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: position of %s/%d: %w", gateway, seq, err)
	}
	return pos, nil
}

// LastBatch is the last stored batch: its position (0: none), gateway and
// seq.
func (s *Store) LastBatch(ctx context.Context) (pos int64, gateway string, seq uint64, err error) {
	var sq int64
	err = s.r.QueryRowContext(ctx, `SELECT rowid, gateway, seq FROM batches ORDER BY rowid DESC LIMIT 1`).Scan(&pos, &gateway, &sq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", 0, nil
	}
	if err != nil {
		return 0, "", 0, fmt.Errorf("store: last batch: %w", err)
	}
	return pos, gateway, uint64(sq), nil
}

// LastBatchPos is the position of the last stored batch (0: none), the
// bound of ChecksAfter.
func (s *Store) LastBatchPos(ctx context.Context) (int64, error) {
	var pos int64
	if err := s.r.QueryRowContext(ctx, `SELECT coalesce(max(rowid), 0) FROM batches`).Scan(&pos); err != nil {
		return 0, fmt.Errorf("store: last batch: %w", err)
	}
	return pos, nil
}
