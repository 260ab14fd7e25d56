package gateway

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/sossego/sossego/internal/sqlitedb"
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
// Capacity is counted in 1-s records and, optionally, in bytes of stored
// batches. When a batch does not fit, Enqueue refuses it, adds its records
// to the drop counter and returns ErrFull: the policy is "drop new" because
// dropping old batches would leave a hole below the central service's
// highest contiguous seq and stall its acks for good (docs/wire.md).
//
// A full disk is a state, not a failure: before each insert the outbox
// checks the volume's free space (statfs) against what the insert may need
// (new database pages, WAL growth, the reserve); when it is short, or when
// a write fails anyway, Enqueue returns a *StorageError and the outbox
// reports the condition in Stats until a write succeeds again. Acks must
// still be written on a full disk — they are what frees room — so the
// outbox keeps a reserve: a ballast file next to the database
// (outbox.db.reserve, OutboxOptions.Reserve bytes) that it truncates when a
// delete fails for lack of space, retrying the delete and checkpointing the
// WAL, and that it restores once the volume has room again. The WAL is
// bounded (checkpointed every WalLimit bytes and truncated to that size),
// so it never holds the whole outbox. Drop counts that cannot be written
// are kept in memory and written with the next successful transaction.
type Outbox struct {
	db       *sql.DB
	path     string
	capacity int
	capBytes int64

	reservePath string
	reserveWant int64
	pageSize    int64
	walLimit    int64

	mu         sync.Mutex
	pending    int   // records
	bytes      int64 // payload bytes of the pending batches
	rows       int
	nextSeq    uint64
	acked      uint64
	dropped    uint64 // persisted + unsaved
	unsaved    uint64 // drops not yet written
	high       int64  // latest record end stored, Unix ms
	refused    bool   // the last Enqueue was refused for lack of room
	storageErr error  // the last write failed or was refused for lack of disk; nil once one succeeds
	reserve    int64  // current size of the ballast file
	released   bool   // the ballast was released since the last checkpoint
}

// OutboxOptions size an outbox. CapacityRecords is required.
type OutboxOptions struct {
	// CapacityRecords bounds the pending records (1-s level records and env
	// readings).
	CapacityRecords int
	// CapacityBytes bounds the bytes of the pending batches as stored (0:
	// no fixed bound; the free space of the volume still is one).
	CapacityBytes int64
	// Reserve is the size of the ballast file that keeps acks writable on
	// a full disk (0: DefaultReserve; negative: no ballast).
	Reserve int64
}

// DefaultReserve is the ballast kept by default: room for a few hundred
// delete transactions and a WAL checkpoint.
const DefaultReserve = 1 << 20

// Entry is one stored batch.
type Entry struct {
	Seq     uint64
	Topic   string
	Payload []byte
	Records int
}

// ErrFull is returned by Enqueue when the outbox has no room for the batch
// within its configured capacity.
var ErrFull = errors.New("gateway: outbox full")

// ErrStorage is what every *StorageError matches with errors.Is.
var ErrStorage = errors.New("gateway: outbox storage")

// StorageError reports a write the outbox could not make: the volume is
// (nearly) full, or the write itself failed. Nothing was stored; the
// outbox stays usable and a later write may succeed.
type StorageError struct {
	DiskFull bool // no room on the volume (the likely cause of most failures)
	Err      error
}

func (e *StorageError) Error() string {
	if e.DiskFull {
		return fmt.Sprintf("gateway: outbox: disk full: %v", e.Err)
	}
	return fmt.Sprintf("gateway: outbox: write failed: %v", e.Err)
}

func (e *StorageError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrStorage) true.
func (e *StorageError) Is(target error) bool { return target == ErrStorage }

// OpenOutbox opens (or creates) the outbox database at path with room for
// capacity records and the default reserve.
func OpenOutbox(path string, capacity int) (*Outbox, error) {
	return OpenOutboxOptions(path, OutboxOptions{CapacityRecords: capacity})
}

// OpenOutboxOptions opens (or creates) the outbox database at path. It
// works on a full disk: the ballast, when present, is released to make
// room for opening, and restored when there is room.
func OpenOutboxOptions(path string, opts OutboxOptions) (*Outbox, error) {
	if opts.CapacityRecords <= 0 {
		return nil, fmt.Errorf("gateway: outbox capacity %d must be positive", opts.CapacityRecords)
	}
	if opts.CapacityBytes < 0 {
		return nil, fmt.Errorf("gateway: outbox byte capacity %d must not be negative", opts.CapacityBytes)
	}
	if opts.Reserve == 0 {
		opts.Reserve = DefaultReserve
	}
	o := &Outbox{path: path, capacity: opts.CapacityRecords, capBytes: opts.CapacityBytes,
		reservePath: path + ".reserve", reserveWant: max(opts.Reserve, 0)}
	if st, err := os.Stat(o.reservePath); err == nil {
		o.reserve = st.Size()
	}
	o.walLimit = walLimitFor(filepath.Dir(path))
	err := o.open()
	if err != nil && o.reserve > 0 {
		// Perhaps not even the WAL index fits: give up the ballast and retry.
		o.releaseReserve()
		err = o.open()
	}
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.ensureReserveLocked()
	o.mu.Unlock()
	return o, nil
}

// walLimitFor bounds the WAL by the size of the volume: 1/32 of it, between
// 128 KiB and 4 MiB (SQLite's default checkpoint point).
func walLimitFor(dir string) int64 {
	const lo, hi = 128 << 10, 4 << 20
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return hi
	}
	return min(max(int64(st.Blocks)*int64(st.Bsize)/32, lo), hi)
}

// migrationScheme is the table where the outbox records its schema steps.
var migrationScheme = sqlitedb.Scheme{Table: "outbox_migrations"}

// migrations are the outbox's numbered schema steps. An outbox from before
// the version table runs them all, so the first is idempotent. A schema
// change is a new step at the end.
var migrations = []sqlitedb.Step{
	{Name: "outbox and counters", SQL: `
CREATE TABLE IF NOT EXISTS outbox (
	seq        INTEGER PRIMARY KEY,
	topic      TEXT    NOT NULL,
	payload    BLOB    NOT NULL,
	records    INTEGER NOT NULL,
	created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
INSERT OR IGNORE INTO meta(k, v) VALUES ('next_seq', 1), ('acked', 0), ('dropped', 0), ('high_ms', 0);`},
}

// open opens the database. A new one gets 8 KiB pages, which hold three
// batches of 10 records (~2.5 kB each) where 4 KiB pages hold one, and
// incremental auto-vacuum, which lets a drained outbox give free pages
// back to the volume (vacuumLocked). The WAL is checkpointed once it holds
// walLimit bytes of 8 KiB pages (half that in outboxes made before 8 KiB
// pages) and truncated back to walLimit. A small page cache: the outbox
// appends at one end and deletes at the other, reading each batch about
// once per replay, so SQLite's default 2 MiB cache only held pages the
// kernel's page cache holds anyway (BENCHMARKS.md, gateway memory).
// Opening an outbox whose steps are all recorded writes nothing, so it
// works on a full disk.
func (o *Outbox) open() error {
	db, err := sqlitedb.Open(o.path, sqlitedb.Options{
		PageSize:          newPageSize,
		IncrementalVacuum: true,
		CacheKiB:          cacheKiB,
		JournalSizeLimit:  o.walLimit,
		WALAutocheckpoint: int(max(o.walLimit/8192, 4)),
	})
	if err != nil {
		return fmt.Errorf("gateway: open outbox: %w", err)
	}
	if err := sqlitedb.Migrate(context.Background(), db, migrationScheme, migrations); err != nil {
		db.Close()
		return fmt.Errorf("gateway: open outbox %s: %w", o.path, err)
	}
	o.db = db
	if err := o.init(); err != nil {
		db.Close()
		o.db = nil
		return err
	}
	return nil
}

func (o *Outbox) init() error {
	ctx := context.Background()
	if err := o.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&o.pageSize); err != nil {
		return fmt.Errorf("gateway: open outbox: %w", err)
	}
	var next, acked, dropped, high int64
	if err := o.db.QueryRowContext(ctx, `SELECT
		(SELECT v FROM meta WHERE k='next_seq'), (SELECT v FROM meta WHERE k='acked'),
		(SELECT v FROM meta WHERE k='dropped'), (SELECT v FROM meta WHERE k='high_ms')`).Scan(&next, &acked, &dropped, &high); err != nil {
		return fmt.Errorf("gateway: read outbox meta: %w", err)
	}
	var pending, rows, bytes int64
	if err := o.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(records),0), COUNT(*), COALESCE(SUM(length(payload)),0) FROM outbox`).
		Scan(&pending, &rows, &bytes); err != nil {
		return fmt.Errorf("gateway: read outbox: %w", err)
	}
	o.nextSeq, o.acked, o.dropped, o.high = uint64(next), uint64(acked), uint64(dropped), high
	o.pending, o.rows, o.bytes = int(pending), int(rows), bytes
	if rows == 0 && o.pageSize != newPageSize {
		return o.upgrade(ctx)
	}
	return nil
}

// newPageSize is the page size of outboxes made by create.
const newPageSize = 8192

// upgrade rebuilds an empty outbox made before 8 KiB pages and incremental
// auto-vacuum with both (the counters are kept; VACUUM rewrites the file).
// It is best effort: it needs room for a copy of the file, and on any
// error the outbox stays as it was; only failing to return to WAL mode is
// an error.
func (o *Outbox) upgrade(ctx context.Context) error {
	var size int64
	if st, err := os.Stat(o.path); err == nil {
		size = st.Size()
	}
	if avail, err := availBytes(filepath.Dir(o.path)); err != nil || avail < 4*size+(1<<20) {
		return nil
	}
	_, err := o.db.ExecContext(ctx, fmt.Sprintf("PRAGMA journal_mode=DELETE; PRAGMA page_size=%d; PRAGMA auto_vacuum=INCREMENTAL; VACUUM",
		newPageSize))
	var mode string
	if werr := o.db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); werr != nil || mode != "wal" {
		return fmt.Errorf("gateway: open outbox: back to WAL after rebuilding it: %q, %v (after %v)", mode, werr, err)
	}
	if err == nil {
		_ = o.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&o.pageSize)
	}
	return nil
}

// Close writes drop counts still held in memory (using the reserve if the
// disk is full: a lost count would hide a gap) and closes the database.
func (o *Outbox) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	released := false
	if o.unsaved > 0 {
		if err := o.saveDropsLocked(context.Background()); err != nil && isDiskFull(err) && o.releaseReserve() {
			released = true
			_ = o.saveDropsLocked(context.Background())
		}
	}
	err := o.db.Close()
	if released {
		// Closing checkpointed and removed the WAL: the room is back for
		// the reserve, which the next process needs for its first acks.
		o.ensureReserveLocked()
	}
	return err
}

// Put is one batch for Store.
type Put struct {
	Topic   string
	Records int
	// Until is the end of the latest record in the batch (zero for env
	// batches). The outbox keeps the latest one across restarts (High).
	Until time.Time
	// Seal receives the seq and returns the sealed bytes; it runs inside
	// the transaction, so a batch is never stored without its seq nor a
	// seq used without its batch.
	Seal func(seq uint64) ([]byte, error)
}

// Enqueue stores a batch of records under the next seq (Store without
// Until).
func (o *Outbox) Enqueue(ctx context.Context, topic string, records int, now time.Time,
	seal func(seq uint64) ([]byte, error)) (uint64, error) {
	return o.Store(ctx, now, Put{Topic: topic, Records: records, Seal: seal})
}

// Store stores a batch under the next seq. On ErrFull nothing is stored
// and the records are added to the drop counter. On a *StorageError
// nothing is stored and nothing is counted: the caller still holds the
// batch and may keep it in memory and try again. A Seal error is returned
// as it is.
func (o *Outbox) Store(ctx context.Context, now time.Time, p Put) (uint64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending+p.Records > o.capacity || (o.capBytes > 0 && o.bytes >= o.capBytes) {
		o.countDropLocked(ctx, p.Records)
		o.refused = true
		return 0, ErrFull
	}
	seq := o.nextSeq
	payload, err := p.Seal(seq)
	if err != nil {
		return 0, err
	}
	n := int64(len(payload))
	if o.capBytes > 0 && o.bytes+n > o.capBytes {
		o.countDropLocked(ctx, p.Records)
		o.refused = true
		return 0, ErrFull
	}
	if err := o.roomLocked(ctx, n); err != nil {
		return 0, o.failLocked(err)
	}
	high := max(o.high, p.Until.UnixMilli())
	if p.Until.IsZero() {
		high = o.high
	}
	err = o.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox(seq, topic, payload, records, created_ms) VALUES (?,?,?,?,?)`,
			int64(seq), p.Topic, payload, p.Records, now.UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE meta SET v = CASE k WHEN 'next_seq' THEN ? WHEN 'high_ms' THEN ? ELSE v END
			WHERE k IN ('next_seq', 'high_ms')`, int64(seq+1), high)
		return err
	})
	if err != nil {
		return 0, o.failLocked(fmt.Errorf("enqueue: %w", err))
	}
	o.nextSeq, o.high = seq+1, high
	o.refused = false
	o.pending += p.Records
	o.bytes += n
	o.rows++
	return seq, nil
}

// tx runs f in a transaction that also writes drop counts held in memory.
func (o *Outbox) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if err := f(tx); err != nil {
		return err
	}
	if o.unsaved > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE meta SET v = v + ? WHERE k='dropped'`, int64(o.unsaved)); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	o.unsaved = 0
	o.storageErr = nil
	return nil
}

// failLocked records a failed write and wraps it as a *StorageError.
func (o *Outbox) failLocked(err error) error {
	var se *StorageError
	if !errors.As(err, &se) {
		se = &StorageError{DiskFull: isDiskFull(err), Err: err}
	}
	o.storageErr = se
	return se
}

// cacheKiB is the outbox's SQLite page cache.
const cacheKiB = 256

// Stats is the outbox state for the retained status message. Full is set
// while the outbox cannot take a batch: after a refused Enqueue until one
// succeeds again, whenever not even one record fits, and while the disk
// refuses writes (StorageError says why).
func (o *Outbox) Stats() wire.Outbox {
	o.mu.Lock()
	defer o.mu.Unlock()
	st := wire.Outbox{Pending: o.pending, Capacity: o.capacity, Dropped: o.dropped,
		Full: o.refused || o.pending >= o.capacity || o.storageErr != nil}
	if o.storageErr != nil {
		st.StorageError = o.storageErr.Error()
	}
	return st
}

// StorageErr is the last write failure, nil once a write succeeded again.
func (o *Outbox) StorageErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.storageErr
}

// Bytes is the size of the pending batches as stored (payload bytes).
func (o *Outbox) Bytes() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bytes
}

// Full reports whether a one-record batch would be refused by the
// configured capacity.
func (o *Outbox) Full() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pending+1 > o.capacity || (o.capBytes > 0 && o.bytes >= o.capBytes)
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

// High is the end of the latest record ever stored (Put.Until), zero
// before the first: a clock that starts behind it after a restart has
// stepped back.
func (o *Outbox) High() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.high == 0 {
		return time.Time{}
	}
	return time.UnixMilli(o.high).UTC()
}
