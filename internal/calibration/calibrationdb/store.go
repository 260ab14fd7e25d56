// Package calibrationdb is the calibration register's store: the
// certificates, field checks, device sightings and field-check policy of
// internal/calibration kept in calibration.db (SQLite through
// internal/sqlitedb), the ingest observer that feeds it, Decide and Status
// over it for the workflow and the alert card, and the /metrics gauges
// (docs/metrology.md).
//
// Overview of its parts: the calibration register's store, in its own
// `calibration.db` through `internal/sqlitedb` (numbered schema steps;
// certificates and their files append-only, field checks with their signed
// bytes, device sightings, policy); `Decide`/`Verdict`/`Overview` over it (the
// overview and the gauges decide over the register of sensors' meters that
// `Options.Sensors` gives, `central.CalibrationSensors`); `SignedChecks` for
// the evidence bag; ingest observer (device-mismatch warning; the last batch
// it handled saved every 30 s) and `CatchUp` (`catchup.go`: at start, the
// field checks the readings store holds above the register's cursor, through
// the observer's `ObserveCheck`, and the meters of the levels batches stored
// after the last one the observer handled, `ingest.ReplayLevels`); `/metrics`
// gauges (docs/metrology.md); wired by `internal/central` and `cmd/sossego`
// only.
package calibrationdb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/sqlitedb"
)

// Options configure a Register.
type Options struct {
	// Sensors lists the registered sensors (the registry in force); the
	// overview and the gauges cover them and every sensor with a
	// certificate. May be nil.
	Sensors func() []calibration.Sensor
	Log     *slog.Logger
	Now     func() time.Time
}

// Register is the calibration register: certificates with their history
// and files, field checks, the devices signed batches report, and the
// municipalities' field-check policy, in its own SQLite file.
type Register struct {
	db  *sql.DB
	o   Options
	mu  sync.Mutex
	dev map[string]calibration.Sighting // last sighting per sensor (the observer's cache)

	// pending are the sightings per sensor the observer could not write
	// yet, oldest first (observe.go); guarded by mu.
	pending map[string][]calibration.Sighting

	// seen is the last batch the observer handled (observe.go).
	seenMu sync.Mutex
	seen   seenBatch

	mismatches prometheus.Counter
}

// Open opens (creating if needed) the register at path.
func Open(ctx context.Context, path string, o Options) (*Register, error) {
	db, err := sqlitedb.OpenMigrated(ctx, path, sqlitedb.Options{MaxOpenConns: 4}, migrationScheme, migrations)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	return newRegister(ctx, db, o)
}

// newRegister is the register over an open handle; it closes db on error.
func newRegister(ctx context.Context, db *sql.DB, o Options) (*Register, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Register{db: db, o: o, dev: map[string]calibration.Sighting{}, pending: map[string][]calibration.Sighting{},
		mismatches: prometheus.NewCounter(prometheus.CounterOpts{Name: "sossego_calibration_device_mismatch_total",
			Help: "Signed batches whose meter model or serial differs from the calibration certificate in force (counted when the reported device changes)."})}
	if err := r.loadDevices(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return r, nil
}

// OpenReadOnly opens the register at path for reading only: nothing is
// created or migrated, and every write fails (SQLite's query_only). A
// missing file is an error wrapping fs.ErrNotExist; a file from a newer
// release (sqlitedb.ErrNewerSchema) or older than readableFrom is refused.
func OpenReadOnly(ctx context.Context, path string, o Options) (*Register, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	db, err := sqlitedb.Open(path, sqlitedb.Options{MaxOpenConns: 4, QueryOnly: true})
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	var have int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM calibration_migrations`).Scan(&have); err != nil {
		db.Close()
		return nil, fmt.Errorf("calibration: open %s: %w", path, err)
	}
	if have > len(migrations) {
		db.Close()
		return nil, fmt.Errorf("calibration: open %s: %w: it is at schema version %d, this build knows %d", path, sqlitedb.ErrNewerSchema, have, len(migrations))
	}
	if have < readableFrom {
		db.Close()
		return nil, fmt.Errorf("%s está na versão de esquema %d e esta versão do programa lê a partir da %d: "+
			"inicie o serviço central uma vez com esta pasta de dados para atualizá-lo", path, have, readableFrom)
	}
	return newRegister(ctx, db, o)
}

// readableFrom is the oldest schema version the read path (OpenReadOnly)
// reads: the steps after it add only what the writer uses (the catch-up
// cursors), so a file the service has not yet migrated reads as it is.
const readableFrom = 1

// Close saves the last batch the observer handled and closes the file.
func (r *Register) Close() error {
	r.seenMu.Lock()
	r.saveSeenLocked(context.Background())
	r.seenMu.Unlock()
	return r.db.Close()
}

// migrationScheme is where the register records its schema steps.
var migrationScheme = sqlitedb.Scheme{Table: "calibration_migrations"}

// migrations are the register's numbered schema steps (sqlitedb.Migrate);
// a schema change is a new step at the end.
var migrations = []sqlitedb.Step{
	{Name: "certificates, files, checks, devices, policy", SQL: schema},
	{Name: "cursors into the readings store", SQL: cursorsSchema},
	{Name: "the last batch the ingest observer handled", SQL: observedSchema},
}

// observedSchema keeps the last batch (levels or check) the ingest
// observer handled, saved at most every observedEvery and at Close: at the
// next start CatchUp reads again the devices of the levels batches the
// readings store holds after it (catchup.go).
const observedSchema = `
CREATE TABLE observed (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	gateway TEXT    NOT NULL,
	seq     INTEGER NOT NULL
) STRICT;
`

// cursorsSchema keeps how far into another store the register has caught
// up (CatchUp: the readings store's batch position up to which every field
// check is in checks).
const cursorsSchema = `
CREATE TABLE cursors (
	name     TEXT PRIMARY KEY,
	position INTEGER NOT NULL
) STRICT;
`

const schema = `
CREATE TABLE files (
	sha256 TEXT PRIMARY KEY,
	data   BLOB NOT NULL
) STRICT;
CREATE TABLE certificates (
	id             INTEGER PRIMARY KEY,
	sensor         TEXT NOT NULL,
	number         TEXT NOT NULL,
	laboratory     TEXT NOT NULL,
	meter_model    TEXT NOT NULL,
	meter_serial   TEXT NOT NULL,
	calibrated_on  TEXT NOT NULL,
	expires        TEXT NOT NULL,
	uncertainty_db REAL NOT NULL,
	note           TEXT NOT NULL DEFAULT '',
	replaces       INTEGER REFERENCES certificates(id),
	file_name      TEXT NOT NULL DEFAULT '',
	file_sha256    TEXT REFERENCES files(sha256),
	file_size      INTEGER NOT NULL DEFAULT 0,
	recorded_at    INTEGER NOT NULL,
	recorded_by    TEXT NOT NULL
) STRICT;
CREATE INDEX certificates_sensor ON certificates(sensor, id);
-- The register keeps history: a revision is never changed nor deleted.
CREATE TRIGGER certificates_no_update BEFORE UPDATE ON certificates
	BEGIN SELECT RAISE(ABORT, 'calibration certificates are append-only'); END;
CREATE TRIGGER certificates_no_delete BEFORE DELETE ON certificates
	BEGIN SELECT RAISE(ABORT, 'calibration certificates are append-only'); END;
CREATE TABLE checks (
	id                INTEGER PRIMARY KEY,
	sensor            TEXT NOT NULL,
	gateway           TEXT NOT NULL,
	municipality      TEXT NOT NULL,
	seq               INTEGER NOT NULL,
	at                INTEGER NOT NULL,
	reference_db      REAL NOT NULL,
	measured_db       REAL NOT NULL,
	frequency_hz      REAL NOT NULL,
	calibrator_model  TEXT NOT NULL,
	calibrator_serial TEXT NOT NULL,
	note              TEXT NOT NULL DEFAULT '',
	meter_model       TEXT NOT NULL,
	meter_serial      TEXT NOT NULL,
	verified          INTEGER NOT NULL,
	received_at       INTEGER NOT NULL,
	body              BLOB NOT NULL,
	sig               BLOB,
	UNIQUE (gateway, seq)
) STRICT;
CREATE INDEX checks_sensor ON checks(sensor, at);
CREATE TABLE devices_seen (
	id      INTEGER PRIMARY KEY,
	sensor  TEXT NOT NULL,
	model   TEXT NOT NULL,
	serial  TEXT NOT NULL,
	at      INTEGER NOT NULL,
	gateway TEXT NOT NULL,
	seq     INTEGER NOT NULL
) STRICT;
CREATE INDEX devices_seen_sensor ON devices_seen(sensor, at);
CREATE TABLE policy (
	municipality   TEXT PRIMARY KEY,
	check_max_days INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL,
	updated_by     TEXT NOT NULL
) STRICT;
`

// Add records a certificate revision (and its file, if any) after
// Validate; by is who records it. A revision with Replaces set corrects
// that revision (same sensor); otherwise it is a new calibration.
func (r *Register) Add(ctx context.Context, c calibration.Certificate, file []byte, by string) (calibration.Certificate, error) {
	now := r.o.Now()
	if err := calibration.Validate(c, file, now); err != nil {
		return calibration.Certificate{}, err
	}
	c.ID, c.RecordedAt, c.RecordedBy = 0, now.UTC().Truncate(time.Millisecond), by
	c.FileSHA256, c.FileSize = "", 0
	if file == nil {
		c.FileName = ""
	}
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return calibration.Certificate{}, fmt.Errorf("calibration: add: %w", err)
	}
	defer tx.Rollback()
	if c.Replaces != 0 {
		var sensor string
		err := tx.QueryRowContext(ctx, `SELECT sensor FROM certificates WHERE id = ?`, c.Replaces).Scan(&sensor)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && sensor != c.Sensor) {
			return calibration.Certificate{}, &calibration.ValidationError{Problems: []string{fmt.Sprintf("a revisão %d que esta corrige não existe para o sensor %s", c.Replaces, c.Sensor)}}
		}
		if err != nil {
			return calibration.Certificate{}, fmt.Errorf("calibration: add: %w", err)
		}
	}
	var fileSHA any
	if file != nil {
		sum := sha256.Sum256(file)
		c.FileSHA256, c.FileSize = hex.EncodeToString(sum[:]), int64(len(file))
		fileSHA = c.FileSHA256
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO files(sha256, data) VALUES (?, ?)`, c.FileSHA256, file); err != nil {
			return calibration.Certificate{}, fmt.Errorf("calibration: add file: %w", err)
		}
	}
	var replaces any
	if c.Replaces != 0 {
		replaces = c.Replaces
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO certificates(sensor, number, laboratory, meter_model, meter_serial, calibrated_on,
		expires, uncertainty_db, note, replaces, file_name, file_sha256, file_size, recorded_at, recorded_by)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, c.Sensor, c.Number, c.Laboratory, c.MeterModel, c.MeterSerial, c.CalibratedOn,
		c.Expires, c.UncertaintyDB, c.Note, replaces, c.FileName, fileSHA, c.FileSize, c.RecordedAt.UnixMilli(), by)
	if err != nil {
		return calibration.Certificate{}, fmt.Errorf("calibration: add: %w", err)
	}
	if c.ID, err = res.LastInsertId(); err != nil {
		return calibration.Certificate{}, fmt.Errorf("calibration: add: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return calibration.Certificate{}, fmt.Errorf("calibration: add: %w", err)
	}
	r.o.Log.Info("certificado de calibração registrado", "sensor", c.Sensor, "certificado", c.Number, "validade", c.Expires,
		"revisao", c.ID, "por", by)
	return c, nil
}

const certCols = `id, sensor, number, laboratory, meter_model, meter_serial, calibrated_on, expires, uncertainty_db, note,
	coalesce(replaces, 0), file_name, coalesce(file_sha256, ''), file_size, recorded_at, recorded_by`

func scanCert(sc interface{ Scan(...any) error }) (calibration.Certificate, error) {
	var c calibration.Certificate
	var at int64
	err := sc.Scan(&c.ID, &c.Sensor, &c.Number, &c.Laboratory, &c.MeterModel, &c.MeterSerial, &c.CalibratedOn, &c.Expires,
		&c.UncertaintyDB, &c.Note, &c.Replaces, &c.FileName, &c.FileSHA256, &c.FileSize, &at, &c.RecordedBy)
	c.RecordedAt = time.UnixMilli(at).UTC()
	return c, err
}

// History is every revision of a sensor's certificates, oldest first;
// sensor "" lists every sensor's.
func (r *Register) History(ctx context.Context, sensor string) ([]calibration.Certificate, error) {
	q := `SELECT ` + certCols + ` FROM certificates WHERE sensor = ? OR ? = '' ORDER BY sensor, id`
	rows, err := r.db.QueryContext(ctx, q, sensor, sensor)
	if err != nil {
		return nil, fmt.Errorf("calibration: history: %w", err)
	}
	defer rows.Close()
	var out []calibration.Certificate
	for rows.Next() {
		c, err := scanCert(rows)
		if err != nil {
			return nil, fmt.Errorf("calibration: history: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Certificate returns one revision.
func (r *Register) Certificate(ctx context.Context, id int64) (calibration.Certificate, error) {
	c, err := scanCert(r.db.QueryRowContext(ctx, `SELECT `+certCols+` FROM certificates WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return calibration.Certificate{}, calibration.ErrNotFound
	}
	if err != nil {
		return calibration.Certificate{}, fmt.Errorf("calibration: certificate %d: %w", id, err)
	}
	return c, nil
}

// File returns a revision's file; its sha256 is checked on the way out.
func (r *Register) File(ctx context.Context, id int64) (calibration.Certificate, []byte, error) {
	c, err := r.Certificate(ctx, id)
	if err != nil {
		return calibration.Certificate{}, nil, err
	}
	if c.FileSHA256 == "" {
		return c, nil, calibration.ErrNotFound
	}
	var data []byte
	if err := r.db.QueryRowContext(ctx, `SELECT data FROM files WHERE sha256 = ?`, c.FileSHA256).Scan(&data); err != nil {
		return c, nil, fmt.Errorf("calibration: file of %d: %w", id, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != c.FileSHA256 {
		return c, nil, fmt.Errorf("calibration: file of certificate %d does not match its sha256 %s", id, c.FileSHA256)
	}
	return c, data, nil
}

// RecordCheck stores a field check; a check already stored (same gateway
// and seq) is not stored again and new is false.
func (r *Register) RecordCheck(ctx context.Context, k calibration.FieldCheck, body, sig []byte) (stored bool, err error) {
	res, err := r.db.ExecContext(ctx, `INSERT OR IGNORE INTO checks(sensor, gateway, municipality, seq, at, reference_db, measured_db,
		frequency_hz, calibrator_model, calibrator_serial, note, meter_model, meter_serial, verified, received_at, body, sig)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, k.Sensor, k.Gateway, k.Municipality, int64(k.Seq), k.At.UnixMilli(),
		k.ReferenceDB, k.MeasuredDB, k.FrequencyHz, k.CalibratorModel, k.CalibratorSerial, k.Note, k.MeterModel, k.MeterSerial,
		k.Verified, k.ReceivedAt.UnixMilli(), body, sig)
	if err != nil {
		return false, fmt.Errorf("calibration: record check %s/%d: %w", k.Gateway, k.Seq, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Checks lists a sensor's field checks, newest first, at most limit
// (0: all); sensor "" lists every sensor's.
func (r *Register) Checks(ctx context.Context, sensor string, limit int) ([]calibration.FieldCheck, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := r.db.QueryContext(ctx, `SELECT id, sensor, gateway, municipality, seq, at, reference_db, measured_db, frequency_hz,
		calibrator_model, calibrator_serial, note, meter_model, meter_serial, verified, received_at
		FROM checks WHERE sensor = ? OR ? = '' ORDER BY at DESC, id DESC LIMIT ?`, sensor, sensor, limit)
	if err != nil {
		return nil, fmt.Errorf("calibration: checks: %w", err)
	}
	defer rows.Close()
	var out []calibration.FieldCheck
	for rows.Next() {
		var k calibration.FieldCheck
		var seq, at, recv int64
		if err := rows.Scan(&k.ID, &k.Sensor, &k.Gateway, &k.Municipality, &seq, &at, &k.ReferenceDB, &k.MeasuredDB, &k.FrequencyHz,
			&k.CalibratorModel, &k.CalibratorSerial, &k.Note, &k.MeterModel, &k.MeterSerial, &k.Verified, &recv); err != nil {
			return nil, fmt.Errorf("calibration: checks: %w", err)
		}
		k.Seq, k.At, k.ReceivedAt = uint64(seq), time.UnixMilli(at).UTC(), time.UnixMilli(recv).UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

// CheckEvidence returns a stored check's signed body and signature.
func (r *Register) CheckEvidence(ctx context.Context, id int64) (body, sig []byte, err error) {
	err = r.db.QueryRowContext(ctx, `SELECT body, sig FROM checks WHERE id = ?`, id).Scan(&body, &sig)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, calibration.ErrNotFound
	}
	return body, sig, err
}

// SignedChecks are the field checks that bracket a measurement starting at
// at: the latest check made by at and the first one made after it (the
// verification before and after a measurement series that ABNT NBR 10151
// asks for), oldest first; none, one or two.
func (r *Register) SignedChecks(ctx context.Context, sensor string, at time.Time) ([]calibration.SignedCheck, error) {
	var out []calibration.SignedCheck
	for _, q := range []string{
		`SELECT id, gateway, municipality, seq, at, reference_db, measured_db, frequency_hz, calibrator_model, calibrator_serial, note,
			meter_model, meter_serial, verified, received_at, body, sig FROM checks WHERE sensor = ? AND at <= ? ORDER BY at DESC, id DESC LIMIT 1`,
		`SELECT id, gateway, municipality, seq, at, reference_db, measured_db, frequency_hz, calibrator_model, calibrator_serial, note,
			meter_model, meter_serial, verified, received_at, body, sig FROM checks WHERE sensor = ? AND at > ? ORDER BY at, id LIMIT 1`,
	} {
		k := calibration.SignedCheck{FieldCheck: calibration.FieldCheck{Sensor: sensor}}
		var seq, kat, recv int64
		err := r.db.QueryRowContext(ctx, q, sensor, at.UnixMilli()).Scan(&k.ID, &k.Gateway, &k.Municipality, &seq, &kat, &k.ReferenceDB,
			&k.MeasuredDB, &k.FrequencyHz, &k.CalibratorModel, &k.CalibratorSerial, &k.Note, &k.MeterModel, &k.MeterSerial, &k.Verified,
			&recv, &k.Body, &k.Sig)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("calibration: signed checks of %s: %w", sensor, err)
		}
		k.Seq, k.At, k.ReceivedAt = uint64(seq), time.UnixMilli(kat).UTC(), time.UnixMilli(recv).UTC()
		out = append(out, k)
	}
	return out, nil
}

// Sightings lists the devices a sensor's signed batches reported, oldest
// first.
func (r *Register) Sightings(ctx context.Context, sensor string) ([]calibration.Sighting, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT sensor, model, serial, at, gateway, seq FROM devices_seen
		WHERE sensor = ? OR ? = '' ORDER BY at, id`, sensor, sensor)
	if err != nil {
		return nil, fmt.Errorf("calibration: devices: %w", err)
	}
	defer rows.Close()
	var out []calibration.Sighting
	for rows.Next() {
		var s calibration.Sighting
		var at, seq int64
		if err := rows.Scan(&s.Sensor, &s.Model, &s.Serial, &at, &s.Gateway, &seq); err != nil {
			return nil, fmt.Errorf("calibration: devices: %w", err)
		}
		s.At, s.Seq = time.UnixMilli(at).UTC(), uint64(seq)
		out = append(out, s)
	}
	return out, rows.Err()
}

// loadDevices fills the observer's cache with each sensor's last sighting.
func (r *Register) loadDevices(ctx context.Context) error {
	all, err := r.Sightings(ctx, "")
	if err != nil {
		return err
	}
	for _, s := range all {
		if cur, ok := r.dev[s.Sensor]; !ok || !s.At.Before(cur.At) {
			r.dev[s.Sensor] = s
		}
	}
	return nil
}

// Saw records that a signed batch of sensor reported device model/serial
// at (the start of its first record). Only a change is written: the
// sighting holds until the next one. It reports whether it was a change.
func (r *Register) Saw(ctx context.Context, s calibration.Sighting) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.dev[s.Sensor]; ok && cur.Model == s.Model && cur.Serial == s.Serial {
		return false, nil
	}
	if err := r.insertSighting(ctx, s); err != nil {
		return false, err
	}
	r.dev[s.Sensor] = s
	return true, nil
}

// sawAt records a sighting read again from the readings store (CatchUp):
// written only when the device in force at s.At — the sightings up to it —
// differs, so a batch the observer had handled, or one read twice, adds
// nothing. It reports whether it wrote. The observer's cache is reloaded
// by the caller.
func (r *Register) sawAt(ctx context.Context, s calibration.Sighting) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var model, serial string
	err := r.db.QueryRowContext(ctx, `SELECT model, serial FROM devices_seen WHERE sensor = ? AND at <= ?
		ORDER BY at DESC, id DESC LIMIT 1`, s.Sensor, s.At.UnixMilli()).Scan(&model, &serial)
	switch {
	case err == nil && model == s.Model && serial == s.Serial:
		return false, nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return false, fmt.Errorf("calibration: device of %s: %w", s.Sensor, err)
	}
	if err := r.insertSighting(ctx, s); err != nil {
		return false, err
	}
	return true, nil
}

func (r *Register) insertSighting(ctx context.Context, s calibration.Sighting) error {
	if _, err := r.db.ExecContext(ctx, `INSERT INTO devices_seen(sensor, model, serial, at, gateway, seq) VALUES (?,?,?,?,?,?)`,
		s.Sensor, s.Model, s.Serial, s.At.UnixMilli(), s.Gateway, int64(s.Seq)); err != nil {
		return fmt.Errorf("calibration: device of %s: %w", s.Sensor, err)
	}
	return nil
}

// SetPolicy sets how many days a municipality's field checks stay
// current; days 0 returns it to the default (DefaultCheckMaxAge).
func (r *Register) SetPolicy(ctx context.Context, municipality string, days int, by string) error {
	if municipality == "" {
		return &calibration.ValidationError{Problems: []string{"informe o município"}}
	}
	if days < 0 || days > calibration.MaxCheckDays {
		return &calibration.ValidationError{Problems: []string{fmt.Sprintf("prazo de %d dias inválido: use 1 a %d dias (0 volta ao padrão de %d)",
			days, calibration.MaxCheckDays, int(calibration.DefaultCheckMaxAge/(24*time.Hour)))}}
	}
	var err error
	if days == 0 {
		_, err = r.db.ExecContext(ctx, `DELETE FROM policy WHERE municipality = ?`, municipality)
	} else {
		_, err = r.db.ExecContext(ctx, `INSERT INTO policy(municipality, check_max_days, updated_at, updated_by) VALUES (?,?,?,?)
			ON CONFLICT(municipality) DO UPDATE SET check_max_days = excluded.check_max_days, updated_at = excluded.updated_at,
			updated_by = excluded.updated_by`, municipality, days, r.o.Now().UnixMilli(), by)
	}
	if err != nil {
		return fmt.Errorf("calibration: policy %s: %w", municipality, err)
	}
	return nil
}

// Policy is how long a municipality's field checks stay current.
func (r *Register) Policy(ctx context.Context, municipality string) (time.Duration, error) {
	var days int
	err := r.db.QueryRowContext(ctx, `SELECT check_max_days FROM policy WHERE municipality = ?`, municipality).Scan(&days)
	if errors.Is(err, sql.ErrNoRows) {
		return calibration.DefaultCheckMaxAge, nil
	}
	if err != nil {
		return 0, fmt.Errorf("calibration: policy %s: %w", municipality, err)
	}
	return time.Duration(days) * 24 * time.Hour, nil
}

// municipality is the sensor's municipality in the registry ("" unknown).
func (r *Register) municipality(sensor string) string {
	if r.o.Sensors == nil {
		return ""
	}
	for _, s := range r.o.Sensors() {
		if s.ID == sensor {
			return s.Municipality
		}
	}
	return ""
}

// Facts gathers what the rule needs about sensor.
func (r *Register) Facts(ctx context.Context, sensor string) (calibration.Facts, error) {
	var f calibration.Facts
	var err error
	if f.Certificates, err = r.History(ctx, sensor); err != nil {
		return f, err
	}
	if f.Sightings, err = r.Sightings(ctx, sensor); err != nil {
		return f, err
	}
	if f.Checks, err = r.Checks(ctx, sensor, 0); err != nil {
		return f, err
	}
	muni := r.municipality(sensor)
	if muni == "" && len(f.Checks) > 0 {
		muni = f.Checks[0].Municipality
	}
	if f.CheckMaxAge, err = r.Policy(ctx, muni); err != nil {
		return f, err
	}
	return f, nil
}

// Verdict is Evaluate over the register's facts about sensor at at.
func (r *Register) Verdict(ctx context.Context, sensor string, at time.Time) (calibration.Verdict, error) {
	if sensor == "" {
		return calibration.Verdict{}, errors.New("calibration: verdict: no sensor")
	}
	f, err := r.Facts(ctx, sensor)
	if err != nil {
		return calibration.Verdict{}, err
	}
	return calibration.Evaluate(f, at), nil
}

// Status says whether the readings of sensorID at at may found a
// constatação or a notice (ok), or are indicativas, and why (pt-BR). A
// register that cannot be read answers not ok, saying so: nothing rests on
// readings whose calibration could not be checked.
func (r *Register) Status(sensorID string, at time.Time) (ok bool, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := r.Verdict(ctx, sensorID, at)
	if err != nil {
		r.o.Log.Error("registro de calibração ilegível", "sensor", sensorID, "erro", err)
		return false, "leituras indicativas: o registro de calibração não pôde ser consultado (erro interno; consulte o log do serviço)"
	}
	return v.OK, v.Why()
}

// Decide is the rule over the register's facts about sensor at at. A
// register that cannot be read decides not ok, saying so: nothing rests on
// readings whose calibration could not be checked.
func (r *Register) Decide(ctx context.Context, sensor string, m calibration.SensorMeter, at time.Time) calibration.Decision {
	f, err := r.Facts(ctx, sensor)
	if err != nil || sensor == "" {
		r.o.Log.Error("registro de calibração ilegível", "sensor", sensor, "erro", err)
		return calibration.Decision{Source: calibration.SourceRegister,
			Why: "leituras indicativas: o registro de calibração não pôde ser consultado (erro interno; consulte o log do serviço)"}
	}
	return calibration.Decide(f, m, at)
}

// Overview is every registered or certified sensor's verdict and decision
// (Decide, over the register of sensors' meter that Options.Sensors gives;
// a sensor out of it has no grade) at at, by sensor id.
func (r *Register) Overview(ctx context.Context, at time.Time) ([]calibration.Row, error) {
	known := map[string]calibration.Sensor{}
	var ids []string
	if r.o.Sensors != nil {
		for _, s := range r.o.Sensors() {
			if _, ok := known[s.ID]; !ok {
				ids = append(ids, s.ID)
			}
			known[s.ID] = s
		}
	}
	all, err := r.History(ctx, "")
	if err != nil {
		return nil, err
	}
	revs := map[string]int{}
	for _, c := range all {
		if _, ok := known[c.Sensor]; !ok {
			known[c.Sensor] = calibration.Sensor{ID: c.Sensor}
			ids = append(ids, c.Sensor)
		}
		revs[c.Sensor]++
	}
	slices.Sort(ids)
	out := make([]calibration.Row, 0, len(ids))
	for _, id := range ids {
		f, err := r.Facts(ctx, id)
		if err != nil {
			return nil, err
		}
		d := calibration.Decide(f, known[id].Meter, at)
		d.Verdict = nil
		s := known[id]
		out = append(out, calibration.Row{Sensor: id, Municipality: s.Municipality, Verdict: calibration.Evaluate(f, at),
			Decision: d, Revisions: revs[id]})
	}
	return out, nil
}
