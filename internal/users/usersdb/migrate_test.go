package usersdb

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/sossego/sossego/internal/sqlitedb"

	"github.com/sossego/sossego/internal/users"
)

// TestOpensFileOfEarlierRelease: a users file made before the store kept
// schema versions (its tables created IF NOT EXISTS at every open) opens
// with its users, and records its first step.
func TestOpensFileOfEarlierRelease(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, schema); err != nil {
		t.Fatal(err)
	}
	h, err := users.HashPassword("senha-antiga-2026", fast.Params)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO users (name, role, hash, created) VALUES ('ana', 'admin', ?, ?)`, h, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	old.Close()

	s, err := Open(ctx, path, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "ana" || list[0].Role != users.Admin {
		t.Fatalf("users after open: %+v, %v", list, err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM users_migrations`).Scan(&n); err != nil || n != len(migrations) {
		t.Errorf("users_migrations has %d rows (err %v), want %d", n, err, len(migrations))
	}
}

// TestMigratesFileOfCurrentRelease: a users.db written by the release
// before profiles (schema version 1, with a user and a live session) gains
// the profile columns; the user keeps logging in, the session stays valid
// and the profile can be filled in.
func TestMigratesFileOfCurrentRelease(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := sqlitedb.Open(path, sqlitedb.Options{ForeignKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitedb.Migrate(ctx, db, sqlitedb.Scheme{Table: "users_migrations"}, migrations[:1]); err != nil {
		t.Fatal(err)
	}
	h, err := users.HashPassword("senha-da-release-1", fast.Params)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO users (name, role, hash, created) VALUES ('joao', 'fiscal', ?, ?)`, h, t0.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO sessions (token_sha256, name, csrf, created, expires) VALUES (?, 'joao', 'c', ?, ?)`,
		tokenKey("tok"), t0.UnixMilli(), t0.Add(time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, path, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM users_migrations`).Scan(&v); err != nil || v != 2 {
		t.Fatalf("schema version %d (%v), want 2", v, err)
	}
	u, err := s.Authenticate(ctx, "joao", "senha-da-release-1")
	if err != nil || u.Role != users.Fiscal || u.Profile != (users.Profile{}) || !u.Created.Equal(t0) {
		t.Fatalf("Authenticate after migration: %+v, %v", u, err)
	}
	if ss, err := s.Session(ctx, "tok", t0.Add(time.Minute)); err != nil || ss.User.Name != "joao" {
		t.Fatalf("session after migration: %+v, %v", ss, err)
	}
	name, mat := "João da Silva", "4521-7"
	if u, err = s.Update(ctx, "joao", users.Change{FullName: &name, Matricula: &mat}); err != nil || u.FullName != name {
		t.Fatalf("Update after migration: %+v, %v", u, err)
	}
	ss, err := s.Session(ctx, "tok", t0.Add(time.Minute))
	if err != nil || ss.User.FullName != name || ss.User.Matricula != mat {
		t.Fatalf("the session names the person: %+v, %v", ss.User, err)
	}
	// Opening again applies nothing more and keeps the profile.
	s.Close()
	if s, err = Open(ctx, path, fast); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if u, err := s.Get(ctx, "joao"); err != nil || u.FullName != name {
		t.Fatalf("after reopening: %+v, %v", u, err)
	}
}
