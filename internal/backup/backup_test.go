package backup

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sossego/sossego/internal/sqlitedb"
	"github.com/sossego/sossego/internal/testenv"
)

// batchRows is how many rows each writer transaction inserts: a snapshot
// that saw half a transaction would hold a batch with fewer.
const batchRows = 10

// fillDB makes a WAL database at p whose checkpoints are rare, so that
// what the test commits stays in the write-ahead log the snapshot must read.
func fillDB(t *testing.T, p string) *sql.DB {
	t.Helper()
	db, err := sqlitedb.Open(p, sqlitedb.Options{WALAutocheckpoint: 100000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE r (batch INTEGER NOT NULL, n INTEGER NOT NULL, payload BLOB NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for b := range 100 {
		insertBatch(t, db, b)
	}
	return db
}

func insertBatch(t *testing.T, db *sql.DB, b int) {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Error(err)
		return
	}
	for n := range batchRows {
		if _, err := tx.Exec(`INSERT INTO r VALUES (?, ?, ?)`, b, n, bytes.Repeat([]byte{byte(b)}, 200)); err != nil {
			tx.Rollback()
			t.Error(err)
			return
		}
	}
	if err := tx.Commit(); err != nil {
		t.Error(err)
	}
}

func writeFile(t *testing.T, p string, data string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}

// TestBackupWhileWriting copies a data folder whose database a writer keeps
// changing: the copy holds every transaction committed before the backup
// began, none by half, opens as a store again, keeps the key's mode, leaves
// out SQLite's side files, the reserve and temporary files, and its
// SHA256SUMS passes sha256sum -c.
func TestBackupWhileWriting(t *testing.T) {
	data := t.TempDir()
	db := fillDB(t, filepath.Join(data, "readings.db"))
	writeFile(t, filepath.Join(data, "evidence-ed25519.key"), "chave privada de teste\n", 0o600)
	writeFile(t, filepath.Join(data, "evidence-keys.json"), `{"keys":[]}`+"\n", 0o644)
	writeFile(t, filepath.Join(data, "evidence-bags", "lapa-bar-01.json"), `[]`+"\n", 0o644)
	writeFile(t, filepath.Join(data, "outbox.db.reserve"), strings.Repeat("x", 4096), 0o600)
	writeFile(t, filepath.Join(data, ".evidencia-123.zip"), "parcial", 0o600)
	if _, err := os.Stat(filepath.Join(data, "readings.db-wal")); err != nil {
		t.Fatalf("the test needs a write-ahead log to copy through: %v", err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for b := 100; ; b++ {
			select {
			case <-stop:
				return
			default:
			}
			insertBatch(t, db, b)
		}
	}()
	dest := filepath.Join(t.TempDir(), "copia")
	sum, err := Run(context.Background(), data, dest)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}

	if !slices.Equal(sum.Databases, []string{"readings.db"}) {
		t.Errorf("databases %q, want readings.db", sum.Databases)
	}
	wantFiles := []string{"evidence-bags/lapa-bar-01.json", "evidence-ed25519.key", "evidence-keys.json"}
	if !slices.Equal(sum.Files, wantFiles) {
		t.Errorf("files %q, want %q", sum.Files, wantFiles)
	}
	var skipped []string
	for _, s := range sum.Skipped {
		skipped = append(skipped, s.Path)
	}
	for _, want := range []string{".evidencia-123.zip", "outbox.db.reserve", "readings.db-shm", "readings.db-wal"} {
		if !slices.Contains(skipped, want) {
			t.Errorf("%s not reported as left out (%q)", want, skipped)
		}
	}
	var got []string
	filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dest, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	want := append([]string{SumsFile, "readings.db"}, wantFiles...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("backup holds %q, want %q", got, want)
	}
	if st, err := os.Stat(filepath.Join(dest, "evidence-ed25519.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "evidence-ed25519.key")); string(b) != "chave privada de teste\n" {
		t.Errorf("key file copied as %q", b)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), ".copia.parcial-*")); len(leftovers) > 0 {
		t.Errorf("temporary folder left: %q", leftovers)
	}

	shaSum, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Fatalf("sha256sum (coreutils) is needed to check SHA256SUMS as a user would: %v", err)
	}
	cmd := exec.Command(shaSum, "-c", "--strict", SumsFile)
	cmd.Dir = dest
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}

	// Checked as it was written, before opening it as a store (which turns
	// on its write-ahead log and so changes the file).
	cp, err := sqlitedb.Open(filepath.Join(dest, "readings.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatalf("the copy does not open as a store: %v", err)
	}
	defer cp.Close()
	var batches, short int
	if err := cp.QueryRow(`SELECT count(*), coalesce(sum(c != ?), 0) FROM (SELECT count(*) AS c FROM r GROUP BY batch)`, batchRows).Scan(&batches, &short); err != nil {
		t.Fatal(err)
	}
	if batches < 100 {
		t.Errorf("the copy holds %d transactions, want at least the 100 committed before the backup", batches)
	}
	if short != 0 {
		t.Errorf("%d transactions copied by half", short)
	}
	if _, err := cp.Exec(`INSERT INTO r VALUES (-1, 0, x'00')`); err != nil {
		t.Errorf("the restored copy does not take writes: %v", err)
	}

}

// TestBackupRefusals: every refusal says what to fix and leaves neither a
// backup nor a temporary folder behind.
func TestBackupRefusals(t *testing.T) {
	good := t.TempDir()
	fillDB(t, filepath.Join(good, "cases.db"))
	damaged := t.TempDir()
	writeFile(t, filepath.Join(damaged, "readings.db"), "SQLite format 3\x00"+strings.Repeat("\xff", 5000), 0o600)

	cases := []struct {
		name    string
		data    func(t *testing.T) string
		dest    func(t *testing.T, data string) string
		wantErr string
	}{
		{"destination inside the data folder", func(*testing.T) string { return good },
			func(_ *testing.T, data string) string { return filepath.Join(data, "copia") }, "está dentro da pasta de dados"},
		{"destination is the data folder", func(*testing.T) string { return good },
			func(_ *testing.T, data string) string { return data }, "está dentro da pasta de dados"},
		{"destination not empty", func(*testing.T) string { return good },
			func(t *testing.T, _ string) string {
				d := t.TempDir()
				writeFile(t, filepath.Join(d, "x"), "x", 0o600)
				return d
			}, "não está vazio"},
		{"destination inside the data folder through a link", func(*testing.T) string { return good },
			func(t *testing.T, data string) string {
				link := filepath.Join(t.TempDir(), "atalho")
				if err := os.Symlink(data, link); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(link, "copia")
			}, "está dentro da pasta de dados"},
		{"destination is a file", func(*testing.T) string { return good },
			func(t *testing.T, _ string) string {
				p := filepath.Join(t.TempDir(), "arquivo")
				writeFile(t, p, "x", 0o600)
				return p
			}, "não é uma pasta"},
		{"no data folder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nao-existe") },
			func(t *testing.T, _ string) string { return filepath.Join(t.TempDir(), "copia") }, "pasta de dados"},
		{"empty data folder", func(t *testing.T) string { return t.TempDir() },
			func(t *testing.T, _ string) string { return filepath.Join(t.TempDir(), "copia") }, "não tem nada a copiar"},
		{"damaged database", func(*testing.T) string { return damaged },
			func(t *testing.T, _ string) string { return filepath.Join(t.TempDir(), "copia") }, "banco readings.db"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data(t)
			dest := tc.dest(t, data)
			before, _ := os.ReadDir(filepath.Dir(dest))
			sum, err := Run(context.Background(), data, dest)
			if err == nil {
				t.Fatalf("backup made (%+v), want a refusal", sum)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not say %q", err, tc.wantErr)
			}
			after, _ := os.ReadDir(filepath.Dir(dest))
			if len(after) != len(before) {
				t.Errorf("the destination's folder changed: %d entries before, %d after", len(before), len(after))
			}
		})
	}
}

// TestBackupCanceled: a backup interrupted before it is whole leaves nothing.
func TestBackupCanceled(t *testing.T) {
	data := t.TempDir()
	fillDB(t, filepath.Join(data, "readings.db"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	parent := t.TempDir()
	_, err := Run(ctx, data, filepath.Join(parent, "copia"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("an interrupted backup left %d entries", len(ents))
	}
}

// TestBackupFullDisk: a destination disk that fills up, whether during a
// database's snapshot or a plain file's copy, is an error that says so
// (ENOSPC), and what was written of the copy is removed again.
func TestBackupFullDisk(t *testing.T) {
	cases := []struct {
		name string
		fill func(t *testing.T, data string)
	}{
		{"database", func(t *testing.T, data string) {
			db := fillDB(t, filepath.Join(data, "readings.db"))
			for b := 100; b < 1200; b++ { // about 2.5 MB of rows
				insertBatch(t, db, b)
			}
		}},
		{"plain file", func(t *testing.T, data string) {
			fillDB(t, filepath.Join(data, "cases.db"))
			writeFile(t, filepath.Join(data, "evidence-bags", "grande.json"), strings.Repeat("{}\n", 1<<20), 0o644)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			tc.fill(t, data)
			disk := testenv.SmallFS(t, "1m")
			_, err := Run(context.Background(), data, filepath.Join(disk, "copia"))
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("error %v, want one that is ENOSPC", err)
			}
			if ents, _ := os.ReadDir(disk); len(ents) != 0 {
				t.Errorf("the full disk keeps %d entries of the failed copy", len(ents))
			}
		})
	}
}
