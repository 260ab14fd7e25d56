// Package usersdb is the dashboard's user and session store: a SQLite file
// (through internal/sqlitedb, numbered schema steps) holding the municipal
// staff who may log in, their role and profile, an argon2id hash of their
// password, and the server-side sessions created at login. The types and
// rules it stores by are internal/users; internal/central wires it.
//
// Session tokens are 256 random bits; the database keeps only their
// SHA-256, so a stolen database file does not yield a usable session.
//
// At most users.Options.MaxHashes argon2id hashes run at once and at most
// users.Options.MaxWaiting callers wait for one; beyond that a call returns
// users.ErrBusy at once instead of queueing (see internal/users).
//
// The store reads no clock: every call that depends on time takes now.
//
// Overview of its parts: the user and session store in `users.db` (SQLite
// through `internal/sqlitedb`, numbered schema steps, a release file adopted;
// session tokens kept as SHA-256 only; argon2id runs bounded, `users.ErrBusy`
// beyond); wired by `internal/central` and `cmd/sossego`.
package usersdb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/sossego/sossego/internal/sqlitedb"
	"github.com/sossego/sossego/internal/users"
)

// FileName is the store's file inside the service's data directory.
const FileName = "users.db"

// Store is the user and session database.
type Store struct {
	db      *sql.DB
	params  users.Params
	dummy   string        // hash checked when the user does not exist (same cost)
	slots   chan struct{} // one token per running hash
	waiting atomic.Int64  // callers waiting for a slot
	maxWait int64
	gate    func() // tests: runs while a slot is held, before hashing
}

// OpenDir opens (creating if needed) FileName inside dir.
func OpenDir(ctx context.Context, dir string, opts users.Options) (*Store, error) {
	return Open(ctx, filepath.Join(dir, FileName), opts)
}

// Open opens (creating if needed) the store at path.
func Open(ctx context.Context, path string, opts users.Options) (*Store, error) {
	db, err := sqlitedb.Open(path, sqlitedb.Options{ForeignKeys: true, MaxOpenConns: 4})
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	s := &Store{db: db, params: opts.Params}
	if s.params == (users.Params{}) {
		s.params = users.DefaultParams
	}
	n := opts.MaxHashes
	if n <= 0 {
		n = users.DefaultMaxHashes()
	}
	s.slots = make(chan struct{}, n)
	s.maxWait = int64(opts.MaxWaiting)
	if s.maxWait <= 0 {
		s.maxWait = 4 * int64(n)
	}
	// Files of earlier releases hold the same tables, created IF NOT
	// EXISTS: step 1 runs harmlessly on them and is recorded.
	if err := sqlitedb.Migrate(ctx, db, sqlitedb.Scheme{Table: "users_migrations"}, migrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("users: open %s: %w", path, err)
	}
	d, err := users.HashPassword("sossego-dummy-password", s.params)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.dummy = d
	return s, nil
}

// migrations are the users store's schema steps (sqlitedb.Migrate).
var migrations = []sqlitedb.Step{
	{Name: "users and sessions", SQL: schema},
	{Name: "full name, matrícula, e-mail and phone", SQL: `
ALTER TABLE users ADD COLUMN full_name TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN matricula TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN email TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN phone TEXT NOT NULL DEFAULT '';
`},
}

// userCols are the columns scanUser reads, in its order.
const userCols = `name, role, full_name, matricula, email, phone, created, disabled`

type scanner interface{ Scan(dest ...any) error }

func scanUser(row scanner, extra ...any) (users.User, error) {
	var u users.User
	var created, disabled int64
	dest := append([]any{&u.Name, &u.Role, &u.FullName, &u.Matricula, &u.Email, &u.Phone, &created, &disabled}, extra...)
	if err := row.Scan(dest...); err != nil {
		return users.User{}, err
	}
	u.Created = time.UnixMilli(created).UTC()
	u.Disabled = disabled != 0
	return u, nil
}

const schema = `
CREATE TABLE IF NOT EXISTS users (
	name TEXT PRIMARY KEY,
	role TEXT NOT NULL,
	hash TEXT NOT NULL,
	created INTEGER NOT NULL,
	disabled INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE TABLE IF NOT EXISTS sessions (
	token_sha256 TEXT PRIMARY KEY,
	name TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
	csrf TEXT NOT NULL,
	created INTEGER NOT NULL,
	expires INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS sessions_expires ON sessions(expires);
`

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("users: close: %w", err)
	}
	return nil
}

// Add creates a user with an empty profile (a login and a role only, as
// before users had profiles; Create checks and stores the profile too).
func (s *Store) Add(ctx context.Context, name string, role users.Role, password string, now time.Time) (users.User, error) {
	if err := users.CheckName(name); err != nil {
		return users.User{}, err
	}
	if _, err := users.ParseRole(string(role)); err != nil {
		return users.User{}, err
	}
	if len([]rune(password)) < users.MinPasswordLen {
		return users.User{}, fmt.Errorf("users: %w: at least %d characters", users.ErrWeakPassword, users.MinPasswordLen)
	}
	h, err := s.hash(ctx, password)
	if err != nil {
		return users.User{}, err
	}
	return s.insert(ctx, name, role, h, users.Profile{}, now)
}

// SetPassword replaces a user's password and ends all their sessions.
func (s *Store) SetPassword(ctx context.Context, name, password string) error {
	if len([]rune(password)) < users.MinPasswordLen {
		return fmt.Errorf("users: %w: at least %d characters", users.ErrWeakPassword, users.MinPasswordLen)
	}
	h, err := s.hash(ctx, password)
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE users SET hash=? WHERE name=?`, h, name)
	if err != nil {
		return fmt.Errorf("users: set password %q: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("users: set password %q: %w", name, users.ErrNotFound)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE name=?`, name); err != nil {
		return fmt.Errorf("users: set password %q: end sessions: %w", name, err)
	}
	return nil
}

// SetDisabled disables (or re-enables) a user; disabling ends their sessions.
func (s *Store) SetDisabled(ctx context.Context, name string, disabled bool) error {
	res, err := s.db.ExecContext(ctx, `UPDATE users SET disabled=? WHERE name=?`, boolInt(disabled), name)
	if err != nil {
		return fmt.Errorf("users: disable %q: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("users: disable %q: %w", name, users.ErrNotFound)
	}
	if disabled {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE name=?`, name); err != nil {
			return fmt.Errorf("users: disable %q: end sessions: %w", name, err)
		}
	}
	return nil
}

// List returns every user, by name.
func (s *Store) List(ctx context.Context) ([]users.User, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+userCols+` FROM users ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("users: list: %w", err)
	}
	defer rows.Close()
	var out []users.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("users: list: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("users: list: %w", err)
	}
	return out, nil
}

// Authenticate checks a name and password. Unknown users, disabled users and
// wrong passwords all return users.ErrBadCredentials after the same hashing work.
// When too many checks are running already it returns users.ErrBusy without
// checking anything (see the package comment).
func (s *Store) Authenticate(ctx context.Context, name, password string) (users.User, error) {
	release, err := s.acquire(ctx)
	if err != nil {
		return users.User{}, fmt.Errorf("users: authenticate: %w", err)
	}
	defer release()
	var hash string
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT `+userCols+`, hash FROM users WHERE name=?`, name), &hash)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, _ = users.VerifyPassword(s.dummy, password)
		return users.User{}, fmt.Errorf("users: authenticate: %w", users.ErrBadCredentials)
	case err != nil:
		return users.User{}, fmt.Errorf("users: authenticate: %w", err)
	}
	ok, err := users.VerifyPassword(hash, password)
	if err != nil {
		return users.User{}, fmt.Errorf("users: authenticate %q: %w", name, err)
	}
	if !ok || u.Disabled {
		return users.User{}, fmt.Errorf("users: authenticate: %w", users.ErrBadCredentials)
	}
	return u, nil
}

// CreateSession starts a session for u lasting ttl from now.
func (s *Store) CreateSession(ctx context.Context, u users.User, now time.Time, ttl time.Duration) (users.Session, error) {
	tok, err := randomToken()
	if err != nil {
		return users.Session{}, err
	}
	csrf, err := randomToken()
	if err != nil {
		return users.Session{}, err
	}
	now = now.UTC().Truncate(time.Millisecond)
	ss := users.Session{Token: tok, User: u, CSRF: csrf, Created: now, Expires: now.Add(ttl)}
	_, err = s.db.ExecContext(ctx, `INSERT INTO sessions(token_sha256, name, csrf, created, expires) VALUES(?,?,?,?,?)`,
		tokenKey(tok), u.Name, csrf, now.UnixMilli(), ss.Expires.UnixMilli())
	if err != nil {
		return users.Session{}, fmt.Errorf("users: create session for %q: %w", u.Name, err)
	}
	return ss, nil
}

// Session returns the live session for token, or users.ErrNoSession.
func (s *Store) Session(ctx context.Context, token string, now time.Time) (users.Session, error) {
	if token == "" || len(token) > 128 {
		return users.Session{}, fmt.Errorf("users: session: %w", users.ErrNoSession)
	}
	ss := users.Session{Token: token}
	var created, expires int64
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT u.name, u.role, u.full_name, u.matricula, u.email, u.phone, u.created, u.disabled,
		s.csrf, s.created, s.expires FROM sessions s JOIN users u ON u.name = s.name WHERE s.token_sha256=?`, tokenKey(token)),
		&ss.CSRF, &created, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return users.Session{}, fmt.Errorf("users: session: %w", users.ErrNoSession)
	case err != nil:
		return users.Session{}, fmt.Errorf("users: session: %w", err)
	}
	ss.User = u
	ss.Created = time.UnixMilli(created).UTC()
	ss.Expires = time.UnixMilli(expires).UTC()
	if u.Disabled || !now.Before(ss.Expires) {
		return users.Session{}, fmt.Errorf("users: session: %w", users.ErrNoSession)
	}
	return ss, nil
}

// DeleteSession ends a session (logout). Unknown tokens are not an error.
func (s *Store) DeleteSession(ctx context.Context, token string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE token_sha256=?`, tokenKey(token)); err != nil {
		return fmt.Errorf("users: delete session: %w", err)
	}
	return nil
}

// PurgeExpired deletes sessions that expired at or before now.
func (s *Store) PurgeExpired(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE expires <= ?`, now.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("users: purge sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// acquire takes a hashing slot, waiting for one only while fewer than
// maxWait callers already do; release gives it back.
func (s *Store) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-s.slots }
	select {
	case s.slots <- struct{}{}:
	default:
		if s.waiting.Add(1) > s.maxWait {
			s.waiting.Add(-1)
			return nil, users.ErrBusy
		}
		defer s.waiting.Add(-1)
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s.gate != nil {
		s.gate()
	}
	return release, nil
}

// hash is users.HashPassword within a hashing slot.
func (s *Store) hash(ctx context.Context, pw string) (string, error) {
	release, err := s.acquire(ctx)
	if err != nil {
		return "", fmt.Errorf("users: hash password: %w", err)
	}
	defer release()
	return users.HashPassword(pw, s.params)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func randomToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("users: random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

func tokenKey(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}
