// Package sqlitestore is the readings store: SQLite (through
// internal/sqlitedb: WAL, busy timeout, numbered schema steps), the
// authoritative local copy of everything the central service accepts or
// rejects. Apply stores one group commit in one transaction (raw batches,
// level records packed one row per batch, env readings, dead letters,
// statuses, watermarks); the queries answer the dashboard, the alerts, the
// evidence export, retention and the InfluxDB mirror.
//
// Overview of its parts: the readings store: SQLite through
// `internal/sqlitedb` (authoritative; numbered schema steps, a release
// database adopted; `Apply` as a type whose steps are methods, the watermark
// arithmetic a pure `seqWindow`; level records packed one row per batch,
// `packs.go`; record ids that only grow, `ids.go`; `conflicts.go`: a
// re-measured second keeps both records in `record_conflicts`, another body
// under a stored seq is a `seq_conflict` dead letter, skipped seqs in
// `seq_skips`; `PruneOldest`, `FloorLevelIDs`, the evidence's `BatchesRange`,
// the field checks by position `ChecksAfter`, over a partial index, and the
// levels batches after a position `LevelBatchesAfter`, `checks.go`); wired by
// `internal/central` only.
package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sossego/sossego/internal/sqlitedb"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// Sync is SQLite's synchronous setting for commits.
type Sync string

const (
	// SyncFull fsyncs the WAL at every commit: a stored (and acked) batch
	// survives a power cut. The default.
	SyncFull Sync = "full"
	// SyncNormal survives a crash of the process but may lose the last
	// commits on a power cut or kernel crash. Faster on slow disks.
	SyncNormal Sync = "normal"
)

// Options configures Open.
type Options struct {
	Sync Sync // default SyncFull
	// Log receives the progress of migrations run at open (nil: none).
	Log *slog.Logger
}

// Store is the authoritative local store of readings.
type Store struct {
	w, r   *sql.DB // w: one connection for writes; r: readers (WAL lets them run alongside)
	closed atomic.Bool
	notify chan struct{} // signalled after a commit that stored level records
	st     writeStmts    // prepared once on w, bound to each transaction
	// writeMu is held by each writing transaction (Apply, PruneOldest) from
	// its start until recent reflects it.
	writeMu sync.Mutex
	recent  map[string]*sensorRecent // per sensor, its latest packs (packs.go)
	// nextLevelID is the id the next level record gets (0: read it from
	// sqlite_sequence), kept between transactions.
	nextLevelID int64
}

// writeStmts are the statements Apply runs for every batch, prepared once:
// re-parsing SQL per statement was a quarter of the group commit's CPU.
type writeStmts struct {
	insEnv, getWM, insGateway, gwSeen, gwWatermark, aboveList, aboveDel, aboveIns, getBody *sql.Stmt
	// insBatches[k] inserts 2^k batches in one statement, like insLevels
	// for levels, skipping those already stored.
	insBatches [batchChunkLog + 1]*sql.Stmt
	// batchesIn lists the (gateway, seq) of the batches in a rowid range:
	// the ones an insert with duplicates did store.
	batchesIn *sql.Stmt
	// insPacks[k] inserts 2^k level packs in one statement (packs.go).
	insPacks [packChunkLog + 1]*sql.Stmt
	// levelSeq, levelLatest and levelStarts are packWriter's queries.
	levelSeq, levelLatest, levelStarts *sql.Stmt
}

const (
	batchChunkLog = 6  // up to 64 batches per INSERT
	batchParams   = 11 // columns per inserted batch
)

func insertBatchesSQL(rows int) string {
	row := "(" + strings.Repeat("?,", batchParams-1) + "?)"
	return `INSERT INTO batches
		(gateway, seq, kind, municipality, sensor, topic, body, sig, verified, received_at, records)
		VALUES ` + strings.Repeat(row+",", rows-1) + row + ` ON CONFLICT DO NOTHING`
}

func (ws *writeStmts) prepare(db *sql.DB) error {
	for _, q := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&ws.insEnv, `INSERT INTO env
		(sensor, t, temperature_c, humidity_pct, pressure_hpa, gateway, seq)
		VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`},
		{&ws.getWM, `SELECT watermark FROM gateways WHERE gateway = ?`},
		{&ws.insGateway, `INSERT INTO gateways (gateway) VALUES (?)`},
		{&ws.gwSeen, `UPDATE gateways SET municipality = ?, clock = ?,
			last_seen = MAX(last_seen, ?), last_seq = MAX(last_seq, ?) WHERE gateway = ?`},
		{&ws.gwWatermark, `UPDATE gateways SET watermark = ? WHERE gateway = ?`},
		{&ws.aboveList, `SELECT seq FROM seq_above WHERE gateway = ?`},
		{&ws.aboveDel, `DELETE FROM seq_above WHERE gateway = ? AND seq = ?`},
		{&ws.aboveIns, `INSERT INTO seq_above (gateway, seq) VALUES (?, ?) ON CONFLICT DO NOTHING`},
		{&ws.batchesIn, `SELECT gateway, seq FROM batches WHERE rowid > ? AND rowid <= ?`},
		{&ws.getBody, `SELECT body FROM batches WHERE gateway = ? AND seq = ?`},
		{&ws.levelSeq, `SELECT seq FROM sqlite_sequence WHERE name = 'level_packs'`},
		{&ws.levelLatest, `SELECT MAX(t1) FROM level_packs WHERE sensor = ?`},
		{&ws.levelStarts, `SELECT ` + packCols + ` FROM level_packs WHERE sensor = ? AND t1 >= ? AND t1 < ? AND t0 <= ?`},
	} {
		st, err := db.Prepare(q.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", q.sql, err)
		}
		*q.dst = st
	}
	for k := range ws.insPacks {
		st, err := db.Prepare(insertPacksSQL(1 << k))
		if err != nil {
			return fmt.Errorf("prepare level packs insert of %d rows: %w", 1<<k, err)
		}
		ws.insPacks[k] = st
	}
	for k := range ws.insBatches {
		st, err := db.Prepare(insertBatchesSQL(1 << k))
		if err != nil {
			return fmt.Errorf("prepare batches insert of %d rows: %w", 1<<k, err)
		}
		ws.insBatches[k] = st
	}
	return nil
}

func (ws *writeStmts) close() {
	for _, st := range append(append([]*sql.Stmt{ws.insEnv, ws.getWM, ws.insGateway, ws.gwSeen,
		ws.gwWatermark, ws.aboveList, ws.aboveDel, ws.aboveIns, ws.getBody, ws.batchesIn, ws.levelSeq, ws.levelLatest, ws.levelStarts}, ws.insPacks[:]...), ws.insBatches[:]...) {
		if st != nil {
			st.Close() //nolint:errcheck // closing on shutdown
		}
	}
}

// batchesColumns is the batches table's definition. It is a rowid table:
// retention deletes by rowid, and Apply learns which batches an insert
// stored from their rowids. Databases from before that kept it WITHOUT
// ROWID; Open rebuilds such a table (migrateBatches).
const batchesColumns = `
	gateway      TEXT    NOT NULL,
	seq          INTEGER NOT NULL,
	kind         TEXT    NOT NULL,
	municipality TEXT    NOT NULL,
	sensor       TEXT    NOT NULL,
	topic        TEXT    NOT NULL,
	body         BLOB    NOT NULL,
	sig          BLOB,
	verified     INTEGER NOT NULL,
	received_at  INTEGER NOT NULL,
	records      INTEGER NOT NULL,
	PRIMARY KEY (gateway, seq)
`

// migrateBatches rebuilds a batches table created WITHOUT ROWID (before
// retention and Apply relied on rowids) as a rowid table, keeping every
// row. It does nothing on a current database.
func migrateBatches(ctx context.Context, tx *sql.Tx) error {
	const cols = `gateway, seq, kind, municipality, sensor, topic, body, sig, verified, received_at, records`
	return rebuildTable(ctx, tx, "batches", "a rowid table",
		func(def string) bool { return !strings.Contains(def, "WITHOUT ROWID") },
		`CREATE TABLE batches_rowid (`+batchesColumns+`)`,
		`INSERT INTO batches_rowid (`+cols+`) SELECT `+cols+` FROM batches ORDER BY received_at, gateway, seq`,
		`DROP TABLE batches`,
		`ALTER TABLE batches_rowid RENAME TO batches`)
}

// rebuildTable runs steps in tx unless current says the table's definition
// (upper-cased, from sqlite_master) needs nothing; what names the new form
// in errors.
func rebuildTable(ctx context.Context, tx *sql.Tx, table, what string, current func(def string) bool, steps ...string) error {
	var def string
	if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&def); err != nil {
		return fmt.Errorf("read %s table definition: %w", table, err)
	}
	if current(strings.ToUpper(def)) {
		return nil
	}
	for _, q := range steps {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("migrate %s to %s: %w", table, what, err)
		}
	}
	return nil
}

// envColumns: ids come from sqlite_sequence (AUTOINCREMENT), so they only
// grow even after retention deleted the newest rows; the InfluxDB mirror's
// env cursor is an id (migrateEnv rebuilds an older table).
const envColumns = `
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	sensor        TEXT    NOT NULL,
	t             INTEGER NOT NULL,
	temperature_c REAL,
	humidity_pct  REAL,
	pressure_hpa  REAL,
	gateway       TEXT    NOT NULL,
	seq           INTEGER NOT NULL
`

const schema = `
CREATE TABLE IF NOT EXISTS batches (` + batchesColumns + `);
CREATE TABLE IF NOT EXISTS env (` + envColumns + `);
CREATE UNIQUE INDEX IF NOT EXISTS env_sensor_t ON env (sensor, t);
CREATE TABLE IF NOT EXISTS dead_letters (
	id          INTEGER PRIMARY KEY,
	received_at INTEGER NOT NULL,
	topic       TEXT    NOT NULL,
	reason      TEXT    NOT NULL,
	message     TEXT    NOT NULL,
	gateway     TEXT    NOT NULL,
	seq         INTEGER NOT NULL,
	payload     BLOB    NOT NULL,
	truncated   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS dead_letters_reason ON dead_letters (reason, id);
CREATE TABLE IF NOT EXISTS gateways (
	gateway      TEXT PRIMARY KEY,
	municipality TEXT    NOT NULL DEFAULT '',
	state        TEXT    NOT NULL DEFAULT '',
	at           INTEGER NOT NULL DEFAULT 0,
	received_at  INTEGER NOT NULL DEFAULT 0,
	clock        TEXT,
	outbox       TEXT,
	version      TEXT    NOT NULL DEFAULT '',
	last_seen    INTEGER NOT NULL DEFAULT 0,
	last_seq     INTEGER NOT NULL DEFAULT 0,
	watermark    INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS seq_above (
	gateway TEXT    NOT NULL,
	seq     INTEGER NOT NULL,
	PRIMARY KEY (gateway, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS settled (
	gateway     TEXT    NOT NULL,
	seq         INTEGER NOT NULL,
	dead_letter INTEGER NOT NULL,
	PRIMARY KEY (gateway, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS settled_dead_letter ON settled (dead_letter);
CREATE TABLE IF NOT EXISTS cursors (
	name     TEXT PRIMARY KEY,
	position INTEGER NOT NULL
);
`

// migrationScheme is the table where the readings store records its
// schema steps.
var migrationScheme = sqlitedb.Scheme{Table: "readings_migrations"}

// migrations are the readings store's numbered schema steps. A database
// from before the version table runs all of them, so each checks what it
// changes: step 1 creates what is missing, the others rebuild only a table
// still in its older form. A schema change is a new step at the end.
func migrations(log *slog.Logger) []sqlitedb.Step {
	return []sqlitedb.Step{
		{Name: "tables", SQL: schema + packsSchema + conflictsSchema},
		{Name: "batches as a rowid table", Tx: migrateBatches},
		{Name: "level records in packs", Tx: func(ctx context.Context, tx *sql.Tx) error { return migrateLevels(ctx, tx, log) }},
		{Name: "env ids that only grow", Tx: migrateEnv},
		{Name: "gateways conflict counters", Tx: migrateConflicts},
		{Name: "index of field-check batches", SQL: checksIndex},
	}
}

// Open opens (creating if needed) the database file at path.
func Open(path string, opts Options) (*Store, error) {
	sync := sqlitedb.SyncFull
	switch opts.Sync {
	case "", SyncFull:
	case SyncNormal:
		sync = sqlitedb.SyncNormal
	default:
		return nil, fmt.Errorf("store: sync %q: use full or normal", opts.Sync)
	}
	// Checkpoint every 10,000 WAL pages (~40 MB) instead of 1,000: each
	// checkpoint copies the pages the commits keep rewriting (index
	// leaves, the gateways rows) once, and at full ingest the writer
	// spent ~4 % of its CPU there (measured with BenchmarkIngestMosquitto).
	o := sqlitedb.Options{Sync: sync, ForeignKeys: true, WALAutocheckpoint: 10000}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w, err := sqlitedb.OpenMigrated(context.Background(), path, o, migrationScheme, migrations(log))
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := floorSequences(w); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	o.QueryOnly, o.MaxOpenConns = true, 4
	r, err := sqlitedb.Open(path, o)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	st := &Store{w: w, r: r, notify: make(chan struct{}, 1), recent: map[string]*sensorRecent{}}
	if err := st.st.prepare(w); err != nil {
		st.st.close()
		r.Close()
		w.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	return st, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.st.close()
	return errors.Join(s.r.Close(), s.w.Close())
}

// Stored signals (without blocking, coalescing) after each commit that
// stored level records; the InfluxDB mirror waits on it.
func (s *Store) Stored() <-chan struct{} { return s.notify }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMilli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// Watermark returns a gateway's highest contiguous stored seq (0 if none).
func (s *Store) Watermark(ctx context.Context, gateway string) (uint64, error) {
	var v int64
	err := s.r.QueryRowContext(ctx, `SELECT watermark FROM gateways WHERE gateway = ?`, gateway).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: watermark: %w", err)
	}
	return uint64(v), nil
}

// Records returns a sensor's records with start time in [from, to), in
// time order, at most limit (0 = no limit).
func (s *Store) Records(ctx context.Context, sensor string, from, to time.Time, limit int) ([]store.Record, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+packCols+`, t1 FROM level_packs
		WHERE sensor = ? AND t1 >= ? AND t1 < ? AND t0 < ? ORDER BY t1`,
		sensor, from.UnixMilli(), to.UnixMilli()+packSpan.Milliseconds(), to.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: records: %w", err)
	}
	defer rows.Close()
	// Packs come by their last start; their records interleave where a
	// sensor's packs overlap in time (records sent twice under different
	// seqs, or by two gateways), so the records are sorted at the end.
	// With a limit, reading stops at the first pack that cannot hold a
	// record before the limit-th (it starts after t1 − packSpan).
	var out, pack []store.Record
	cutoff := int64(math.MaxInt64)
	for rows.Next() {
		var m packMeta
		var seq, t1 int64
		var data []byte
		if err := rows.Scan(&m.id, &m.sensor, &m.gw, &seq, &m.grade, &m.synced, &m.t0, &m.n, &data, &t1); err != nil {
			return nil, fmt.Errorf("store: scan level pack: %w", err)
		}
		if t1-packSpan.Milliseconds() >= cutoff {
			break
		}
		m.seq = uint64(seq)
		if pack, err = decodePack(pack[:0], m, data); err != nil {
			return nil, err
		}
		for _, r := range pack {
			if !r.T.Before(from) && r.T.Before(to) {
				out = append(out, r)
			}
		}
		if limit > 0 && len(out) >= limit {
			sortRecords(out)
			out = out[:limit]
			cutoff = out[limit-1].T.UnixMilli()
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: records: %w", err)
	}
	sortRecords(out)
	return out, nil
}

// sortRecords sorts by start time (ids, which follow insertion, within a
// start: a sensor has one record per start).
func sortRecords(recs []store.Record) {
	slices.SortFunc(recs, func(a, b store.Record) int {
		if c := a.T.Compare(b.T); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// Buckets aggregates a sensor's records in [from, to) into buckets of step.
func (s *Store) Buckets(ctx context.Context, sensor string, from, to time.Time, step time.Duration) ([]store.Bucket, error) {
	recs, err := s.Records(ctx, sensor, from, to, 0)
	if err != nil {
		return nil, err
	}
	return store.Aggregate(recs, step), nil
}

// EnvRecords returns a sensor's environmental readings with time in
// [from, to), in time order, at most limit (0 = no limit).
func (s *Store) EnvRecords(ctx context.Context, sensor string, from, to time.Time, limit int) ([]store.EnvRecord, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+envCols+` FROM env
		WHERE sensor = ? AND t >= ? AND t < ? ORDER BY t LIMIT ?`, sensor, from.UnixMilli(), to.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: env records: %w", err)
	}
	return scanEnv(rows)
}

// EnvAfter returns up to limit env records with id > after, by id (the
// InfluxDB mirror's cursor order).
func (s *Store) EnvAfter(ctx context.Context, after int64, limit int) ([]store.EnvRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+envCols+` FROM env WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: env after %d: %w", after, err)
	}
	return scanEnv(rows)
}

// MaxEnvID is the id of the newest env record (0 when none).
func (s *Store) MaxEnvID(ctx context.Context) (int64, error) {
	var v sql.NullInt64
	if err := s.r.QueryRowContext(ctx, `SELECT MAX(id) FROM env`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: max env id: %w", err)
	}
	return v.Int64, nil
}

const envCols = `id, sensor, gateway, seq, t, temperature_c, humidity_pct, pressure_hpa`

func scanEnv(rows *sql.Rows) ([]store.EnvRecord, error) {
	defer rows.Close()
	var out []store.EnvRecord
	for rows.Next() {
		var e store.EnvRecord
		var t, seq int64
		var temp, hum, press sql.NullFloat64
		if err := rows.Scan(&e.ID, &e.Sensor, &e.Gateway, &seq, &t, &temp, &hum, &press); err != nil {
			return nil, fmt.Errorf("store: scan env: %w", err)
		}
		e.T, e.Seq = time.UnixMilli(t).UTC(), uint64(seq)
		for _, q := range []struct {
			v   sql.NullFloat64
			dst **float64
		}{{temp, &e.TemperatureC}, {hum, &e.HumidityPct}, {press, &e.PressureHPa}} {
			if q.v.Valid {
				v := q.v.Float64
				*q.dst = &v
			}
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read env: %w", err)
	}
	return out, nil
}

// Latest returns a sensor's record with the latest start.
func (s *Store) Latest(ctx context.Context, sensor string) (store.Record, bool, error) {
	// The pack holding it has the greatest t1 (its last record).
	rows, err := s.r.QueryContext(ctx, `SELECT `+packCols+` FROM level_packs WHERE sensor = ?
		ORDER BY t1 DESC, id DESC LIMIT 1`, sensor)
	if err != nil {
		return store.Record{}, false, fmt.Errorf("store: latest: %w", err)
	}
	recs, err := scanPacks(rows, false)
	if err != nil || len(recs) == 0 {
		return store.Record{}, false, err
	}
	return recs[len(recs)-1], true, nil
}

// LevelsAfter returns up to limit records with id > after, in id order (the
// InfluxDB mirror's cursor walk).
func (s *Store) LevelsAfter(ctx context.Context, after int64, limit int) ([]store.Record, error) {
	if limit <= 0 {
		return nil, nil
	}
	// Every pack holds at least one record, so limit packs are enough.
	rows, err := s.r.QueryContext(ctx, `SELECT `+packCols+` FROM level_packs WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: levels after %d: %w", after, err)
	}
	recs, err := scanPacks(rows, false)
	if err != nil {
		return nil, err
	}
	// The first pack may hold records at or below after.
	k := 0
	for k < len(recs) && recs[k].ID <= after {
		k++
	}
	recs = recs[k:]
	if len(recs) > limit {
		recs = recs[:limit]
	}
	return recs, nil
}

// MaxLevelID is the id of the newest level record (0 when empty).
func (s *Store) MaxLevelID(ctx context.Context) (int64, error) {
	var v sql.NullInt64
	if err := s.r.QueryRowContext(ctx, `SELECT MAX(id) FROM level_packs`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: max id: %w", err)
	}
	return v.Int64, nil
}

// CountLevels counts stored level records (all sensors when sensor is "").
func (s *Store) CountLevels(ctx context.Context, sensor string) (int64, error) {
	var n int64
	var err error
	if sensor == "" {
		err = s.r.QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM level_packs`).Scan(&n)
	} else {
		err = s.r.QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM level_packs WHERE sensor = ?`, sensor).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("store: count: %w", err)
	}
	return n, nil
}

// StoredSeqs returns the set of stored seqs of a gateway (tests, audits).
func (s *Store) StoredSeqs(ctx context.Context, gateway string) (map[uint64]bool, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq FROM batches WHERE gateway = ?`, gateway)
	if err != nil {
		return nil, fmt.Errorf("store: seqs: %w", err)
	}
	defer rows.Close()
	out := map[uint64]bool{}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("store: seqs: %w", err)
		}
		out[uint64(v)] = true
	}
	return out, rows.Err()
}

// RawBatch returns the stored body and signature of a batch (evidence).
func (s *Store) RawBatch(ctx context.Context, gateway string, seq uint64) (body, sig []byte, verified bool, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT body, sig, verified FROM batches WHERE gateway = ? AND seq = ?`,
		gateway, int64(seq)).Scan(&body, &sig, &verified)
	if err != nil {
		return nil, nil, false, fmt.Errorf("store: batch %s/%d: %w", gateway, seq, err)
	}
	return body, sig, verified, nil
}

// Cursor returns a named position (0 if never set).
func (s *Store) Cursor(ctx context.Context, name string) (int64, error) {
	var v int64
	err := s.r.QueryRowContext(ctx, `SELECT position FROM cursors WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: cursor %s: %w", name, err)
	}
	return v, nil
}

// SetCursor persists a named position.
func (s *Store) SetCursor(ctx context.Context, name string, pos int64) error {
	if _, err := s.w.ExecContext(ctx, `INSERT INTO cursors (name, position) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET position = excluded.position`, name, pos); err != nil {
		return fmt.Errorf("store: set cursor %s: %w", name, err)
	}
	return nil
}

// GatewayStatuses returns every gateway the store has heard of.
func (s *Store) GatewayStatuses(ctx context.Context) ([]store.GatewayStatus, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT g.gateway, g.municipality, g.state, g.at, g.received_at, g.clock, g.outbox,
		g.version, g.last_seen, g.last_seq, g.watermark, (SELECT COUNT(*) FROM seq_above a WHERE a.gateway = g.gateway),
		g.conflicts, g.skipped_seqs
		FROM gateways g ORDER BY g.gateway`)
	if err != nil {
		return nil, fmt.Errorf("store: gateways: %w", err)
	}
	defer rows.Close()
	var out []store.GatewayStatus
	for rows.Next() {
		var g store.GatewayStatus
		var at, recv, seen, lastSeq, wm, skipped int64
		var clock, outbox sql.NullString
		if err := rows.Scan(&g.Gateway, &g.Municipality, &g.State, &at, &recv, &clock, &outbox, &g.Version,
			&seen, &lastSeq, &wm, &g.PendingAbove, &g.Conflicts, &skipped); err != nil {
			return nil, fmt.Errorf("store: gateways: %w", err)
		}
		g.At, g.ReceivedAt, g.LastSeen = fromMilli(at), fromMilli(recv), fromMilli(seen)
		g.LastSeq, g.Watermark, g.SkippedSeqs = uint64(lastSeq), uint64(wm), uint64(skipped)
		if clock.Valid {
			var c wire.Clock
			if json.Unmarshal([]byte(clock.String), &c) == nil {
				g.Clock = &c
			}
		}
		if outbox.Valid {
			var o wire.Outbox
			if json.Unmarshal([]byte(outbox.String), &o) == nil {
				g.Outbox = &o
			}
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// DeadLetters lists rejected messages, newest first.
func (s *Store) DeadLetters(ctx context.Context, f store.DeadLetterFilter) ([]store.DeadLetter, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	q := `SELECT id, received_at, topic, reason, message, gateway, seq, payload, truncated,
		EXISTS (SELECT 1 FROM settled s WHERE s.dead_letter = dead_letters.id) FROM dead_letters WHERE 1=1`
	var args []any
	if f.Reason != "" {
		q += ` AND reason = ?`
		args = append(args, f.Reason)
	}
	if f.Gateway != "" {
		q += ` AND gateway = ?`
		args = append(args, f.Gateway)
	}
	if f.BeforeID > 0 {
		q += ` AND id < ?`
		args = append(args, f.BeforeID)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, f.Limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: dead letters: %w", err)
	}
	defer rows.Close()
	var out []store.DeadLetter
	for rows.Next() {
		var d store.DeadLetter
		var recv, seq int64
		if err := rows.Scan(&d.ID, &recv, &d.Topic, &d.Reason, &d.Message, &d.Gateway, &seq, &d.Payload, &d.Truncated, &d.Settled); err != nil {
			return nil, fmt.Errorf("store: dead letters: %w", err)
		}
		d.ReceivedAt, d.Seq = fromMilli(recv), uint64(seq)
		out = append(out, d)
	}
	return out, rows.Err()
}

// CountDeadLetters counts dead letters by reason.
func (s *Store) CountDeadLetters(ctx context.Context) (map[string]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT reason, COUNT(*) FROM dead_letters GROUP BY reason`)
	if err != nil {
		return nil, fmt.Errorf("store: count dead letters: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var r string
		var n int64
		if err := rows.Scan(&r, &n); err != nil {
			return nil, fmt.Errorf("store: count dead letters: %w", err)
		}
		out[r] = n
	}
	return out, rows.Err()
}

var _ store.Readings = (*Store)(nil)
