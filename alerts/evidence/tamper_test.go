package evidence_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// bagitCheck is an RFC 8493 validator written from the RFC, independent of
// the product's verifier: bagit.txt (§2.1.1), the payload manifest
// (§2.1.3: every file under data/ listed, each digest right, nothing
// listed missing), the tag manifest (§2.2.1), bag-info.txt (§2.2.2:
// "Label: value" lines, continuation lines starting with white space) and
// its Payload-Oxum (octet count and stream count of the payload).
func bagitCheck(files map[string][]byte) []string {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	bagit := strings.Split(strings.TrimRight(string(files["bagit.txt"]), "\n"), "\n")
	if len(bagit) != 2 || !regexp.MustCompile(`^BagIt-Version: [0-9]+\.[0-9]+$`).MatchString(bagit[0]) || bagit[1] != "Tag-File-Character-Encoding: UTF-8" {
		bad("bagit.txt: %q", bagit)
	}
	manifest := func(name string, want func(string) bool) {
		listed := map[string]bool{}
		sc := bufio.NewScanner(bytes.NewReader(files[name]))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 2 {
				bad("%s: line %q", name, sc.Text())
				continue
			}
			data, ok := files[f[1]]
			if !ok {
				bad("%s lists missing %s", name, f[1])
				continue
			}
			listed[f[1]] = true
			if s := sha256.Sum256(data); hex.EncodeToString(s[:]) != strings.ToLower(f[0]) {
				bad("%s: digest of %s", name, f[1])
			}
		}
		for n := range files {
			if want(n) && !listed[n] {
				bad("%s does not list %s", name, n)
			}
		}
	}
	manifest("manifest-sha256.txt", func(n string) bool { return strings.HasPrefix(n, "data/") })
	manifest("tagmanifest-sha256.txt", func(n string) bool {
		return !strings.HasPrefix(n, "data/") && !strings.HasPrefix(n, "tagmanifest-")
	})
	var oxum []string
	for i, l := range strings.Split(strings.TrimRight(string(files["bag-info.txt"]), "\n"), "\n") {
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(k) == "" {
			bad("bag-info.txt line %d: %q", i+1, l)
		}
		if k == "Payload-Oxum" {
			oxum = append(oxum, strings.TrimSpace(v))
		}
	}
	var octets, streams int
	for n, d := range files {
		if strings.HasPrefix(n, "data/") {
			octets += len(d)
			streams++
		}
	}
	if len(oxum) != 1 || oxum[0] != strconv.Itoa(octets)+"."+strconv.Itoa(streams) {
		bad("Payload-Oxum %v, payload %d.%d", oxum, octets, streams)
	}
	return errs
}

// bagFiles unzips a bag into its files by path inside the bag directory.
func bagFiles(t testing.TB, b []byte) (string, map[string][]byte) {
	t.Helper()
	out := map[string][]byte{}
	root := ""
	for name, d := range unzip(t, b) {
		r, rest, _ := strings.Cut(name, "/")
		root = r
		out[rest] = d
	}
	return root, out
}

// zipBag writes files as a bag zip (in name order).
func zipBag(t testing.TB, root string, files map[string][]byte) []byte {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: root + "/" + n, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[n])
	}
	zw.Close()
	return buf.Bytes()
}

// reseal is the forger's tool: it recomputes the payload manifest, the
// Payload-Oxum, the tag manifest and the signature (with key; nil keeps
// the old signature) after files were edited.
func reseal(files map[string][]byte, key ed25519.PrivateKey) {
	var names []string
	octets := 0
	for n, d := range files {
		if strings.HasPrefix(n, "data/") {
			names = append(names, n)
			octets += len(d)
		}
	}
	sort.Strings(names)
	var m strings.Builder
	for _, n := range names {
		s := sha256.Sum256(files[n])
		fmt.Fprintf(&m, "%s  %s\n", hex.EncodeToString(s[:]), n)
	}
	files["manifest-sha256.txt"] = []byte(m.String())
	info := regexp.MustCompile(`(?m)^Payload-Oxum: .*$`).ReplaceAllString(string(files["bag-info.txt"]), fmt.Sprintf("Payload-Oxum: %d.%d", octets, len(names)))
	if key != nil {
		pub := key.Public().(ed25519.PublicKey)
		info = regexp.MustCompile(`(?m)^Sossego-Signing-Key: .*$`).ReplaceAllString(info, "Sossego-Signing-Key: "+base64.StdEncoding.EncodeToString(pub))
		info = regexp.MustCompile(`(?m)^Sossego-Signing-Key-Fingerprint: .*$`).ReplaceAllString(info, "Sossego-Signing-Key-Fingerprint: "+evidence.Fingerprint(pub))
	}
	files["bag-info.txt"] = []byte(info)
	var tm strings.Builder
	for _, n := range []string{"VERIFICAR.txt", "bag-info.txt", "bagit.txt", "manifest-sha256.txt"} {
		s := sha256.Sum256(files[n])
		fmt.Fprintf(&tm, "%s  %s\n", hex.EncodeToString(s[:]), n)
	}
	files["tagmanifest-sha256.txt"] = []byte(tm.String())
	if key != nil {
		files["tagmanifest-sha256.txt.sig"] = []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(key, files["tagmanifest-sha256.txt"])) + "\n")
	}
}

func clone(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = bytes.Clone(v)
	}
	return out
}

func TestIndependentBagItCheck(t *testing.T) {
	b, _ := export(t, goodPackage(2*time.Minute), testKey(1))
	_, files := bagFiles(t, b)
	if errs := bagitCheck(files); len(errs) > 0 {
		t.Fatalf("the bag fails an RFC 8493 check: %v", errs)
	}
	// The independent check does catch what it must.
	f := clone(files)
	f["data/readings.csv"][100] ^= 1
	if len(bagitCheck(f)) == 0 {
		t.Fatal("independent check misses a changed payload byte")
	}
}

func TestTamperSuite(t *testing.T) {
	service, attacker := testKey(1), testKey(9)
	trusted := pubOf(service)
	b, _ := export(t, goodPackage(20*time.Second), service)
	root, files := bagFiles(t, b)
	if rep := verify(b, trusted); !rep.OK {
		t.Fatal(rep.Problems)
	}
	type tc struct {
		name string
		zip  []byte
		want []string // every one must appear in the problems
	}
	var cases []tc
	edited := func(edit func(map[string][]byte)) []byte {
		f := clone(files)
		edit(f)
		return zipBag(t, root, f)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) < 20 {
		t.Fatalf("only %d files: %v", len(names), names)
	}
	for _, n := range names {
		cases = append(cases,
			tc{"change " + n, edited(func(f map[string][]byte) {
				if len(f[n]) == 0 {
					f[n] = []byte("x")
				} else {
					f[n][len(f[n])/2] ^= 1
				}
			}), []string{}},
			tc{"remove " + n, edited(func(f map[string][]byte) { delete(f, n) }), []string{n}},
			tc{"rename " + n, edited(func(f map[string][]byte) { f[n+".bak"] = f[n]; delete(f, n) }), []string{n}},
		)
	}
	for _, extra := range []string{"data/extra.txt", "extra.txt", "data/sub/x.csv"} {
		cases = append(cases, tc{"add " + extra, edited(func(f map[string][]byte) { f[extra] = []byte("inserido depois") }), []string{extra}})
	}
	// Each manifest edited: a payload file changed and its line in the
	// manifest updated; then the tag manifest updated too.
	cases = append(cases,
		tc{"edit manifest-sha256.txt", edited(func(f map[string][]byte) {
			f["data/summary.json"] = bytes.Replace(f["data/summary.json"], []byte(`"gaps": 0`), []byte(`"gaps": 9`), 1)
			s := sha256.Sum256(f["data/summary.json"])
			f["manifest-sha256.txt"] = regexp.MustCompile(`(?m)^[0-9a-f]{64}  data/summary.json$`).ReplaceAll(f["manifest-sha256.txt"], []byte(hex.EncodeToString(s[:])+"  data/summary.json"))
		}), []string{"manifest-sha256.txt foi alterado"}},
		tc{"edit tagmanifest-sha256.txt", edited(func(f map[string][]byte) {
			f["data/summary.json"] = bytes.Replace(f["data/summary.json"], []byte(`"gaps": 0`), []byte(`"gaps": 9`), 1)
			reseal(f, nil)
		}), []string{"a assinatura ed25519 de tagmanifest-sha256.txt.sig não confere"}},
		tc{"manifest line removed", edited(func(f map[string][]byte) {
			f["manifest-sha256.txt"] = regexp.MustCompile(`(?m)^[0-9a-f]{64}  data/env.csv\n`).ReplaceAll(f["manifest-sha256.txt"], nil)
		}), []string{"data/env.csv não consta de manifest-sha256.txt"}},
		tc{"Payload-Oxum edited", edited(func(f map[string][]byte) {
			f["bag-info.txt"] = regexp.MustCompile(`Payload-Oxum: [0-9]+`).ReplaceAll(f["bag-info.txt"], []byte("Payload-Oxum: 1"))
		}), []string{"bag-info.txt foi alterado"}},
		// Altered readings re-signed by another key: never "íntegro".
		tc{"altered readings re-signed by another key", edited(func(f map[string][]byte) {
			f["data/readings.csv"] = bytes.ReplaceAll(f["data/readings.csv"], []byte(",68."), []byte(",58."))
			reseal(f, attacker)
		}), []string{"não é uma chave confiável do serviço", "data/readings.csv não confere com os lotes assinados"}},
		// Even signed by the service's own key, readings that differ from
		// what the gateways signed fail.
		tc{"altered readings signed by the service key", edited(func(f map[string][]byte) {
			f["data/readings.csv"] = bytes.Replace(f["data/readings.csv"], []byte(",68."), []byte(",58."), 1)
			reseal(f, service)
		}), []string{"data/readings.csv não confere com os lotes assinados pelos gateways em 1 linhas", "difere do lote assinado"}},
		// A batch taken out of batches.txt (the bag re-signed by the
		// service's key): its rows in readings.csv are named.
		tc{"batch removed, its rows left", edited(func(f map[string][]byte) {
			lines := strings.Split(string(f["data/batches.txt"]), "\n")
			f["data/batches.txt"] = []byte(strings.Join(append(lines[:1:1], lines[2:]...), "\n"))
			reseal(f, service)
		}), []string{"o lote 1001 do gateway lapa-centro-01 não está em data/batches.txt"}},
		// A row moved to a second its batch has no record of.
		tc{"row at a second its batch does not have", edited(func(f map[string][]byte) {
			rows := strings.Split(string(f["data/readings.csv"]), "\n")
			fields := strings.Split(rows[1], ",")
			fields[0] = strings.Replace(fields[0], ".000Z", ".500Z", 1)
			rows[1] = strings.Join(fields, ",")
			f["data/readings.csv"] = []byte(strings.Join(rows, "\n"))
			reseal(f, service)
		}), []string{"não tem registro em " + strings.Split(strings.Split(string(files["data/readings.csv"]), "\n")[1], ",")[0][:19] + ".500Z"}},
		// A gateway key swapped for the forger's, the batches re-signed with
		// it and the bag re-signed: untrusted.
		tc{"gateway key swapped and bag re-signed", edited(func(f map[string][]byte) {
			swapGatewayKey(t, f, testKey(66))
			reseal(f, attacker)
		}), []string{"não é uma chave confiável"}},
		// Only the key file swapped (with the service's key): named.
		tc{"gateway key file swapped", edited(func(f map[string][]byte) {
			f["data/keys/lapa-centro-01-1.pem"] = evidence.PublicKeyPEM(pubOf(testKey(66)))
			reseal(f, service)
		}), []string{"data/keys/lapa-centro-01-1.pem não contém a chave do gateway lapa-centro-01"}},
		// gateways.json and the PEM swapped consistently (with the service's
		// key): every batch of that key fails its signature.
		tc{"gateway key swapped", edited(func(f map[string][]byte) {
			swapGatewayKeyOnly(f, testKey(66))
			reseal(f, service)
		}), []string{"lote 1000 do gateway lapa-centro-01: a assinatura ed25519 não confere com a chave data/keys/lapa-centro-01-1.pem"}},
		tc{"batch body edited", edited(func(f map[string][]byte) {
			lines := strings.Split(string(f["data/batches.txt"]), "\n")
			head, sig, body := signedLineParts(t, lines[2])
			body = bytes.Replace(body, []byte(`"dur_ms":1000`), []byte(`"dur_ms":999`), 1)
			lines[2] = signedLineJoin(head, sig, body)
			f["data/batches.txt"] = []byte(strings.Join(lines, "\n"))
			reseal(f, service)
		}), []string{"lote 1002 do gateway lapa-centro-01: a assinatura ed25519 não confere"}},
		// A field check's signed body edited (a better reading), the bag
		// re-signed by the service's own key: the gateway's signature fails.
		tc{"field check body edited", edited(func(f map[string][]byte) {
			lines := strings.Split(string(f["data/checks.txt"]), "\n")
			head, sig, body := signedLineParts(t, lines[1])
			body = bytes.Replace(body, []byte(`"calibrator_serial":"C-77"`), []byte(`"calibrator_serial":"C-78"`), 1)
			lines[1] = signedLineJoin(head, sig, body)
			f["data/checks.txt"] = []byte(strings.Join(lines, "\n"))
			reseal(f, service)
		}), []string{"registro de verificação de campo 5001 do gateway lapa-centro-01: a assinatura ed25519 não confere com a chave data/keys/lapa-centro-01-2.pem"}},
		// A levels batch passed off as a field check: its signature holds,
		// its body is not a check.
		tc{"batch passed off as a field check", edited(func(f map[string][]byte) {
			first, _, _ := strings.Cut(string(f["data/batches.txt"]), "\n")
			f["data/checks.txt"] = []byte(first + "\n")
			reseal(f, service)
		}), []string{"registro de verificação de campo 1000 do gateway lapa-centro-01: o corpo assinado não é uma verificação de campo"}},
		tc{"field check key line pointing at a missing key", edited(func(f map[string][]byte) {
			f["data/checks.txt"] = bytes.Replace(f["data/checks.txt"], []byte(" lapa-centro-01-1.pem "), []byte(" outra.pem "), 1)
			reseal(f, service)
		}), []string{"data/checks.txt, linha 1: registro de verificação de campo 5000 do gateway lapa-centro-01 aponta a chave \"outra.pem\""}},
		// White space inside a body's base64 (which the decoder would
		// skip) makes the field unreadable, not another body.
		tc{"carriage return inside a batch body's base64", edited(func(f map[string][]byte) {
			lines := strings.Split(string(f["data/batches.txt"]), "\n")
			head, sig, body := signedLineParts(t, lines[0])
			b64 := base64.StdEncoding.EncodeToString(body)
			lines[0] = strings.Join(head, " ") + " " + sig + " base64:" + b64[:8] + "\r" + b64[8:]
			f["data/batches.txt"] = []byte(strings.Join(lines, "\n"))
			reseal(f, service)
		}), []string{"data/batches.txt, linha 1: campo ilegível"}},
		// A carriage return after a body written as it is (a line-ending
		// conversion) is part of the body: not the signed bytes.
		tc{"carriage return after a batch body", edited(func(f map[string][]byte) {
			lines := strings.Split(string(f["data/batches.txt"]), "\n")
			lines[1] += "\r"
			f["data/batches.txt"] = []byte(strings.Join(lines, "\n"))
			reseal(f, service)
		}), []string{"lote 1001 do gateway lapa-centro-01: a assinatura ed25519 não confere"}},
		tc{"batch received outside its key's validity", edited(func(f map[string][]byte) {
			lines := strings.Split(string(f["data/batches.txt"]), "\n")
			p := strings.Fields(lines[0])
			p[2] = "2030-01-01T00:00:00Z"
			lines[0] = strings.Join(p, " ")
			f["data/batches.txt"] = []byte(strings.Join(lines, "\n"))
			reseal(f, service)
		}), []string{"fora do período de validade da chave"}},
	)
	// The zip itself.
	for _, n := range []int{1, 21, len(b) / 3, len(b) / 2, len(b) - 23, len(b) - 1} {
		cases = append(cases, tc{fmt.Sprintf("truncated to %d", n), b[:n], []string{"zip"}})
	}
	cases = append(cases,
		tc{"junk prepended", append([]byte("JUNK!JUNK!"), b...), []string{"bytes acrescentados no início"}},
		tc{"junk appended", append(bytes.Clone(b), "JUNK"...), []string{"zip"}},
		tc{"zip prepended", append(zipBag(t, "x", map[string][]byte{"a": []byte("a")}), b...), []string{"zip"}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := verify(c.zip, trusted)
			all := strings.Join(rep.Problems, "\n")
			if rep.OK || rep.Trusted && len(rep.Problems) == 0 {
				t.Fatalf("not detected: %+v", rep)
			}
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems do not say %q:\n%s", w, all)
				}
			}
			if len(c.want) == 0 && !strings.Contains(all, strings.TrimPrefix(c.name, "change ")) && !strings.Contains(all, "assinatura") {
				t.Errorf("problems do not name the file:\n%s", all)
			}
		})
	}
	t.Run("no trusted key", func(t *testing.T) {
		rep := verify(b, nil)
		if rep.OK || !strings.Contains(strings.Join(rep.Problems, "\n"), "nenhuma chave confiável foi informada") {
			t.Fatalf("%+v", rep)
		}
	})
	t.Run("fingerprint pinned", func(t *testing.T) {
		rep := evidence.VerifyZip(bytes.NewReader(b), int64(len(b)), evidence.Trust{Fingerprints: []string{evidence.Fingerprint(trusted)}})
		if !rep.OK || !rep.Trusted {
			t.Fatalf("%+v", rep)
		}
		j := append([]byte("JUNK"), b...)
		if rep := evidence.VerifyZip(bytes.NewReader(j), int64(len(j)), evidence.Trust{Fingerprints: []string{evidence.Fingerprint(trusted)}}); rep.OK {
			t.Fatal("junk prepended accepted with the fingerprint pinned")
		}
	})
}

// swapGatewayKeyOnly replaces the first gateway key in gateways.json and
// its PEM by k's.
func swapGatewayKeyOnly(f map[string][]byte, k ed25519.PrivateKey) {
	old := pubOf(gatewayOld)
	f["data/keys/gateways.json"] = bytes.ReplaceAll(bytes.ReplaceAll(f["data/keys/gateways.json"],
		[]byte(base64.StdEncoding.EncodeToString(old)), []byte(base64.StdEncoding.EncodeToString(pubOf(k)))),
		[]byte(evidence.Fingerprint(old)), []byte(evidence.Fingerprint(pubOf(k))))
	f["data/keys/lapa-centro-01-1.pem"] = evidence.PublicKeyPEM(pubOf(k))
}

// signedLineParts splits a line of batches.txt or checks.txt as Export
// writes it: the four short fields, the signature's text and the body.
func signedLineParts(t testing.TB, line string) (head []string, sig string, body []byte) {
	t.Helper()
	p := strings.SplitN(line, " ", 6)
	if len(p) != 6 {
		t.Fatalf("not a signed line: %q", line)
	}
	body = []byte(p[5])
	if b64, ok := strings.CutPrefix(p[5], "base64:"); ok {
		var err error
		if body, err = base64.StdEncoding.DecodeString(b64); err != nil {
			t.Fatal(err)
		}
	}
	return p[:4], p[4], body
}

// signedLineJoin is a line with a body that stands on it.
func signedLineJoin(head []string, sig string, body []byte) string {
	return strings.Join(head, " ") + " " + sig + " " + string(body)
}

// swapGatewayKey also re-signs that key's batches with k.
func swapGatewayKey(t *testing.T, f map[string][]byte, k ed25519.PrivateKey) {
	swapGatewayKeyOnly(f, k)
	lines := strings.Split(strings.TrimSpace(string(f["data/batches.txt"])), "\n")
	for i, l := range lines {
		head, _, body := signedLineParts(t, l)
		if head[3] != "lapa-centro-01-1.pem" {
			continue
		}
		lines[i] = signedLineJoin(head, base64.StdEncoding.EncodeToString(ed25519.Sign(k, body)), body)
	}
	f["data/batches.txt"] = []byte(strings.Join(lines, "\n") + "\n")
}

func unpack(t *testing.T, b []byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, d := range unzip(t, b) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, d, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestVerifyDirectory(t *testing.T) {
	key := testKey(1)
	b, _ := export(t, goodPackage(2*time.Minute), key)
	dir := unpack(t, b)
	bag := filepath.Join(dir, evidence.BagName(goodPackage(0).AlertID))
	trust := evidence.TrustKey(pubOf(key))
	for _, d := range []string{dir, bag} {
		if rep := evidence.VerifyDir(d, trust); !rep.OK || rep.ReadingsChecked == 0 {
			t.Fatalf("%s: %+v", d, rep)
		}
	}
	for _, c := range []struct {
		name string
		edit func()
		want string
	}{
		{"changed", func() { os.WriteFile(filepath.Join(bag, "data/env.csv"), []byte("x"), 0o644) }, "data/env.csv foi alterado"},
		{"added", func() { os.WriteFile(filepath.Join(bag, "data/novo.txt"), []byte("x"), 0o644) }, "data/novo.txt não consta"},
		{"symlink", func() { os.Symlink("/etc/passwd", filepath.Join(bag, "data/link")) }, "data/link não é um arquivo comum"},
		{"removed", func() { os.Remove(filepath.Join(bag, "data/keys/service.pem")) }, "falta o arquivo data/keys/service.pem"},
		{"not a bag", func() { os.Remove(filepath.Join(bag, "bagit.txt")) }, "não é um pacote BagIt"},
	} {
		c.edit()
		rep := evidence.VerifyDir(bag, trust)
		if rep.OK || !strings.Contains(strings.Join(rep.Problems, "\n"), c.want) {
			t.Errorf("%s: %+v", c.name, rep.Problems)
		}
	}
}

// TestStandardTools runs VERIFICAR.txt's standard-tool commands on an
// unpacked bag: sha256sum -c, openssl for the service signature and the
// fingerprint, and the shipped batch script; then the script on a bag with
// a broken batch signature.
func TestStandardTools(t *testing.T) {
	for _, tool := range []string{"openssl", "sha256sum", "base64", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, tool, "apt-get install openssl coreutils")
		}
	}
	key := testKey(1)
	b, _ := export(t, unusualBodies(t, goodPackage(time.Minute)), key)
	bag := filepath.Join(unpack(t, b), evidence.BagName(goodPackage(0).AlertID))
	if rep := verify(b, pubOf(key)); !rep.OK || rep.BatchesVerified != rep.Batches {
		t.Fatalf("bag with unusual bodies: %+v", rep)
	}
	batches, _ := os.ReadFile(filepath.Join(bag, "data/batches.txt"))
	if !bytes.Contains(batches, []byte(" base64:")) || !bytes.Contains(batches, []byte(`(obra) \"N\" ç"`)) {
		t.Fatalf("batches.txt does not hold both forms of body:\n%.2000s", batches)
	}
	run := func(script string) (string, error) {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = bag
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	sigFile := filepath.Join(t.TempDir(), "assinatura.bin")
	for _, c := range []struct{ script, want string }{
		{"sha256sum -c manifest-sha256.txt && sha256sum -c tagmanifest-sha256.txt", "data/readings.csv: OK"},
		{"openssl pkey -pubin -in data/keys/service.pem -outform DER | tail -c 32 | sha256sum", strings.TrimPrefix(evidence.Fingerprint(pubOf(key)), "SHA256:")},
		{"base64 -d tagmanifest-sha256.txt.sig > " + sigFile + " && openssl pkeyutl -verify -pubin -inkey data/keys/service.pem -rawin -in tagmanifest-sha256.txt -sigfile " + sigFile, "Signature Verified Successfully"},
		{"sh data/verificar-lotes.sh", "38 lotes e verificações conferem; 0 falharam"},
	} {
		out, err := run(c.script)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%s: %v\n%s", c.script, err, out)
		}
	}
	// A broken batch: the script names it and exits non-zero.
	bad, _ := export(t, lapaPackage(time.Minute), key)
	bag = filepath.Join(unpack(t, bad), evidence.BagName(goodPackage(0).AlertID))
	if out, err := run("sh data/verificar-lotes.sh"); err == nil || !strings.Contains(out, "FALHOU: lote 1003 do gateway lapa-centro-01") || !strings.Contains(out, "1 falharam") {
		t.Errorf("broken batch: %v\n%s", err, out)
	}
}

// unusualBodies re-signs two of p's batches with bodies a gateway of
// another make could send: one indented over several lines (which a line
// of batches.txt carries in base64), one with spaces, an escape and
// non-ASCII text in a string (carried as it is).
func unusualBodies(t *testing.T, p *evidence.Package) *evidence.Package {
	t.Helper()
	for i, edit := range []func(*wire.Batch) ([]byte, error){
		func(b *wire.Batch) ([]byte, error) { return json.MarshalIndent(b, "", "  ") },
		func(b *wire.Batch) ([]byte, error) {
			b.Device.Model = `Medidor  simulado (obra) "N" ç`
			return json.Marshal(b)
		},
	} {
		bt := &p.Batches[i]
		var wb wire.Batch
		if err := json.Unmarshal(bt.Body, &wb); err != nil {
			t.Fatal(err)
		}
		body, err := edit(&wb)
		if err != nil {
			t.Fatal(err)
		}
		key := gatewayOld
		if !bt.ReceivedAt.Before(p.GatewayKeys[0].ValidUntil) {
			key = gatewayNew
		}
		bt.Body, bt.Sig = body, ed25519.Sign(key, body)
	}
	return p
}

func FuzzVerify(f *testing.F) {
	key := testKey(1)
	b, _ := export(f, goodPackage(20*time.Second), key)
	f.Add(b)
	// A member named differently in its local header than in the central
	// directory (what a streaming unzip would extract under another name).
	renamed := bytes.Clone(b)
	if i := bytes.Index(renamed, []byte("/data/readings.csv")); i >= 0 {
		renamed[i+len("/data/readings")-1] = 'z'
	}
	f.Add(renamed)
	f.Add([]byte("PK\x03\x04"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := evidence.Verify(bytes.NewReader(data), int64(len(data)), pubOf(key))
		if rep.OK && (!rep.Trusted || rep.KeyFingerprint == "" || !bytes.Equal(data, b)) {
			t.Fatalf("OK for other bytes or without a trusted signature: %+v", rep)
		}
	})
}

// FuzzVerifyDir writes an unpacked bag with one file replaced by the
// fuzzer's bytes (which, by name, from the first byte).
func FuzzVerifyDir(f *testing.F) {
	key := testKey(1)
	b, _ := export(f, goodPackage(20*time.Second), key)
	root, files := bagFiles(f, b)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		f.Add(byte(i), files[n])
	}
	f.Add(byte(0), []byte{})
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		dir := filepath.Join(t.TempDir(), root)
		for _, n := range names {
			p := filepath.Join(dir, filepath.FromSlash(n))
			os.MkdirAll(filepath.Dir(p), 0o755)
			d := files[n]
			if n == names[int(which)%len(names)] {
				d = data
			}
			if err := os.WriteFile(p, d, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		rep := evidence.VerifyDir(dir, evidence.TrustKey(pubOf(key)))
		if rep.OK && !bytes.Equal(data, files[names[int(which)%len(names)]]) {
			t.Fatalf("OK with %s replaced: %+v", names[int(which)%len(names)], rep)
		}
	})
}

// TestEarlierLineForm: a bag whose signed lines are in the earlier form
// (the body in base64 before the signature), as bags exported by earlier
// versions carry them, verifies as the same bag in the current form does.
func TestEarlierLineForm(t *testing.T) {
	service := testKey(1)
	b, _ := export(t, goodPackage(10*time.Minute), service)
	want := verify(b, pubOf(service))
	root, files := bagFiles(t, b)
	for _, name := range []string{"data/batches.txt", "data/checks.txt"} {
		lines := strings.Split(strings.TrimSuffix(string(files[name]), "\n"), "\n")
		for i, l := range lines {
			head, sig, body := signedLineParts(t, l)
			lines[i] = strings.Join(head, " ") + " " + base64.StdEncoding.EncodeToString(body) + " " + sig
		}
		files[name] = []byte(strings.Join(lines, "\n") + "\n")
	}
	reseal(files, service)
	rep := verify(zipBag(t, root, files), pubOf(service))
	if !rep.OK || !want.OK || rep.BatchesVerified != want.BatchesVerified || rep.ReadingsChecked != want.ReadingsChecked ||
		rep.ChecksVerified != want.ChecksVerified || rep.BatchesVerified != rep.Batches {
		t.Fatalf("earlier form: %+v\ncurrent form: %+v", rep, want)
	}
}
