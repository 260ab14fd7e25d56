// Package longterm is the long-term tier: per sensor, 1-min and 1-h
// energy-domain aggregates (energy sum, time present, LAFmax, LAFmin, the
// 0.1 dB histogram), kept forever in their own SQLite file (longterm.db
// beside the readings store), so reports and long charts never need the
// raw 1-s records, which retention may delete.
//
// A Follower fills it from the readings store by record id, like the
// InfluxDB mirror: it reads the records after its cursor, folds them into
// the hour rows and moves the cursor in the same transaction, so a crash
// at any point loses nothing (the records are read again) and counts
// nothing twice (the cursor moved with the aggregates or not at all).
//
// One row per sensor and clock hour (UTC hours; Brasília time is a whole
// number of hours from UTC) holds the hour's total and its minutes
// (encode.go). A report reads an hour whole when the hour lies within one
// legal period and part of the day, and its minutes otherwise.
//
// Overview of its parts: the long-term tier, kept forever in its own
// `longterm.db`: per sensor and hour a row with the hour's aggregate and its
// minutes' (energy sum, time present, LAFmax, LAFmin, L10–L95, 0.1 dB
// histogram) and a change number the InfluxDB mirror follows; a `Follower`
// folds the readings store's level records in by record-id cursor, cursor and
// aggregates in one transaction (a crash loses nothing, counts nothing twice),
// and floors the readings store's ids above its cursor at start
// (`sqlitestore`'s `FloorLevelIDs`); reports and long charts read it; schema
// steps by `internal/sqlitedb.Migrate`.
package longterm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sossego/sossego/internal/sqlitedb"
	"github.com/sossego/sossego/internal/stats"
)

// FileName is the tier's file in the data directory.
const FileName = "longterm.db"

// CursorLevels is the follower's cursor: the id of the last readings-store
// level record folded in.
const CursorLevels = "levels"

const schema = `
CREATE TABLE IF NOT EXISTS hours (
	sensor  TEXT    NOT NULL,
	hour    INTEGER NOT NULL, -- Unix seconds / 3600
	dur_ms  INTEGER NOT NULL,
	energy  REAL    NOT NULL, -- Σ dur_ms · 10^(LAeq/10)
	lafmax  REAL    NOT NULL,
	lafmin  REAL    NOT NULL,
	fast_ms INTEGER NOT NULL,
	hist    BLOB    NOT NULL, -- the hour's histogram
	minutes BLOB    NOT NULL, -- the minutes (encode.go)
	UNIQUE (sensor, hour)
);
-- The minutes' histograms (deflated) of the hours row with rowid id: in a
-- table of their own, so that the hours rows stay small and a report
-- reads a year of them from few pages.
CREATE TABLE IF NOT EXISTS mhists (
	id   INTEGER PRIMARY KEY,
	data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS cursors (
	name     TEXT PRIMARY KEY,
	position INTEGER NOT NULL
);
`

// steps are the tier's schema changes (internal/sqlitedb.Migrate).
var steps = []sqlitedb.Step{
	{Name: "hours, minute histograms and cursors", SQL: schema},
	{Name: "minutes with their percentiles (format 2)", Tx: minutesWithPercentiles},
	// Each write of an hour row takes the next change number: the InfluxDB
	// mirror of the tier follows them with its cursor. Existing rows are
	// numbered in rowid order, so a mirror started later sends them all.
	{Name: "change numbers of the hour rows", SQL: `
ALTER TABLE hours ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE hours SET seq = rowid;
CREATE INDEX hours_by_seq ON hours (seq);`},
}

// minutesWithPercentiles rewrites the minutes blobs of the first format
// (encode.go) with each minute's percentiles, read from its stored
// histogram; the hours' totals and the histograms stay as they are.
func minutesWithPercentiles(ctx context.Context, tx *sql.Tx) error {
	type row struct {
		id, hour     int64
		mins, mhists []byte
	}
	for after := int64(0); ; {
		rs, err := tx.QueryContext(ctx, `SELECT h.rowid, h.hour, h.minutes, m.data FROM hours h JOIN mhists m ON m.id = h.rowid
			WHERE h.rowid > ? ORDER BY h.rowid LIMIT 500`, after)
		if err != nil {
			return fmt.Errorf("longterm: minutes to rewrite: %w", err)
		}
		var batch []row
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.id, &r.hour, &r.mins, &r.mhists); err != nil {
				rs.Close()
				return fmt.Errorf("longterm: minutes to rewrite: %w", err)
			}
			batch = append(batch, r)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return fmt.Errorf("longterm: minutes to rewrite: %w", err)
		}
		if len(batch) == 0 {
			return nil
		}
		for _, r := range batch {
			after = r.id
			if len(r.mins) > 0 && r.mins[0] == minutesFormat {
				continue
			}
			h, err := decodeHour(time.Unix(r.hour*3600, 0), r.mins, r.mhists)
			if err != nil {
				return fmt.Errorf("longterm: rewrite hour %d: %w", r.hour, err)
			}
			mins, _ := encodeMinutes(h)
			if _, err := tx.ExecContext(ctx, `UPDATE hours SET minutes = ? WHERE rowid = ?`, mins, r.id); err != nil {
				return fmt.Errorf("longterm: rewrite hour %d: %w", r.hour, err)
			}
		}
	}
}

// Store is the long-term tier's database.
type Store struct {
	w, r *sql.DB
	mu   sync.Mutex // one writing transaction at a time; guards live
	// live keeps, per sensor, the last hour written, decoded: live ingest
	// adds to the same hour every second, and decoding it each time would
	// be most of the work.
	live map[string]liveHour
	// beforeCommit, in tests, fails a transaction after its rows were
	// written.
	beforeCommit func() error
}

type liveHour struct {
	hour int64
	data *hourData
}

// Open opens (creating if needed) the tier at path.
func Open(path string) (*Store, error) {
	// 16 KiB pages: a minute-histogram row is a few kB and a 4 KiB page
	// holds one with the rest left empty. A lost commit after a power cut
	// is folded again (the cursor is in the same transaction as the
	// aggregates), so commits need not wait for an fsync.
	o := sqlitedb.Options{PageSize: 16384, Sync: sqlitedb.SyncNormal}
	w, err := sqlitedb.OpenMigrated(context.Background(), path, o, sqlitedb.Scheme{Table: "longterm_schema"}, steps)
	if err != nil {
		return nil, fmt.Errorf("longterm: %w", err)
	}
	o.QueryOnly, o.MaxOpenConns = true, 4
	r, err := sqlitedb.Open(path, o)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("longterm: %w", err)
	}
	return &Store{w: w, r: r, live: map[string]liveHour{}}, nil
}

// Close closes the database.
func (s *Store) Close() error { return errors.Join(s.r.Close(), s.w.Close()) }

// Cursor returns a named position (0 if never set).
func (s *Store) Cursor(ctx context.Context, name string) (int64, error) {
	var v int64
	err := s.r.QueryRowContext(ctx, `SELECT position FROM cursors WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("longterm: cursor %s: %w", name, err)
	}
	return v, nil
}

// Record is one level record for the tier.
type Record struct {
	Sensor string
	stats.Second
}

func hourOf(t time.Time) int64 { return floorDiv(t.Unix(), 3600) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Add folds records (any order, any sensors) into their hours and, in the
// same transaction, sets the cursor name to pos (name "" sets none).
func (s *Store) Add(ctx context.Context, recs []Record, name string, pos int64) error {
	type key struct {
		sensor string
		hour   int64
	}
	group := map[key][]stats.Second{}
	var order []key
	for _, r := range recs {
		k := key{r.Sensor, hourOf(r.T)}
		if _, ok := group[k]; !ok {
			order = append(order, k)
		}
		group[k] = append(group[k], r.Second)
	}
	return s.update(ctx, len(order), func(i int) (string, int64, func(*hourData)) {
		k := order[i]
		return k.sensor, k.hour, func(h *hourData) {
			for _, sec := range group[k] {
				mi := int(floorDiv(sec.T.Unix(), 60) - k.hour*60)
				if h.mins[mi] == nil {
					h.mins[mi] = &stats.Agg{}
				}
				h.mins[mi].AddSecond(sec)
			}
		}
	}, name, pos)
}

// AddMinutes folds whole-minute aggregates into their hours (the demo's
// simulated history, imports); minutes of the same sensor and instant add
// up.
func (s *Store) AddMinutes(ctx context.Context, sensor string, mins []stats.Minute) error {
	byHour := map[int64][]stats.Minute{}
	var order []int64
	for _, m := range mins {
		h := hourOf(m.Start)
		if _, ok := byHour[h]; !ok {
			order = append(order, h)
		}
		byHour[h] = append(byHour[h], m)
	}
	return s.update(ctx, len(order), func(i int) (string, int64, func(*hourData)) {
		h := order[i]
		return sensor, h, func(d *hourData) {
			for _, m := range byHour[h] {
				mi := int(floorDiv(m.Start.Unix(), 60) - h*60)
				if d.mins[mi] == nil {
					d.mins[mi] = &stats.Agg{}
				}
				d.mins[mi].Merge(&m.Agg)
			}
		}
	}, "", 0)
}

// update applies n changes, each to one (sensor, hour), and the cursor, in
// one transaction.
func (s *Store) update(ctx context.Context, n int, change func(i int) (string, int64, func(*hourData)), name string, pos int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := false
	defer func() {
		if !ok {
			clear(s.live) // it may hold changes that were not committed
		}
	}()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("longterm: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	written := map[string]liveHour{}
	for i := range n {
		sensor, hour, apply := change(i)
		h, err := s.load(ctx, tx, sensor, hour)
		if err != nil {
			return err
		}
		apply(h)
		if err := s.save(ctx, tx, sensor, hour, h); err != nil {
			return err
		}
		if cur, ok := written[sensor]; !ok || hour >= cur.hour {
			written[sensor] = liveHour{hour, h}
		}
	}
	if name != "" {
		if _, err := tx.ExecContext(ctx, `INSERT INTO cursors (name, position) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET position = excluded.position`, name, pos); err != nil {
			return fmt.Errorf("longterm: set cursor %s: %w", name, err)
		}
	}
	if s.beforeCommit != nil {
		if err := s.beforeCommit(); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("longterm: commit: %w", err)
	}
	for sensor, lh := range written {
		if cur, ok := s.live[sensor]; !ok || lh.hour >= cur.hour {
			s.live[sensor] = lh
		}
	}
	ok = true
	return nil
}

func (s *Store) load(ctx context.Context, tx *sql.Tx, sensor string, hour int64) (*hourData, error) {
	if lh, ok := s.live[sensor]; ok && lh.hour == hour {
		return lh.data, nil
	}
	var mins, mhists []byte
	err := tx.QueryRowContext(ctx, `SELECT h.minutes, m.data FROM hours h JOIN mhists m ON m.id = h.rowid
		WHERE h.sensor = ? AND h.hour = ?`, sensor, hour).Scan(&mins, &mhists)
	if errors.Is(err, sql.ErrNoRows) {
		return &hourData{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("longterm: read %s hour %d: %w", sensor, hour, err)
	}
	return decodeHour(time.Unix(hour*3600, 0), mins, mhists)
}

func (s *Store) save(ctx context.Context, tx *sql.Tx, sensor string, hour int64, h *hourData) error {
	tot := h.total()
	mins, hists := encodeMinutes(h)
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO hours (sensor, hour, dur_ms, energy, lafmax, lafmin, fast_ms, hist, minutes, seq)
		VALUES (?,?,?,?,?,?,?,?,?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM hours)) ON CONFLICT (sensor, hour) DO UPDATE SET
		dur_ms = excluded.dur_ms, energy = excluded.energy, lafmax = excluded.lafmax, lafmin = excluded.lafmin,
		fast_ms = excluded.fast_ms, hist = excluded.hist, minutes = excluded.minutes, seq = excluded.seq RETURNING rowid`,
		sensor, hour, tot.DurMs, tot.Energy, tot.Max, tot.Min, tot.FastMs, appendHist(nil, &tot.Hist), mins).Scan(&id); err != nil {
		return fmt.Errorf("longterm: write %s hour %d: %w", sensor, hour, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO mhists (id, data) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET data = excluded.data`,
		id, deflate(hists)); err != nil {
		return fmt.Errorf("longterm: write %s hour %d: %w", sensor, hour, err)
	}
	return nil
}
