// Package monetarydb is the store of the monetary units' values: its own
// SQLite file (FileName in the data directory, through internal/sqlitedb,
// schema steps recorded by sqlitedb.Migrate) with the periods of validity
// and an append-only log of every change. The types and the rules a period
// must meet are internal/monetary; internal/central and cmd/sossego wire it.
//
// Overview of its parts: the store of those values in `monetary.db` (SQLite
// through `internal/sqlitedb`, numbered schema steps), with an append-only
// change log; `Set` checks by `monetary.Check` in the transaction that writes;
// wired by `internal/central` and `cmd/sossego`.
package monetarydb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/monetary"
	"github.com/sossego/sossego/internal/sqlitedb"
)

// FileName is the store's file inside the service's data directory.
const FileName = "monetary.db"

// Store is the SQLite store of unit values.
type Store struct {
	db *sql.DB
}

var migrations = []sqlitedb.Step{{Name: "unit values and their log", SQL: `
CREATE TABLE monetary_values (
	id        INTEGER PRIMARY KEY,
	code_id   TEXT NOT NULL,
	unit      TEXT NOT NULL,
	valid_from TEXT NOT NULL,
	valid_to  TEXT NOT NULL DEFAULT '',
	value     INTEGER NOT NULL CHECK (value > 0),
	act       TEXT NOT NULL,
	set_by    TEXT NOT NULL,
	set_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX monetary_values_unit ON monetary_values(code_id, unit, valid_from);
CREATE TABLE monetary_log (
	seq       INTEGER PRIMARY KEY AUTOINCREMENT,
	at        INTEGER NOT NULL,
	by        TEXT NOT NULL,
	code_id   TEXT NOT NULL,
	unit      TEXT NOT NULL,
	action    TEXT NOT NULL,
	period_id INTEGER NOT NULL,
	valid_from TEXT NOT NULL,
	valid_to  TEXT NOT NULL,
	value     INTEGER NOT NULL,
	act       TEXT NOT NULL
) STRICT;
`}}

// OpenDir opens (creating if needed) FileName inside dir.
func OpenDir(ctx context.Context, dir string) (*Store, error) {
	return Open(ctx, filepath.Join(dir, FileName))
}

// Open opens (creating if needed) the store at path.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sqlitedb.OpenMigrated(ctx, path, sqlitedb.Options{MaxOpenConns: 2}, sqlitedb.Scheme{Table: "monetary_migrations"}, migrations)
	if err != nil {
		return nil, fmt.Errorf("monetary: %w", err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("monetary: close: %w", err)
	}
	return nil
}

const periodCols = `id, code_id, unit, valid_from, valid_to, value, act, set_by, set_at`

type scanner interface{ Scan(dest ...any) error }

func scanPeriod(r scanner) (monetary.Period, error) {
	var p monetary.Period
	var at int64
	if err := r.Scan(&p.ID, &p.CodeID, &p.Unit, &p.From, &p.To, &p.Value, &p.Act, &p.SetBy, &at); err != nil {
		return monetary.Period{}, err
	}
	p.SetAt = time.UnixMilli(at).UTC()
	return p, nil
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func periods(ctx context.Context, q querier, where string, args ...any) ([]monetary.Period, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+periodCols+` FROM monetary_values `+where+` ORDER BY code_id, unit, valid_from`, args...)
	if err != nil {
		return nil, fmt.Errorf("monetary: list: %w", err)
	}
	defer rows.Close()
	out := []monetary.Period{}
	for rows.Next() {
		p, err := scanPeriod(rows)
		if err != nil {
			return nil, fmt.Errorf("monetary: list: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("monetary: list: %w", err)
	}
	return out, nil
}

// Periods returns the stored periods of a code ("" = every code), by code,
// unit and start.
func (s *Store) Periods(ctx context.Context, codeID string) ([]monetary.Period, error) {
	if codeID == "" {
		return periods(ctx, s.db, "")
	}
	return periods(ctx, s.db, "WHERE code_id = ?", codeID)
}

// Set stores a new period after monetary.Check (in one transaction with
// the periods it is checked against): an open period of the same unit that
// started earlier is closed the day before the new one starts; any other
// overlap, an unknown code or unit, a value that is not positive or a
// missing legal act is a *monetary.ValidationError in pt-BR and nothing is
// written.
func (s *Store) Set(ctx context.Context, set monetary.Codes, p monetary.Period, by string, now time.Time) (monetary.Period, error) {
	c, ok := set.Code(strings.TrimSpace(p.CodeID))
	if !ok {
		return monetary.Period{}, &monetary.ValidationError{Problems: []string{fmt.Sprintf("código municipal %q desconhecido: use %s", p.CodeID, strings.Join(set.IDs(), ", "))}}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return monetary.Period{}, fmt.Errorf("monetary: set: %w", err)
	}
	defer tx.Rollback()
	existing, err := periods(ctx, tx, "WHERE code_id = ? AND unit = ?", c.ID, strings.TrimSpace(p.Unit))
	if err != nil {
		return monetary.Period{}, err
	}
	p, closes, err := monetary.Check(c, existing, p)
	if err != nil {
		return monetary.Period{}, err
	}
	at := now.UTC().Truncate(time.Millisecond)
	if closes != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE monetary_values SET valid_to = ? WHERE id = ?`, closes.To, closes.ID); err != nil {
			return monetary.Period{}, fmt.Errorf("monetary: set: %w", err)
		}
		if err := logChange(ctx, tx, at, by, "closed", *closes); err != nil {
			return monetary.Period{}, err
		}
	}
	p.SetBy, p.SetAt = by, at
	res, err := tx.ExecContext(ctx, `INSERT INTO monetary_values (code_id, unit, valid_from, valid_to, value, act, set_by, set_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, p.CodeID, p.Unit, p.From, p.To, int64(p.Value), p.Act, by, at.UnixMilli())
	if err != nil {
		return monetary.Period{}, fmt.Errorf("monetary: set: %w", err)
	}
	if p.ID, err = res.LastInsertId(); err != nil {
		return monetary.Period{}, fmt.Errorf("monetary: set: %w", err)
	}
	if err := logChange(ctx, tx, at, by, "set", p); err != nil {
		return monetary.Period{}, err
	}
	if err := tx.Commit(); err != nil {
		return monetary.Period{}, fmt.Errorf("monetary: set: %w", err)
	}
	return p, nil
}

func logChange(ctx context.Context, tx *sql.Tx, at time.Time, by, action string, p monetary.Period) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO monetary_log (at, by, code_id, unit, action, period_id, valid_from, valid_to, value, act)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, at.UnixMilli(), by, p.CodeID, p.Unit, action, p.ID, p.From, p.To, int64(p.Value), p.Act)
	if err != nil {
		return fmt.Errorf("monetary: log: %w", err)
	}
	return nil
}

// History returns the log of a code's unit (unit "" = every unit of the
// code), oldest first.
func (s *Store) History(ctx context.Context, codeID, unit string) ([]monetary.Change, error) {
	q := `SELECT seq, at, by, code_id, unit, action, period_id, valid_from, valid_to, value, act FROM monetary_log WHERE code_id = ?`
	args := []any{codeID}
	if unit != "" {
		q += ` AND unit = ?`
		args = append(args, unit)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("monetary: history: %w", err)
	}
	defer rows.Close()
	out := []monetary.Change{}
	for rows.Next() {
		var c monetary.Change
		var at int64
		if err := rows.Scan(&c.Seq, &at, &c.By, &c.CodeID, &c.Unit, &c.Action, &c.Period.ID, &c.Period.From, &c.Period.To,
			&c.Period.Value, &c.Period.Act); err != nil {
			return nil, fmt.Errorf("monetary: history: %w", err)
		}
		c.At = time.UnixMilli(at).UTC()
		c.Period.CodeID, c.Period.Unit = c.CodeID, c.Unit
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("monetary: history: %w", err)
	}
	return out, nil
}
