package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/casestore"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// evidenceDataDir lays out a central-service data directory: the demo
// register, the Lapa night readings (one hour of margin on each side, so the
// progress bar shows) as signed batches, and the firing alert.
func evidenceDataDir(t *testing.T) (string, alerts.Alert) {
	t.Helper()
	return makeEvidenceDataDir(t, t.TempDir(), time.Hour)
}

// TestMakeEvidenceBenchDir builds a 24-hour data directory for measuring
// `sossego evidence export` (figures in BENCHMARKS.md):
// SOSSEGO_EVIDENCE_BENCH_DIR=/tmp/ev24 go test -run TestMakeEvidenceBenchDir ./cmd/sossego
func TestMakeEvidenceBenchDir(t *testing.T) {
	dir := os.Getenv("SOSSEGO_EVIDENCE_BENCH_DIR")
	if dir == "" {
		t.Skip("set SOSSEGO_EVIDENCE_BENCH_DIR to build the 24-hour data directory")
	}
	_, a := makeEvidenceDataDir(t, dir, 12*time.Hour-2*time.Minute)
	t.Logf("alert %s", a.ID)
}

func makeEvidenceDataDir(t *testing.T, dir string, margin time.Duration) (string, alerts.Alert) {
	t.Helper()
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(dir, "registry.yaml"), registry.DemoYAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	sc := noticetest.Lapa(noticetest.Codes())
	st, err := store.OpenSQLite(filepath.Join(dir, "readings.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := loadgen.Key(loadgen.DefaultSeed, "lapa-centro-01")
	rs := sc.Readings(sc.Finding.WindowStart.Add(-margin), sc.Finding.WindowEnd.Add(margin))
	var w store.Write
	for i := 0; i < len(rs); i += 10 {
		b := wire.Batch{V: 1, Kind: "levels", Municipality: "lapa", Gateway: "lapa-centro-01", Sensor: "lapa-bar-01", Seq: uint64(i/10 + 1),
			SentAt: rs[i].T, Device: wire.Device{Model: "NSRT_mk4", Serial: "NSRT-0001", Grade: "class2"}, Clock: wire.Clock{Synced: true, Source: "ntp"}}
		for _, r := range rs[i:min(i+10, len(rs))] {
			b.Records = append(b.Records, wire.Record{T: r.T, DurMs: 1000, LAeq: r.LAeq, LAFmax: r.LAFmax, LAFmin: r.LAFmin})
		}
		body, _ := json.Marshal(&b)
		w.Batches = append(w.Batches, store.Batch{Gateway: b.Gateway, Municipality: "lapa", Sensor: b.Sensor, Kind: "levels",
			Topic: wire.LevelsTopic("lapa", b.Gateway, b.Sensor), Seq: b.Seq, Body: body, Sig: ed25519.Sign(key, body), Verified: true,
			ReceivedAt: b.SentAt, Device: b.Device, Clock: b.Clock, Records: b.Records})
	}
	if _, err := st.Apply(ctx, w); err != nil {
		t.Fatal(err)
	}
	st.Close()
	cs, err := casestore.Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	a := *sc.Alert
	if err := cs.SaveStates(ctx, []alerts.Change{{Events: []alerts.Event{{Kind: alerts.EventFiring, At: a.FiringAt, Alert: a}}}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	return dir, a
}

func TestEvidenceExportVerify(t *testing.T) {
	dir, a := evidenceDataDir(t)
	out := filepath.Join(t.TempDir(), "ev.zip")
	code, stdout, stderr := runCLI(t, "", "evidence", "export", "--alert", a.ID, "-o", out, "--data-dir", dir, "--margem", "1h")
	if code != 0 {
		t.Fatalf("export: %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "7440 registros de 1 s (240 na janela do alerta)") || !strings.Contains(stderr, "empacotando leituras [##############################] 7440/7440 (100%)") {
		t.Errorf("export output:\n%s\n%s", stdout, stderr)
	}
	if st, err := os.Stat(filepath.Join(dir, evidence.KeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	code, stdout, _ = runCLI(t, "", "evidence", "verify", out, "--data-dir", dir)
	if code != 0 || !strings.Contains(stdout, "pacote íntegro") || !strings.Contains(stdout, "assinado pela chave deste serviço") {
		t.Fatalf("verify: %d %s", code, stdout)
	}

	// Tamper: one LAeq in the CSV.
	b, _ := os.ReadFile(out)
	bad := filepath.Join(t.TempDir(), "bad.zip")
	os.WriteFile(bad, editMember(t, b, "data/readings.csv", func(d []byte) []byte {
		return bytes.Replace(d, []byte(",68."), []byte(",58."), 1)
	}), 0o644)
	code, stdout, _ = runCLI(t, "", "evidence", "verify", bad)
	if code != 1 || !strings.Contains(stdout, "PACOTE INVÁLIDO") || !strings.Contains(stdout, "data/readings.csv foi alterado") {
		t.Fatalf("tampered verify: %d %s", code, stdout)
	}

	// Wrong trusted key.
	other := t.TempDir()
	if _, err := evidence.LoadOrCreateKey(other); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCLI(t, "", "evidence", "verify", out, "--data-dir", other)
	if code != 1 || !strings.Contains(stdout, "não é a chave do serviço") {
		t.Fatalf("foreign key: %d %s", code, stdout)
	}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"evidence", "export"}, 2, "informe --alert"},
		{[]string{"evidence", "export", "--alert", "x", "--data-dir", t.TempDir()}, 1, "não encontrei readings.db"},
		{[]string{"evidence", "export", "--alert", "nao-existe", "--data-dir", dir, "-o", filepath.Join(t.TempDir(), "x.zip")}, 1, "alerta \"nao-existe\""},
		{[]string{"evidence", "verify"}, 2, "informe um arquivo"},
		{[]string{"evidence", "verify", "/nao/existe.zip"}, 1, "o arquivo ou a pasta não existe"},
		{[]string{"evidence", "frobnicate"}, 2, "subcomando desconhecido"},
	} {
		code, stdout, stderr := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.msg) {
			t.Errorf("%v: %d %q %q", tc.args, code, stdout, stderr)
		}
	}
	code, stdout, _ = runCLI(t, "", "evidence", "verify", filepath.Join(dir, "registry.yaml"))
	if code != 1 || !strings.Contains(stdout, "não é um zip válido") {
		t.Errorf("not a zip: %d %s", code, stdout)
	}
}

func editMember(t *testing.T, b []byte, suffix string, edit func([]byte) []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, _ := f.Open()
		d, _ := io.ReadAll(rc)
		rc.Close()
		if strings.HasSuffix(f.Name, suffix) {
			d = edit(d)
		}
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		w.Write(d)
	}
	zw.Close()
	return buf.Bytes()
}
