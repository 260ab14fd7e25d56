package sqlitestore

import (
	"context"
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
	rows, err := s.r.QueryContext(ctx, checksAfterSQL, wire.KindCheck, after, upTo)
	if err != nil {
		return fmt.Errorf("store: field checks after %d: %w", after, err)
	}
	defer rows.Close()
	for rows.Next() {
		b := store.StoredBatch{Kind: wire.KindCheck}
		var pos, seq, at int64
		if err := rows.Scan(&pos, &b.Gateway, &seq, &b.Municipality, &b.Sensor, &b.Body, &b.Sig, &b.Verified, &at); err != nil {
			return fmt.Errorf("store: field checks after %d: %w", after, err)
		}
		b.Seq, b.ReceivedAt = uint64(seq), time.UnixMilli(at).UTC()
		if err := fn(pos, b); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: field checks after %d: %w", after, err)
	}
	return nil
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
