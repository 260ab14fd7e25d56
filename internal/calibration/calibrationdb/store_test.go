package calibrationdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/sqlitedb"
	"github.com/sossego/sossego/internal/tz"
)

// clock is a settable clock for the register.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// at is a Brasília wall-clock instant.
func at(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, tz.Brasilia())
	if err != nil {
		panic(err)
	}
	return t
}

// cert is a certificate revision of sensor m1.
func cert(id int64, number, on, expires, serial string) calibration.Certificate {
	return calibration.Certificate{ID: id, Sensor: "m1", Number: number, Laboratory: "Lab Acústica RBC", MeterModel: "NTi XL2",
		MeterSerial: serial, CalibratedOn: on, Expires: expires, UncertaintyDB: 0.3}
}

// check is a field check of sensor m1 at a Brasília wall-clock instant.
func check(id int64, when string, ref, measured float64) calibration.FieldCheck {
	return calibration.FieldCheck{ID: id, Sensor: "m1", At: at(when), ReferenceDB: ref, MeasuredDB: measured, FrequencyHz: 1000,
		CalibratorModel: "B&K 4231", CalibratorSerial: "c-1"}
}

func openTest(t *testing.T, path string, c *clock, sensors ...calibration.Sensor) *Register {
	t.Helper()
	r, err := Open(context.Background(), path, Options{Now: c.Now, Sensors: func() []calibration.Sensor { return sensors }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRegisterCertificatesHistoryAndFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), calibration.FileName)
	c := &clock{at("2026-06-10 12:00")}
	r := openTest(t, path, c, calibration.Sensor{ID: "m1", Municipality: "lapa"})

	// Invalid: nothing stored, pt-BR problems.
	bad := cert(0, "", "2026-01-10", "2025-01-10", "A2A-1")
	if _, err := r.Add(ctx, bad, nil, "ana"); err == nil || !strings.Contains(err.Error(), "informe o número do certificado") ||
		!strings.Contains(err.Error(), "precisa ser posterior") {
		t.Fatalf("invalid certificate: %v", err)
	}
	pdf := []byte("%PDF-1.4\n% certificate\n")
	first := cert(0, "RBC-001/2026", "2026-01-10", "2026-07-01", "A2A-1")
	first.FileName = "rbc-001.pdf"
	got, err := r.Add(ctx, first, pdf, "ana")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pdf)
	if got.ID == 0 || got.FileSHA256 != hex.EncodeToString(sum[:]) || got.FileSize != int64(len(pdf)) || got.RecordedBy != "ana" {
		t.Fatalf("added %+v", got)
	}
	// A correction: new revision, the first kept as it was.
	fix := first
	fix.Expires, fix.Replaces, fix.FileName = "2027-01-10", got.ID, ""
	fixed, err := r.Add(ctx, fix, nil, "bia")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Add(ctx, calibration.Certificate{}, nil, "x"); err == nil {
		t.Fatal("empty certificate accepted")
	}
	wrong := fix
	wrong.Replaces = 999
	if _, err := r.Add(ctx, wrong, nil, "bia"); err == nil || !strings.Contains(err.Error(), "a revisão 999 que esta corrige não existe") {
		t.Fatalf("correction of nothing: %v", err)
	}
	hist, err := r.History(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Expires != "2026-07-01" || hist[1].Expires != "2027-01-10" || hist[1].Replaces != got.ID {
		t.Fatalf("history %+v", hist)
	}
	// Append-only, even for SQL from outside.
	if _, err := r.db.ExecContext(ctx, `UPDATE certificates SET expires = '2030-01-01'`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("update: %v", err)
	}
	if _, err := r.db.ExecContext(ctx, `DELETE FROM certificates`); err == nil {
		t.Fatal("delete allowed")
	}
	gotC, data, err := r.File(ctx, got.ID)
	if err != nil || string(data) != string(pdf) || gotC.FileName != "rbc-001.pdf" {
		t.Fatalf("file: %v %q %+v", err, data, gotC)
	}
	if _, _, err := r.File(ctx, fixed.ID); !errors.Is(err, calibration.ErrNotFound) {
		t.Fatalf("file of a revision without one: %v", err)
	}
	// The verdict uses the correction (in force until 2027-01-10).
	if ok, why := r.Status("m1", at("2026-08-01 00:00")); !ok || why != "" {
		t.Fatalf("status after correction: %v %q", ok, why)
	}
	if ok, why := r.Status("m1", at("2027-02-01 00:00")); ok || !strings.Contains(why, "venceu em 10/01/2027") {
		t.Fatalf("status expired: %v %q", ok, why)
	}
	if ok, why := r.Status("m2", at("2026-08-01 00:00")); ok || !strings.Contains(why, "nenhum certificado") {
		t.Fatalf("status of an uncertified sensor: %v %q", ok, why)
	}

	// Reopened: everything is still there, and the schema step is not run twice.
	r.Close()
	r2 := openTest(t, path, c, calibration.Sensor{ID: "m1", Municipality: "lapa"})
	if h, err := r2.History(ctx, ""); err != nil || len(h) != 2 {
		t.Fatalf("after reopen: %v %d", err, len(h))
	}
}

func TestRegisterChecksSightingsPolicy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), calibration.FileName)
	c := &clock{at("2026-06-10 12:00")}
	r := openTest(t, path, c, calibration.Sensor{ID: "m1", Municipality: "lapa"}, calibration.Sensor{ID: "m2", Municipality: "lapa"})
	if _, err := r.Add(ctx, cert(0, "RBC-1", "2026-01-10", "2026-07-01", "A2A-1"), nil, "ana"); err != nil {
		t.Fatal(err)
	}
	k := check(0, "2026-06-01 10:00", 94, 94.2)
	k.Gateway, k.Municipality, k.Seq, k.Verified, k.ReceivedAt = "gw1", "lapa", 41, true, at("2026-06-01 10:00")
	for i, want := range []bool{true, false} { // the same (gateway, seq) twice: stored once
		stored, err := r.RecordCheck(ctx, k, []byte(`{"signed":1}`), []byte("sig"))
		if err != nil || stored != want {
			t.Fatalf("record %d: %v %v", i, stored, err)
		}
	}
	ks, err := r.Checks(ctx, "m1", 0)
	if err != nil || len(ks) != 1 || ks[0].Drift() != 0.2 || ks[0].Seq != 41 {
		t.Fatalf("checks %v %+v", err, ks)
	}
	body, sig, err := r.CheckEvidence(ctx, ks[0].ID)
	if err != nil || string(body) != `{"signed":1}` || string(sig) != "sig" {
		t.Fatalf("evidence %q %q %v", body, sig, err)
	}
	// Policy: 30 days by default, then 5 for Lapa.
	v, err := r.Verdict(ctx, "m1", at("2026-06-10 12:00"))
	if err != nil || v.CheckStale {
		t.Fatalf("default policy: %v %+v", err, v)
	}
	if err := r.SetPolicy(ctx, "lapa", 5, "ana"); err != nil {
		t.Fatal(err)
	}
	if err := r.SetPolicy(ctx, "lapa", 400, "ana"); err == nil || !strings.Contains(err.Error(), "use 1 a 366 dias") {
		t.Fatalf("policy 400: %v", err)
	}
	if v, _ = r.Verdict(ctx, "m1", at("2026-06-10 12:00")); !v.CheckStale || !strings.Contains(strings.Join(v.Warnings, "|"), "a cada 5 dias") {
		t.Fatalf("policy 5 days: %+v", v.Warnings)
	}
	// Sightings: only a change is written; a swapped meter makes the readings indicativas.
	for i, s := range []struct {
		serial  string
		changed bool
	}{{"A2A-1", true}, {"A2A-1", false}, {"B7", true}} {
		changed, err := r.Saw(ctx, calibration.Sighting{Sensor: "m1", Model: "NTi XL2", Serial: s.serial, At: at("2026-06-02 00:00").Add(time.Duration(i) * time.Hour)})
		if err != nil || changed != s.changed {
			t.Fatalf("saw %d: %v %v", i, changed, err)
		}
	}
	if ok, why := r.Status("m1", at("2026-06-02 03:00")); ok || !strings.Contains(why, `número de série "B7"`) {
		t.Fatalf("swapped: %v %q", ok, why)
	}
	if ok, _ := r.Status("m1", at("2026-06-02 00:30")); !ok {
		t.Fatal("readings before the swap became indicativas")
	}
	// The cache survives a restart: the same device is not a change.
	r.Close()
	r = openTest(t, path, c, calibration.Sensor{ID: "m1", Municipality: "lapa"}, calibration.Sensor{ID: "m2", Municipality: "lapa"})
	if changed, err := r.Saw(ctx, calibration.Sighting{Sensor: "m1", Model: "NTi XL2", Serial: "B7", At: at("2026-06-03 00:00")}); err != nil || changed {
		t.Fatalf("after restart: %v %v", changed, err)
	}

	// Gauges: m1 expires 2026-07-01, m2 has no certificate.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(r.Collector())
	for _, g := range []struct {
		name, sensor string
		want         float64
	}{
		{"sossego_calibration_expiring", "m1", 1}, {"sossego_calibration_expiring", "m2", 0},
		{"sossego_calibration_expired", "m1", 0}, {"sossego_calibration_expired", "m2", 1},
		{"sossego_calibration_indicative", "m1", 1}, // the swapped meter
		{"sossego_calibration_check_stale", "m1", 1}, {"sossego_calibration_check_stale", "m2", 1},
		{"sossego_calibration_check_age_seconds", "m1", at("2026-06-10 12:00").Sub(at("2026-06-01 10:00")).Seconds()},
	} {
		if got, ok := value(t, reg, g.name, g.sensor); !ok || got != g.want {
			t.Errorf("%s{sensor=%q} = %v (present %v), want %v", g.name, g.sensor, got, ok, g.want)
		}
	}
	if _, ok := value(t, reg, "sossego_calibration_check_age_seconds", "m2"); ok {
		t.Error("check age of a sensor never checked")
	}
	c.t = at("2026-07-02 00:00")
	if got, _ := value(t, reg, "sossego_calibration_expired", "m1"); got != 1 {
		t.Fatalf("expired after 2026-07-01: %v", got)
	}
}

// value is the gathered value of name{sensor}.
func value(t *testing.T, g prometheus.Gatherer, name, sensor string) (float64, bool) {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			if len(m.Label) == 1 && m.Label[0].GetValue() == sensor {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// TestOpenRefusesNewerSchema: a file from a newer release is refused,
// not written over.
func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), calibration.FileName)
	r := openTest(t, path, &clock{time.Now()})
	r.Close()
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO calibration_migrations(version, name, applied_at) VALUES (99, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, path, Options{}); !errors.Is(err, sqlitedb.ErrNewerSchema) {
		t.Fatalf("newer file: %v", err)
	}
	if _, err := OpenReadOnly(ctx, path, Options{}); !errors.Is(err, sqlitedb.ErrNewerSchema) {
		t.Fatalf("newer file, read-only: %v", err)
	}
}

// TestOpenReadOnly: a read-only register reads what the register wrote,
// writes nothing (a missing file is not created, a write fails) and says a
// missing file is missing.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), calibration.FileName)
	if _, err := OpenReadOnly(ctx, path, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the read-only open created the file: %v", err)
	}
	c := &clock{at("2026-06-10 12:00")}
	w := openTest(t, path, c)
	if _, err := w.Add(ctx, cert(0, "RBC-1", "2026-01-10", "2027-01-10", "A2A-1"), nil, "ana"); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(ctx, path, Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h, err := r.History(ctx, "m1"); err != nil || len(h) != 1 || h[0].Number != "RBC-1" {
		t.Fatalf("read-only history: %+v %v", h, err)
	}
	if _, err := r.Add(ctx, cert(0, "RBC-2", "2026-02-10", "2027-02-10", "A2A-1"), nil, "ana"); err == nil {
		t.Fatal("a read-only register recorded a certificate")
	}
	if h, err := w.History(ctx, "m1"); err != nil || len(h) != 1 {
		t.Fatalf("history after the refused write: %d %v", len(h), err)
	}
}

// TestOpenReadOnlyEarlierSchema: a register the service has not migrated
// yet (schema 1: no catch-up cursors) reads as it is, and stays at its
// version; a file without any schema step is refused in Portuguese.
func TestOpenReadOnlyEarlierSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), calibration.FileName)
	c := &clock{at("2026-06-10 12:00")}
	w := openTest(t, path, c)
	if _, err := w.Add(ctx, cert(0, "RBC-1", "2026-01-10", "2027-01-10", "A2A-1"), nil, "ana"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	setSchema := func(sql string) {
		t.Helper()
		db, err := sqlitedb.Open(path, sqlitedb.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(sql); err != nil {
			t.Fatal(err)
		}
	}
	// What a schema-1 file is: steps 2 and 3 not applied.
	setSchema(`DROP TABLE cursors; DROP TABLE observed; DELETE FROM calibration_migrations WHERE version >= 2`)
	r, err := OpenReadOnly(ctx, path, Options{Now: c.Now})
	if err != nil {
		t.Fatalf("schema-1 file, read-only: %v", err)
	}
	h, err := r.History(ctx, "m1")
	r.Close()
	if err != nil || len(h) != 1 || h[0].Number != "RBC-1" {
		t.Fatalf("schema-1 history: %+v %v", h, err)
	}
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var have int
	err = db.QueryRow(`SELECT max(version) FROM calibration_migrations`).Scan(&have)
	db.Close()
	if err != nil || have != 1 {
		t.Fatalf("the read-only open changed the schema: version %d, %v", have, err)
	}
	setSchema(`DELETE FROM calibration_migrations`)
	_, err = OpenReadOnly(ctx, path, Options{})
	if err == nil || !strings.Contains(err.Error(), "inicie o serviço central uma vez") {
		t.Fatalf("file without schema steps: %v", err)
	}
}

// TestSignedChecks: the checks that bracket a measurement, with the bytes
// the gateway signed, for the evidence package.
func TestSignedChecks(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, filepath.Join(t.TempDir(), calibration.FileName), &clock{at("2026-06-10 12:00")}, calibration.Sensor{ID: "m1", Municipality: "lapa"})
	// The checks bracketing a measurement: the last by its start, the
	// first after it, with their signed bytes.
	k1 := check(0, "2026-06-01 10:00", 94, 94.2)
	k1.Gateway, k1.Municipality, k1.Seq, k1.Verified, k1.ReceivedAt = "gw1", "lapa", 41, true, at("2026-06-01 10:00")
	if _, err := r.RecordCheck(ctx, k1, []byte(`{"signed":1}`), []byte("sig")); err != nil {
		t.Fatal(err)
	}
	k2 := check(0, "2026-06-05 09:00", 94, 94.4)
	k2.Gateway, k2.Municipality, k2.Seq, k2.ReceivedAt = "gw1", "lapa", 57, at("2026-06-05 09:01")
	k3 := check(0, "2026-06-07 09:00", 114, 114.1)
	k3.Gateway, k3.Municipality, k3.Seq, k3.ReceivedAt = "gw1", "lapa", 58, at("2026-06-07 09:00")
	for _, x := range []calibration.FieldCheck{k2, k3} {
		if _, err := r.RecordCheck(ctx, x, []byte(fmt.Sprintf(`{"seq":%d}`, x.Seq)), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		at   string
		seqs []uint64
	}{
		{"2026-05-31 00:00", []uint64{41}},     // before any check: the first one after
		{"2026-06-01 10:00", []uint64{41, 57}}, // a check at the very start counts as before
		{"2026-06-06 00:00", []uint64{57, 58}},
		{"2026-06-08 00:00", []uint64{58}}, // none after yet
	} {
		ks, err := r.SignedChecks(ctx, "m1", at(c.at))
		var seqs []uint64
		for _, k := range ks {
			seqs = append(seqs, k.Seq)
			if want := fmt.Sprintf(`{"seq":%d}`, k.Seq); k.Seq != 41 && (string(k.Body) != want || k.Sig != nil) || k.Seq == 41 && (string(k.Sig) != "sig" || !k.Verified) || k.Sensor != "m1" {
				t.Errorf("at %s: check %d carries %q %q (%s)", c.at, k.Seq, k.Body, k.Sig, k.Sensor)
			}
		}
		if err != nil || !slices.Equal(seqs, c.seqs) {
			t.Errorf("SignedChecks at %s = %v, %v; want %v", c.at, seqs, err, c.seqs)
		}
	}
	if ks, err := r.SignedChecks(ctx, "m2", at("2026-06-06 00:00")); err != nil || len(ks) != 0 {
		t.Errorf("a sensor without checks: %v %v", ks, err)
	}
}
