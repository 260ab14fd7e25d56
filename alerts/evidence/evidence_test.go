package evidence_test

import (
	"archive/zip"
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice/noticetest"
)

var set = noticetest.Codes()

func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

// lapaPackage is the Lapa night exceedance with 10 minutes of margin on
// each side, batches of 10 records signed by the gateway (one batch with a
// broken signature), a notice and a chart.
func lapaPackage(margin time.Duration) *evidence.Package {
	sc := noticetest.Lapa(set)
	f := sc.Finding
	gw := testKey(7)
	from, to := f.WindowStart.Add(-margin), f.WindowEnd.Add(margin)
	var recs []evidence.Record
	var batches []evidence.Batch
	for i, r := range sc.Readings(from, to) {
		seq := uint64(1000 + i/10)
		recs = append(recs, evidence.Record{T: r.T, DurMs: 1000, LAeq: r.LAeq, LAFmax: r.LAFmax, LAFmin: r.LAFmin,
			Gateway: sc.Gateway, Seq: seq, Grade: "class2", Synced: i%500 != 0})
		if i%10 == 0 {
			body := []byte(`{"v":1,"kind":"levels","gateway":"` + sc.Gateway + `","seq":` + itoa(seq) + `,"clock":{"synced":true,"offset_ms":1.5,"source":"ntp"},"device":{"model":"NSRT_mk4","serial":"NSRT-0001","grade":"class2"}}`)
			sig := ed25519.Sign(gw, body)
			if seq == 1003 {
				sig[0] ^= 1
			}
			batches = append(batches, evidence.Batch{Gateway: sc.Gateway, Seq: seq, Body: body, Sig: sig, VerifiedAtIngest: seq != 1003,
				PublicKey: gw.Public().(ed25519.PublicKey)})
		}
	}
	return &evidence.Package{AlertID: f.AlertID, Organization: "Prefeitura Municipal de Lapa", CodeTitle: sc.Code.Title(), Finding: f,
		Party: sc.Party, Site: sc.Site, From: from, To: to, Records: recs, Batches: batches,
		NoticePDF: []byte("%PDF-1.3 notificação preliminar de teste\n%%EOF\n"), NoticeID: "lapa-NP-2026-000001",
		Chart: []byte("\x89PNG\r\n\x1a\n fake chart"), Custody: []evidence.Custody{
			{At: time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC), Actor: "u-ana", Role: "fiscal", Action: "issue", Detail: "lapa-NP-2026-000001"}},
		Software: "sossego test", Created: time.Date(2026, 3, 12, 11, 0, 0, 0, time.UTC)}
}

func itoa(v uint64) string { b, _ := json.Marshal(v); return string(b) }

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

func TestExportVerifies(t *testing.T) {
	key := testKey(1)
	p := lapaPackage(10 * time.Minute)
	b, sum := export(t, p, key)
	rep := verify(b, key.Public().(ed25519.PublicKey))
	if !rep.OK || !rep.Trusted {
		t.Fatalf("fresh bag does not verify: %+v", rep)
	}
	if rep.AlertID != p.AlertID || rep.PayloadFiles != 9 {
		t.Errorf("report %+v", rep)
	}
	again, _ := export(t, lapaPackage(10*time.Minute), key)
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
		math.Abs(*sum.MarginDB-(want-60)) > 1e-9 || sum.CoveragePct != 100 || sum.Gaps != 0 {
		t.Errorf("summary %+v (want LAeq %.3f, LAFmax %.1f, exceedance %.0f)", sum, want, mx, exceed)
	}
	if *sum.L10DB < *sum.L90DB || *sum.L90DB < 66 || *sum.L10DB > 70.5 {
		t.Errorf("L10 %.1f L90 %.1f", *sum.L10DB, *sum.L90DB)
	}

	// Contents: every record, the signatures and whether each verified.
	files := unzip(t, b)
	root := evidence.BagName(p.AlertID) + "/"
	csv := string(files[root+"data/readings.csv"])
	if lines := strings.Count(csv, "\n"); lines != len(p.Records)+1 {
		t.Errorf("readings.csv has %d lines, want %d", lines, len(p.Records)+1)
	}
	bl := strings.Split(strings.TrimSpace(string(files[root+"data/batches.ndjson"])), "\n")
	bad := 0
	for _, l := range bl {
		var r struct {
			Seq         uint64 `json:"seq"`
			VerifiedNow *bool  `json:"verified_now"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.VerifiedNow == nil || (!*r.VerifiedNow) != (r.Seq == 1003) {
			t.Errorf("batch %d verified_now %v", r.Seq, r.VerifiedNow)
		}
		if !*r.VerifiedNow {
			bad++
		}
	}
	info := string(files[root+"bag-info.txt"])
	for _, s := range []string{"External-Identifier: " + p.AlertID, "Sossego-Code-Version: " + p.Finding.CodeVersion,
		"Custody-Event: 2026-03-09T13:00:00Z | u-ana (fiscal) | issue", "Sossego-Gateway-Signatures: 144 lotes: 143 verificados, 1 falharam"} {
		if !strings.Contains(info, s) {
			t.Errorf("bag-info lacks %q", s)
		}
	}
	if bad != 1 || len(bl) != 144 {
		t.Errorf("batches %d, bad %d", len(bl), bad)
	}
}

func unzip(t *testing.T, b []byte) map[string][]byte {
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

// rezip rewrites the bag with edit applied to the members (deterministic).
func rezip(t *testing.T, b []byte, edit func(name string, data []byte) (string, []byte, bool)) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		name, data, keep := edit(f.Name, data)
		if !keep {
			continue
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: f.Modified})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	zw.Close()
	return buf.Bytes()
}

func TestTamperingIsDetected(t *testing.T) {
	key := testKey(1)
	p := lapaPackage(2 * time.Minute)
	b, _ := export(t, p, key)
	root := evidence.BagName(p.AlertID) + "/"
	var members []string
	for name := range unzip(t, b) {
		members = append(members, strings.TrimPrefix(name, root))
	}
	if len(members) != 14 {
		t.Fatalf("%d members: %v", len(members), members)
	}
	for _, m := range members {
		for _, where := range []string{"first", "middle", "last"} {
			t.Run("flip/"+m+"/"+where, func(t *testing.T) {
				bad := rezip(t, b, func(name string, data []byte) (string, []byte, bool) {
					if name == root+m && len(data) > 0 {
						data = bytes.Clone(data)
						i := map[string]int{"first": 0, "middle": len(data) / 2, "last": len(data) - 1}[where]
						data[i] ^= 0x01
					}
					return name, data, true
				})
				rep := verify(bad, nil)
				if rep.OK {
					t.Fatalf("flipped byte in %s not detected", m)
				}
				all := strings.Join(rep.Problems, "\n")
				if !strings.Contains(all, m) && !strings.Contains(all, "assinatura") {
					t.Errorf("problem does not name %s: %s", m, all)
				}
			})
		}
		t.Run("remove/"+m, func(t *testing.T) {
			bad := rezip(t, b, func(name string, data []byte) (string, []byte, bool) { return name, data, name != root+m })
			rep := verify(bad, nil)
			if rep.OK || !strings.Contains(strings.Join(rep.Problems, "\n"), m) {
				t.Fatalf("removing %s: %+v", m, rep.Problems)
			}
		})
	}
	for _, extra := range []string{"data/extra.txt", "extra.txt", "data/sub/x.csv"} {
		t.Run("add/"+extra, func(t *testing.T) {
			bad := rezip(t, b, func(name string, data []byte) (string, []byte, bool) { return name, data, true })
			bad = appendMember(t, bad, root+extra, []byte("inserido depois"))
			rep := verify(bad, nil)
			if rep.OK || !strings.Contains(strings.Join(rep.Problems, "\n"), extra) {
				t.Fatalf("adding %s: %+v", extra, rep.Problems)
			}
		})
	}
	t.Run("outside the bag", func(t *testing.T) {
		rep := verify(appendMember(t, b, "outro/arquivo.txt", []byte("x")), nil)
		if rep.OK || !strings.Contains(strings.Join(rep.Problems, "\n"), "fora do diretório") {
			t.Fatalf("%+v", rep.Problems)
		}
	})
	t.Run("re-signed by another key", func(t *testing.T) {
		other, _ := export(t, lapaPackage(2*time.Minute), testKey(9))
		rep := verify(other, key.Public().(ed25519.PublicKey))
		if rep.OK || !strings.Contains(strings.Join(rep.Problems, "\n"), "não é a chave do serviço") {
			t.Fatalf("%+v", rep.Problems)
		}
		if !verify(other, nil).OK {
			t.Fatal("without a trusted key the self-consistent bag verifies")
		}
	})
	t.Run("truncated", func(t *testing.T) {
		rep := verify(b[:len(b)/2], nil)
		if rep.OK || !strings.Contains(rep.Problems[0], "não é um zip válido") {
			t.Fatalf("%+v", rep.Problems)
		}
	})
	// A flipped byte anywhere in the compressed stream of a member is caught
	// too (CRC or inflate error, or a hash mismatch).
	t.Run("raw bytes", func(t *testing.T) {
		zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		for _, f := range zr.File {
			off, err := f.DataOffset()
			if err != nil || f.CompressedSize64 == 0 {
				continue
			}
			for _, d := range []int64{0, int64(f.CompressedSize64) / 2, int64(f.CompressedSize64) - 1} {
				bad := bytes.Clone(b)
				bad[off+d] ^= 0x40
				if verify(bad, nil).OK {
					t.Errorf("raw flip at %s+%d not detected", f.Name, d)
				}
			}
		}
	})
}

func appendMember(t *testing.T, b []byte, name string, data []byte) []byte {
	t.Helper()
	zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	w, _ := zw.Create(name)
	w.Write(data)
	zw.Close()
	return buf.Bytes()
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

func FuzzVerify(f *testing.F) {
	key := testKey(1)
	b, _ := export(f, lapaPackage(30*time.Second), key)
	f.Add(b)
	f.Add([]byte("PK\x03\x04"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := evidence.Verify(bytes.NewReader(data), int64(len(data)), key.Public().(ed25519.PublicKey))
		if rep.OK && (!rep.Trusted || rep.KeyID == "") {
			t.Fatalf("OK without a trusted signature: %+v", rep)
		}
	})
}
