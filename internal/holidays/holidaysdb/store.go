// Package holidaysdb is the register of the municipalities' decreed days:
// its own SQLite file (FileName in the data directory, through
// internal/sqlitedb, schema steps recorded by sqlitedb.Migrate) with the
// entries and an append-only log of every change (who, when, why), kept
// append-only by triggers. The types and the rules an entry must meet are
// internal/holidays; internal/central and cmd/sossego wire it, and
// holidays.Apply and holidays.Watch read it.
//
// Overview of its parts: the register of those days in `holidays.db` (SQLite
// through `internal/sqlitedb`, numbered schema steps), its change log kept
// append-only by triggers; `Add` checks by `holidays.Check` in the transaction
// that writes; wired by `internal/central` and `cmd/sossego`.
package holidaysdb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/holidays"
	"github.com/sossego/sossego/internal/sqlitedb"
)

// FileName is the register's file inside the service's data directory.
const FileName = "holidays.db"

// Store is the SQLite register of decreed days.
type Store struct {
	db *sql.DB
}

var migrations = []sqlitedb.Step{{Name: "decreed days and their log", SQL: `
CREATE TABLE holidays (
	id           INTEGER PRIMARY KEY,
	municipality TEXT NOT NULL,
	month_day    TEXT NOT NULL DEFAULT '',
	date         TEXT NOT NULL DEFAULT '',
	since        TEXT NOT NULL DEFAULT '',
	name         TEXT NOT NULL,
	act          TEXT NOT NULL,
	kind         TEXT NOT NULL CHECK (kind IN ('feriado', 'ponto_facultativo')),
	set_by       TEXT NOT NULL,
	set_at       INTEGER NOT NULL,
	CHECK ((month_day = '') <> (date = ''))
) STRICT;
CREATE INDEX holidays_municipality ON holidays(municipality);
CREATE TABLE holidays_log (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	at           INTEGER NOT NULL,
	by           TEXT NOT NULL,
	action       TEXT NOT NULL,
	reason       TEXT NOT NULL DEFAULT '',
	entry_id     INTEGER NOT NULL,
	municipality TEXT NOT NULL,
	month_day    TEXT NOT NULL,
	date         TEXT NOT NULL,
	since        TEXT NOT NULL,
	name         TEXT NOT NULL,
	act          TEXT NOT NULL,
	kind         TEXT NOT NULL
) STRICT;
CREATE TRIGGER holidays_log_append_only_update BEFORE UPDATE ON holidays_log
	BEGIN SELECT RAISE(ABORT, 'holidays_log is append-only'); END;
CREATE TRIGGER holidays_log_append_only_delete BEFORE DELETE ON holidays_log
	BEGIN SELECT RAISE(ABORT, 'holidays_log is append-only'); END;
`}}

// OpenDir opens (creating if needed) FileName inside dir.
func OpenDir(ctx context.Context, dir string) (*Store, error) {
	return Open(ctx, filepath.Join(dir, FileName))
}

// Open opens (creating if needed) the register at path.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sqlitedb.OpenMigrated(ctx, path, sqlitedb.Options{MaxOpenConns: 2}, sqlitedb.Scheme{Table: "holidays_migrations"}, migrations)
	if err != nil {
		return nil, fmt.Errorf("holidays: %w", err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("holidays: close: %w", err)
	}
	return nil
}

const entryCols = `id, municipality, month_day, date, since, name, act, kind, set_by, set_at`

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func list(ctx context.Context, q querier, where string, args ...any) ([]holidays.Entry, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+entryCols+` FROM holidays `+where+
		` ORDER BY municipality, CASE WHEN date = '' THEN month_day ELSE substr(date, 6) END, date, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("holidays: list: %w", err)
	}
	defer rows.Close()
	out := []holidays.Entry{}
	for rows.Next() {
		var e holidays.Entry
		var at int64
		if err := rows.Scan(&e.ID, &e.Municipality, &e.MonthDay, &e.Date, &e.Since, &e.Name, &e.Act, &e.Kind, &e.SetBy, &at); err != nil {
			return nil, fmt.Errorf("holidays: list: %w", err)
		}
		e.SetAt = time.UnixMilli(at).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("holidays: list: %w", err)
	}
	return out, nil
}

// List returns the entries of a municipality ("" = every one), by
// municipality and day of the year.
func (s *Store) List(ctx context.Context, municipality string) ([]holidays.Entry, error) {
	if municipality == "" {
		return list(ctx, s.db, "")
	}
	return list(ctx, s.db, "WHERE municipality = ?", municipality)
}

// Add registers e after holidays.Check, in one transaction with the
// entries it is checked against; a problem is a *holidays.ValidationError
// in pt-BR and nothing is written.
func (s *Store) Add(ctx context.Context, set holidays.Codes, e holidays.Entry, by string, now time.Time) (holidays.Entry, error) {
	c, ok := holidays.Lookup(set, e.Municipality)
	if !ok {
		return holidays.Entry{}, &holidays.ValidationError{Problems: []string{fmt.Sprintf("município %q desconhecido: use %s", e.Municipality, strings.Join(set.IDs(), ", "))}}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return holidays.Entry{}, fmt.Errorf("holidays: add: %w", err)
	}
	defer tx.Rollback()
	existing, err := list(ctx, tx, "WHERE municipality = ?", c.ID)
	if err != nil {
		return holidays.Entry{}, err
	}
	e, err = holidays.Check(c, existing, e)
	if err != nil {
		return holidays.Entry{}, err
	}
	e.SetBy, e.SetAt = by, now.UTC().Truncate(time.Millisecond)
	res, err := tx.ExecContext(ctx, `INSERT INTO holidays (municipality, month_day, date, since, name, act, kind, set_by, set_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.Municipality, e.MonthDay, e.Date, e.Since, e.Name, e.Act, e.Kind, by, e.SetAt.UnixMilli())
	if err != nil {
		return holidays.Entry{}, fmt.Errorf("holidays: add: %w", err)
	}
	if e.ID, err = res.LastInsertId(); err != nil {
		return holidays.Entry{}, fmt.Errorf("holidays: add: %w", err)
	}
	if err := logChange(ctx, tx, e.SetAt, by, "added", "", e); err != nil {
		return holidays.Entry{}, err
	}
	if err := tx.Commit(); err != nil {
		return holidays.Entry{}, fmt.Errorf("holidays: add: %w", err)
	}
	return e, nil
}

// Remove deletes entry id (of municipality, when not "": an id of another
// municipality is not found), logging who removed it and why; it returns
// the removed entry, or holidays.ErrNotFound.
func (s *Store) Remove(ctx context.Context, municipality string, id int64, by, reason string, now time.Time) (holidays.Entry, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return holidays.Entry{}, fmt.Errorf("holidays: remove: %w", err)
	}
	defer tx.Rollback()
	where, args := "WHERE id = ?", []any{id}
	if municipality != "" {
		where, args = where+" AND municipality = ?", append(args, municipality)
	}
	got, err := list(ctx, tx, where, args...)
	if err != nil {
		return holidays.Entry{}, err
	}
	if len(got) == 0 {
		return holidays.Entry{}, fmt.Errorf("%w: %d", holidays.ErrNotFound, id)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM holidays WHERE id = ?`, id); err != nil {
		return holidays.Entry{}, fmt.Errorf("holidays: remove: %w", err)
	}
	reason = holidays.NormalizeReason(reason)
	if err := logChange(ctx, tx, now.UTC().Truncate(time.Millisecond), by, "removed", reason, got[0]); err != nil {
		return holidays.Entry{}, err
	}
	if err := tx.Commit(); err != nil {
		return holidays.Entry{}, fmt.Errorf("holidays: remove: %w", err)
	}
	return got[0], nil
}

func logChange(ctx context.Context, tx *sql.Tx, at time.Time, by, action, reason string, e holidays.Entry) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO holidays_log (at, by, action, reason, entry_id, municipality, month_day, date, since, name, act, kind)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, at.UnixMilli(), by, action, reason, e.ID, e.Municipality, e.MonthDay, e.Date, e.Since, e.Name, e.Act, e.Kind)
	if err != nil {
		return fmt.Errorf("holidays: log: %w", err)
	}
	return nil
}

// History returns the log of a municipality ("" = every one), oldest first.
func (s *Store) History(ctx context.Context, municipality string) ([]holidays.Change, error) {
	q := `SELECT seq, at, by, action, reason, entry_id, municipality, month_day, date, since, name, act, kind FROM holidays_log`
	var args []any
	if municipality != "" {
		q += ` WHERE municipality = ?`
		args = append(args, municipality)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("holidays: history: %w", err)
	}
	defer rows.Close()
	out := []holidays.Change{}
	for rows.Next() {
		var c holidays.Change
		var at int64
		e := &c.Entry
		if err := rows.Scan(&c.Seq, &at, &c.By, &c.Action, &c.Reason, &e.ID, &e.Municipality, &e.MonthDay, &e.Date, &e.Since, &e.Name, &e.Act, &e.Kind); err != nil {
			return nil, fmt.Errorf("holidays: history: %w", err)
		}
		c.At = time.UnixMilli(at).UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("holidays: history: %w", err)
	}
	return out, nil
}

// Seq is the number of the last change (0 for an empty register):
// holidays.Watch re-reads the register when it moves.
func (s *Store) Seq(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM holidays_log`).Scan(&n); err != nil {
		return 0, fmt.Errorf("holidays: seq: %w", err)
	}
	return n, nil
}
