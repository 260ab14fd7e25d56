// Package users is what the dashboard's user and session store keeps, as
// types and without a driver: the municipal staff who may log in, their
// role and profile, the server-side sessions created at login, the rules a
// user's data must meet (pt-BR) and the argon2id password hashes. The SQLite
// store is internal/users/usersdb, wired by internal/central; consumers (the
// dashboard) import only this package.
//
// Passwords are never stored: only an argon2id hash in the PHC string format
// ($argon2id$v=19$m=…,t=…,p=…$salt$hash), so the cost parameters can be
// raised later without invalidating existing hashes.
//
// Each argon2id hash holds Params.MemKiB of memory (64 MiB by default) for
// its whole computation, so the store bounds how many run at once
// (Options.MaxHashes) and how many callers may wait for one
// (Options.MaxWaiting); beyond that a call returns ErrBusy at once instead
// of queueing. A burst of logins therefore costs at most MaxHashes × MemKiB
// of memory, however many arrive.
//
// Overview of its parts: users, roles and sessions as types and without a
// driver: their profile (full name, matrícula, e-mail, phone: what documents
// and the audit trail print; pt-BR validation, a fiscal needs name and
// matrícula; `CheckNewUser`, `Change.Apply`), argon2id password hashes (PHC
// strings), the sentinel errors; what the consumers import.
package users

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unicode"

	"golang.org/x/crypto/argon2"
)

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

// MinPasswordLen is the shortest password a store accepts.
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

// Options configure a store; the zero value is usable.
type Options struct {
	Params Params // zero: DefaultParams
	// MaxHashes bounds the argon2id computations running at once (each
	// holds Params.MemKiB of memory). 0: GOMAXPROCS, at most 4.
	MaxHashes int
	// MaxWaiting bounds the callers waiting for a hashing slot; one more
	// gets ErrBusy at once. 0: 4 × MaxHashes.
	MaxWaiting int
}

// DefaultMaxHashes is Options.MaxHashes's default: GOMAXPROCS, at most 4
// (4 × 64 MiB of argon2id memory).
func DefaultMaxHashes() int { return min(max(runtime.GOMAXPROCS(0), 1), 4) }

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

// HashPassword returns the PHC string of an argon2id hash of pw with a
// random salt. It holds p.MemKiB of memory while it runs: a store bounds how
// many run at once.
func HashPassword(pw string, p Params) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("users: salt: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.MemKiB, p.Threads, 32)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemKiB, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// VerifyPassword checks pw against a PHC argon2id string; a string that is
// not one (or has cost parameters out of bounds) is an error.
func VerifyPassword(phc, pw string) (bool, error) {
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
