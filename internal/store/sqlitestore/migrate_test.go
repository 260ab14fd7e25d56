package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/sqlitedb"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// TestOpensReleaseDatabase: a database in the shape the release before
// numbered steps left it (testdata/readings-release.sql), with a row in
// every table, opens with the numbered steps, keeps every row, records
// every step, and opens again without changing anything.
func TestOpensReleaseDatabase(t *testing.T) {
	ddl, err := os.ReadFile("testdata/readings-release.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, path := oldDatabase(t, string(ddl))
	ctx := context.Background()
	start := t0.UnixMilli()
	pack, err := encodePack(nil, []wire.Record{
		{T: t0, DurMs: 1000, LAeq: 61, LAFmax: 64, LAFmin: 58},
		{T: t0.Add(time.Second), DurMs: 1000, LAeq: 62, LAFmax: 65, LAFmin: 59},
	}, start)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO batches VALUES ('gw', 1, 'levels', 'lapa', 'gw-s', 't', '{"seq":1}', x'0102', 1, ?, 2)`, []any{start}},
		{`INSERT INTO level_packs (id, sensor, t0, t1, n, gateway, seq, grade, synced, data) VALUES (2, 'gw-s', ?, ?, 2, 'gw', 1, 'class2', 1, ?)`,
			[]any{start, start + 1000, pack}},
		{`INSERT INTO env (sensor, t, temperature_c, gateway, seq) VALUES ('gw-env', ?, 21.5, 'gw', 2)`, []any{start}},
		{`INSERT INTO dead_letters VALUES (1, ?, 't', 'bad_json', 'corrija', 'gw', 3, 'x', 0)`, []any{start}},
		{`INSERT INTO gateways (gateway, municipality, state, watermark, last_seq, conflicts, skipped_seqs) VALUES ('gw', 'lapa', 'online', 3, 3, 1, 2)`, nil},
		{`INSERT INTO settled VALUES ('gw', 3, 1)`, nil},
		{`INSERT INTO seq_above VALUES ('gw', 5)`, nil},
		{`INSERT INTO cursors VALUES (?, 2)`, []any{store.CursorInflux}},
		{`INSERT INTO record_conflicts VALUES (1, ?, 'levels', 'gw-s', ?, 'gw', 1, '{}', 'gw', 4, '{}')`, []any{start, start}},
		{`INSERT INTO seq_skips VALUES (1, 'gw', 6, 7, ?, 'teste')`, []any{start}},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	s := openMigrated(t, db, path, Options{})
	checkReleaseData(t, s)
	if got := migrationNames(t, s.w); len(got) != len(migrations(nil)) {
		t.Errorf("recorded steps %q, want %d", got, len(migrations(nil)))
	}
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	checkReleaseData(t, s2)
	// The store still takes new batches above the adopted ids.
	res, err := s2.Apply(ctx, store.Write{Batches: []store.Batch{batch("gw", 4, t0.Add(time.Hour), 70)}})
	if err != nil || !res.New[0] {
		t.Fatalf("apply after migration: %+v %v", res, err)
	}
	if ids := levelIDs(t, s2); !slices.Equal(ids, []int64{1, 2, 3}) {
		t.Errorf("level ids %v, want [1 2 3]", ids)
	}
}

func checkReleaseData(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	recs, err := s.Records(ctx, "gw-s", t0, t0.Add(time.Minute), 0)
	if err != nil || len(recs) != 2 || recs[0].LAeq != 61 || recs[1].LAeq != 62 || recs[1].ID != 2 {
		t.Errorf("level records %+v %v", recs, err)
	}
	if body, sig, ok, err := s.RawBatch(ctx, "gw", 1); err != nil || string(body) != `{"seq":1}` || len(sig) != 2 || !ok {
		t.Errorf("batch: %q %v %v %v", body, sig, ok, err)
	}
	if env, err := s.EnvRecords(ctx, "gw-env", t0, t0.Add(time.Minute), 0); err != nil || len(env) != 1 || *env[0].TemperatureC != 21.5 {
		t.Errorf("env %+v %v", env, err)
	}
	if dl, err := s.DeadLetters(ctx, store.DeadLetterFilter{}); err != nil || len(dl) != 1 || dl[0].Reason != "bad_json" || !dl[0].Settled {
		t.Errorf("dead letters %+v %v", dl, err)
	}
	g := gatewayRow(t, s, "gw")
	if g.Watermark != 3 || g.State != "online" || g.Conflicts != 1 || g.SkippedSeqs != 2 || g.PendingAbove != 1 {
		t.Errorf("gateway row %+v", g)
	}
	if c, err := s.Cursor(ctx, store.CursorInflux); err != nil || c != 2 {
		t.Errorf("cursor %d %v", c, err)
	}
	if rc, err := s.RecordConflicts(ctx, "gw-s", 0, 10); err != nil || len(rc) != 1 {
		t.Errorf("record conflicts %+v %v", rc, err)
	}
	if sk, err := s.SeqSkips(ctx, "gw"); err != nil || len(sk) != 1 || sk[0].First != 6 || sk[0].Last != 7 {
		t.Errorf("seq skips %+v %v", sk, err)
	}
}

func migrationNames(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM ` + migrationScheme.Table + ` ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// TestRefusesNewerDatabase: a file migrated by a newer release (a step
// this build does not know) is refused, not written to.
func TestRefusesNewerDatabase(t *testing.T) {
	_, path := openTest(t)
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO `+migrationScheme.Table+` VALUES (?, 'from the future', 0)`, len(migrations(nil))+1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(path, Options{})
	if err == nil {
		s.Close()
		t.Fatal("opened a database from a newer release")
	}
	if !errors.Is(err, sqlitedb.ErrNewerSchema) {
		t.Errorf("error %v, want ErrNewerSchema", err)
	}
}
