package usersdb

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/users"
)

// fast keeps the tests quick under -race; production uses users.DefaultParams.
var fast = users.Options{Params: users.Params{Time: 1, MemKiB: 64, Threads: 1}}

var t0 = time.Date(2026, 3, 14, 22, 30, 0, 0, time.UTC)

func open(t *testing.T) *Store {
	t.Helper()
	s, err := OpenDir(context.Background(), t.TempDir(), fast)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAdd(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	if _, err := s.Add(ctx, "ana", users.Admin, "senha-muito-boa", t0); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, user string
		role       users.Role
		pw         string
		want       error
	}{
		{"ok fiscal", "joao.silva", users.Fiscal, "0123456789", nil},
		{"ok accented name", "joão", users.Operador, "0123456789", nil},
		{"duplicate", "ana", users.Fiscal, "0123456789", users.ErrExists},
		{"empty name", "", users.Fiscal, "0123456789", users.ErrBadName},
		{"space in name", "ana maria", users.Fiscal, "0123456789", users.ErrBadName},
		{"leading dot", ".ana", users.Fiscal, "0123456789", users.ErrBadName},
		{"too long", strings.Repeat("a", 65), users.Fiscal, "0123456789", users.ErrBadName},
		{"bad role", "bia", users.Role("root"), "0123456789", users.ErrBadRole},
		{"short password", "bia", users.Fiscal, "012345678", users.ErrWeakPassword},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := s.Add(ctx, tc.user, tc.role, tc.pw, t0)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Add(%q) error = %v, want %v", tc.user, err, tc.want)
			}
			if err == nil && (u.Name != tc.user || u.Role != tc.role || !u.Created.Equal(t0)) {
				t.Fatalf("Add returned %+v", u)
			}
		})
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range list {
		names = append(names, u.Name+":"+string(u.Role))
	}
	if got, want := strings.Join(names, ","), "ana:admin,joao.silva:fiscal,joão:operador"; got != want {
		t.Fatalf("List = %s, want %s", got, want)
	}
}

func TestAuthenticate(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	for _, u := range []struct {
		name string
		role users.Role
	}{{"fiscal1", users.Fiscal}, {"inativo", users.Operador}} {
		if _, err := s.Add(ctx, u.name, u.role, "correct horse battery", t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetDisabled(ctx, "inativo", true); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, user, pw string
		want           error
		role           users.Role
	}{
		{"right password", "fiscal1", "correct horse battery", nil, users.Fiscal},
		{"wrong password", "fiscal1", "correct horse batterY", users.ErrBadCredentials, ""},
		{"empty password", "fiscal1", "", users.ErrBadCredentials, ""},
		{"unknown user", "ninguem", "correct horse battery", users.ErrBadCredentials, ""},
		{"disabled user", "inativo", "correct horse battery", users.ErrBadCredentials, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := s.Authenticate(ctx, tc.user, tc.pw)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
			if u.Role != tc.role {
				t.Fatalf("role = %q, want %q", u.Role, tc.role)
			}
		})
	}
}

func TestSessions(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	u, err := s.Add(ctx, "op", users.Operador, "correct horse battery", t0)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := s.CreateSession(ctx, u, t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss.Token) < 40 || len(ss.CSRF) < 40 || ss.Token == ss.CSRF {
		t.Fatalf("weak tokens: %+v", ss)
	}
	other, err := s.CreateSession(ctx, u, t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if other.Token == ss.Token {
		t.Fatal("two sessions share a token")
	}
	tests := []struct {
		name  string
		token string
		now   time.Time
		want  error
	}{
		{"fresh", ss.Token, t0, nil},
		{"just before expiry", ss.Token, t0.Add(time.Hour - time.Millisecond), nil},
		{"at expiry", ss.Token, t0.Add(time.Hour), users.ErrNoSession},
		{"unknown token", otherFirst(ss.Token), t0, users.ErrNoSession},
		{"empty token", "", t0, users.ErrNoSession},
		{"huge token", strings.Repeat("a", 4096), t0, users.ErrNoSession},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Session(ctx, tc.token, tc.now)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
			if err == nil && (got.User.Name != "op" || got.User.Role != users.Operador || got.CSRF != ss.CSRF || !got.Expires.Equal(ss.Expires)) {
				t.Fatalf("session = %+v, want %+v", got, ss)
			}
		})
	}

	if err := s.DeleteSession(ctx, ss.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, ss.Token, t0); !errors.Is(err, users.ErrNoSession) {
		t.Fatalf("after logout: %v", err)
	}
	if _, err := s.Session(ctx, other.Token, t0); err != nil {
		t.Fatalf("logout ended another session: %v", err)
	}
	if err := s.SetPassword(ctx, "op", "another good password"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, other.Token, t0); !errors.Is(err, users.ErrNoSession) {
		t.Fatalf("password change kept a session: %v", err)
	}
	if _, err := s.Authenticate(ctx, "op", "another good password"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPassword(ctx, "ghost", "another good password"); !errors.Is(err, users.ErrNotFound) {
		t.Fatalf("SetPassword(ghost) = %v", err)
	}
}

func TestPurgeExpired(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	u, err := s.Add(ctx, "op", users.Operador, "correct horse battery", t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ttl := range []time.Duration{time.Minute, time.Hour, 2 * time.Hour} {
		if _, err := s.CreateSession(ctx, u, t0, ttl); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.PurgeExpired(ctx, t0.Add(time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("PurgeExpired = %d, %v; want 2", n, err)
	}
}

func TestReopenKeepsUsersAndSessions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenDir(ctx, dir, fast)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Add(ctx, "ana", users.Admin, "correct horse battery", t0)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := s.CreateSession(ctx, u, t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Reopen with other cost parameters: old hashes still verify.
	s, err = OpenDir(ctx, dir, users.Options{Params: users.Params{Time: 2, MemKiB: 128, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Authenticate(ctx, "ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, ss.Token, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
}

// TestHashingBounded: at most MaxHashes argon2id computations run at once,
// at most MaxWaiting callers wait for one, and the rest get users.ErrBusy at once
// without any hashing.
func TestHashingBounded(t *testing.T) {
	ctx := context.Background()
	s, err := OpenDir(ctx, t.TempDir(), users.Options{Params: fast.Params, MaxHashes: 2, MaxWaiting: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Add(ctx, "ana", users.Fiscal, "senha-muito-boa", t0); err != nil {
		t.Fatal(err)
	}
	var inGate atomic.Int64
	open := make(chan struct{})
	s.gate = func() { inGate.Add(1); <-open }

	const callers = 10
	type result struct{ err error }
	results := make(chan result, callers)
	for i := 0; i < callers; i++ {
		go func() {
			_, err := s.Authenticate(ctx, "ana", "senha-errada-123")
			results <- result{err}
		}()
	}
	// The busy ones answer while the others are still held.
	busy := 0
	for busy < callers-2-3 {
		r := <-results
		if !errors.Is(r.err, users.ErrBusy) {
			t.Fatalf("a call finished with %v while every slot was held; want users.ErrBusy", r.err)
		}
		busy++
	}
	waitFor(t, func() bool { return inGate.Load() == 2 && s.waiting.Load() == 3 })

	// With the line full, a new caller is refused at once.
	if _, err := s.Authenticate(ctx, "ana", "x"); !errors.Is(err, users.ErrBusy) {
		t.Fatalf("with the line full: %v, want users.ErrBusy", err)
	}
	close(open)
	for i := 0; i < 2+3; i++ {
		if r := <-results; !errors.Is(r.err, users.ErrBadCredentials) {
			t.Fatalf("a held call returned %v, want users.ErrBadCredentials", r.err)
		}
	}
	if got := inGate.Load(); got != 2+3 {
		t.Fatalf("%d calls hashed, want 5 (2 running + 3 waiting)", got)
	}
	if n := s.waiting.Load(); n != 0 || len(s.slots) != 0 {
		t.Fatalf("after the burst: %d waiting, %d slots held", n, len(s.slots))
	}
}

// TestHashingWaiterCancelled: a waiter whose context ends returns its error
// and frees its place in the line.
func TestHashingWaiterCancelled(t *testing.T) {
	ctx := context.Background()
	s, err := OpenDir(ctx, t.TempDir(), users.Options{Params: fast.Params, MaxHashes: 1, MaxWaiting: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	open := make(chan struct{})
	var inGate atomic.Int64
	s.gate = func() { inGate.Add(1); <-open }
	done := make(chan error, 2)
	go func() { _, err := s.Authenticate(ctx, "ninguem", "x"); done <- err }()
	waitFor(t, func() bool { return inGate.Load() == 1 })
	cctx, cancel := context.WithCancel(ctx)
	go func() { _, err := s.Authenticate(cctx, "ninguem", "x"); done <- err }()
	waitFor(t, func() bool { return s.waiting.Load() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	if n := s.waiting.Load(); n != 0 {
		t.Fatalf("%d still waiting", n)
	}
	close(open)
	if err := <-done; !errors.Is(err, users.ErrBadCredentials) {
		t.Fatalf("held call: %v", err)
	}
}

// waitFor polls cond with a generous deadline.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 30 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// otherFirst is tok with its first character changed (a token that starts
// with "x" made "x"+tok[1:] the same token, one run in 64).
func otherFirst(tok string) string {
	if tok[0] == 'x' {
		return "y" + tok[1:]
	}
	return "x" + tok[1:]
}
