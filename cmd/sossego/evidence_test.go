package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
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
	shape := recordAsSimple
	if os.Getenv("SOSSEGO_EVIDENCE_BENCH_SHAPE") == "gateway" {
		shape = recordAsGateway
	}
	_, a := makeEvidenceDataDirShaped(t, dir, 12*time.Hour-2*time.Minute, shape)
	t.Logf("alert %s", a.ID)
}

// recordAsSimple is a reading as a record with the values as they are and
// nothing else.
func recordAsSimple(t time.Time, laeq, lafmax, lafmin float64) wire.Record {
	return wire.Record{T: t, DurMs: 1000, LAeq: laeq, LAFmax: lafmax, LAFmin: lafmin}
}

// recordAsGateway is a reading as the gateway's aggregator writes it:
// values to two decimals, an LCpeak and the histogram of ten 100-ms LAF
// samples.
func recordAsGateway(t time.Time, laeq, lafmax, lafmin float64) wire.Record {
	r2 := func(v float64) float64 { return math.Round(v*100) / 100 }
	peak := r2(lafmax + 14.3)
	h := level.Histogram{Bins: map[int]float64{}}
	for k := range 10 {
		h.Add(lafmin+(lafmax-lafmin)*float64(k*7%10)/9, 100)
	}
	return wire.Record{T: t, DurMs: 1000, LAeq: r2(laeq), LAFmax: r2(lafmax), LAFmin: r2(lafmin), LCpeak: &peak, Hist: &h}
}

func makeEvidenceDataDir(t *testing.T, dir string, margin time.Duration) (string, alerts.Alert) {
	return makeEvidenceDataDirShaped(t, dir, margin, recordAsSimple)
}

func makeEvidenceDataDirShaped(t *testing.T, dir string, margin time.Duration,
	shape func(t time.Time, laeq, lafmax, lafmin float64) wire.Record) (string, alerts.Alert) {
	t.Helper()
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(dir, "registry.yaml"), registry.DemoYAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	sc := noticetest.Lapa(noticetest.Codes())
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
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
			b.Records = append(b.Records, shape(r.T, r.LAeq, r.LAFmax, r.LAFmin))
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
	cs, err := alertstore.Open(ctx, filepath.Join(dir, "cases.db"))
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
	t.Parallel()
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
	if code != 0 || !strings.Contains(stdout, "pacote íntegro") || !strings.Contains(stdout, "assinado pela chave confiável SHA256:") ||
		!strings.Contains(stdout, "744 de 744 lotes dos gateways com assinatura conferida; 7440 leituras iguais") {
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
	if code != 1 || !strings.Contains(stdout, "não é uma chave confiável do serviço") {
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

// TestEvidenceTrustReproducibleAndKeys: without a trusted key verify never
// says íntegro; the fingerprint the notice prints or the published key
// pins it; the zip and its unpacked directory verify alike; the same case
// state exports the same bytes; after a key rotation the earlier bag still
// verifies against the data directory's history, and a revoked key's bag
// does not.
func TestEvidenceTrustReproducibleAndKeys(t *testing.T) {
	t.Parallel()
	dir, a := makeEvidenceDataDir(t, t.TempDir(), 2*time.Minute)
	out := filepath.Join(t.TempDir(), "ev.zip")
	if code, so, se := runCLI(t, "", "evidence", "export", "--alert", a.ID, "-o", out, "--data-dir", dir, "-q"); code != 0 {
		t.Fatalf("export: %s %s", so, se)
	}
	code, so, _ := runCLI(t, "", "evidence", "key", "show", "--data-dir", dir, "--json")
	var pub evidence.Published
	if code != 0 || json.Unmarshal([]byte(so), &pub) != nil || len(pub.History) != 1 || !strings.HasPrefix(pub.Fingerprint, "SHA256:") {
		t.Fatalf("key show: %d %s", code, so)
	}
	keyJSON := filepath.Join(t.TempDir(), "chave.json")
	os.WriteFile(keyJSON, []byte(so), 0o644)
	pemFile := filepath.Join(t.TempDir(), "chave.pem")
	os.WriteFile(pemFile, []byte(pub.PEM), 0o644)

	code, so, _ = runCLI(t, "", "evidence", "verify", out)
	if code != 1 || strings.Contains(so, "íntegro:") || !strings.Contains(so, "nenhuma chave confiável foi informada") {
		t.Fatalf("no trust: %d %s", code, so)
	}
	for _, args := range [][]string{{"--impressao", evidence.GroupedFingerprint(pub.Fingerprint)}, {"--chave-publica", keyJSON},
		{"--chave-publica", pemFile}, {"--chave-publica", pub.PublicKey}} {
		code, so, se := runCLI(t, "", append([]string{"evidence", "verify", out}, args...)...)
		if code != 0 || !strings.Contains(so, "pacote íntegro") {
			t.Errorf("%v: %d %s %s", args, code, so, se)
		}
	}
	code, so, _ = runCLI(t, "", "evidence", "verify", out, "--impressao", "SHA256:"+strings.Repeat("ab", 32))
	if code != 1 || !strings.Contains(so, "não é uma chave confiável") {
		t.Errorf("wrong fingerprint: %d %s", code, so)
	}
	if code, _, se := runCLI(t, "", "evidence", "verify", out, "--impressao", "1234"); code != 1 || !strings.Contains(se, "impressão digital \"1234\" inválida") {
		t.Errorf("short fingerprint: %d %s", code, se)
	}

	// The unpacked directory.
	zb, _ := os.ReadFile(out)
	udir := t.TempDir()
	zr, _ := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	for _, f := range zr.File {
		p := filepath.Join(udir, filepath.FromSlash(f.Name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		rc, _ := f.Open()
		d, _ := io.ReadAll(rc)
		rc.Close()
		os.WriteFile(p, d, 0o644)
	}
	if code, so, _ := runCLI(t, "", "evidence", "verify", udir, "--data-dir", dir); code != 0 || !strings.Contains(so, "pacote íntegro") {
		t.Errorf("directory: %d %s", code, so)
	}

	// Same state, same bytes; the ledger keeps one entry.
	again := filepath.Join(t.TempDir(), "ev2.zip")
	if code, so, se := runCLI(t, "", "evidence", "export", "--alert", a.ID, "-o", again, "--data-dir", dir, "-q"); code != 0 {
		t.Fatalf("export again: %s %s", so, se)
	}
	if zb2, _ := os.ReadFile(again); !bytes.Equal(zb, zb2) {
		t.Error("the same case state exported different bytes")
	}

	// Rotation: the earlier bag stays verifiable with the history; a new
	// export is signed by the new key and, the state having changed (the
	// key), names the earlier bag.
	if code, so, se := runCLI(t, "", "evidence", "key", "rotate", "--data-dir", dir); code != 0 || !strings.Contains(so, "substituída em") {
		t.Fatalf("rotate: %d %s %s", code, so, se)
	}
	if code, so, _ := runCLI(t, "", "evidence", "verify", out, "--data-dir", dir); code != 0 || !strings.Contains(so, "chave anterior do serviço") {
		t.Errorf("after rotation: %d %s", code, so)
	}
	third := filepath.Join(t.TempDir(), "ev3.zip")
	if code, so, se := runCLI(t, "", "evidence", "export", "--alert", a.ID, "-o", third, "--data-dir", dir, "-q"); code != 0 {
		t.Fatalf("export after rotation: %s %s", so, se)
	}
	h := sha256.Sum256(zb)
	if files := unzipCLI(t, third); !strings.Contains(string(files["bag-info.txt"]), "Sossego-Previous-Bag-SHA256: "+hex.EncodeToString(h[:])) {
		t.Errorf("the later bag does not name the earlier one:\n%s", files["bag-info.txt"])
	}
	if code, so, se := runCLI(t, "", "evidence", "key", "rotate", "--data-dir", dir, "--revogar", "--motivo", "servidor invadido"); code != 0 {
		t.Fatalf("revoke: %s %s", so, se)
	}
	if code, so, _ := runCLI(t, "", "evidence", "verify", third, "--data-dir", dir); code != 1 || !strings.Contains(so, "REVOGADA") {
		t.Errorf("revoked key: %d %s", code, so)
	}
	if code, _, se := runCLI(t, "", "evidence", "key", "rotate", "--data-dir", dir, "--revogar"); code != 2 || !strings.Contains(se, "--motivo") {
		t.Errorf("revoke without reason: %d %s", code, se)
	}
}

func unzipCLI(t *testing.T, p string) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		d, _ := io.ReadAll(rc)
		rc.Close()
		_, rest, _ := strings.Cut(f.Name, "/")
		out[rest] = d
	}
	return out
}

// TestEvidenceExportRefusals: what export says when the data folder lacks
// what it needs — an exit of 1 and a pt-BR message naming the file, never a
// crash (each store opened so far is closed again).
func TestEvidenceExportRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string // created in the data folder
		want  string
	}{
		{"no data folder", nil, "não encontrei readings.db"},
		{"no cases", map[string]string{"readings.db": ""}, "não encontrei cases.db"},
		{"no register", map[string]string{"readings.db": "", "cases.db": ""}, "cadastro: não foi possível abrir"},
		{"broken register", map[string]string{"readings.db": "", "cases.db": "", "registry.yaml": "x: [\n"}, "registry.yaml: cadastro: linha 1"},
		{"readings not a database", map[string]string{"readings.db": "isto não é SQLite", "cases.db": "",
			"registry.yaml": string(registry.DemoYAML())}, "/readings.db: o arquivo não é um banco de dados SQLite ou está danificado"},
		{"cases not a database", map[string]string{"readings.db": "", "cases.db": "isto não é SQLite",
			"registry.yaml": string(registry.DemoYAML())}, "/cases.db: o arquivo não é um banco de dados SQLite ou está danificado"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dados")
			if tc.files != nil {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for name, body := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			code, _, errs := cli(t, "evidence", "export", "--alert", "x", "-q", "--data-dir", dir, "-o", filepath.Join(t.TempDir(), "b.zip"))
			if code != 1 || !strings.Contains(errs, tc.want) || strings.Contains(errs, "panic") {
				t.Fatalf("exit %d, stderr:\n%s\nwant 1 and %q", code, errs, tc.want)
			}
		})
	}
	// An output folder that does not exist is named as the user gave it,
	// not as the temporary file the bag is first written to.
	dir, a := evidenceDataDir(t)
	out := filepath.Join(t.TempDir(), "falta", "b.zip")
	code, _, errs := runCLI(t, "", "evidence", "export", "--alert", a.ID, "-q", "--data-dir", dir, "-o", out)
	if code != 1 || !strings.Contains(errs, `não foi possível criar "`+out+`": o arquivo ou a pasta não existe`) || strings.Contains(errs, ".evidencia-") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
}
