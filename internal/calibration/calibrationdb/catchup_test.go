package calibrationdb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/sqlitedb"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

// openReadings opens a readings store in dir, closed at the test's end.
func openReadings(t *testing.T, dir string) *sqlitestore.Store {
	t.Helper()
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// stored commits a signed batch to the readings store as ingest does
// (its signed body and signature, the device it reports), without handing
// it to any observer: a process that died between the two.
func stored(t *testing.T, st *sqlitestore.Store, b *wire.Batch) {
	t.Helper()
	p, err := wire.Seal(b, loadgen.Key(testSeed, b.Gateway))
	if err != nil {
		t.Fatal(err)
	}
	env, _, err := wire.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	topic := wire.LevelsTopic(b.Municipality, b.Gateway, b.Sensor)
	if b.Kind == wire.KindCheck {
		topic = wire.CheckTopic(b.Municipality, b.Gateway, b.Sensor)
	}
	res, err := st.Apply(context.Background(), store.Write{Batches: []store.Batch{{Gateway: b.Gateway, Municipality: b.Municipality,
		Sensor: b.Sensor, Kind: b.Kind, Topic: topic, Seq: b.Seq, Body: env.Body, Sig: env.Sig, Verified: true,
		ReceivedAt: b.SentAt, Device: b.Device, Clock: b.Clock, Records: b.Records}}})
	if err != nil || !res.New[0] {
		t.Fatalf("store %s/%d: %v %+v", b.Gateway, b.Seq, err, res)
	}
}

// TestCatchUpReplaysUnobservedChecks: field checks committed to a real
// readings store but never observed (the process died in between) reach
// the register at the next start, once each, with their signed bytes; a
// second catch-up, a restart, or a check the register already observed
// live add nothing; later checks come from the cursor on.
func TestCatchUpReplaysUnobservedChecks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openReadings(t, dir)
	now := time.Now().UTC().Truncate(time.Second)
	dev := wire.Device{Model: "NTi XL2", Serial: "A2A-1", Grade: "class1"}
	batch := func(gw string, seq uint64, kind string, measured float64) *wire.Batch {
		b := &wire.Batch{V: 1, Kind: kind, Municipality: "lapa", Gateway: gw, Sensor: gw + "-m", Seq: seq, SentAt: now,
			Device: dev, Clock: wire.Clock{Synced: true, Source: "ntp"}}
		if kind == wire.KindCheck {
			b.Check = &wire.Check{T: now.Add(-time.Duration(seq) * time.Minute), ReferenceDB: 94, MeasuredDB: measured, FrequencyHz: 1000,
				CalibratorModel: "B&K 4231", CalibratorSerial: "2671834"}
		} else {
			b.Records = []wire.Record{{T: now.Add(-2 * time.Second), DurMs: 1000, LAeq: 60, LAFmax: 62, LAFmin: 58}}
		}
		return b
	}
	stored(t, st, batch("gw1", 1, wire.KindLevels, 0))
	stored(t, st, batch("gw1", 2, wire.KindCheck, 94.2))
	stored(t, st, batch("gw2", 1, wire.KindCheck, 93.9))

	path := filepath.Join(dir, calibration.FileName)
	open := func() *Register {
		r, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := open()
	catchUp := func(want int) {
		t.Helper()
		if n, err := r.CatchUp(ctx, st); err != nil || n != want {
			t.Fatalf("catch-up added %d checks (%v), want %d", n, err, want)
		}
	}
	catchUp(2)
	ks, err := r.Checks(ctx, "", 0)
	if err != nil || len(ks) != 2 {
		t.Fatalf("checks after the catch-up: %v %+v", err, ks)
	}
	ks, _ = r.Checks(ctx, "gw1-m", 0)
	k := ks[0]
	if k.Gateway != "gw1" || k.Seq != 2 || k.Sensor != "gw1-m" || k.Municipality != "lapa" || k.Drift() != 0.2 || !k.Verified ||
		k.MeterSerial != "A2A-1" || k.CalibratorSerial != "2671834" || !k.ReceivedAt.Equal(now) {
		t.Fatalf("replayed check %+v", k)
	}
	body, sig, err := r.CheckEvidence(ctx, k.ID)
	want, _, _ := storedBody(t, st, "gw1", 2)
	if err != nil || string(body) != string(want) || len(sig) == 0 {
		t.Fatalf("replayed check's signed body %q (want %q), sig %d bytes: %v", body, want, len(sig), err)
	}
	if seen, _ := r.Sightings(ctx, "gw1-m"); len(seen) != 1 || seen[0].Serial != "A2A-1" {
		t.Fatalf("the replayed check's device: %+v", seen)
	}
	catchUp(0)
	r.Close()
	r = open()
	defer func() { r.Close() }()
	catchUp(0)

	// A check observed live before the stop is not stored twice; one that
	// was not is, from the cursor on.
	live := batch("gw1", 3, wire.KindCheck, 94.1)
	stored(t, st, live)
	stored(t, st, batch("gw2", 2, wire.KindCheck, 94.4))
	b, s, _ := storedBody(t, st, "gw1", 3)
	r.Observer().ObserveCheck(ctx, ingest.CheckReading{Sensor: live.Sensor, Gateway: live.Gateway, Municipality: live.Municipality,
		Device: live.Device, Check: *live.Check, Verified: true, Seq: live.Seq, ReceivedAt: now, Body: b, Sig: s})
	catchUp(1)
	if ks, _ := r.Checks(ctx, "", 0); len(ks) != 4 {
		t.Fatalf("%d checks, want 4", len(ks))
	}
	catchUp(0)
}

// storedBody is the readings store's copy of a batch's signed body.
func storedBody(t *testing.T, st *sqlitestore.Store, gw string, seq uint64) (body, sig []byte, verified bool) {
	t.Helper()
	body, sig, verified, err := st.RawBatch(context.Background(), gw, seq)
	if err != nil {
		t.Fatal(err)
	}
	return body, sig, verified
}

// TestCursorsStep: a register at the schema before the cursors (step 1
// only), with a check in it, opens at the current schema, keeps the check,
// and catches up from the start of the readings store without storing it
// twice.
func TestCursorsStep(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, calibration.FileName)
	old, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitedb.Migrate(ctx, old, migrationScheme, migrations[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`INSERT INTO checks(sensor, gateway, municipality, seq, at, reference_db, measured_db, frequency_hz,
		calibrator_model, calibrator_serial, meter_model, meter_serial, verified, received_at, body)
		VALUES ('gw1-m', 'gw1', 'lapa', 2, 0, 94, 94.2, 1000, 'B&K 4231', '2671834', 'NTi XL2', 'A2A-1', 1, 0, x'7b7d')`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	st := openReadings(t, dir)
	now := time.Now().UTC().Truncate(time.Second)
	stored(t, st, &wire.Batch{V: 1, Kind: wire.KindCheck, Municipality: "lapa", Gateway: "gw1", Sensor: "gw1-m", Seq: 2, SentAt: now,
		Device: wire.Device{Model: "NTi XL2", Serial: "A2A-1", Grade: "class1"}, Clock: wire.Clock{Synced: true, Source: "ntp"},
		Check: &wire.Check{T: now.Add(-time.Minute), ReferenceDB: 94, MeasuredDB: 94.2, FrequencyHz: 1000, CalibratorModel: "B&K 4231",
			CalibratorSerial: "2671834"}})
	r, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var version int
	var pos sql.NullInt64
	if err := r.db.QueryRowContext(ctx, `SELECT max(version) FROM calibration_migrations`).Scan(&version); err != nil || version != len(migrations) {
		t.Fatalf("schema version %d (%v), want %d", version, err, len(migrations))
	}
	if err := r.db.QueryRowContext(ctx, `SELECT max(position) FROM cursors`).Scan(&pos); err != nil || pos.Valid {
		t.Fatalf("cursors after the step: %v %v", pos, err)
	}
	if n, err := r.CatchUp(ctx, st); err != nil || n != 0 {
		t.Fatalf("catch-up over a check the register had: %d %v", n, err)
	}
	if ks, _ := r.Checks(ctx, "", 0); len(ks) != 1 {
		t.Fatalf("%d checks, want 1", len(ks))
	}
	if p, err := r.cursor(ctx, cursorChecks); err != nil || p == 0 {
		t.Fatalf("cursor after the catch-up: %d %v", p, err)
	}
}

// TestCatchUpReplaysUnobservedDevices: the meters reported by levels
// batches committed to a real readings store but never handed to the
// observer (the process died in between, or a sighting could not be
// written) are recorded at the next start from the batch that first
// reported them, not from the next batch ingest happens to deliver; a
// batch the observer had handled, or a second catch-up, adds nothing.
func TestCatchUpReplaysUnobservedDevices(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openReadings(t, dir)
	t0 := time.Date(2026, 3, 6, 14, 0, 0, 0, time.UTC)
	c := &clock{t0}
	devA := wire.Device{Model: "NTi XL2", Serial: "A2A-1", Grade: "class1"}
	devB := wire.Device{Model: "NTi XL2", Serial: "A2A-2", Grade: "class1"}
	levels := func(gw string, seq uint64, dev wire.Device) *wire.Batch {
		start := t0.Add(time.Duration(seq) * 10 * time.Second)
		b := &wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: gw, Sensor: gw + "-m", Seq: seq,
			SentAt: start.Add(10 * time.Second), Device: dev, Clock: wire.Clock{Synced: true, Source: "ntp"}}
		for i := range 10 {
			b.Records = append(b.Records, wire.Record{T: start.Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: 60, LAFmax: 62, LAFmin: 58})
		}
		return b
	}
	// live stores a batch and hands it to the observer, as ingest does.
	live := func(r *Register, b *wire.Batch) {
		t.Helper()
		stored(t, st, b)
		var rs []ingest.Reading
		for _, rec := range b.Records {
			rs = append(rs, ingest.Reading{Sensor: b.Sensor, Gateway: b.Gateway, Municipality: b.Municipality, Device: b.Device,
				Clock: b.Clock, Verified: true, Seq: b.Seq, ReceivedAt: b.SentAt, Record: rec})
		}
		r.Observer().ObserveBatch(ctx, rs)
	}
	path := filepath.Join(dir, calibration.FileName)
	open := func() *Register {
		t.Helper()
		r, err := Open(ctx, path, Options{Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.CatchUp(ctx, st); err != nil {
			t.Fatal(err)
		}
		return r
	}
	// crash ends a register without Close: what it has not saved is lost.
	crash := func(r *Register) { r.db.Close() }
	sightings := func(r *Register, sensor string) string {
		t.Helper()
		ss, err := r.Sightings(ctx, sensor)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range ss {
			out = append(out, fmt.Sprintf("%s@%s/%d %s", s.Serial, s.Gateway, s.Seq, s.At.Sub(t0)))
		}
		return strings.Join(out, " ")
	}

	r := open()
	live(r, levels("gw1", 1, devA)) // saved as handled: the first save is due at once
	c.t = c.t.Add(10 * time.Second)
	live(r, levels("gw1", 2, devA))       // handled, not saved yet (every 30 s)
	stored(t, st, levels("gw1", 3, devB)) // the meter was swapped; the process dies
	stored(t, st, levels("gw1", 4, devB))
	stored(t, st, levels("gw2", 1, devA)) // a new gateway's first batch
	crash(r)

	r = open()
	if got, want := sightings(r, "gw1-m"), "A2A-1@gw1/1 10s A2A-2@gw1/3 30s"; got != want {
		t.Fatalf("gw1's meters after the catch-up: %q, want %q", got, want)
	}
	if got, want := sightings(r, "gw2-m"), "A2A-1@gw2/1 10s"; got != want {
		t.Fatalf("gw2's meters after the catch-up: %q, want %q", got, want)
	}
	// The observer's cache follows: the next live batch of B is no change.
	live(r, levels("gw1", 5, devB))
	if _, err := r.CatchUp(ctx, st); err != nil {
		t.Fatal(err)
	}
	if got, want := sightings(r, "gw1-m"), "A2A-1@gw1/1 10s A2A-2@gw1/3 30s"; got != want {
		t.Fatalf("after a live batch and a second catch-up: %q, want %q", got, want)
	}

	// A sighting that cannot be written (a full disk, say) holds what is
	// saved as handled at the batch before it: a stop before it is written
	// reads the batches from there again at the next start, and records
	// the change from the batch that reported it.
	failWrites := func(on bool) {
		t.Helper()
		q := `CREATE TRIGGER fail BEFORE INSERT ON devices_seen BEGIN SELECT RAISE(ABORT, 'disco cheio'); END`
		if !on {
			q = `DROP TRIGGER fail`
		}
		if _, err := r.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	failWrites(true)
	c.t = c.t.Add(time.Minute)
	live(r, levels("gw1", 6, devA)) // the change back to A is not written
	c.t = c.t.Add(time.Minute)
	live(r, levels("gw1", 7, devA)) // nor again
	failWrites(false)
	crash(r)
	r = open()
	if got, want := sightings(r, "gw1-m"), "A2A-1@gw1/1 10s A2A-2@gw1/3 30s A2A-1@gw1/6 1m0s"; got != want {
		t.Fatalf("after a stop with a sighting not written: %q, want %q", got, want)
	}
	// Without a stop, it is written with the sensor's next sighting that
	// can be, dated from its own batch.
	failWrites(true)
	c.t = c.t.Add(time.Minute)
	live(r, levels("gw1", 8, devB))
	failWrites(false)
	live(r, levels("gw1", 9, devB))
	live(r, levels("gw1", 10, devA))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r = open()
	defer r.Close()
	if got, want := sightings(r, "gw1-m"), "A2A-1@gw1/1 10s A2A-2@gw1/3 30s A2A-1@gw1/6 1m0s A2A-2@gw1/8 1m20s A2A-1@gw1/10 1m40s"; got != want {
		t.Fatalf("after a sighting written late: %q, want %q", got, want)
	}
	v, err := r.Verdict(ctx, "gw1-m", t0.Add(65*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if v.Device == nil || v.Device.Serial != "A2A-1" {
		t.Errorf("the meter in force in batch 6: %+v", v.Device)
	}
}
