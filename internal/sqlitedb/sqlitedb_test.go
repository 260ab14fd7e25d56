package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var sc = Scheme{Table: "schema_migrations"}

func pragma(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestOpenPragmas(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		want map[string]string
	}{
		{"defaults", Options{}, map[string]string{"journal_mode": "wal", "synchronous": "2", "busy_timeout": "10000", "foreign_keys": "0", "query_only": "0", "wal_autocheckpoint": "1000"}},
		{"normal with keys", Options{Sync: SyncNormal, ForeignKeys: true, WALAutocheckpoint: 10000},
			map[string]string{"synchronous": "1", "foreign_keys": "1", "wal_autocheckpoint": "10000"}},
		{"query only", Options{QueryOnly: true}, map[string]string{"query_only": "1"}},
		{"16 KiB pages", Options{PageSize: 16384}, map[string]string{"page_size": "16384", "journal_mode": "wal"}},
		{"incremental vacuum, small cache, bounded WAL", Options{PageSize: 8192, IncrementalVacuum: true, CacheKiB: 256, JournalSizeLimit: 1 << 20},
			map[string]string{"page_size": "8192", "auto_vacuum": "2", "cache_size": "-256", "journal_size_limit": "1048576", "journal_mode": "wal"}},
		{"incremental vacuum, default pages", Options{IncrementalVacuum: true}, map[string]string{"page_size": "4096", "auto_vacuum": "2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dir with space", "x.db")
			if _, err := Open(path, c.o); err == nil {
				t.Fatal("opened a file in a folder that does not exist")
			}
			path = filepath.Join(t.TempDir(), "a b#?.db") // characters a DSN must escape
			db, err := Open(path, c.o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for k, want := range c.want {
				if got := pragma(t, db, k); got != want {
					t.Errorf("%s = %s, want %s", k, got, want)
				}
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "x.db"), Options{Sync: "OFF"}); err == nil {
		t.Error("synchronous OFF accepted")
	}
}

func versions(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT version || ':' || name FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	ran := 0
	steps := []Step{
		{Name: "t", SQL: `CREATE TABLE IF NOT EXISTS t (a INTEGER)`},
		{Name: "t.b", SQL: `ALTER TABLE t ADD COLUMN b INTEGER NOT NULL DEFAULT 7`},
		{Name: "rows", Tx: func(ctx context.Context, tx *sql.Tx) error {
			ran++
			_, err := tx.ExecContext(ctx, `INSERT INTO t (a) VALUES (1), (2)`)
			return err
		}},
	}
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, db, sc, steps[:2]); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, db, sc, steps); err != nil { // the next release adds a step
		t.Fatal(err)
	}
	if err := Migrate(ctx, db, sc, steps); err != nil { // and reopens: nothing runs twice
		t.Fatal(err)
	}
	if ran != 1 {
		t.Errorf("the data step ran %d times, want 1", ran)
	}
	if got := strings.Join(versions(t, db), " "); got != "1:t 2:t.b 3:rows" {
		t.Errorf("versions %q", got)
	}
	var sum int
	if err := db.QueryRow(`SELECT sum(a) + sum(b) FROM t`).Scan(&sum); err != nil || sum != 17 {
		t.Errorf("table content: sum %d, err %v", sum, err)
	}
	// An older build refuses the file instead of running on a schema it does
	// not know.
	if err := Migrate(ctx, db, sc, steps[:1]); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("older build: err %v, want ErrNewerSchema", err)
	}
	db.Close()
}

func TestMigrateFailingStepLeavesNothing(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "f.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	steps := []Step{
		{Name: "t", SQL: `CREATE TABLE t (a INTEGER)`},
		{Name: "half", Tx: func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (1)`); err != nil {
				return err
			}
			return errors.New("disk gone")
		}},
	}
	err = Migrate(ctx, db, sc, steps)
	if err == nil || !strings.Contains(err.Error(), "migrate 2 (half): disk gone") {
		t.Fatalf("err %v", err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Errorf("half-applied step left %d rows (err %v)", n, err)
	}
	if got := strings.Join(versions(t, db), " "); got != "1:t" {
		t.Errorf("versions %q, want only the first", got)
	}
}

func TestMigrateAdoptsLegacyTable(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "l.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A file of a release that kept its versions in its own table.
	if _, err := db.Exec(`CREATE TABLE old_schema (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);
		INSERT INTO old_schema VALUES (1, 111), (2, 222);
		CREATE TABLE t (a INTEGER, b INTEGER)`); err != nil {
		t.Fatal(err)
	}
	steps := []Step{
		{Name: "t", SQL: `CREATE TABLE t (a INTEGER)`}, // not idempotent: must not run again
		{Name: "t.b", SQL: `ALTER TABLE t ADD COLUMN b INTEGER`},
		{Name: "t.c", SQL: `ALTER TABLE t ADD COLUMN c INTEGER`},
	}
	if err := Migrate(ctx, db, Scheme{Table: "schema_migrations", Legacy: "old_schema"}, steps); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(versions(t, db), " "); got != "1:t 2:t.b 3:t.c" {
		t.Errorf("versions %q", got)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'old_schema'`).Scan(&n)
	if n != 0 {
		t.Error("the legacy table is still there")
	}
	var at int64
	if err := db.QueryRow(`SELECT applied_at FROM schema_migrations WHERE version = 2`).Scan(&at); err != nil || at != 222 {
		t.Errorf("applied_at of version 2 = %d (err %v), want the legacy 222", at, err)
	}
}

// TestTwoStoresShareAFile: each store's steps are counted in its own
// table, so one store's versions never stop the other's.
func TestTwoStoresShareAFile(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "shared.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := []Step{{Name: "a1", SQL: `CREATE TABLE a1 (x)`}, {Name: "a2", SQL: `CREATE TABLE a2 (x)`}, {Name: "a3", SQL: `CREATE TABLE a3 (x)`}}
	b := []Step{{Name: "b1", SQL: `CREATE TABLE b1 (x)`}}
	for range 2 {
		if err := Migrate(ctx, db, Scheme{Table: "a_migrations"}, a); err != nil {
			t.Fatal(err)
		}
		if err := Migrate(ctx, db, Scheme{Table: "b_migrations"}, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := Migrate(ctx, db, Scheme{Table: "b; DROP TABLE a1"}, b); err == nil {
		t.Error("a table name that is not a plain identifier was accepted")
	}
}

func TestDBStepRunsOutsideTheRecord(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "d.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	steps := []Step{{Name: "chunks", DB: func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS c (x); INSERT INTO c VALUES (1)`)
		return err
	}}}
	if err := Migrate(ctx, db, sc, steps); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(versions(t, db), " "); got != "1:chunks" {
		t.Errorf("versions %q", got)
	}
}

// TestIncrementalVacuumOnlyForNewFiles: a file that exists keeps its
// auto-vacuum mode, and opening it (either mode) writes nothing to it —
// not a WAL frame — so it opens on a full disk.
func TestIncrementalVacuumOnlyForNewFiles(t *testing.T) {
	for _, c := range []struct {
		name    string
		created Options
		want    string
	}{
		{"made without auto-vacuum", Options{}, "0"},
		{"made with incremental auto-vacuum", Options{IncrementalVacuum: true}, "2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			db, err := Open(path, c.created)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
				t.Fatal(err)
			}
			db.Close() // the last connection checkpoints and removes the WAL
			db, err = Open(path, Options{IncrementalVacuum: true, PageSize: 8192})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if got := pragma(t, db, "auto_vacuum"); got != c.want {
				t.Errorf("auto_vacuum = %s after reopening, want %s", got, c.want)
			}
			if got := pragma(t, db, "page_size"); got != "4096" {
				t.Errorf("page_size = %s after reopening, want the file's 4096", got)
			}
			if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > 0 {
				t.Errorf("opening wrote %d bytes to the WAL", st.Size())
			}
		})
	}
}

// TestOpenMigrated: a store's one way to open its file — moved to the
// last step; a failing step or a newer file is an error naming the file,
// and the database is closed (the file can be opened again at once).
func TestOpenMigrated(t *testing.T) {
	ctx := context.Background()
	sc := Scheme{Table: "t_migrations"}
	two := []Step{{Name: "a", SQL: `CREATE TABLE a (x INTEGER) STRICT`}, {Name: "b", SQL: `CREATE TABLE b (y INTEGER) STRICT`}}
	tests := []struct {
		name    string
		steps   []Step
		wantErr string
		newer   bool
	}{
		{"a new file moves to the last step", two, "", false},
		{"a file of this build opens as it is", two, "", false},
		{"a file from a newer release is refused", two[:1], "schema version 2", true},
		{"a failing step is refused", append(append([]Step{}, two...), Step{Name: "bad", SQL: `NOT SQL`}), "bad", false},
	}
	path := filepath.Join(t.TempDir(), "s.db")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := OpenMigrated(ctx, path, Options{}, sc, tc.steps)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				var v int
				if err := db.QueryRow(`SELECT max(version) FROM t_migrations`).Scan(&v); err != nil || v != len(tc.steps) {
					t.Fatalf("version %d, %v; want %d", v, err, len(tc.steps))
				}
				return
			}
			if err == nil {
				db.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, ErrNewerSchema) != tc.newer {
				t.Fatalf("error %q: want the file, %q, newer %v", err, tc.wantErr, tc.newer)
			}
		})
	}
}

// TestSnapshotRefusals: a snapshot never writes over a file, says which
// source is missing, and names a damaged one as such, leaving no copy.
func TestSnapshotRefusals(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	db, err := Open(good, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	damaged := filepath.Join(dir, "damaged.db")
	if err := os.WriteFile(damaged, append([]byte("SQLite format 3\x00"), make([]byte, 4000)...), 0o600); err != nil {
		t.Fatal(err)
	}
	taken := filepath.Join(dir, "taken.db")
	if err := os.WriteFile(taken, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, src, dst string
		want           func(error) bool
	}{
		{"destination exists", good, taken, func(err error) bool { return errors.Is(err, fs.ErrExist) }},
		{"no source", filepath.Join(dir, "none.db"), filepath.Join(dir, "a.db"), func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
		{"damaged source", damaged, filepath.Join(dir, "b.db"), func(err error) bool {
			var d *DamagedError
			return errors.As(err, &d) && errors.Is(err, ErrDamaged) && d.Detail != ""
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Snapshot(context.Background(), tc.src, tc.dst)
			if err == nil || !tc.want(err) {
				t.Fatalf("Snapshot: %v", err)
			}
			if tc.dst != taken {
				if _, err := os.Stat(tc.dst); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a failed snapshot left %s (%v)", tc.dst, err)
				}
			} else if b, _ := os.ReadFile(taken); string(b) != "x" {
				t.Errorf("the file in the way was changed: %q", b)
			}
		})
	}
	out := filepath.Join(dir, "copy.db")
	if err := Snapshot(context.Background(), good, out); err != nil {
		t.Fatal(err)
	}
	if err := QuickCheck(context.Background(), out); err != nil {
		t.Errorf("QuickCheck of a fresh snapshot: %v", err)
	}
}

// TestOpenNotADatabase: a file that is not a SQLite database, or whose
// header is a database's and the rest is not, is ErrDamaged with SQLite's
// words, at Open; the file is left as it was.
func TestOpenNotADatabase(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"text", []byte("garbage\n")},
		{"zeros", make([]byte, 8192)},
		{"header only", append([]byte("SQLite format 3\x00"), make([]byte, 4000)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".db")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := Open(path, Options{})
			if err == nil {
				db.Close()
				t.Fatal("opened a file that is not a database")
			}
			var d *DamagedError
			if !errors.As(err, &d) || d.Detail == "" || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open: %v, want a *DamagedError naming the file", err)
			}
			if b, _ := os.ReadFile(path); string(b) != string(tc.data) {
				t.Error("the file was changed")
			}
		})
	}
}
