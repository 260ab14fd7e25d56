package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sossego/sossego/internal/store"
)

// pruneSpan is the time span of a stored batch's records, read back from
// its signed body (accepted at ingest, so decoded leniently here).
type pruneSpan struct {
	Records []struct {
		T     time.Time `json:"t"`
		DurMs int64     `json:"dur_ms"`
	} `json:"records"`
	Env []struct {
		T time.Time `json:"t"`
	} `json:"env"`
}

// PruneOldest deletes, in one transaction, up to Limit old batches with the
// level or environmental records stored from them, unless Keep protects
// them or the InfluxDB mirror has not written them yet, and up to Limit
// dead letters received before Before (a dead letter that settled a seq is
// kept: docs/wire.md, Ack). The watermarks and the settled seqs are not
// touched. Call it repeatedly with After/AfterDeadLetter from the result
// until Done.
//
// Deleting a batch forgets its (gateway, seq): a replay of it would be
// stored again, so Before must be older than the oldest record the ingest
// accepts (--max-age); the caller checks that.
func (s *Store) PruneOldest(ctx context.Context, p store.Prune) (store.PruneResult, error) {
	if s.closed.Load() {
		return store.PruneResult{}, store.ErrClosed
	}
	if p.Limit <= 0 {
		p.Limit = 500
	}
	res := store.PruneResult{Next: p.After, NextDeadLetter: p.AfterDeadLetter, NextConflict: p.AfterConflict, Decided: p.After}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// Apply's memory of recent packs must not outlive packs deleted here.
	clear(s.recent)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("store: prune: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	before := p.Before.UnixMilli()

	batchesDone, err := s.pruneBatches(ctx, tx, p, before, &res)
	if err != nil {
		return res, err
	}
	deadDone, err := pruneDeadLetters(ctx, tx, p, before, &res)
	if err != nil {
		return res, err
	}
	conflictsDone, err := pruneConflicts(ctx, tx, p, before, &res)
	if err != nil {
		return res, err
	}
	if err := tx.Commit(); err != nil {
		return res, fmt.Errorf("store: prune: commit: %w", err)
	}
	res.Done = batchesDone && deadDone && conflictsDone
	return res, nil
}

// pruneConflicts deletes up to Limit record conflicts received before
// before, in id order, except those whose second Keep protects (an alert's
// window: the conflict is part of what the alert rests on), which are kept
// for good.
func pruneConflicts(ctx context.Context, tx *sql.Tx, p store.Prune, before int64, res *store.PruneResult) (done bool, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, received_at, sensor, t FROM record_conflicts WHERE id > ? ORDER BY id LIMIT ?`,
		p.AfterConflict, p.Limit)
	if err != nil {
		return false, fmt.Errorf("store: prune: read record conflicts: %w", err)
	}
	var ids []int64
	n, reached := 0, false
	for rows.Next() {
		var id, received, t int64
		var sensor string
		if err := rows.Scan(&id, &received, &sensor, &t); err != nil {
			rows.Close()
			return false, fmt.Errorf("store: prune: read record conflicts: %w", err)
		}
		n++
		if received >= before {
			reached = true
			break
		}
		res.NextConflict = id
		at := time.UnixMilli(t).UTC()
		if p.Keep == nil || !p.Keep(sensor, at, at.Add(time.Second)) {
			ids = append(ids, id)
		}
	}
	if err := rows.Close(); err != nil {
		return false, fmt.Errorf("store: prune: read record conflicts: %w", err)
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `DELETE FROM record_conflicts WHERE id = ?`, id); err != nil {
			return false, fmt.Errorf("store: prune: delete record conflict %d: %w", id, err)
		}
		res.Conflicts++
	}
	return reached || n < p.Limit, nil
}

// pruneCand is a batch a prune pass examines.
type pruneCand struct {
	rowid        int64
	gateway      string
	seq          int64
	kind, sensor string
	body         []byte
}

func (s *Store) pruneBatches(ctx context.Context, tx *sql.Tx, p store.Prune, before int64, res *store.PruneResult) (done bool, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, gateway, seq, kind, sensor, body, received_at FROM batches
		WHERE rowid > ? ORDER BY rowid LIMIT ?`, p.After, p.Limit)
	if err != nil {
		return false, fmt.Errorf("store: prune: read batches: %w", err)
	}
	var cands []pruneCand
	n := 0
	reached := false
	for rows.Next() {
		var c pruneCand
		var received int64
		if err := rows.Scan(&c.rowid, &c.gateway, &c.seq, &c.kind, &c.sensor, &c.body, &received); err != nil {
			rows.Close()
			return false, fmt.Errorf("store: prune: read batches: %w", err)
		}
		n++
		if received >= before {
			reached = true
			break
		}
		cands = append(cands, c)
	}
	if err := rows.Close(); err != nil {
		return false, fmt.Errorf("store: prune: read batches: %w", err)
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("store: prune: read batches: %w", err)
	}
	done = reached || n < p.Limit
	decided := true // every candidate so far deleted or kept for good
	for _, c := range cands {
		res.Next = c.rowid
		forGood, err := pruneBatch(ctx, tx, p, c, res)
		if err != nil {
			return false, err
		}
		if decided = decided && forGood; decided {
			res.Decided = c.rowid
		}
	}
	return done, nil
}

// pruneBatch deletes one candidate batch with its records, or keeps it;
// forGood is false when it is kept only until the mirror has written it.
func pruneBatch(ctx context.Context, tx *sql.Tx, p store.Prune, c pruneCand, res *store.PruneResult) (forGood bool, err error) {
	var sp pruneSpan
	if err := json.Unmarshal(c.body, &sp); err != nil {
		// Not readable: keep it (an evidence body is never deleted blind).
		res.Kept++
		return true, nil
	}
	// A batch's level records are in its own packs: those of its gateway
	// and seq whose last start (t1) lies in its span.
	table, t, mirrored := "level_packs", "t1", p.MirroredLevelID
	var first, last, end time.Time
	switch {
	case c.kind == "env" && len(sp.Env) > 0:
		table, t, mirrored = "env", "t", p.MirroredEnvID
		first, last = sp.Env[0].T, sp.Env[0].T
		for _, e := range sp.Env {
			first, last = minTime(first, e.T), maxTime(last, e.T)
		}
		end = last.Add(time.Millisecond)
	case len(sp.Records) > 0:
		first, last = sp.Records[0].T, sp.Records[0].T
		end = last
		for _, r := range sp.Records {
			first, last = minTime(first, r.T), maxTime(last, r.T)
			end = maxTime(end, r.T.Add(time.Duration(max(r.DurMs, 1))*time.Millisecond))
		}
	default:
		res.Kept++ // nothing to go by
		return true, nil
	}
	if p.Keep != nil && p.Keep(c.sensor, first, end) {
		res.Kept++
		return true, nil
	}
	span := []any{c.sensor, first.UnixMilli(), last.UnixMilli(), c.gateway, c.seq}
	where := ` WHERE sensor = ? AND ` + t + ` >= ? AND ` + t + ` <= ? AND gateway = ? AND seq = ?`
	if p.Mirror {
		var top sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MAX(id) FROM `+table+where, span...).Scan(&top); err != nil {
			return false, fmt.Errorf("store: prune: %s of %s/%d: %w", table, c.gateway, c.seq, err)
		}
		if top.Int64 > mirrored {
			res.Kept++
			return false, nil
		}
	}
	var k int64
	if table == "level_packs" {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM level_packs`+where, span...).Scan(&k); err != nil {
			return false, fmt.Errorf("store: prune: count %s of %s/%d: %w", table, c.gateway, c.seq, err)
		}
	}
	r, err := tx.ExecContext(ctx, `DELETE FROM `+table+where, span...)
	if err != nil {
		return false, fmt.Errorf("store: prune: delete %s of %s/%d: %w", table, c.gateway, c.seq, err)
	}
	if table == "env" {
		k, _ = r.RowsAffected()
		res.Env += k
	} else {
		res.Levels += k
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM batches WHERE rowid = ?`, c.rowid); err != nil {
		return false, fmt.Errorf("store: prune: delete batch %s/%d: %w", c.gateway, c.seq, err)
	}
	res.Batches++
	return true, nil
}

func pruneDeadLetters(ctx context.Context, tx *sql.Tx, p store.Prune, before int64, res *store.PruneResult) (done bool, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT d.id, d.received_at, s.dead_letter IS NOT NULL FROM dead_letters d
		LEFT JOIN settled s ON s.dead_letter = d.id WHERE d.id > ? ORDER BY d.id LIMIT ?`, p.AfterDeadLetter, p.Limit)
	if err != nil {
		return false, fmt.Errorf("store: prune: read dead letters: %w", err)
	}
	var ids []int64
	n := 0
	reached := false
	for rows.Next() {
		var id, received int64
		var settles bool
		if err := rows.Scan(&id, &received, &settles); err != nil {
			rows.Close()
			return false, fmt.Errorf("store: prune: read dead letters: %w", err)
		}
		n++
		if received >= before {
			reached = true
			break
		}
		res.NextDeadLetter = id
		if !settles {
			ids = append(ids, id)
		}
	}
	if err := rows.Close(); err != nil {
		return false, fmt.Errorf("store: prune: read dead letters: %w", err)
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("store: prune: read dead letters: %w", err)
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `DELETE FROM dead_letters WHERE id = ?`, id); err != nil {
			return false, fmt.Errorf("store: prune: delete dead letter %d: %w", id, err)
		}
		res.DeadLetters++
	}
	return reached || n < p.Limit, nil
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
