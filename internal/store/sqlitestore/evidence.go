package sqlitestore

import (
	"context"
	"fmt"
	"time"

	"github.com/sossego/sossego/internal/store"
)

// BatchesRange calls fn with every stored batch of gateway whose seq is in
// [from, to], in seq order, one row at a time (an evidence export reads
// thousands of them without holding them).
func (s *Store) BatchesRange(ctx context.Context, gateway string, from, to uint64, fn func(store.StoredBatch) error) error {
	rows, err := s.r.QueryContext(ctx, `SELECT seq, municipality, sensor, kind, body, sig, verified, received_at FROM batches
		WHERE gateway = ? AND seq >= ? AND seq <= ? ORDER BY seq`, gateway, int64(from), int64(min(to, 1<<63-1)))
	if err != nil {
		return fmt.Errorf("store: batches of %s: %w", gateway, err)
	}
	defer rows.Close()
	for rows.Next() {
		b := store.StoredBatch{Gateway: gateway}
		var seq, at int64
		if err := rows.Scan(&seq, &b.Municipality, &b.Sensor, &b.Kind, &b.Body, &b.Sig, &b.Verified, &at); err != nil {
			return fmt.Errorf("store: batches of %s: %w", gateway, err)
		}
		b.Seq, b.ReceivedAt = uint64(seq), time.UnixMilli(at).UTC()
		if err := fn(b); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: batches of %s: %w", gateway, err)
	}
	return nil
}
