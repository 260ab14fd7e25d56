package cases

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestOpensFileOfEarlierRelease: a case file whose versions are kept in
// cases_schema (how earlier releases kept them) opens, keeps its rows, moves
// its versions to cases_migrations and runs nothing twice.
func TestOpensFileOfEarlierRelease(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cases.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE cases_schema (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`,
		migrations[0].SQL,
		`INSERT INTO cases_schema VALUES (1, 1000)`,
		migrations[1].SQL,
		`INSERT INTO cases_schema VALUES (2, 2000)`,
		// The alerts' store shares the file and keeps its own versions.
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
		`INSERT INTO schema_migrations VALUES (1, 'a', 0), (2, 'b', 0), (3, 'c', 0)`,
		`INSERT INTO cases_alert_triage (alert_id, acked_by, acked_name, acked_at, updated_at) VALUES ('s/a', 'f', 'Fiscal', 5000, 5000)`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tr, err := s.Triage(ctx, "s/a")
	if err != nil || !tr.AckedAt.Equal(time.UnixMilli(5000)) || tr.AckedName != "Fiscal" {
		t.Errorf("triage row after open: %+v, %v", tr, err)
	}
	var n, legacy int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM cases_migrations WHERE version IN (1, 2)`).Scan(&n); err != nil || n != 2 {
		t.Errorf("cases_migrations holds %d of versions 1 and 2 (err %v)", n, err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != 3 {
		t.Errorf("the alerts' versions: %d rows (err %v), want their 3 untouched", n, err)
	}
	s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'cases_schema'`).Scan(&legacy)
	if legacy != 0 {
		t.Error("cases_schema is still there")
	}
}
