package evidence

import (
	"archive/zip"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Limits that keep Verify safe on hostile input.
const (
	maxMembers  = 20000
	maxTagBytes = 8 << 20   // a tag file larger than this is refused
	maxKeptFile = 256 << 20 // a payload file Verify reads whole (readings, batches) larger than this is refused
	maxTotal    = 16 << 30  // uncompressed bytes read in all
)

// Report is the outcome of Verify. OK is true only when Problems is empty:
// every hash, the Payload-Oxum, every gateway signature and the service's
// signature check, and that signature is by a key the verifier trusts.
type Report struct {
	OK           bool     `json:"ok"`
	Problems     []string `json:"problems"`           // pt-BR, one per finding, exact file names
	Warnings     []string `json:"warnings,omitempty"` // pt-BR: true, but not a failure (unsigned batches)
	Bag          string   `json:"bag"`
	AlertID      string   `json:"alert_id,omitempty"`
	PayloadFiles int      `json:"payload_files"`
	PayloadBytes int64    `json:"payload_bytes"`
	// KeyFingerprint is the fingerprint of the key the bag is signed with,
	// set when that signature checks.
	KeyFingerprint string `json:"key_fingerprint,omitempty"`
	// Trusted is true when that key is one the verifier was given.
	Trusted bool `json:"trusted"`
	// TrustNote says which trusted key it is (current, retired on …).
	TrustNote       string `json:"trust_note,omitempty"`
	Batches         int    `json:"batches"`
	BatchesVerified int    `json:"batches_verified"`
	ReadingsChecked int    `json:"readings_checked"` // readings.csv rows found equal in their signed batch
	// Checks and ChecksVerified count the signed field checks
	// (data/checks.txt) and those whose signature checks.
	Checks         int `json:"field_checks,omitempty"`
	ChecksVerified int `json:"field_checks_verified,omitempty"`
}

// KeyID is the short id of the signing key (display).
func (r *Report) KeyID() string {
	if r.KeyFingerprint == "" {
		return ""
	}
	return "sha256:" + strings.TrimPrefix(r.KeyFingerprint, "SHA256:")[:16]
}

func (r *Report) add(format string, a ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, a...))
}

// Trust is what the verifier trusts: service keys (a key history, as
// GET /api/v1/evidence/key and the data directory give it; a revoked key
// is a failure) and fingerprints (as printed on the notices).
type Trust struct {
	Keys         []PublicKeyInfo
	Fingerprints []string // Fingerprint form
}

// TrustKey trusts one key.
func TrustKey(pub ed25519.PublicKey) Trust {
	if len(pub) != ed25519.PublicKeySize {
		return Trust{}
	}
	return Trust{Keys: []PublicKeyInfo{NewPublicKeyInfo(pub, time.Time{}, time.Time{})}}
}

func (t Trust) empty() bool { return len(t.Keys) == 0 && len(t.Fingerprints) == 0 }

// Verify checks a zipped bag against one trusted key (nil: none, and then
// the bag never verifies: nothing says who signed it).
func Verify(r io.ReaderAt, size int64, trusted ed25519.PublicKey) *Report {
	return VerifyZip(r, size, TrustKey(trusted))
}

// VerifyZip checks a zipped bag: a strict zip (nothing before, between or
// after the members), its structure, every payload and tag hash, the
// Payload-Oxum, every gateway signature with the key in force when the
// batch was received, that readings.csv is what the gateways signed, and
// the service's ed25519 signature over the tag manifest by a trusted key.
// It never panics on malformed input; every problem is reported in pt-BR.
func VerifyZip(r io.ReaderAt, size int64, t Trust) *Report {
	rep := &Report{}
	defer finish(rep)
	cdOff, err := strictZip(r, size)
	if err != nil {
		rep.add("o arquivo não é um zip válido de pacote: %v", err)
		return rep
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		rep.add("o arquivo não é um zip válido (%v): o pacote está corrompido ou incompleto", err)
		return rep
	}
	zr.RegisterDecompressor(zip.Deflate, inflater)
	if len(zr.File) > maxMembers {
		rep.add("o zip tem %d membros; um pacote de evidências tem no máximo %d", len(zr.File), maxMembers)
		return rep
	}
	bag := &bagFiles{rep: rep, files: map[string]opener{}, sizes: map[string]int64{}}
	bag.indexZip(r, zr.File, cdOff)
	bag.check(t)
	return rep
}

// VerifyDir checks an unpacked bag: dir is the bag's directory (with
// bagit.txt) or a directory holding exactly one such directory.
func VerifyDir(dir string, t Trust) *Report {
	rep := &Report{}
	defer finish(rep)
	root, err := bagRoot(dir)
	if err != nil {
		rep.add("%v", err)
		return rep
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		rep.add("não consegui abrir a pasta %s: %v", root, err)
		return rep
	}
	defer rt.Close()
	bag := &bagFiles{rep: rep, files: map[string]opener{}, sizes: map[string]int64{}}
	rep.Bag = filepath.Base(root)
	n := 0
	err = fs.WalkDir(rt.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			rep.add("pasta ilegível em %s: %v", p, err)
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			rep.add("%s não é um arquivo comum (link simbólico ou especial): não faz parte de um pacote", p)
			return nil
		}
		if n++; n > maxMembers {
			return errors.New("arquivos demais")
		}
		name := p
		bag.files[name] = func() (io.ReadCloser, error) { return rt.Open(name) }
		if fi, err := d.Info(); err == nil {
			bag.sizes[name] = min(fi.Size(), maxKeptFile)
		}
		return nil
	})
	if err != nil {
		rep.add("a pasta tem mais de %d arquivos; um pacote de evidências tem menos", maxMembers)
		return rep
	}
	bag.check(t)
	return rep
}

// VerifyPath checks a zip file or an unpacked bag directory.
func VerifyPath(p string, t Trust) (*Report, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return VerifyDir(p, t), nil
	}
	return VerifyZip(f, st.Size(), t), nil
}

func finish(rep *Report) {
	if r := recover(); r != nil { // a bug here must not take the verdict "íntegro" with it
		rep.add("erro interno ao conferir o pacote: %v", r)
	}
	sort.Strings(rep.Problems)
	rep.OK = len(rep.Problems) == 0
	if !rep.OK {
		rep.Trusted = rep.Trusted && rep.KeyFingerprint != ""
	}
}

func bagRoot(dir string) (string, error) {
	if _, err := os.Lstat(filepath.Join(dir, "bagit.txt")); err == nil {
		return dir, nil
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("não consegui ler a pasta %s: %v", dir, err)
	}
	var found []string
	for _, e := range es {
		if e.IsDir() {
			if _, err := os.Lstat(filepath.Join(dir, e.Name(), "bagit.txt")); err == nil {
				found = append(found, e.Name())
			}
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("a pasta %s não é um pacote BagIt: falta bagit.txt (nem ela nem uma única subpasta o tem)", dir)
	}
	return filepath.Join(dir, found[0]), nil
}

// bagFiles is a bag's files by their path inside the bag directory, with
// the bytes read so far (bounded by maxTotal).
type bagFiles struct {
	rep   *Report
	files map[string]opener
	total atomic.Int64
	kept  map[string][]byte // payload files parsed after hashing
	sizes map[string]int64  // declared sizes (zip) or file sizes (directory), to size buffers
	mu    sync.Mutex        // kept and streamed, while payload files are hashed in parallel

	// Set by prepare, before the payload is hashed.
	prepared bool
	gwKeys   map[string]gwKey
	gwKeysOK bool
	stream   *batchStream // checks data/batches.txt as it is read
	streamed bool         // and it was read whole
}

// read returns a file's bytes, refusing more than limit.
func (b *bagFiles) read(name string, limit int64) ([]byte, error) {
	rc, err := b.files[name]()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("maior que %d bytes", limit)
	}
	b.total.Add(int64(len(data)))
	return data, nil
}

// tag returns a tag file's bytes, or nil with the problem recorded.
func (b *bagFiles) tag(name string) []byte {
	if b.files[name] == nil {
		b.rep.add("falta o arquivo %s", name)
		return nil
	}
	data, err := b.read(name, maxTagBytes)
	if err != nil {
		b.rep.add("%s ilegível ou corrompido: %v", name, err)
		return nil
	}
	return data
}

// keptFiles are the payload files Verify reads whole to check what they
// say (signatures, keys, readings), after their hash.
var keptFiles = map[string]bool{"data/batches.txt": true, "data/checks.txt": true, "data/readings.csv": true, "data/keys/gateways.json": true,
	"data/keys/service.json": true, "data/acts/index.json": true}

func (b *bagFiles) check(t Trust) {
	rep := b.rep
	b.kept = map[string][]byte{}
	bagit, info, manifest, tagm, sig := b.tag("bagit.txt"), b.tag("bag-info.txt"), b.tag("manifest-sha256.txt"),
		b.tag("tagmanifest-sha256.txt"), b.tag(sigName)
	if bagit != nil && string(bagit) != bagitTxt {
		rep.add("bagit.txt alterado: deve declarar exatamente BagIt-Version: 1.0 e Tag-File-Character-Encoding: UTF-8")
	}
	fields := parseInfo(info)
	if v := fields["External-Identifier"]; len(v) > 0 {
		rep.AlertID = v[0]
	}
	if tagm != nil {
		b.checkTagManifest(tagm)
	}
	if manifest != nil {
		b.checkPayload(manifest, fields, info != nil)
	}
	if tagm != nil && sig != nil && info != nil {
		b.checkSignature(fields, tagm, sig, t)
	}
	b.checkContents()
}
