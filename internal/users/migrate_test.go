package users

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"
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
	h, err := hashPassword("senha-antiga-2026", fast.Params)
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
	if err != nil || len(list) != 1 || list[0].Name != "ana" || list[0].Role != Admin {
		t.Fatalf("users after open: %+v, %v", list, err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM users_migrations`).Scan(&n); err != nil || n != len(migrations) {
		t.Errorf("users_migrations has %d rows (err %v), want %d", n, err, len(migrations))
	}
}
