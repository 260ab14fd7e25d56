package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/central"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/workflow"
)

// TestEvidenceExportCalibrationRegister: `sossego evidence export` reads the
// data folder's calibration register as the service's export does, so the
// same state gives the same bag, byte for byte: the certificate and the
// signed field checks when the register holds them, the signed checks alone
// (with the register of sensors' meter data) when it holds no certificate,
// and the register of sensors' meter with nothing else — said on stderr —
// when the folder has no register. verify re-checks the checks' signatures.
func TestEvidenceExportCalibrationRegister(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		certificate  bool
		checks       bool
		source       string // the meter's source in device.json
		certNumber   string
		stderr       string
		signedChecks int
	}{
		{"no register", false, false, "cadastro de sensores", "", "sem registro de calibrações", 0},
		{"checks, no certificate", false, true, "cadastro de sensores; verificações de campo do registro de calibrações", "", "", 2},
		{"certificate and checks", true, true, "registro de calibrações (metrologia); classe do cadastro de sensores", "RBC-9/2026", "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, a := makeEvidenceDataDir(t, t.TempDir(), 2*time.Minute)
			if tc.certificate || tc.checks {
				seedCalibration(t, dir, a, tc.certificate, tc.checks)
			}
			out := filepath.Join(t.TempDir(), "cli.zip")
			code, so, se := runCLI(t, "", "evidence", "export", "--alert", a.ID, "-o", out, "--data-dir", dir, "-q")
			if code != 0 || (tc.stderr == "") != !strings.Contains(se, "sem registro de calibrações") || !strings.Contains(se, tc.stderr) {
				t.Fatalf("export: %d %s\nstderr: %s\nwant stderr with %q", code, so, se, tc.stderr)
			}
			cliBag, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if svc := servicePath(t, dir, a.ID); !bytes.Equal(cliBag, svc) {
				t.Errorf("the CLI and the service exported different bags of the same state (%d and %d bytes)", len(cliBag), len(svc))
			}
			files := unzipCLI(t, out)
			var dev struct {
				Meter struct {
					Source      string `json:"source"`
					Calibration *struct {
						Certificate string `json:"certificate"`
					} `json:"calibration"`
					FieldCheck *evidence.FieldCheck `json:"field_check"`
				} `json:"meter"`
			}
			if err := json.Unmarshal(files["data/device.json"], &dev); err != nil {
				t.Fatalf("device.json: %v", err)
			}
			m := dev.Meter
			if m.Source != tc.source || (tc.certNumber != "") != (m.Calibration != nil && m.Calibration.Certificate == tc.certNumber) ||
				(m.FieldCheck != nil) != tc.checks {
				t.Errorf("meter = %+v, calibration %+v; want source %q, certificate %q, field check %v", m, m.Calibration, tc.source, tc.certNumber, tc.checks)
			}
			if n := strings.Count(string(files["data/checks.txt"]), "\n"); n != tc.signedChecks {
				t.Errorf("checks.txt has %d lines, want %d:\n%s", n, tc.signedChecks, files["data/checks.txt"])
			}
			code, so, _ = runCLI(t, "", "evidence", "verify", out, "--data-dir", dir)
			checked := "2 de 2 verificações de campo com calibrador com assinatura conferida"
			if code != 0 || !strings.Contains(so, "pacote íntegro") || strings.Contains(so, checked) != (tc.signedChecks == 2) {
				t.Errorf("verify: %d %s", code, so)
			}
		})
	}
}

// seedCalibration writes the data folder's calibration register: a
// certificate of lapa-bar-01 in force over the alert, and the calibrator
// checks two hours before the window and one hour after it, signed by the
// gateway as the register keeps them.
func seedCalibration(t *testing.T, dir string, a alerts.Alert, certificate, checks bool) {
	t.Helper()
	ctx := context.Background()
	r, err := calibrationdb.Open(ctx, filepath.Join(dir, calibration.FileName), calibrationdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if certificate {
		if _, err := r.Add(ctx, calibration.Certificate{Sensor: a.Sensor, Number: "RBC-9/2026", Laboratory: "Laboratório de Acústica (RBC)",
			MeterModel: "NSRT_mk4", MeterSerial: "NSRT-0001", CalibratedOn: a.WindowStart.AddDate(0, -1, 0).Format(time.DateOnly),
			Expires: a.WindowStart.AddDate(1, 0, 0).Format(time.DateOnly), UncertaintyDB: 0.4}, nil, "ana"); err != nil {
			t.Fatal(err)
		}
	}
	if !checks {
		return
	}
	key := loadgen.Key(loadgen.DefaultSeed, "lapa-centro-01")
	for i, at := range []time.Time{a.WindowStart.Add(-2 * time.Hour), a.WindowEnd.Add(time.Hour)} {
		at = at.UTC().Truncate(time.Millisecond)
		c := wire.Check{T: at, ReferenceDB: 94, MeasuredDB: 94.1, FrequencyHz: 1000, CalibratorModel: "CAL200", CalibratorSerial: "C-77"}
		b := wire.Batch{V: 1, Kind: "check", Municipality: "lapa", Gateway: "lapa-centro-01", Sensor: a.Sensor, Seq: uint64(90000 + i), SentAt: at,
			Device: wire.Device{Model: "NSRT_mk4", Serial: "NSRT-0001", Grade: "class2"}, Clock: wire.Clock{Synced: true, Source: "ntp"}, Check: &c}
		body, err := json.Marshal(&b)
		if err != nil {
			t.Fatal(err)
		}
		k := calibration.FieldCheck{Sensor: a.Sensor, Gateway: b.Gateway, Municipality: "lapa", Seq: b.Seq, At: at, ReferenceDB: c.ReferenceDB,
			MeasuredDB: c.MeasuredDB, FrequencyHz: c.FrequencyHz, CalibratorModel: c.CalibratorModel, CalibratorSerial: c.CalibratorSerial,
			MeterModel: "NSRT_mk4", MeterSerial: "NSRT-0001", Verified: true, ReceivedAt: at.Add(time.Second)}
		if _, err := r.RecordCheck(ctx, k, body, ed25519.Sign(key, body)); err != nil {
			t.Fatal(err)
		}
	}
}

// servicePath exports the data folder's bag of its one alert as the central
// service does (internal/central's web.go and service.go): its stores, its evidence sources and the calibration
// register opened for writing, through central.EvidenceMeters.
func servicePath(t *testing.T, dir, alertID string) []byte {
	t.Helper()
	ctx := context.Background()
	rb, err := os.ReadFile(filepath.Join(dir, "registry.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Parse(rb)
	if err != nil {
		t.Fatal(err)
	}
	live := registry.NewLive(reg)
	set, err := codes.LoadDir("")
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	al, err := alertstore.Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	cs, err := casesdb.Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cal, err := calibrationdb.Open(ctx, filepath.Join(dir, calibration.FileName), calibrationdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cal.Close()
	kr, err := evidence.LoadOrCreateKeyRing(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	svc := workflow.New(workflow.Config{Cases: workflow.CaseStores{Documents: cs, Steps: cs, Constatacoes: cs, PDFs: cs, Triage: cs},
		Alerts: al, Registry: workflow.SensorRegistryFunc(live.Current), Readings: st, Batches: st, Codes: set, Key: kr.Signer, Calibrations: cal,
		Evidence: workflow.EvidenceSources{Keys: kr, Env: st, Ledger: &evidence.FileLedger{Dir: filepath.Join(dir, evidence.LedgerDir)},
			Meters: central.EvidenceMeters{Register: cal, Registry: live.Current}}})
	var buf bytes.Buffer
	if _, err := svc.Export(ctx, alertID, &buf, nil); err != nil {
		t.Fatalf("service export: %v", err)
	}
	return buf.Bytes()
}
