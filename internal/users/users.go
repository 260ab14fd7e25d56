// Package users is the dashboard's user and session store: a SQLite file
// (modernc.org/sqlite) holding the municipal staff who may log in, their
// role, an argon2id hash of their password, and the server-side sessions
// created at login.
//
// Passwords are never stored: only an argon2id hash in the PHC string format
// ($argon2id$v=19$m=…,t=…,p=…$salt$hash), so the cost parameters can be
// raised later without invalidating existing hashes. Session tokens are 256
// random bits; the database keeps only their SHA-256, so a stolen database
// file does not yield a usable session.
//
// Each argon2id hash holds Params.MemKiB of memory (64 MiB by default) for
// its whole computation, so the store bounds how many run at once
// (Options.MaxHashes) and how many callers may wait for one
// (Options.MaxWaiting); beyond that a call returns ErrBusy at once instead
// of queueing. A burst of logins therefore costs at most MaxHashes × MemKiB
// of memory, however many arrive.
//
// The store reads no clock: every call that depends on time takes now.
package users

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"golang.org/x/crypto/argon2"

	"github.com/sossego/sossego/internal/sqlitedb"
)

// FileName is the store's file inside the service's data directory.
const FileName = "users.db"

// Role is what a user may do.
type Role string

// The three roles. An operador watches levels and alerts; a fiscal also acts
// on alerts and issues notices; an admin manages users and the registry.
const (
	Operador Role = "operador"
	Fiscal   Role = "fiscal"
	Admin    Role = "admin"
)

// Roles lists every role.
var Roles = []Role{Operador, Fiscal, Admin}

// ParseRole accepts a role name.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("users: %w: %q (use admin, fiscal or operador)", ErrBadRole, s)
}

// Errors callers branch on.
var (
	ErrBadRole        = errors.New("unknown role")
	ErrBadName        = errors.New("invalid user name")
	ErrWeakPassword   = errors.New("password too short")
	ErrExists         = errors.New("user already exists")
	ErrNotFound       = errors.New("user not found")
	ErrBadCredentials = errors.New("wrong user name or password")
	ErrNoSession      = errors.New("no such session or session expired")
	// ErrBusy: every hashing slot is taken and the waiting line is full;
	// nothing was checked, the caller may try again in a moment.
	ErrBusy = errors.New("too many password checks in progress")
)

// MinPasswordLen is the shortest password Add accepts.
const MinPasswordLen = 10

// User is one account.
type User struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Profile is the person behind the login: the name, matrícula and
	// contacts the documents and the audit trail print.
	Profile
	Created  time.Time `json:"created"`
	Disabled bool      `json:"disabled,omitempty"`
}

// Session is a logged-in browser.
type Session struct {
	// Token is the secret the cookie carries. Only CreateSession returns it;
	// Session echoes back the token it was given.
	Token   string
	User    User
	CSRF    string // per-session anti-CSRF token the UI sends in X-CSRF-Token
	Created time.Time
	Expires time.Time
}

// Params are the argon2id cost parameters.
type Params struct {
	Time    uint32 // iterations
	MemKiB  uint32 // memory in KiB
	Threads uint8
}

// DefaultParams follow RFC 9106 §4's second recommendation, scaled to a small
// municipal server (2 cores): 64 MiB, 3 passes.
var DefaultParams = Params{Time: 3, MemKiB: 64 * 1024, Threads: 2}

// Options configure a Store; the zero value is usable.
type Options struct {
	Params Params // zero: DefaultParams
	// MaxHashes bounds the argon2id computations running at once (each
	// holds Params.MemKiB of memory). 0: GOMAXPROCS, at most 4.
	MaxHashes int
	// MaxWaiting bounds the callers waiting for a hashing slot; one more
	// gets ErrBusy at once. 0: 4 × MaxHashes.
	MaxWaiting int
}

// Store is the user and session database.
type Store struct {
	db      *sql.DB
	params  Params
	dummy   string        // hash checked when the user does not exist (same cost)
	slots   chan struct{} // one token per running hash
	waiting atomic.Int64  // callers waiting for a slot
	maxWait int64
	gate    func() // tests: runs while a slot is held, before hashing
}

// DefaultMaxHashes is Options.MaxHashes's default: GOMAXPROCS, at most 4
// (4 × 64 MiB of argon2id memory).
func DefaultMaxHashes() int { return min(max(runtime.GOMAXPROCS(0), 1), 4) }

// OpenDir opens (creating if needed) FileName inside dir.
func OpenDir(ctx context.Context, dir string, opts Options) (*Store, error) {
	return Open(ctx, filepath.Join(dir, FileName), opts)
}

// Open opens (creating if needed) the store at path.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	db, err := sqlitedb.Open(path, sqlitedb.Options{ForeignKeys: true, MaxOpenConns: 4})
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	s := &Store{db: db, params: opts.Params}
	if s.params == (Params{}) {
		s.params = DefaultParams
	}
	n := opts.MaxHashes
	if n <= 0 {
		n = DefaultMaxHashes()
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
	d, err := hashPassword("sossego-dummy-password", s.params)
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

func scanUser(row scanner, extra ...any) (User, error) {
	var u User
	var created, disabled int64
	dest := append([]any{&u.Name, &u.Role, &u.FullName, &u.Matricula, &u.Email, &u.Phone, &created, &disabled}, extra...)
	if err := row.Scan(dest...); err != nil {
		return User{}, err
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

// CheckName reports whether name is an acceptable login: 1–64 letters,
// digits, '.', '_', '-' or '@', starting with a letter or digit.
func CheckName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("users: %w: %q must have 1 to 64 characters", ErrBadName, name)
	}
	for i, r := range name {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r) || (i > 0 && strings.ContainsRune("._-@", r))
		if !ok {
			return fmt.Errorf("users: %w: %q (letters, digits and . _ - @ only)", ErrBadName, name)
		}
	}
	return nil
}

// Add creates a user with an empty profile (a login and a role only, as
// before users had profiles; Create checks and stores the profile too).
func (s *Store) Add(ctx context.Context, name string, role Role, password string, now time.Time) (User, error) {
	if err := CheckName(name); err != nil {
		return User{}, err
	}
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	if len([]rune(password)) < MinPasswordLen {
		return User{}, fmt.Errorf("users: %w: at least %d characters", ErrWeakPassword, MinPasswordLen)
	}
	h, err := s.hash(ctx, password)
	if err != nil {
		return User{}, err
	}
	return s.insert(ctx, name, role, h, Profile{}, now)
}

// SetPassword replaces a user's password and ends all their sessions.
func (s *Store) SetPassword(ctx context.Context, name, password string) error {
	if len([]rune(password)) < MinPasswordLen {
		return fmt.Errorf("users: %w: at least %d characters", ErrWeakPassword, MinPasswordLen)
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
		return fmt.Errorf("users: set password %q: %w", name, ErrNotFound)
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
		return fmt.Errorf("users: disable %q: %w", name, ErrNotFound)
	}
	if disabled {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE name=?`, name); err != nil {
			return fmt.Errorf("users: disable %q: end sessions: %w", name, err)
		}
	}
	return nil
}

// List returns every user, by name.
func (s *Store) List(ctx context.Context) ([]User, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+userCols+` FROM users ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("users: list: %w", err)
	}
	defer rows.Close()
	var out []User
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
// wrong passwords all return ErrBadCredentials after the same hashing work.
// When too many checks are running already it returns ErrBusy without
// checking anything (see the package comment).
func (s *Store) Authenticate(ctx context.Context, name, password string) (User, error) {
	release, err := s.acquire(ctx)
	if err != nil {
		return User{}, fmt.Errorf("users: authenticate: %w", err)
	}
	defer release()
	var hash string
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT `+userCols+`, hash FROM users WHERE name=?`, name), &hash)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, _ = checkPassword(s.dummy, password)
		return User{}, fmt.Errorf("users: authenticate: %w", ErrBadCredentials)
	case err != nil:
		return User{}, fmt.Errorf("users: authenticate: %w", err)
	}
	ok, err := checkPassword(hash, password)
	if err != nil {
		return User{}, fmt.Errorf("users: authenticate %q: %w", name, err)
	}
	if !ok || u.Disabled {
		return User{}, fmt.Errorf("users: authenticate: %w", ErrBadCredentials)
	}
	return u, nil
}

// CreateSession starts a session for u lasting ttl from now.
func (s *Store) CreateSession(ctx context.Context, u User, now time.Time, ttl time.Duration) (Session, error) {
	tok, err := randomToken()
	if err != nil {
		return Session{}, err
	}
	csrf, err := randomToken()
	if err != nil {
		return Session{}, err
	}
	now = now.UTC().Truncate(time.Millisecond)
	ss := Session{Token: tok, User: u, CSRF: csrf, Created: now, Expires: now.Add(ttl)}
	_, err = s.db.ExecContext(ctx, `INSERT INTO sessions(token_sha256, name, csrf, created, expires) VALUES(?,?,?,?,?)`,
		tokenKey(tok), u.Name, csrf, now.UnixMilli(), ss.Expires.UnixMilli())
	if err != nil {
		return Session{}, fmt.Errorf("users: create session for %q: %w", u.Name, err)
	}
	return ss, nil
}

// Session returns the live session for token, or ErrNoSession.
func (s *Store) Session(ctx context.Context, token string, now time.Time) (Session, error) {
	if token == "" || len(token) > 128 {
		return Session{}, fmt.Errorf("users: session: %w", ErrNoSession)
	}
	ss := Session{Token: token}
	var created, expires int64
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT u.name, u.role, u.full_name, u.matricula, u.email, u.phone, u.created, u.disabled,
		s.csrf, s.created, s.expires FROM sessions s JOIN users u ON u.name = s.name WHERE s.token_sha256=?`, tokenKey(token)),
		&ss.CSRF, &created, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Session{}, fmt.Errorf("users: session: %w", ErrNoSession)
	case err != nil:
		return Session{}, fmt.Errorf("users: session: %w", err)
	}
	ss.User = u
	ss.Created = time.UnixMilli(created).UTC()
	ss.Expires = time.UnixMilli(expires).UTC()
	if u.Disabled || !now.Before(ss.Expires) {
		return Session{}, fmt.Errorf("users: session: %w", ErrNoSession)
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
			return nil, ErrBusy
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

// hash is hashPassword within a hashing slot.
func (s *Store) hash(ctx context.Context, pw string) (string, error) {
	release, err := s.acquire(ctx)
	if err != nil {
		return "", fmt.Errorf("users: hash password: %w", err)
	}
	defer release()
	return hashPassword(pw, s.params)
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

// hashPassword returns the PHC string of an argon2id hash of pw.
func hashPassword(pw string, p Params) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("users: salt: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.MemKiB, p.Threads, 32)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemKiB, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// checkPassword verifies pw against a PHC argon2id string.
func checkPassword(phc, pw string) (bool, error) {
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, fmt.Errorf("users: stored hash is not argon2id")
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false, fmt.Errorf("users: stored hash has unsupported version %q", parts[2])
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemKiB, &p.Time, &p.Threads); err != nil ||
		p.Time == 0 || p.MemKiB == 0 || p.Threads == 0 || p.MemKiB > 4<<20 || p.Time > 64 {
		return false, fmt.Errorf("users: stored hash has bad parameters %q", parts[3])
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("users: stored hash salt: %w", err)
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 128 {
		return false, fmt.Errorf("users: stored hash key is malformed")
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.MemKiB, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
