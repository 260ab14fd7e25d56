// Package sqlitedb is the one SQLite plumbing every local store uses (the
// readings store, alerts and cases, users, the gateway's outbox): how a file
// is opened — write-ahead log, busy timeout, synchronous level, immediate
// write transactions — and how its schema moves forward: numbered steps,
// each applied once and recorded in the store's own version table (two
// stores may share a file: the alerts and the cases live in cases.db).
//
// modernc.org/sqlite (pure Go) is the driver, so the gateway cross-compiles
// with cgo off.
//
// Overview of its parts: the one SQLite plumbing: `OpenMigrated` (how a store
// opens its file: `Open` then `Migrate`), `Open` (WAL checked, busy timeout,
// synchronous level, immediate write transactions, foreign keys, checkpoint
// size, page cache, WAL size limit; a new file's page size and incremental
// auto-vacuum, set only when the file is made so opening writes nothing) and
// `Migrate` (numbered steps recorded in the store's own version table — alerts
// and cases share `cases.db` — each applied whole or not at all; an older
// version table is adopted; a file from a newer release is refused);
// `Snapshot` (a consistent copy of a live database, `VACUUM INTO`, then
// `QuickCheck`; a damaged file is a `DamagedError`, a full disk `ENOSPC`);
// used by the readings store (`internal/store/sqlitestore`), the gateway's
// outbox, `internal/cases/casesdb`, `internal/alertstore`,
// `internal/users/usersdb`, `internal/notify` and the other central stores.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite" // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// Sync is SQLite's synchronous level.
type Sync string

const (
	// SyncFull fsyncs every commit: a commit survives a power cut.
	SyncFull Sync = "FULL"
	// SyncNormal fsyncs at checkpoints: a power cut may lose the last
	// commits, never corrupt the file.
	SyncNormal Sync = "NORMAL"
)

// Options says how a database is opened. The zero value is a durable
// read-write handle with one connection.
type Options struct {
	Sync         Sync // default SyncFull
	ForeignKeys  bool
	QueryOnly    bool // a read-only handle on a file another handle writes
	MaxOpenConns int  // default 1: SQLite has one writer
	// WALAutocheckpoint is the WAL size in pages that triggers a
	// checkpoint (0: SQLite's 1,000).
	WALAutocheckpoint int
	// PageSize is the page size of a new file in bytes (0: SQLite's 4,096);
	// it has no effect on a file that exists.
	PageSize int
	// IncrementalVacuum gives a new file incremental auto-vacuum (free
	// pages go back to the volume with PRAGMA incremental_vacuum). Open
	// sets it on a file that does not exist yet or is empty, with a handle
	// of its own: the pragma writes the file's first page each time it
	// runs on such a file, and a file that exists keeps its mode anyway, so
	// the returned handle never runs it (opening writes nothing, which a
	// full disk needs).
	IncrementalVacuum bool
	// CacheKiB bounds each connection's page cache in KiB (0: SQLite's
	// 2 MiB).
	CacheKiB int
	// JournalSizeLimit is the size in bytes the WAL is truncated back to
	// after a checkpoint (0: SQLite leaves it at its largest).
	JournalSizeLimit int64
}

// BusyTimeout is how long a statement waits for another connection's lock.
const BusyTimeout = 10 * time.Second

// Open opens (creating if needed) the SQLite file at path in WAL mode and
// checks that the mode took (a file system that cannot hold a WAL — some
// network mounts — is an error, not a silent rollback journal).
func Open(path string, o Options) (*sql.DB, error) {
	if o.Sync == "" {
		o.Sync = SyncFull
	}
	if o.Sync != SyncFull && o.Sync != SyncNormal {
		return nil, fmt.Errorf("sqlite %s: synchronous %q: use FULL or NORMAL", path, o.Sync)
	}
	if o.IncrementalVacuum && !o.QueryOnly {
		if st, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && st.Size() == 0) {
			if err := create(path, o.PageSize); err != nil {
				return nil, err
			}
		}
	}
	return open(path, o)
}

// create makes a new file with incremental auto-vacuum: the page size,
// then auto_vacuum, then WAL mode, which writes the first page and fixes
// all three (in the driver's own order, auto_vacuum first, the first page
// would take the default page size).
func create(path string, pageSize int) error {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(int(BusyTimeout/time.Millisecond))+")")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("sqlite %s: create: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	pages := ""
	if pageSize > 0 {
		pages = "PRAGMA page_size=" + strconv.Itoa(pageSize) + "; "
	}
	if _, err := db.Exec(pages + "PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL;"); err != nil {
		return fmt.Errorf("sqlite %s: create: %w", path, err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("sqlite %s: create: %w", path, err)
	}
	return nil
}

// open opens path with o's settings.
func open(path string, o Options) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(int(BusyTimeout/time.Millisecond))+")")
	if o.PageSize > 0 {
		// A WAL file's page size is fixed once WAL mode is on: set it first,
		// and WAL mode through the driver's _journal_mode, which it applies
		// after the _pragma list.
		q.Add("_pragma", "page_size("+strconv.Itoa(o.PageSize)+")")
		q.Set("_journal_mode", "WAL")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	q.Add("_pragma", "synchronous("+string(o.Sync)+")")
	if o.ForeignKeys {
		q.Add("_pragma", "foreign_keys(1)")
	}
	if o.WALAutocheckpoint > 0 {
		q.Add("_pragma", "wal_autocheckpoint("+strconv.Itoa(o.WALAutocheckpoint)+")")
	}
	if o.CacheKiB > 0 {
		q.Add("_pragma", "cache_size(-"+strconv.Itoa(o.CacheKiB)+")")
	}
	if o.JournalSizeLimit > 0 {
		q.Add("_pragma", "journal_size_limit("+strconv.FormatInt(o.JournalSizeLimit, 10)+")")
	}
	if o.QueryOnly {
		q.Add("_pragma", "query_only(1)")
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: open: %w", path, err)
	}
	db.SetMaxOpenConns(max(1, o.MaxOpenConns))
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite %s: open: %w", path, classify(err)) // a file that is not a database: ErrDamaged
	}
	if mode != "wal" {
		db.Close()
		return nil, fmt.Errorf("sqlite %s: journal_mode is %q, want wal (is the file on a file system that supports it?)", path, mode)
	}
	return db, nil
}

// Step is one numbered schema change. Exactly one of SQL, Tx and DB is set.
// SQL and Tx run in the transaction that records the step, so a step is
// applied whole or not at all. DB runs with the handle, for a step that
// manages its own transactions (a long data migration in chunks); it must
// be safe to run again, since a crash between it and its record repeats it.
type Step struct {
	Name string
	SQL  string
	Tx   func(ctx context.Context, tx *sql.Tx) error
	DB   func(ctx context.Context, db *sql.DB) error
}

// ErrNewerSchema is returned when a file carries steps this build does not
// know: it was written by a newer release.
var ErrNewerSchema = errors.New("sqlite: the file was migrated by a newer release")

// Scheme names the table where a store records its steps (version, name,
// applied_at), and an older version table (version, applied_at) whose rows
// are carried into it, then dropped.
type Scheme struct {
	Table  string
	Legacy string
}

// OpenMigrated opens the database at path (Open) and moves it to the last
// of steps (Migrate): the one way a store opens its file. A migration that
// fails closes the database and says which file it was.
func OpenMigrated(ctx context.Context, path string, o Options, sc Scheme, steps []Step) (*sql.DB, error) {
	db, err := Open(path, o)
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, db, sc, steps); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// Migrate applies the steps the file has not recorded yet, in order; step
// i (from 0) is version i+1. A file that predates the version table runs
// every step, so the first steps of a store that existed before it must be
// idempotent (CREATE … IF NOT EXISTS, or a check of the table's shape).
func Migrate(ctx context.Context, db *sql.DB, sc Scheme, steps []Step) error {
	if !validName(sc.Table) || (sc.Legacy != "" && !validName(sc.Legacy)) {
		return fmt.Errorf("migrate: version table %q / %q: use letters, digits and _", sc.Table, sc.Legacy)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+sc.Table+` (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if sc.Legacy != "" {
		if err := adoptLegacy(ctx, db, sc, steps); err != nil {
			return err
		}
	}
	var have int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM `+sc.Table).Scan(&have); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if have > len(steps) {
		return fmt.Errorf("%w: it is at schema version %d, this build knows %d; run the newer release or restore a backup", ErrNewerSchema, have, len(steps))
	}
	for i := have; i < len(steps); i++ {
		if err := apply(ctx, db, sc.Table, i+1, steps[i]); err != nil {
			return err
		}
	}
	return nil
}

func validName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func apply(ctx context.Context, db *sql.DB, table string, version int, s Step) error {
	if s.DB != nil {
		if err := s.DB(ctx, db); err != nil {
			return fmt.Errorf("migrate %d (%s): %w", version, s.Name, err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate %d (%s): %w", version, s.Name, err)
	}
	defer tx.Rollback()
	switch {
	case s.SQL != "":
		_, err = tx.ExecContext(ctx, s.SQL)
	case s.Tx != nil:
		err = s.Tx(ctx, tx)
	}
	if err != nil {
		return fmt.Errorf("migrate %d (%s): %w", version, s.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (version, name, applied_at) VALUES (?, ?, ?)`,
		version, s.Name, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("migrate %d (%s): %w", version, s.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate %d (%s): %w", version, s.Name, err)
	}
	return nil
}

// adoptLegacy moves an older version table's rows into the scheme's table.
func adoptLegacy(ctx context.Context, db *sql.DB, sc Scheme, steps []Step) error {
	legacy := sc.Legacy
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, legacy).Scan(&n); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if n == 0 {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: adopt %s: %w", legacy, err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT version, applied_at FROM `+legacy+` ORDER BY version`)
	if err != nil {
		return fmt.Errorf("migrate: adopt %s: %w", legacy, err)
	}
	type row struct{ v, at int64 }
	var rs []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.v, &r.at); err != nil {
			rows.Close()
			return fmt.Errorf("migrate: adopt %s: %w", legacy, err)
		}
		rs = append(rs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrate: adopt %s: %w", legacy, err)
	}
	for _, r := range rs {
		name := ""
		if r.v >= 1 && int(r.v) <= len(steps) {
			name = steps[r.v-1].Name
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO `+sc.Table+` (version, name, applied_at) VALUES (?, ?, ?)`, r.v, name, r.at); err != nil {
			return fmt.Errorf("migrate: adopt %s: %w", legacy, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE `+legacy); err != nil {
		return fmt.Errorf("migrate: adopt %s: %w", legacy, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: adopt %s: %w", legacy, err)
	}
	return nil
}

// Snapshot writes a consistent copy of the SQLite database at src to dst,
// which must not exist, while other connections may go on writing src:
// VACUUM INTO reads one committed state (what the write-ahead log holds
// included) and writes it compacted into a file of its own. The copy is
// then checked with PRAGMA quick_check. The handle on src runs that one
// statement, which writes only dst (SQLite refuses VACUUM INTO on a
// query-only handle, so src is opened as a plain one).
func Snapshot(ctx context.Context, src, dst string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("sqlite %s: not a regular file", src)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("sqlite %s: snapshot into %s: %w", src, dst, fs.ErrExist)
	}
	db, err := sql.Open("sqlite", dsn(src, false))
	if err != nil {
		return fmt.Errorf("sqlite %s: open: %w", src, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		os.Remove(dst) // what a failed VACUUM INTO left
		return fmt.Errorf("sqlite %s: snapshot: %w", src, classify(err))
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("sqlite %s: close: %w", src, err)
	}
	return QuickCheck(ctx, dst)
}

// ErrDamaged is what a *DamagedError is: a file SQLite finds damaged, or
// that is not a database although it starts like one.
var ErrDamaged = errors.New("sqlite: the file is damaged")

// DamagedError carries SQLite's own words on a damaged file.
type DamagedError struct{ Detail string }

func (e *DamagedError) Error() string        { return ErrDamaged.Error() + ": " + e.Detail }
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// classify joins SQLite's errors that have a meaning of their own to that
// meaning: a damaged file becomes a *DamagedError, a full disk
// syscall.ENOSPC.
func classify(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return &DamagedError{Detail: err.Error()}
	case sqlite3.SQLITE_FULL:
		return diskFull{err}
	}
	return err
}

// diskFull is SQLite's SQLITE_FULL said as the operating system says it,
// which callers already translate; SQLite's own error stays in the chain.
type diskFull struct{ err error }

func (e diskFull) Error() string   { return syscall.ENOSPC.Error() }
func (e diskFull) Unwrap() []error { return []error{syscall.ENOSPC, e.err} }

// QuickCheck runs PRAGMA quick_check on the database at path, opened
// query-only, and returns ErrDamaged with SQLite's first findings when it
// is not "ok".
func QuickCheck(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return fmt.Errorf("sqlite %s: open: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		return fmt.Errorf("sqlite %s: quick_check: %w", path, classify(err))
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("sqlite %s: quick_check: %w", path, err)
		}
		if s != "ok" {
			found = append(found, s)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite %s: quick_check: %w", path, err)
	}
	if len(found) > 0 {
		return fmt.Errorf("sqlite %s: %w", path, &DamagedError{Detail: strings.Join(found, "; ")})
	}
	return nil
}

// dsn is the data source of a handle on path with the busy timeout and
// nothing else, query-only if asked.
func dsn(path string, queryOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(int(BusyTimeout/time.Millisecond))+")")
	if queryOnly {
		q.Add("_pragma", "query_only(1)")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}
