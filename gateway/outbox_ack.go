package gateway

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// After returns up to limit stored batches with seq > after, in seq order.
func (o *Outbox) After(ctx context.Context, after uint64, limit int) ([]Entry, error) {
	rows, err := o.db.QueryContext(ctx, `SELECT seq, topic, payload, records FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?`,
		int64(after), limit)
	if err != nil {
		return nil, fmt.Errorf("gateway: read outbox: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var seq int64
		if err := rows.Scan(&seq, &e.Topic, &e.Payload, &e.Records); err != nil {
			return nil, fmt.Errorf("gateway: read outbox: %w", err)
		}
		e.Seq = uint64(seq)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("gateway: read outbox: %w", err)
	}
	return out, nil
}

// AckAheadError reports an ack for a seq this outbox never assigned: the
// central service holds batches from an earlier life of this gateway id
// (state folder lost or copied).
type AckAheadError struct {
	Ack, Last uint64
}

func (e *AckAheadError) Error() string {
	return fmt.Sprintf("gateway: ack %d is beyond the last seq %d this outbox assigned", e.Ack, e.Last)
}

// Ack removes every batch with seq ≤ seq. Acks never go backwards: a lower
// ack than one already applied changes nothing. An ack beyond the last
// assigned seq returns *AckAheadError and removes nothing.
//
// Deletes go in transactions of at most ackChunk batches, so that a big ack
// (after a reconnect) does not need a WAL as big as what it frees. On a full
// disk the outbox gives up its reserve and retries, checkpointing between
// chunks and halving them; a delete that still cannot be written returns a
// *StorageError (what was deleted so far stays deleted) and is tried again
// with the next ack.
func (o *Outbox) Ack(ctx context.Context, seq uint64) (removed int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if seq <= o.acked {
		return 0, nil
	}
	if seq >= o.nextSeq {
		return 0, &AckAheadError{Ack: seq, Last: o.nextSeq - 1}
	}
	chunk := ackChunk
	for o.acked < seq {
		upTo := seq
		var end int64
		switch err := o.db.QueryRowContext(ctx, `SELECT seq FROM outbox WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT 1 OFFSET ?`,
			int64(o.acked), int64(seq), chunk-1).Scan(&end); {
		case err == nil:
			upTo = uint64(end)
		case !errors.Is(err, sql.ErrNoRows):
			return removed, o.failLocked(fmt.Errorf("ack: %w", err))
		}
		n, err := o.ackUpToLocked(ctx, upTo)
		if err != nil && isDiskFull(err) {
			if o.releaseReserve() {
				continue
			}
			if chunk > 1 {
				chunk /= 2
				o.checkpointLocked(ctx)
				continue
			}
		}
		if err != nil {
			return removed, o.failLocked(fmt.Errorf("ack: %w", err))
		}
		removed += n
		if o.released {
			o.checkpointLocked(ctx)
		}
	}
	if o.reserve < o.reserveWant {
		o.vacuumLocked(ctx)
	}
	if o.released {
		if o.checkpointLocked(ctx) {
			o.released = false
		}
	}
	o.ensureReserveLocked()
	return removed, nil
}

// vacuumLocked gives free pages of the database back to the volume while
// the reserve is short of its size (incremental auto-vacuum; outboxes
// created before it have none and keep their free pages for reuse). It
// moves at most a quarter of the WAL's bound per call, and the file shrinks
// at the checkpoint.
func (o *Outbox) vacuumLocked(ctx context.Context) {
	var free int64
	if err := o.db.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil || free == 0 {
		return
	}
	n := min(free, max(o.walLimit/o.pageSize/4, 1))
	if _, err := o.db.ExecContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", n)); err != nil {
		return
	}
	o.checkpointLocked(ctx)
}

// ackChunk is the most batches one delete transaction removes.
const ackChunk = 64

// ackUpToLocked deletes the batches up to seq in one transaction.
func (o *Outbox) ackUpToLocked(ctx context.Context, seq uint64) (int, error) {
	var recs, n, bytes int64
	err := o.tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(records),0), COUNT(*), COALESCE(SUM(length(payload)),0) FROM outbox WHERE seq <= ?`,
			int64(seq)).Scan(&recs, &n, &bytes); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE seq <= ?`, int64(seq)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE meta SET v = ? WHERE k='acked'`, int64(seq))
		return err
	})
	if err != nil {
		return 0, err
	}
	o.acked = seq
	if n > 0 {
		o.refused = false
	}
	o.pending -= int(recs)
	o.rows -= int(n)
	o.bytes -= bytes
	return int(n), nil
}

// checkpointLocked copies the WAL into the database so that the next
// writes reuse the WAL from its start instead of growing it.
func (o *Outbox) checkpointLocked(ctx context.Context) bool {
	_, err := o.db.ExecContext(ctx, "PRAGMA wal_checkpoint(RESTART)")
	return err == nil
}

// Renumber moves the sequence past ahead (an ack from an earlier life of
// this gateway id): every pending batch is re-sealed with a fresh seq above
// ahead, in its original order, so the central service does not discard it
// as a duplicate.
func (o *Outbox) Renumber(ctx context.Context, ahead uint64, reseal func(old []byte, seq uint64) ([]byte, error)) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ahead < o.nextSeq {
		return nil
	}
	var next uint64
	var bytes int64
	err := o.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT seq, payload FROM outbox ORDER BY seq`)
		if err != nil {
			return err
		}
		type row struct {
			seq     int64
			payload []byte
		}
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.seq, &r.payload); err != nil {
				rows.Close()
				return err
			}
			all = append(all, r)
		}
		rows.Close()
		next, bytes = ahead+1, 0
		for _, r := range all {
			p, err := reseal(r.payload, next)
			if err != nil {
				return fmt.Errorf("seq %d: %w", r.seq, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE outbox SET seq = ?, payload = ? WHERE seq = ?`, int64(next), p, r.seq); err != nil {
				return err
			}
			bytes += int64(len(p))
			next++
		}
		_, err = tx.ExecContext(ctx, `UPDATE meta SET v = CASE k WHEN 'next_seq' THEN ? WHEN 'acked' THEN ? ELSE v END`,
			int64(next), int64(ahead))
		return err
	})
	if err != nil {
		return fmt.Errorf("gateway: renumber: %w", err)
	}
	o.nextSeq, o.acked, o.bytes = next, ahead, bytes
	return nil
}
