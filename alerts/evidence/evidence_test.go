package evidence_test

import (
	"archive/zip"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/wire"
)

var set = noticetest.Codes()

func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

func pubOf(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// gatewayOld and gatewayNew are the Lapa gateway's keys: rotated at the
// middle of the alert window.
var gatewayOld, gatewayNew = testKey(7), testKey(8)

// lapaPackage is the Lapa night exceedance with margin on each side:
// batches of 10 records signed by the gateway with the key in force when
// each was received (rotated mid-window), the batch with seq 1003 carrying
// a broken signature, env readings, the meter with its calibration, one act
// and a constatação.
func lapaPackage(margin time.Duration) *evidence.Package {
	sc := noticetest.Lapa(set)
	f := sc.Finding
	from, to := f.WindowStart.Add(-margin), f.WindowEnd.Add(margin)
	rotation := f.WindowStart.Add(f.WindowEnd.Sub(f.WindowStart) / 2)
	var recs []evidence.Record
	var batches []evidence.Batch
	rs := sc.Readings(from, to)
	for i := 0; i < len(rs); i += 10 {
		seq := uint64(1000 + i/10)
		b := wire.Batch{V: 1, Kind: "levels", Municipality: "lapa", Gateway: sc.Gateway, Sensor: sc.Site.Sensor, Seq: seq, SentAt: rs[i].T,
			Device: wire.Device{Model: "NSRT_mk4", Serial: "NSRT-0001", Grade: "class2"}, Clock: wire.Clock{Synced: true, OffsetMs: 1.5, Source: "ntp"}}
		for j, r := range rs[i:min(i+10, len(rs))] {
			b.Records = append(b.Records, wire.Record{T: r.T, DurMs: 1000, LAeq: r.LAeq, LAFmax: r.LAFmax, LAFmin: r.LAFmin})
			recs = append(recs, evidence.Record{T: r.T, DurMs: 1000, LAeq: r.LAeq, LAFmax: r.LAFmax, LAFmin: r.LAFmin,
				Gateway: sc.Gateway, Seq: seq, Grade: "class2", Synced: (i+j)%500 != 0})
		}
		body, _ := json.Marshal(&b)
		received := b.Records[len(b.Records)-1].T.Add(1500 * time.Millisecond)
		key := gatewayOld
		if !received.Before(rotation) {
			key = gatewayNew
		}
		sig := ed25519.Sign(key, body)
		if seq == 1003 {
			sig[0] ^= 1
		}
		batches = append(batches, evidence.Batch{Gateway: sc.Gateway, Seq: seq, Body: body, Sig: sig, VerifiedAtIngest: seq != 1003, ReceivedAt: received})
	}
	// Field checks with the calibrator before the window (old key) and
	// after it (new key), as the calibration register keeps them.
	var checks []evidence.Batch
	for i, at := range []time.Time{from.Add(-2 * time.Hour), to.Add(time.Hour)} {
		c := wire.Batch{V: 1, Kind: "check", Municipality: "lapa", Gateway: sc.Gateway, Sensor: sc.Site.Sensor, Seq: uint64(5000 + i), SentAt: at,
			Device: wire.Device{Model: "NSRT_mk4", Serial: "NSRT-0001", Grade: "class2"}, Clock: wire.Clock{Synced: true, Source: "ntp"},
			Check: &wire.Check{T: at, ReferenceDB: 94, MeasuredDB: 94.1 + 0.1*float64(i), FrequencyHz: 1000, CalibratorModel: "CAL200", CalibratorSerial: "C-77"}}
		body, _ := json.Marshal(&c)
		key := gatewayOld
		if !at.Before(rotation) {
			key = gatewayNew
		}
		checks = append(checks, evidence.Batch{Gateway: sc.Gateway, Seq: c.Seq, Body: body, Sig: ed25519.Sign(key, body), VerifiedAtIngest: true,
			ReceivedAt: at.Add(time.Second)})
	}
	t1, h1 := 24.5, 61.2
	env := []evidence.EnvReading{{T: f.WindowStart, Gateway: sc.Gateway, Seq: 1, TemperatureC: &t1, HumidityPct: &h1}}
	pdf := []byte("%PDF-1.3 notificação preliminar de teste\n%%EOF\n")
	ps := sha256.Sum256(pdf)
	unc := 0.7
	return &evidence.Package{AlertID: f.AlertID, Organization: "Prefeitura Municipal de Lapa", CodeTitle: sc.Code.Title(), Finding: f,
		Party: sc.Party, Site: sc.Site, From: from, To: to, Margin: margin, Records: recs, Batches: batches, Env: env,
		Meter: evidence.Meter{Model: "NSRT_mk4", Serial: "NSRT-0001", Grade: "class2", Source: "cadastro de sensores",
			Calibration: &evidence.Calibration{Certificate: "RBC-1234/2026", Laboratory: "Lab Acústica", Date: "2026-01-10", Expiry: "2027-01-10", UncertaintyDB: &unc},
			FieldCheck:  &evidence.FieldCheck{At: checks[0].ReceivedAt.Add(-time.Second), ReferenceDB: 94, MeasuredDB: 94.1, FrequencyHz: 1000},
			Checks:      checks},
		GatewayKeys: []evidence.GatewayKey{
			{Gateway: sc.Gateway, PublicKey: pubOf(gatewayOld), ValidUntil: rotation},
			{Gateway: sc.Gateway, PublicKey: pubOf(gatewayNew), ValidFrom: rotation},
		},
		Acts: []evidence.Act{{ID: "lapa-NP-2026-000001", Kind: "notificacao_preliminar", IssuedAt: time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC),
			PDF: pdf, SHA256: hex.EncodeToString(ps[:])}},
		Constatacoes: []evidence.Constatacao{{ID: "c-1", At: time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC), JSON: []byte(`{"id":"c-1","texto":"som alto"}`)}},
		NoticeID:     "lapa-NP-2026-000001",
		Chart:        []byte("\x89PNG\r\n\x1a\n fake chart"), Custody: []evidence.Custody{
			{At: time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC), Actor: "u-ana", Role: "fiscal", Action: "issue", Detail: "lapa-NP-2026-000001"}},
		Software: "sossego test", Created: time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC)}
}

func export(t testing.TB, p *evidence.Package, key ed25519.PrivateKey) ([]byte, evidence.Summary) {
	t.Helper()
	var buf bytes.Buffer
	s, err := evidence.Export(&buf, p, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), s
}

func verify(b []byte, trusted ed25519.PublicKey) *evidence.Report {
	return evidence.Verify(bytes.NewReader(b), int64(len(b)), trusted)
}

// goodBag is lapaPackage without the broken signature.
func goodPackage(margin time.Duration) *evidence.Package {
	p := lapaPackage(margin)
	for i := range p.Batches {
		if p.Batches[i].Seq == 1003 {
			key := gatewayOld
			if !p.Batches[i].ReceivedAt.Before(p.GatewayKeys[1].ValidFrom) {
				key = gatewayNew
			}
			p.Batches[i].Sig = ed25519.Sign(key, p.Batches[i].Body)
			p.Batches[i].VerifiedAtIngest = true
		}
	}
	return p
}

func TestExportVerifies(t *testing.T) {
	key := testKey(1)
	p := goodPackage(10 * time.Minute)
	b, sum := export(t, p, key)
	rep := verify(b, pubOf(key))
	if !rep.OK || !rep.Trusted || rep.TrustNote != "chave atual do serviço" {
		t.Fatalf("fresh bag does not verify: %+v", rep)
	}
	if rep.AlertID != p.AlertID || rep.Batches != 144 || rep.BatchesVerified != 144 || rep.ReadingsChecked != len(p.Records) ||
		rep.Checks != 2 || rep.ChecksVerified != 2 {
		t.Errorf("report %+v", rep)
	}
	again, _ := export(t, goodPackage(10*time.Minute), key)
	if !bytes.Equal(b, again) {
		t.Error("export is not deterministic")
	}

	// Independent energy mean of the window (not internal/level).
	var e, n float64
	var mx float64
	exceed := 0.0
	for _, r := range p.Records {
		if !r.T.Before(p.Finding.WindowStart) && r.T.Before(p.Finding.WindowEnd) {
			e += math.Pow(10, r.LAeq/10)
			n++
			mx = math.Max(mx, r.LAFmax)
			if r.LAeq > 60 {
				exceed++
			}
		}
	}
	want := 10 * math.Log10(e/n)
	if sum.Records != 240 || math.Abs(*sum.LAeqDB-want) > 1e-9 || *sum.LAFmaxDB != mx || sum.ExceedanceS != exceed ||
		math.Abs(*sum.MarginDB-(want-60)) > 1e-9 || sum.CoveragePct != 100 || sum.Gaps != 0 || sum.MarginS != 600 {
		t.Errorf("summary %+v (want LAeq %.3f, LAFmax %.1f, exceedance %.0f)", sum, want, mx, exceed)
	}
	if *sum.L10DB < *sum.L90DB || *sum.L90DB < 66 || *sum.L10DB > 70.5 {
		t.Errorf("L10 %.1f L90 %.1f", *sum.L10DB, *sum.L90DB)
	}

	files := unzip(t, b)
	root := evidence.BagName(p.AlertID) + "/"
	csv := string(files[root+"data/readings.csv"])
	if lines := strings.Count(csv, "\n"); lines != len(p.Records)+1 {
		t.Errorf("readings.csv has %d lines, want %d", lines, len(p.Records)+1)
	}
	info := string(files[root+"bag-info.txt"])
	for _, s := range []string{"External-Identifier: " + p.AlertID, "Sossego-Code-Version: " + p.Finding.CodeVersion,
		"Custody-Event: 2026-03-09T13:00:00Z | u-ana (fiscal) | issue", "Sossego-Gateway-Signatures: 144 lotes: 144 verificados, 0 falharam",
		"Bagging-Date: 2026-03-09", "Sossego-Margin: 10m0s", "Sossego-Signing-Key-Fingerprint: " + evidence.Fingerprint(pubOf(key)),
		"Sossego-Calibration: certificado RBC-1234/2026, Lab Acústica, 2026-01-10, validade 2027-01-10"} {
		if !strings.Contains(info, s) {
			t.Errorf("bag-info lacks %q:\n%s", s, info)
		}
	}
	if strings.Contains(info, "Previous-Bag") {
		t.Error("a first bag names a previous one")
	}
	// The act byte for byte, the constatação, env, the keys, the method.
	if !bytes.Equal(files[root+"data/acts/lapa-NP-2026-000001.pdf"], p.Acts[0].PDF) || string(files[root+"data/constatacoes/c-1.json"]) != string(p.Constatacoes[0].JSON) {
		t.Error("act or constatação not carried byte for byte")
	}
	if files[root+"data/notice.pdf"] != nil {
		t.Error("a draft rendering beside a stored act")
	}
	if !strings.Contains(string(files[root+"data/env.csv"]), ",24.50,61.20,,") {
		t.Errorf("env.csv: %s", files[root+"data/env.csv"])
	}
	var gk []struct {
		Fingerprint string    `json:"fingerprint"`
		File        string    `json:"file"`
		ValidUntil  time.Time `json:"valid_until"`
	}
	if err := json.Unmarshal(files[root+"data/keys/gateways.json"], &gk); err != nil || len(gk) != 2 || gk[0].Fingerprint != evidence.Fingerprint(pubOf(gatewayOld)) ||
		gk[1].File != "data/keys/lapa-centro-01-2.pem" || files[root+gk[1].File] == nil {
		t.Errorf("gateways.json %+v %v", gk, err)
	}
	// The signed field checks travel byte for byte, with their verdicts.
	ct := string(files[root+"data/checks.txt"])
	for i, c := range p.Meter.Checks {
		if want := base64.StdEncoding.EncodeToString(c.Sig) + " " + string(c.Body) + "\n"; !strings.Contains(ct, want) {
			t.Errorf("checks.txt lacks check %d's signed bytes:\n%s", i, ct)
		}
	}
	for _, s := range []string{`"check":{"t":`, `"reference_db":94`, `"verified_now":true`, `"key":"data/keys/lapa-centro-01-1.pem"`, `"key":"data/keys/lapa-centro-01-2.pem"`} {
		if !strings.Contains(string(files[root+"data/checks.ndjson"]), s) {
			t.Errorf("checks.ndjson lacks %s:\n%s", s, files[root+"data/checks.ndjson"])
		}
	}
	if !strings.Contains(string(files[root+"data/device.json"]), `"signed_field_checks"`) || !strings.Contains(info, "Sossego-Field-Checks: 2 verificações de campo assinadas: 2 verificadas") ||
		!strings.Contains(string(files[root+"data/LEIAME.txt"]), "checks.txt") || !strings.Contains(string(files[root+"VERIFICAR.txt"]), "data/checks.txt") {
		t.Error("device.json, bag-info.txt, LEIAME.txt or VERIFICAR.txt do not account for the signed field checks")
	}
	for _, s := range []string{"Descritor", "ponderação A", "F (rápida, 125 ms)", "Ruído residual", "NBR 10151", "classe 1 ou 2", "10m0s antes e depois", "data/checks.txt"} {
		if !strings.Contains(string(files[root+"data/METODO.txt"]), s) {
			t.Errorf("METODO.txt lacks %q", s)
		}
	}
	v := string(files[root+"VERIFICAR.txt"])
	for _, s := range []string{"sossego evidence verify", "sha256sum -c manifest-sha256.txt", "openssl pkeyutl -verify", "sh data/verificar-lotes.sh", evidence.Fingerprint(pubOf(key))} {
		if !strings.Contains(v, s) {
			t.Errorf("VERIFICAR.txt lacks %q", s)
		}
	}
	if n := strings.Count(string(files[root+"data/verificar-lotes.sh"]), "\n"); n > 20 {
		t.Errorf("verificar-lotes.sh has %d lines", n)
	}
}

func TestExportReportsBrokenGatewaySignature(t *testing.T) {
	key := testKey(1)
	p := lapaPackage(2 * time.Minute)
	b, _ := export(t, p, key)
	rep := verify(b, pubOf(key))
	if rep.OK || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "lote 1003 do gateway lapa-centro-01: a assinatura ed25519 não confere com a chave data/keys/lapa-centro-01-1.pem") {
		t.Fatalf("%+v", rep.Problems)
	}
	info := string(unzip(t, b)[evidence.BagName(p.AlertID)+"/bag-info.txt"])
	if !strings.Contains(info, "1 falharam") {
		t.Errorf("bag-info: %s", info)
	}
}

func TestLaterExportNamesEarlier(t *testing.T) {
	key := testKey(1)
	first, _ := export(t, goodPackage(time.Minute), key)
	s := sha256.Sum256(first)
	p := goodPackage(time.Minute)
	p.Acts = append(p.Acts, evidence.Act{ID: "lapa-AI-2026-000001", Kind: "auto_de_infracao", IssuedAt: p.Created.Add(48 * time.Hour), PDF: []byte("%PDF auto")})
	p.Created = p.Created.Add(48 * time.Hour)
	p.Previous = &evidence.Previous{SHA256: hex.EncodeToString(s[:]), Date: time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC)}
	second, _ := export(t, p, key)
	if bytes.Equal(first, second) {
		t.Fatal("same bytes after a new act")
	}
	info := string(unzip(t, second)[evidence.BagName(p.AlertID)+"/bag-info.txt"])
	if !strings.Contains(info, "Sossego-Previous-Bag-SHA256: "+hex.EncodeToString(s[:])) || !strings.Contains(info, "Bagging-Date: 2026-03-11") {
		t.Errorf("bag-info:\n%s", info)
	}
	if rep := verify(second, pubOf(key)); !rep.OK {
		t.Error(rep.Problems)
	}
}

func TestExportRefusesAlteredStoredAct(t *testing.T) {
	p := goodPackage(time.Minute)
	p.Acts[0].PDF = append(bytes.Clone(p.Acts[0].PDF), ' ')
	var buf bytes.Buffer
	if _, err := evidence.Export(&buf, p, testKey(1), nil); err == nil || !strings.Contains(err.Error(), "não confere com o SHA-256 registrado") {
		t.Fatalf("err %v", err)
	}
}

func TestStreamedEqualsSlice(t *testing.T) {
	key := testKey(1)
	p := goodPackage(time.Minute)
	want, _ := export(t, p, key)
	q := goodPackage(time.Minute)
	recs, batches := q.Records, q.Batches
	q.Records, q.Batches = nil, nil
	q.Stream = func(yield func(evidence.Record) bool) error {
		for _, r := range recs {
			if !yield(r) {
				break
			}
		}
		return nil
	}
	q.LoadBatches = func(keys []evidence.BatchKey, yield func(evidence.Batch) error) error {
		by := map[evidence.BatchKey]evidence.Batch{}
		for _, b := range batches {
			by[evidence.BatchKey{Gateway: b.Gateway, Seq: b.Seq}] = b
		}
		for _, k := range keys {
			if b, ok := by[k]; ok {
				if err := yield(b); err != nil {
					return err
				}
			}
		}
		return nil
	}
	got, _ := export(t, q, key)
	if !bytes.Equal(got, want) {
		t.Error("streamed export differs from the one from slices")
	}
}

func unzip(t testing.TB, b []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	return out
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	k1, err := evidence.LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := evidence.LoadOrCreateKey(dir)
	if err != nil || !k1.Equal(k2) {
		t.Fatalf("second load: %v", err)
	}
	p := dir + "/" + evidence.KeyFile
	if st, _ := statMode(p); st != 0o600 {
		t.Fatalf("mode %o", st)
	}
	chmod(t, p, 0o644)
	if _, err := evidence.LoadOrCreateKey(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable key accepted: %v", err)
	}
}

func TestKeyRotation(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	kr, err := evidence.LoadOrCreateKeyRing(dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	p := goodPackage(time.Minute)
	old, _ := export(t, p, kr.Signer)
	t1 := t0.Add(24 * time.Hour)
	kr2, err := evidence.RotateKey(dir, t1, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if kr2.Fingerprint() == kr.Fingerprint() || len(kr2.History) != 2 || !kr2.History[0].ValidUntil.Equal(t1) || !kr2.History[1].ValidFrom.Equal(t1) {
		t.Fatalf("history %+v", kr2.History)
	}
	loaded, err := evidence.LoadOrCreateKeyRing(dir, t1.Add(time.Hour))
	if err != nil || !loaded.Signer.Equal(kr2.Signer) || len(loaded.History) != 2 {
		t.Fatalf("reload %v %+v", err, loaded)
	}
	hist, err := evidence.LoadKeyHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	trust := evidence.Trust{Keys: hist}
	if rep := evidence.VerifyZip(bytes.NewReader(old), int64(len(old)), trust); !rep.OK || !strings.Contains(rep.TrustNote, "substituída em") {
		t.Fatalf("bag by the retired key: %+v", rep)
	}
	// Revoking: the compromised key's bags fail.
	kr3, err := evidence.RotateKey(dir, t1.Add(48*time.Hour), true, "chave copiada por terceiros")
	if err != nil {
		t.Fatal(err)
	}
	signedBy2, _ := export(t, p, kr2.Signer)
	rep := evidence.VerifyZip(bytes.NewReader(signedBy2), int64(len(signedBy2)), evidence.Trust{Keys: kr3.History})
	if rep.OK || !strings.Contains(strings.Join(rep.Problems, "\n"), "REVOGADA") || !strings.Contains(strings.Join(rep.Problems, "\n"), "chave copiada por terceiros") {
		t.Fatalf("revoked key: %+v", rep.Problems)
	}
	if rep := evidence.VerifyZip(bytes.NewReader(old), int64(len(old)), evidence.Trust{Keys: kr3.History}); !rep.OK {
		t.Fatalf("the first key was retired, not revoked: %v", rep.Problems)
	}
	// The history as the API publishes it parses back.
	b, _ := json.Marshal(map[string]any{"public_key": kr3.Current().PublicKey, "fingerprint": kr3.Fingerprint(), "history": kr3.History})
	if h, err := evidence.ParseKeyHistory(b); err != nil || len(h) != 3 {
		t.Fatalf("parse %v %d", err, len(h))
	}
	if _, err := evidence.ParseKeyHistory([]byte(`[{"public_key":"` + kr3.Current().PublicKey + `","fingerprint":"SHA256:00"}]`)); err == nil {
		t.Error("a fingerprint that does not match its key accepted")
	}
}

func TestFingerprint(t *testing.T) {
	pub := pubOf(testKey(1))
	fp := evidence.Fingerprint(pub)
	h := sha256.Sum256(pub)
	if fp != "SHA256:"+hex.EncodeToString(h[:]) {
		t.Fatal(fp)
	}
	for _, in := range []string{fp, strings.ToUpper(fp), evidence.GroupedFingerprint(fp), strings.TrimPrefix(fp, "SHA256:")} {
		if got, err := evidence.NormalizeFingerprint(in); err != nil || got != fp {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, in := range []string{"", "SHA256:abcd", fp[:len(fp)-1] + "g", fp + "00"} {
		if _, err := evidence.NormalizeFingerprint(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
