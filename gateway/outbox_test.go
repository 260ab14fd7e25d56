package gateway

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func openBox(t *testing.T, path string, capacity int) *Outbox {
	t.Helper()
	o, err := OpenOutbox(path, capacity)
	if err != nil {
		t.Fatalf("OpenOutbox: %v", err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func put(t *testing.T, o *Outbox, records int) (uint64, error) {
	t.Helper()
	return o.Enqueue(context.Background(), "topic", records, t0, func(seq uint64) ([]byte, error) {
		return []byte(fmt.Sprintf("batch-%d", seq)), nil
	})
}

func TestOutboxSeqAckAndReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "outbox.db")
	o := openBox(t, path, 100)
	for want := uint64(1); want <= 5; want++ {
		seq, err := put(t, o, 10)
		if err != nil || seq != want {
			t.Fatalf("Enqueue = %d, %v; want %d", seq, err, want)
		}
	}
	if n, err := o.Ack(ctx, 2); err != nil || n != 2 {
		t.Fatalf("Ack(2) = %d, %v", n, err)
	}
	if n, err := o.Ack(ctx, 1); err != nil || n != 0 {
		t.Fatalf("Ack(1) after Ack(2) = %d, %v", n, err)
	}
	var ahead *AckAheadError
	if _, err := o.Ack(ctx, 6); !errors.As(err, &ahead) || ahead.Last != 5 {
		t.Fatalf("Ack(6) = %v, want AckAheadError{Last: 5}", err)
	}
	if st := o.Stats(); st.Pending != 30 || st.Capacity != 100 || st.Full || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
	o.Close()

	// A new process sees the same queue and continues the sequence.
	o2 := openBox(t, path, 100)
	es, err := o2.After(ctx, o2.Acked(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[0].Seq != 3 || string(es[0].Payload) != "batch-3" || es[2].Seq != 5 || es[0].Records != 10 {
		t.Fatalf("after reopen: %+v", es)
	}
	if seq, _ := put(t, o2, 1); seq != 6 {
		t.Errorf("next seq after reopen = %d, want 6", seq)
	}
	// Everything acked: the counter still does not restart.
	if _, err := o2.Ack(ctx, 6); err != nil {
		t.Fatal(err)
	}
	o2.Close()
	o3 := openBox(t, path, 100)
	if seq, _ := put(t, o3, 1); seq != 7 {
		t.Errorf("seq after full ack and reopen = %d, want 7", seq)
	}
	if es, _ := o3.After(ctx, 0, 10); len(es) != 1 || es[0].Seq != 7 {
		t.Errorf("pending = %+v", es)
	}
}

func TestOutboxFullDropsNewAndCounts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "outbox.db")
	o := openBox(t, path, 25)
	for range 2 {
		if _, err := put(t, o, 10); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := put(t, o, 10); !errors.Is(err, ErrFull) {
		t.Fatalf("third batch: %v, want ErrFull", err)
	}
	st := o.Stats()
	if !st.Full || st.Dropped != 10 || st.Pending != 20 {
		t.Errorf("stats after refusal %+v", st)
	}
	// A smaller batch still fits; seqs stay contiguous (the refused batch got none).
	if seq, err := put(t, o, 5); err != nil || seq != 3 {
		t.Fatalf("small batch = %d, %v", seq, err)
	}
	if !o.Full() || !o.Stats().Full {
		t.Error("25/25 not full")
	}
	if err := o.Drop(ctx, 3); err != nil {
		t.Fatal(err)
	}
	o.Close()
	o2 := openBox(t, path, 25)
	if st := o2.Stats(); st.Dropped != 13 || st.Pending != 25 {
		t.Errorf("drop count not durable: %+v", st)
	}
	if _, err := o2.Ack(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if st := o2.Stats(); st.Full || st.Pending != 15 {
		t.Errorf("after ack %+v", st)
	}
}

func TestOutboxRenumber(t *testing.T) {
	ctx := context.Background()
	o := openBox(t, filepath.Join(t.TempDir(), "outbox.db"), 100)
	for range 3 {
		put(t, o, 1)
	}
	o.Ack(ctx, 1)
	err := o.Renumber(ctx, 500, func(old []byte, seq uint64) ([]byte, error) {
		return []byte(fmt.Sprintf("%s->%d", old, seq)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	es, _ := o.After(ctx, 0, 10)
	if len(es) != 2 || es[0].Seq != 501 || string(es[0].Payload) != "batch-2->501" || es[1].Seq != 502 {
		t.Fatalf("renumbered %+v", es)
	}
	if o.Acked() != 500 || o.LastSeq() != 502 {
		t.Errorf("acked %d last %d", o.Acked(), o.LastSeq())
	}
	if seq, _ := put(t, o, 1); seq != 503 {
		t.Errorf("next seq %d", seq)
	}
}

func TestOutboxSealErrorStoresNothing(t *testing.T) {
	o := openBox(t, filepath.Join(t.TempDir(), "outbox.db"), 100)
	_, err := o.Enqueue(context.Background(), "t", 1, t0, func(uint64) ([]byte, error) { return nil, errors.New("boom") })
	if err == nil {
		t.Fatal("seal error swallowed")
	}
	if seq, _ := put(t, o, 1); seq != 1 {
		t.Errorf("seq after failed seal = %d, want 1", seq)
	}
	if _, err := OpenOutbox(filepath.Join(t.TempDir(), "x.db"), 0); err == nil {
		t.Error("zero capacity accepted")
	}
}

// TestOutboxUpgradesEmptyOldFile: an outbox made before 8 KiB pages (4 KiB,
// no auto-vacuum) is rebuilt with them when it is empty, keeping its
// counters; one with batches in it is left alone until it drains.
func TestOutboxUpgradesEmptyOldFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "outbox.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`PRAGMA page_size=4096; PRAGMA journal_mode=WAL;
CREATE TABLE outbox (seq INTEGER PRIMARY KEY, topic TEXT NOT NULL, payload BLOB NOT NULL, records INTEGER NOT NULL, created_ms INTEGER NOT NULL);
CREATE TABLE meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
INSERT INTO meta(k, v) VALUES ('next_seq', 42), ('acked', 40), ('dropped', 7);
INSERT INTO outbox VALUES (41, 't', x'00', 10, 0);`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	pageSize := func(o *Outbox) (n int64) {
		o.db.QueryRow("PRAGMA page_size").Scan(&n)
		return n
	}
	o := openBox(t, path, 100)
	if pageSize(o) != 4096 || o.LastSeq() != 41 || o.Stats().Pending != 10 {
		t.Fatalf("outbox with a batch: page size %d, last seq %d, %+v", pageSize(o), o.LastSeq(), o.Stats())
	}
	if _, err := o.Ack(ctx, 41); err != nil {
		t.Fatal(err)
	}
	o.Close()
	o = openBox(t, path, 100)
	var mode string
	o.db.QueryRow("PRAGMA journal_mode").Scan(&mode)
	if pageSize(o) != 8192 || mode != "wal" || o.LastSeq() != 41 || o.Acked() != 41 || o.Stats().Dropped != 7 {
		t.Fatalf("drained old outbox: page size %d, mode %s, last %d, acked %d, %+v", pageSize(o), mode, o.LastSeq(), o.Acked(), o.Stats())
	}
	if seq, err := put(t, o, 1); err != nil || seq != 42 {
		t.Fatalf("next batch = %d, %v", seq, err)
	}
}

// releaseOutboxDDL is how the release before numbered schema steps made a
// new outbox: the file's settings, then its tables and counters.
const releaseOutboxDDL = `PRAGMA page_size=8192; PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS outbox (
	seq        INTEGER PRIMARY KEY,
	topic      TEXT    NOT NULL,
	payload    BLOB    NOT NULL,
	records    INTEGER NOT NULL,
	created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
INSERT OR IGNORE INTO meta(k, v) VALUES ('next_seq', 1), ('acked', 0), ('dropped', 0), ('high_ms', 0);`

// TestOutboxAdoptsReleaseFile: an outbox made and filled by the release
// before numbered schema steps opens with its batches, counters and file
// settings; the step is recorded once, and opening it again writes nothing.
func TestOutboxAdoptsReleaseFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "outbox.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(releaseOutboxDDL + `
UPDATE meta SET v = 13 WHERE k = 'next_seq'; UPDATE meta SET v = 10 WHERE k = 'acked';
UPDATE meta SET v = 4 WHERE k = 'dropped'; UPDATE meta SET v = 1764543600000 WHERE k = 'high_ms';
INSERT INTO outbox VALUES (11, 't/11', x'0b', 10, 0), (12, 't/12', x'0c', 5, 0);`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	for i := range 2 {
		o := openBox(t, path, 100)
		if o.LastSeq() != 12 || o.Acked() != 10 || o.Stats().Pending != 15 || o.Stats().Dropped != 4 || o.High().UnixMilli() != 1764543600000 {
			t.Fatalf("open %d: last %d, acked %d, high %v, %+v", i, o.LastSeq(), o.Acked(), o.High(), o.Stats())
		}
		es, err := o.After(ctx, o.Acked(), 10)
		if err != nil || len(es) != 2 || es[0].Seq != 11 || string(es[1].Payload) != "\x0c" || es[1].Topic != "t/12" || es[1].Records != 5 {
			t.Fatalf("open %d: entries %+v %v", i, es, err)
		}
		var pageSize, vacuum, steps int
		o.db.QueryRow("PRAGMA page_size").Scan(&pageSize)
		o.db.QueryRow("PRAGMA auto_vacuum").Scan(&vacuum)
		if err := o.db.QueryRow(`SELECT count(*) FROM ` + migrationScheme.Table).Scan(&steps); err != nil {
			t.Fatal(err)
		}
		if pageSize != 8192 || vacuum != 2 || steps != len(migrations) {
			t.Errorf("open %d: page size %d, auto_vacuum %d, %d steps recorded", i, pageSize, vacuum, steps)
		}
		if i == 1 {
			if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > 0 {
				t.Errorf("opening an adopted outbox wrote %d bytes", st.Size())
			}
		}
		o.Close()
	}
	o := openBox(t, path, 100)
	if seq, err := put(t, o, 1); err != nil || seq != 13 {
		t.Fatalf("next batch = %d, %v; want 13", seq, err)
	}
}

// TestOutboxNewFileSettings: a new outbox has 8 KiB pages, incremental
// auto-vacuum and WAL mode, and its schema step recorded.
func TestOutboxNewFileSettings(t *testing.T) {
	o := openBox(t, filepath.Join(t.TempDir(), "outbox.db"), 100)
	var pageSize, vacuum, steps int
	var mode string
	o.db.QueryRow("PRAGMA page_size").Scan(&pageSize)
	o.db.QueryRow("PRAGMA auto_vacuum").Scan(&vacuum)
	o.db.QueryRow("PRAGMA journal_mode").Scan(&mode)
	o.db.QueryRow(`SELECT count(*) FROM ` + migrationScheme.Table).Scan(&steps)
	if pageSize != newPageSize || vacuum != 2 || mode != "wal" || steps != len(migrations) {
		t.Errorf("page size %d, auto_vacuum %d, journal %s, %d steps", pageSize, vacuum, mode, steps)
	}
}
