package sqlitestore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

func envBatch(gw string, seq uint64, start time.Time, temps ...float64) store.Batch {
	b := store.Batch{Gateway: gw, Municipality: "lapa", Sensor: gw + "-env", Kind: wire.KindEnv, Seq: seq,
		Topic: wire.EnvTopic("lapa", gw, gw+"-env"), Body: []byte(`{}`), ReceivedAt: start.Add(time.Minute)}
	for i := range temps {
		b.Env = append(b.Env, wire.EnvRecord{T: start.Add(time.Duration(i) * time.Minute), TemperatureC: &temps[i]})
	}
	return b
}

func envIDs(t *testing.T, s *Store) []int64 {
	t.Helper()
	recs, err := s.EnvAfter(context.Background(), 0, 100)
	return idsOf(t, recs, err, func(r store.EnvRecord) int64 { return r.ID })
}

func levelIDs(t *testing.T, s *Store) []int64 {
	t.Helper()
	recs, err := s.LevelsAfter(context.Background(), 0, 100)
	return idsOf(t, recs, err, func(r store.Record) int64 { return r.ID })
}

func idsOf[R any](t *testing.T, recs []R, err error, id func(R) int64) (ids []int64) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		ids = append(ids, id(r))
	}
	return ids
}

// TestIDsOnlyGrow: after retention deleted the newest level or env
// records, new ones get ids above them (the mirror's cursors are ids).
func TestIDsOnlyGrow(t *testing.T) {
	for _, tc := range []struct {
		table       string
		first, next store.Batch
		ids         func(*testing.T, *Store) []int64
		want        []int64
	}{
		{"level_packs", batch("gw", 1, t0, 60, 61, 62), batch("gw", 2, t0.Add(time.Minute), 60, 61), levelIDs, []int64{4, 5}},
		{"env", envBatch("gw", 1, t0, 20, 21, 22), envBatch("gw", 2, t0.Add(time.Hour), 23), envIDs, []int64{4}},
	} {
		t.Run(tc.table, func(t *testing.T) {
			s, _ := openTest(t)
			ctx := context.Background()
			if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{tc.first}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.w.Exec(`DELETE FROM ` + tc.table); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{tc.next}}); err != nil {
				t.Fatal(err)
			}
			if got := tc.ids(t, s); !slices.Equal(got, tc.want) {
				t.Errorf("ids after deleting all: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMigratesEnvTable: an env table with plain rowids is rebuilt with ids
// that only grow, keeping every row under its id and the (sensor, t)
// uniqueness; ids continue above the mirror's cursor even where retention
// had deleted the newest rows before the upgrade.
func TestMigratesEnvTable(t *testing.T) {
	db, path := oldDatabase(t, `
CREATE TABLE env (
	id INTEGER PRIMARY KEY, sensor TEXT NOT NULL, t INTEGER NOT NULL, temperature_c REAL,
	humidity_pct REAL, pressure_hpa REAL, gateway TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE UNIQUE INDEX env_sensor_t ON env (sensor, t);
CREATE TABLE cursors (name TEXT PRIMARY KEY, position INTEGER NOT NULL);`)
	for _, id := range []int64{1, 2, 5} {
		if _, err := db.Exec(`INSERT INTO env VALUES (?, 'gw-env', ?, 20.5, 61, 1013, 'gw', 1)`,
			id, t0.Add(time.Duration(id)*time.Minute).UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	// Rows 6 and 7 were mirrored, then deleted by retention.
	if _, err := db.Exec(`INSERT INTO cursors VALUES (?, 7)`, store.CursorInfluxEnv); err != nil {
		t.Fatal(err)
	}
	s := openMigrated(t, db, path, Options{})
	var def string
	if err := s.w.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'env'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ToUpper(def), "AUTOINCREMENT") {
		t.Fatalf("env not migrated: %s", def)
	}
	if got := envIDs(t, s); !slices.Equal(got, []int64{1, 2, 5}) {
		t.Fatalf("migrated env ids %v, want [1 2 5]", got)
	}
	recs, err := s.EnvAfter(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if r := recs[2]; r.Sensor != "gw-env" || r.TemperatureC == nil || *r.TemperatureC != 20.5 || r.HumidityPct == nil ||
		*r.HumidityPct != 61 || !r.T.Equal(t0.Add(5*time.Minute)) {
		t.Errorf("migrated row 5: %+v", r)
	}
	// A record at an already stored (sensor, t) is still skipped; a new
	// one gets id 8, above the cursor.
	b := envBatch("gw", 2, t0.Add(4*time.Minute), 30, 31) // t0+5min is row 5's
	if _, err := s.Apply(context.Background(), store.Write{Batches: []store.Batch{b}}); err != nil {
		t.Fatal(err)
	}
	if got := envIDs(t, s); !slices.Equal(got, []int64{1, 2, 5, 8}) {
		t.Errorf("env ids after the upgrade: %v, want [1 2 5 8]", got)
	}
	// Opening again changes nothing.
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := envIDs(t, s2); !slices.Equal(got, []int64{1, 2, 5, 8}) {
		t.Errorf("env ids after reopening: %v", got)
	}
}

// TestSequencesFloorAtCursors: a database whose level and env cursors are
// above every stored id (a table emptied by retention, a sequence lost)
// gives the next records ids above the cursors.
func TestSequencesFloorAtCursors(t *testing.T) {
	s, path := openTest(t)
	ctx := context.Background()
	if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{batch("gw", 1, t0, 60, 61), envBatch("gw", 2, t0, 20)}}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM level_packs`, `DELETE FROM env`, `DELETE FROM sqlite_sequence WHERE name = 'env'`} {
		if _, err := s.w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetCursor(ctx, store.CursorInflux, 40); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCursor(ctx, store.CursorInfluxEnv, 9); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Apply(ctx, store.Write{Batches: []store.Batch{batch("gw", 3, t0.Add(time.Hour), 70), envBatch("gw", 4, t0.Add(time.Hour), 21)}}); err != nil {
		t.Fatal(err)
	}
	if got := levelIDs(t, s2); !slices.Equal(got, []int64{41}) {
		t.Errorf("level ids: %v, want [41]", got)
	}
	if got := envIDs(t, s2); !slices.Equal(got, []int64{10}) {
		t.Errorf("env ids: %v, want [10]", got)
	}
}
