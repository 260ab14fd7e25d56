// Package alertstore is the central service's alert store, in cases.db
// (SQLite through internal/sqlitedb, WAL, synchronous=FULL): the alerts,
// their transition history (audit) and the alert monitor's per-sensor
// state snapshots, so that alert state survives a restart without
// duplicates or losses. The fiscal's cases (notices, autos, their audit
// trail) are internal/cases/casesdb's, in tables of their own in the same
// file.
//
// It implements alerts.StateStore. Idempotency rules:
//
//   - An alert row is keyed by the alert id, which the alerts engine derives
//     deterministically (sensor + pending instant; sensor + "/nodata/" + end
//     of the last data). A row never moves backwards in its lifecycle
//     (pending < firing < resolved/cancelled).
//   - A transition is stored at most once per (alert id, event kind).
//   - A sensor snapshot replaces the stored one only if its Seq is not lower.
//
// Events and the snapshot of one alerts.Change are written in one
// transaction, so after a crash the stored state and the stored alerts agree.
//
// The schema is versioned: numbered steps recorded in schema_migrations
// (casesdb keeps its own version table beside it).
//
// Overview of its parts: the alerts, their transitions and the monitor's
// per-sensor state, in `cases.db` beside the case store's tables (SQLite,
// numbered schema steps); `EvidenceSpans` (what each alert rests on).
package alertstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/internal/sqlitedb"
)

// ErrNotFound is returned when an alert id is unknown: alerts.ErrNotFound,
// which consumers that do not link the store test for.
var ErrNotFound = alerts.ErrNotFound

// Store is an open case store. It is safe for concurrent use.
type Store struct {
	db  *sql.DB
	now func() time.Time

	upsertAlert, insertEvent, upsertState *sql.Stmt
}

var _ alerts.StateStore = (*Store)(nil)

var migrations = []sqlitedb.Step{
	{Name: "alerts, alert events, monitor state", SQL: `
CREATE TABLE alerts (
	id                 TEXT PRIMARY KEY,
	kind               TEXT NOT NULL,
	state              TEXT NOT NULL,
	state_rank         INTEGER NOT NULL,
	sensor             TEXT NOT NULL,
	gateway            TEXT NOT NULL DEFAULT '',
	municipality       TEXT NOT NULL DEFAULT '',
	code               TEXT NOT NULL DEFAULT '',
	zone               TEXT NOT NULL DEFAULT '',
	establishment_type TEXT NOT NULL DEFAULT '',
	establishment      TEXT NOT NULL DEFAULT '',
	grade              TEXT NOT NULL DEFAULT '',
	screening          INTEGER NOT NULL DEFAULT 0,
	code_id            TEXT NOT NULL DEFAULT '',
	code_version       TEXT NOT NULL DEFAULT '',
	rule_id            TEXT NOT NULL DEFAULT '',
	article            TEXT NOT NULL DEFAULT '',
	quote              TEXT NOT NULL DEFAULT '',
	period             TEXT NOT NULL DEFAULT '',
	period_label       TEXT NOT NULL DEFAULT '',
	limit_db           REAL NOT NULL DEFAULT 0,
	margin_db          REAL NOT NULL DEFAULT 0,
	laeq_db            REAL NOT NULL DEFAULT 0,
	lafmax_db          REAL NOT NULL DEFAULT 0,
	peak_laeq_db       REAL NOT NULL DEFAULT 0,
	peak_lafmax_db     REAL NOT NULL DEFAULT 0,
	window_start       INTEGER, -- unix ms, UTC; NULL when unset
	window_end         INTEGER,
	pending_at         INTEGER,
	firing_at          INTEGER,
	resolved_at        INTEGER,
	resolution         TEXT NOT NULL DEFAULT '',
	reason             TEXT NOT NULL DEFAULT '',
	created_at         INTEGER NOT NULL,
	updated_at         INTEGER NOT NULL
) STRICT;
CREATE INDEX alerts_by_state ON alerts(state, pending_at);
CREATE INDEX alerts_by_sensor ON alerts(sensor, pending_at);
CREATE INDEX alerts_by_municipality ON alerts(municipality, pending_at);

CREATE TABLE alert_events (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	alert_id    TEXT NOT NULL REFERENCES alerts(id),
	kind        TEXT NOT NULL,
	at          INTEGER NOT NULL, -- unix ms of the transition
	sensor      TEXT NOT NULL,
	alert_json  TEXT NOT NULL,    -- the alert right after the transition
	recorded_at INTEGER NOT NULL,
	UNIQUE (alert_id, kind)
) STRICT;

CREATE TABLE monitor_state (
	sensor     TEXT PRIMARY KEY,
	seq        INTEGER NOT NULL,
	state_json TEXT NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;
`},
	{Name: "alerts.detected_at: when the service saw an exceedance fire", SQL: `
ALTER TABLE alerts ADD COLUMN detected_at INTEGER; -- unix ms, wall clock; NULL when unset
`},
	{Name: "alerts.unsynced_records: records from an unsynchronised gateway clock", SQL: `
ALTER TABLE alerts ADD COLUMN unsynced_records INTEGER NOT NULL DEFAULT 0;
`},
}

// Open opens (creating if needed) the case store at path and migrates it.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sqlitedb.Open(path, sqlitedb.Options{ForeignKeys: true, MaxOpenConns: 4})
	if err != nil {
		return nil, fmt.Errorf("alertstore: %w", err)
	}
	s := &Store{db: db, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	for _, st := range []*sql.Stmt{s.upsertAlert, s.insertEvent, s.upsertState} {
		if st != nil {
			st.Close()
		}
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("alertstore: close: %w", err)
	}
	return nil
}

func (s *Store) migrate(ctx context.Context) error {
	if err := sqlitedb.Migrate(ctx, s.db, sqlitedb.Scheme{Table: "schema_migrations"}, migrations); err != nil {
		return fmt.Errorf("alertstore: %w", err)
	}
	return nil
}

// alertCols are the columns written from an alerts.Alert, in order.
var alertCols = []string{
	"id", "kind", "state", "state_rank", "sensor", "gateway", "municipality", "code", "zone",
	"establishment_type", "establishment", "grade", "screening", "code_id", "code_version", "rule_id",
	"article", "quote", "period", "period_label", "limit_db", "margin_db", "laeq_db", "lafmax_db",
	"peak_laeq_db", "peak_lafmax_db", "window_start", "window_end", "pending_at", "firing_at",
	"resolved_at", "resolution", "reason", "detected_at", "unsynced_records",
}

func alertArgs(a *alerts.Alert) []any {
	return []any{
		a.ID, string(a.Kind), string(a.State), a.State.Rank(), a.Sensor, a.Gateway, a.Municipality, a.Code, a.Zone,
		a.EstablishmentType, a.Establishment, a.Grade, a.Screening, a.CodeID, a.CodeVersion, a.RuleID,
		a.Article, a.Quote, a.Period, a.PeriodLabel, a.LimitDB, a.MarginDB, a.LAeqDB, a.LAFmaxDB,
		a.PeakLAeqDB, a.PeakLAFmaxDB, ms(a.WindowStart), ms(a.WindowEnd), ms(a.PendingAt), ms(a.FiringAt),
		ms(a.ResolvedAt), a.Resolution, a.Reason, ms(a.DetectedAt), a.UnsyncedRecords,
	}
}

func (s *Store) prepare(ctx context.Context) error {
	var set []string
	for _, c := range alertCols[1:] {
		set = append(set, c+" = excluded."+c)
	}
	upsertAlert := `INSERT INTO alerts (` + strings.Join(alertCols, ", ") + `, created_at, updated_at)
		VALUES (` + strings.Repeat("?, ", len(alertCols)) + `?, ?)
		ON CONFLICT (id) DO UPDATE SET ` + strings.Join(set, ", ") + `, updated_at = excluded.updated_at
		WHERE excluded.state_rank >= alerts.state_rank`
	var err error
	if s.upsertAlert, err = s.db.PrepareContext(ctx, upsertAlert); err != nil {
		return fmt.Errorf("alertstore: prepare: %w", err)
	}
	if s.insertEvent, err = s.db.PrepareContext(ctx, `INSERT INTO alert_events (alert_id, kind, at, sensor, alert_json, recorded_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (alert_id, kind) DO NOTHING`); err != nil {
		return fmt.Errorf("alertstore: prepare: %w", err)
	}
	if s.upsertState, err = s.db.PrepareContext(ctx, `INSERT INTO monitor_state (sensor, seq, state_json, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (sensor) DO UPDATE SET seq = excluded.seq, state_json = excluded.state_json, updated_at = excluded.updated_at
		WHERE excluded.seq >= monitor_state.seq`); err != nil {
		return fmt.Errorf("alertstore: prepare: %w", err)
	}
	return nil
}

func ms(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// SaveStates stores the changes in one transaction (alerts.StateStore).
func (s *Store) SaveStates(ctx context.Context, changes []alerts.Change) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("alertstore: save: %w", err)
	}
	defer tx.Rollback()
	now := s.now().UnixMilli()
	upA, insE, upS := tx.StmtContext(ctx, s.upsertAlert), tx.StmtContext(ctx, s.insertEvent), tx.StmtContext(ctx, s.upsertState)
	putAlert := func(a *alerts.Alert) error {
		if _, err := upA.ExecContext(ctx, append(alertArgs(a), now, now)...); err != nil {
			return fmt.Errorf("alertstore: save alert %s: %w", a.ID, err)
		}
		return nil
	}
	for i := range changes {
		c := &changes[i]
		for j := range c.Events {
			ev := &c.Events[j]
			if err := putAlert(&ev.Alert); err != nil {
				return err
			}
			js, err := json.Marshal(ev.Alert)
			if err != nil {
				return fmt.Errorf("alertstore: save event: %w", err)
			}
			if _, err := insE.ExecContext(ctx, ev.Alert.ID, string(ev.Kind), ev.At.UnixMilli(), ev.Alert.Sensor, string(js), now); err != nil {
				return fmt.Errorf("alertstore: save event %s %s: %w", ev.Alert.ID, ev.Kind, err)
			}
		}
		if c.State.Sensor == "" {
			continue
		}
		js, err := json.Marshal(&c.State)
		if err != nil {
			return fmt.Errorf("alertstore: save state %s: %w", c.State.Sensor, err)
		}
		res, err := upS.ExecContext(ctx, c.State.Sensor, int64(c.State.Seq), string(js), now)
		if err != nil {
			return fmt.Errorf("alertstore: save state %s: %w", c.State.Sensor, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			continue // an older snapshot: keep the stored one and its alerts
		}
		// Keep the rows of open alerts current (peaks, window).
		for _, a := range []*alerts.Alert{c.State.Open, c.State.Gap} {
			if a != nil {
				if err := putAlert(a); err != nil {
					return err
				}
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("alertstore: save: %w", err)
	}
	return nil
}

// LoadStates returns every saved sensor snapshot (alerts.StateStore).
func (s *Store) LoadStates(ctx context.Context) ([]alerts.SensorState, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT sensor, state_json FROM monitor_state ORDER BY sensor`)
	if err != nil {
		return nil, fmt.Errorf("alertstore: load states: %w", err)
	}
	defer rows.Close()
	var out []alerts.SensorState
	for rows.Next() {
		var sensor, js string
		if err := rows.Scan(&sensor, &js); err != nil {
			return nil, fmt.Errorf("alertstore: load states: %w", err)
		}
		var st alerts.SensorState
		if err := json.Unmarshal([]byte(js), &st); err != nil {
			return nil, fmt.Errorf("alertstore: load state of %s: %w", sensor, err)
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("alertstore: load states: %w", err)
	}
	return out, nil
}

// Filter selects alerts. Empty fields match everything.
type Filter struct {
	State        alerts.State
	Kind         alerts.Kind
	Municipality string
	Sensor       string
	Limit        int // default 100, at most 1000
}

const selectAlert = `SELECT ` + "id, kind, state, sensor, gateway, municipality, code, zone, establishment_type, establishment, grade, screening, code_id, code_version, rule_id, article, quote, period, period_label, limit_db, margin_db, laeq_db, lafmax_db, peak_laeq_db, peak_lafmax_db, window_start, window_end, pending_at, firing_at, resolved_at, resolution, reason, detected_at, unsynced_records" + ` FROM alerts`

type scanner interface{ Scan(dest ...any) error }

func scanAlert(r scanner) (alerts.Alert, error) {
	var a alerts.Alert
	var kind, state string
	var ws, we, pa, fa, ra, da sql.NullInt64
	err := r.Scan(&a.ID, &kind, &state, &a.Sensor, &a.Gateway, &a.Municipality, &a.Code, &a.Zone,
		&a.EstablishmentType, &a.Establishment, &a.Grade, &a.Screening, &a.CodeID, &a.CodeVersion, &a.RuleID,
		&a.Article, &a.Quote, &a.Period, &a.PeriodLabel, &a.LimitDB, &a.MarginDB, &a.LAeqDB, &a.LAFmaxDB,
		&a.PeakLAeqDB, &a.PeakLAFmaxDB, &ws, &we, &pa, &fa, &ra, &a.Resolution, &a.Reason, &da, &a.UnsyncedRecords)
	a.Kind, a.State = alerts.Kind(kind), alerts.State(state)
	a.WindowStart, a.WindowEnd, a.PendingAt, a.FiringAt, a.ResolvedAt = fromMS(ws), fromMS(we), fromMS(pa), fromMS(fa), fromMS(ra)
	a.DetectedAt = fromMS(da)
	return a, err
}

// ListAlerts returns the alerts matching f, newest pending instant first.
func (s *Store) ListAlerts(ctx context.Context, f Filter) ([]alerts.Alert, error) {
	var where []string
	var args []any
	add := func(col, v string) {
		if v != "" {
			where = append(where, col+" = ?")
			args = append(args, v)
		}
	}
	add("state", string(f.State))
	add("kind", string(f.Kind))
	add("municipality", f.Municipality)
	add("sensor", f.Sensor)
	q := selectAlert
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	q += " ORDER BY pending_at DESC, id LIMIT ?"
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("alertstore: list alerts: %w", err)
	}
	defer rows.Close()
	out := []alerts.Alert{}
	for rows.Next() {
		a, err := scanAlert(rows)
		if err != nil {
			return nil, fmt.Errorf("alertstore: list alerts: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("alertstore: list alerts: %w", err)
	}
	return out, nil
}

// GetAlert returns one alert; ErrNotFound if the id is unknown.
func (s *Store) GetAlert(ctx context.Context, id string) (alerts.Alert, error) {
	a, err := scanAlert(s.db.QueryRowContext(ctx, selectAlert+" WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return alerts.Alert{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return alerts.Alert{}, fmt.Errorf("alertstore: get alert %s: %w", id, err)
	}
	return a, nil
}

// AlertEvents returns an alert's transitions in the order they were stored.
func (s *Store) AlertEvents(ctx context.Context, id string) ([]alerts.Event, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT kind, at, alert_json FROM alert_events WHERE alert_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("alertstore: alert events %s: %w", id, err)
	}
	defer rows.Close()
	var out []alerts.Event
	for rows.Next() {
		var kind, js string
		var at int64
		if err := rows.Scan(&kind, &at, &js); err != nil {
			return nil, fmt.Errorf("alertstore: alert events %s: %w", id, err)
		}
		ev := alerts.Event{Kind: alerts.EventKind(kind), At: time.UnixMilli(at).UTC()}
		if err := json.Unmarshal([]byte(js), &ev.Alert); err != nil {
			return nil, fmt.Errorf("alertstore: alert events %s: %w", id, err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("alertstore: alert events %s: %w", id, err)
	}
	return out, nil
}

// CountAlerts returns how many alerts are in each state (for metrics).
func (s *Store) CountAlerts(ctx context.Context) (map[alerts.State]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT state, count(*) FROM alerts GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("alertstore: count alerts: %w", err)
	}
	defer rows.Close()
	out := map[alerts.State]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("alertstore: count alerts: %w", err)
		}
		out[alerts.State(st)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("alertstore: count alerts: %w", err)
	}
	return out, nil
}

// Span is a stretch of one sensor's records that an alert rests on.
type Span struct {
	AlertID  string
	Sensor   string
	From, To time.Time // To is zero while the alert is open
}

// EvidenceSpans returns, for every exceedance alert (any state), the span
// of its sensor's records it rests on: from the earliest of its window
// start and pending instant to the latest of its window end and resolve
// instant, open-ended while the alert is pending or firing. Retention
// keeps the readings and signed batches under these spans (plus a margin).
func (s *Store) EvidenceSpans(ctx context.Context) ([]Span, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, sensor, state, window_start, window_end, pending_at, resolved_at
		FROM alerts WHERE kind = ?`, string(alerts.KindExceedance))
	if err != nil {
		return nil, fmt.Errorf("alertstore: evidence spans: %w", err)
	}
	defer rows.Close()
	var out []Span
	for rows.Next() {
		var sp Span
		var state string
		var ws, we, pa, ra sql.NullInt64
		if err := rows.Scan(&sp.AlertID, &sp.Sensor, &state, &ws, &we, &pa, &ra); err != nil {
			return nil, fmt.Errorf("alertstore: evidence spans: %w", err)
		}
		sp.From = earliest(fromMS(ws), fromMS(pa))
		if st := alerts.State(state); st != alerts.StatePending && st != alerts.StateFiring {
			sp.To = latest(fromMS(we), fromMS(ra)) // zero (no instant at all): open-ended, kept
		}
		out = append(out, sp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("alertstore: evidence spans: %w", err)
	}
	return out, nil
}

// earliest is the earlier of two instants, ignoring zero ones.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// latest is the later of two instants.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
