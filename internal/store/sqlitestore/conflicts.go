package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// Conflicts and skipped seqs: what Apply keeps when data disagrees with
// what is stored, instead of dropping it.
//
//   - A record conflict is a level record (or env reading) whose sensor
//     already has a different record with the same start: a second
//     measured again after the gateway clock stepped back, or a record a
//     key holder dated ahead of the real one. The stored record stays (the
//     first wins the readings); the new one is kept beside it in
//     record_conflicts. An identical record again is a plain duplicate.
//   - A seq conflict is a batch under a (gateway, seq) already stored with
//     a different body; it is kept as a dead letter (wire.ReasonSeqConflict)
//     and the stored batch stays.
//   - A seq skip (Write.Skips) moves a gateway's watermark over seqs that
//     will never arrive (see SeqSkip); each is recorded in seq_skips.
//
// Both counts are on the gateway's row (GatewayStatus.Conflicts,
// SkippedSeqs). Databases from before these tables get them at open
// (migrateConflicts).

const conflictsSchema = `
CREATE TABLE IF NOT EXISTS record_conflicts (
	id          INTEGER PRIMARY KEY,
	received_at INTEGER NOT NULL,
	kind        TEXT    NOT NULL, -- levels | env
	sensor      TEXT    NOT NULL,
	t           INTEGER NOT NULL, -- the start both records claim, Unix ms
	kept_gateway TEXT   NOT NULL,
	kept_seq    INTEGER NOT NULL,
	kept        TEXT    NOT NULL, -- the stored record (JSON, wire form)
	new_gateway TEXT    NOT NULL,
	new_seq     INTEGER NOT NULL,
	new         TEXT    NOT NULL  -- the record that arrived later (JSON, wire form)
);
CREATE INDEX IF NOT EXISTS record_conflicts_sensor_t ON record_conflicts (sensor, t);
CREATE TABLE IF NOT EXISTS seq_skips (
	id      INTEGER PRIMARY KEY,
	gateway TEXT    NOT NULL,
	first   INTEGER NOT NULL,
	last    INTEGER NOT NULL,
	at      INTEGER NOT NULL,
	reason  TEXT    NOT NULL
);
`

// migrateConflicts adds the gateways columns that count conflicts and
// skipped seqs to a database from before them (the tables themselves are
// created by conflictsSchema). It does nothing on a current database.
func migrateConflicts(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info('gateways')`)
	if err != nil {
		return fmt.Errorf("read gateways columns: %w", err)
	}
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("read gateways columns: %w", err)
		}
		have[n] = true
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("read gateways columns: %w", err)
	}
	for _, c := range []string{"conflicts", "skipped_seqs"} {
		if have[c] {
			continue
		}
		if _, err := tx.ExecContext(ctx, `ALTER TABLE gateways ADD COLUMN `+c+` INTEGER NOT NULL DEFAULT 0`); err != nil {
			return fmt.Errorf("add gateways.%s: %w", c, err)
		}
	}
	return nil
}

// heldRecord is a stored record a new one is compared with.
type heldRecord struct {
	gw  string
	seq uint64
	rec wire.Record
}

func sameRecord(a, b wire.Record) bool {
	if !a.T.Equal(b.T) || a.DurMs != b.DurMs || a.LAeq != b.LAeq || a.LAFmax != b.LAFmax || a.LAFmin != b.LAFmin ||
		a.Overload != b.Overload || (a.LCpeak == nil) != (b.LCpeak == nil) || (a.Hist == nil) != (b.Hist == nil) {
		return false
	}
	if a.LCpeak != nil && *a.LCpeak != *b.LCpeak {
		return false
	}
	return a.Hist == nil || maps.Equal(a.Hist.Bins, b.Hist.Bins)
}

// wireRecord is a stored record back in wire form.
func wireRecord(r store.Record) wire.Record {
	return wire.Record{T: r.T, DurMs: r.DurMs, LAeq: r.LAeq, LAFmax: r.LAFmax, LAFmin: r.LAFmin, LCpeak: r.LCpeak,
		Hist: r.Hist, Overload: r.Overload}
}

// pendingConflict is a conflict found in a transaction, inserted with it.
type pendingConflict struct {
	kind, sensor string
	t            int64
	kept, new    store.ConflictRecord
}

func recordJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

func levelConflict(sensor string, held heldRecord, b *store.Batch, r wire.Record) pendingConflict {
	return pendingConflict{kind: wire.KindLevels, sensor: sensor, t: r.T.UnixMilli(),
		kept: store.ConflictRecord{Gateway: held.gw, Seq: held.seq, Record: recordJSON(held.rec)},
		new:  store.ConflictRecord{Gateway: b.Gateway, Seq: b.Seq, Record: recordJSON(r)}}
}

// envHeld returns the stored env reading of sensor at t, if it differs
// from e (ok false when it is the same reading, or none is stored).
func envHeld(ctx context.Context, tx *sql.Tx, sensor string, e wire.EnvRecord) (store.ConflictRecord, bool, error) {
	var gw string
	var seq int64
	var temp, hum, press sql.NullFloat64
	err := tx.QueryRowContext(ctx, `SELECT gateway, seq, temperature_c, humidity_pct, pressure_hpa FROM env WHERE sensor = ? AND t = ?`,
		sensor, e.T.UnixMilli()).Scan(&gw, &seq, &temp, &hum, &press)
	if err == sql.ErrNoRows {
		return store.ConflictRecord{}, false, nil
	}
	if err != nil {
		return store.ConflictRecord{}, false, err
	}
	held := wire.EnvRecord{T: time.UnixMilli(e.T.UnixMilli()).UTC()}
	same := true
	for _, q := range []struct {
		v   sql.NullFloat64
		in  *float64
		dst **float64
	}{{temp, e.TemperatureC, &held.TemperatureC}, {hum, e.HumidityPct, &held.HumidityPct}, {press, e.PressureHPa, &held.PressureHPa}} {
		if q.v.Valid {
			v := q.v.Float64
			*q.dst = &v
		}
		if q.v.Valid != (q.in != nil) || (q.in != nil && *q.in != q.v.Float64) {
			same = false
		}
	}
	if same {
		return store.ConflictRecord{}, false, nil
	}
	return store.ConflictRecord{Gateway: gw, Seq: uint64(seq), Record: recordJSON(held)}, true, nil
}

// insertConflicts writes the transaction's record conflicts and counts
// them on each new record's gateway row.
func insertConflicts(ctx context.Context, tx *sql.Tx, cs []pendingConflict, at int64) error {
	perGW := map[string]int{}
	for _, c := range cs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO record_conflicts
			(received_at, kind, sensor, t, kept_gateway, kept_seq, kept, new_gateway, new_seq, new) VALUES (?,?,?,?,?,?,?,?,?,?)`,
			at, c.kind, c.sensor, c.t, c.kept.Gateway, int64(c.kept.Seq), string(c.kept.Record),
			c.new.Gateway, int64(c.new.Seq), string(c.new.Record)); err != nil {
			return fmt.Errorf("record conflict %s at %d: %w", c.sensor, c.t, err)
		}
		perGW[c.new.Gateway]++
	}
	return countConflicts(ctx, tx, perGW)
}

func countConflicts(ctx context.Context, tx *sql.Tx, perGW map[string]int) error {
	for gw, n := range perGW {
		if _, err := tx.ExecContext(ctx, `UPDATE gateways SET conflicts = conflicts + ? WHERE gateway = ?`, n, gw); err != nil {
			return fmt.Errorf("count conflicts of %s: %w", gw, err)
		}
	}
	return nil
}

// RecordConflicts lists record conflicts, newest first: of sensor (all
// when ""), with id below beforeID (0: from the newest), at most limit
// (1–1000, default 100).
func (s *Store) RecordConflicts(ctx context.Context, sensor string, beforeID int64, limit int) ([]store.RecordConflict, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	q := `SELECT id, received_at, kind, sensor, t, kept_gateway, kept_seq, kept, new_gateway, new_seq, new FROM record_conflicts WHERE 1=1`
	var args []any
	if sensor != "" {
		q += ` AND sensor = ?`
		args = append(args, sensor)
	}
	if beforeID > 0 {
		q += ` AND id < ?`
		args = append(args, beforeID)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: record conflicts: %w", err)
	}
	defer rows.Close()
	var out []store.RecordConflict
	for rows.Next() {
		var c store.RecordConflict
		var recv, t, ks, ns int64
		var kept, nw string
		if err := rows.Scan(&c.ID, &recv, &c.Kind, &c.Sensor, &t, &c.Kept.Gateway, &ks, &kept, &c.New.Gateway, &ns, &nw); err != nil {
			return nil, fmt.Errorf("store: record conflicts: %w", err)
		}
		c.ReceivedAt, c.T = fromMilli(recv), time.UnixMilli(t).UTC()
		c.Kept.Seq, c.New.Seq = uint64(ks), uint64(ns)
		c.Kept.Record, c.New.Record = json.RawMessage(kept), json.RawMessage(nw)
		out = append(out, c)
	}
	return out, rows.Err()
}

// SeqSkips lists a gateway's skipped seq ranges (all gateways when ""),
// oldest first.
func (s *Store) SeqSkips(ctx context.Context, gateway string) ([]store.SeqSkipRecord, error) {
	q, args := `SELECT gateway, first, last, at, reason FROM seq_skips`, []any{}
	if gateway != "" {
		q, args = q+` WHERE gateway = ?`, append(args, gateway)
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: seq skips: %w", err)
	}
	defer rows.Close()
	var out []store.SeqSkipRecord
	for rows.Next() {
		var r store.SeqSkipRecord
		var first, last, at int64
		if err := rows.Scan(&r.Gateway, &first, &last, &at, &r.Reason); err != nil {
			return nil, fmt.Errorf("store: seq skips: %w", err)
		}
		r.First, r.Last, r.At = uint64(first), uint64(last), fromMilli(at)
		out = append(out, r)
	}
	return out, rows.Err()
}

// seqConflictMessage is the dead letter's message for a seq conflict.
func seqConflictMessage(gw string, seq uint64) string {
	return strings.TrimSpace(fmt.Sprintf(`gateway %q já enviou outro lote com seq %d: este corpo (assinado) difere do guardado. `+
		`O primeiro continua valendo; os dois ficam guardados. Chave do gateway comprometida, ou pasta de estado copiada para outro aparelho?`, gw, seq))
}
