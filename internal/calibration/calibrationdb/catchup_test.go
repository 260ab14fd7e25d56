package calibrationdb

import (
	"context"
	"database/sql"
	"path/filepath"
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
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
