package gateway

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/sossego/sossego/internal/wire"
)

// Outbox is the gateway's durable queue of sealed batches, kept in SQLite.
//
// Durability: the database runs in WAL mode with synchronous=FULL, so every
// committed transaction (one per enqueued batch, one per ack) is fsynced to
// the WAL before Enqueue or Ack returns. A batch that Enqueue accepted
// survives kill -9 and power loss; a batch still being built in memory (at
// most one batch, see Batcher) does not.
//
// Sequence numbers: each batch gets the next per-gateway seq inside the
// transaction that stores it, so seqs are contiguous and never reused, even
// after every batch has been acknowledged and deleted (the counter lives in
// its own row). A batch leaves only when Ack reports a seq ≥ its own.
//
// Capacity is counted in 1-s records. When a batch does not fit, Enqueue
// refuses it, adds its records to the persistent drop counter and returns
// ErrFull: the policy is "drop new" because dropping old batches would leave
// a hole below the central service's highest contiguous seq and stall its
// acks for good (docs/wire.md).
type Outbox struct {
	db       *sql.DB
	capacity int

	mu      sync.Mutex
	pending int // records
	rows    int
	nextSeq uint64
	acked   uint64
	dropped uint64
	refused bool // the last Enqueue was refused for lack of room
}

// Entry is one stored batch.
type Entry struct {
	Seq     uint64
	Topic   string
	Payload []byte
	Records int
}

// ErrFull is returned by Enqueue when the outbox has no room for the batch.
var ErrFull = errors.New("gateway: outbox full")

// OpenOutbox opens (or creates) the outbox database at path with room for
// capacity records.
func OpenOutbox(path string, capacity int) (*Outbox, error) {
	if capacity <= 0 {
		return nil, fmt.Errorf("gateway: outbox capacity %d must be positive", capacity)
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("gateway: open outbox: %w", err)
	}
	db.SetMaxOpenConns(1)
	o := &Outbox{db: db, capacity: capacity}
	if err := o.init(); err != nil {
		db.Close()
		return nil, err
	}
	return o, nil
}

func (o *Outbox) init() error {
	ctx := context.Background()
	var mode string
	if err := o.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("gateway: open outbox: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("gateway: open outbox: journal_mode is %q, want wal", mode)
	}
	_, err := o.db.ExecContext(ctx, `
CREATE TABLE IF NOT EXISTS outbox (
	seq        INTEGER PRIMARY KEY,
	topic      TEXT    NOT NULL,
	payload    BLOB    NOT NULL,
	records    INTEGER NOT NULL,
	created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
INSERT OR IGNORE INTO meta(k, v) VALUES ('next_seq', 1), ('acked', 0), ('dropped', 0);`)
	if err != nil {
		return fmt.Errorf("gateway: create outbox: %w", err)
	}
	var next, acked, dropped int64
	if err := o.db.QueryRowContext(ctx, `SELECT
		(SELECT v FROM meta WHERE k='next_seq'), (SELECT v FROM meta WHERE k='acked'),
		(SELECT v FROM meta WHERE k='dropped')`).Scan(&next, &acked, &dropped); err != nil {
		return fmt.Errorf("gateway: read outbox meta: %w", err)
	}
	var pending, rows int64
	if err := o.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(records),0), COUNT(*) FROM outbox`).Scan(&pending, &rows); err != nil {
		return fmt.Errorf("gateway: read outbox: %w", err)
	}
	o.nextSeq, o.acked, o.dropped, o.pending, o.rows = uint64(next), uint64(acked), uint64(dropped), int(pending), int(rows)
	return nil
}

// Close closes the database.
func (o *Outbox) Close() error { return o.db.Close() }

// Enqueue stores a batch of records under the next seq. seal receives the
// seq and returns the topic-independent sealed bytes; it runs inside the
// transaction, so a batch is never stored without its seq nor a seq used
// without its batch. On ErrFull nothing is stored and the records are added
// to the drop counter.
func (o *Outbox) Enqueue(ctx context.Context, topic string, records int, now time.Time,
	seal func(seq uint64) ([]byte, error)) (uint64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending+records > o.capacity {
		if _, err := o.db.ExecContext(ctx, `UPDATE meta SET v = v + ? WHERE k='dropped'`, records); err != nil {
			return 0, fmt.Errorf("gateway: count dropped: %w", err)
		}
		o.dropped += uint64(records)
		o.refused = true
		return 0, ErrFull
	}
	seq := o.nextSeq
	payload, err := seal(seq)
	if err != nil {
		return 0, err
	}
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("gateway: enqueue: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, `INSERT INTO outbox(seq, topic, payload, records, created_ms) VALUES (?,?,?,?,?)`,
		int64(seq), topic, payload, records, now.UnixMilli()); err != nil {
		return 0, fmt.Errorf("gateway: enqueue: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET v = ? WHERE k='next_seq'`, int64(seq+1)); err != nil {
		return 0, fmt.Errorf("gateway: enqueue: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("gateway: enqueue: %w", err)
	}
	o.nextSeq = seq + 1
	o.refused = false
	o.pending += records
	o.rows++
	return seq, nil
}

// Drop adds n records to the drop counter (used by the stop-sampling
// policy for the seconds it did not measure).
func (o *Outbox) Drop(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := o.db.ExecContext(ctx, `UPDATE meta SET v = v + ? WHERE k='dropped'`, n); err != nil {
		return fmt.Errorf("gateway: count dropped: %w", err)
	}
	o.dropped += uint64(n)
	return nil
}

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
func (o *Outbox) Ack(ctx context.Context, seq uint64) (removed int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if seq <= o.acked {
		return 0, nil
	}
	if seq >= o.nextSeq {
		return 0, &AckAheadError{Ack: seq, Last: o.nextSeq - 1}
	}
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("gateway: ack: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	var recs, n int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(records),0), COUNT(*) FROM outbox WHERE seq <= ?`, int64(seq)).
		Scan(&recs, &n); err != nil {
		return 0, fmt.Errorf("gateway: ack: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE seq <= ?`, int64(seq)); err != nil {
		return 0, fmt.Errorf("gateway: ack: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET v = ? WHERE k='acked'`, int64(seq)); err != nil {
		return 0, fmt.Errorf("gateway: ack: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("gateway: ack: %w", err)
	}
	o.acked = seq
	if n > 0 {
		o.refused = false
	}
	o.pending -= int(recs)
	o.rows -= int(n)
	return int(n), nil
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
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("gateway: renumber: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	rows, err := tx.QueryContext(ctx, `SELECT seq, payload FROM outbox ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("gateway: renumber: %w", err)
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
			return fmt.Errorf("gateway: renumber: %w", err)
		}
		all = append(all, r)
	}
	rows.Close()
	next := ahead + 1
	for _, r := range all {
		p, err := reseal(r.payload, next)
		if err != nil {
			return fmt.Errorf("gateway: renumber seq %d: %w", r.seq, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE outbox SET seq = ?, payload = ? WHERE seq = ?`, int64(next), p, r.seq); err != nil {
			return fmt.Errorf("gateway: renumber: %w", err)
		}
		next++
	}
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET v = CASE k WHEN 'next_seq' THEN ? WHEN 'acked' THEN ? ELSE v END`,
		int64(next), int64(ahead)); err != nil {
		return fmt.Errorf("gateway: renumber: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("gateway: renumber: %w", err)
	}
	o.nextSeq, o.acked = next, ahead
	return nil
}

// Stats is the outbox state for the retained status message. Full is set
// while the outbox cannot take a batch: after a refused Enqueue until one
// succeeds again, or whenever not even one record fits.
func (o *Outbox) Stats() wire.Outbox {
	o.mu.Lock()
	defer o.mu.Unlock()
	return wire.Outbox{Pending: o.pending, Capacity: o.capacity, Dropped: o.dropped,
		Full: o.refused || o.pending >= o.capacity}
}

// Full reports whether a one-record batch would be refused.
func (o *Outbox) Full() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pending+1 > o.capacity
}

// Acked is the highest seq acknowledged so far.
func (o *Outbox) Acked() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.acked
}

// LastSeq is the highest seq assigned so far (0 before the first batch).
func (o *Outbox) LastSeq() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.nextSeq - 1
}
