package evidence

import (
	"archive/zip"
	"bufio"
	"bytes"
	"cmp"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	kflate "github.com/klauspost/compress/flate"

	"github.com/sossego/sossego/internal/wire/signature"
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

// strictZip refuses anything but a plain zip: the first local header at
// offset 0, members back to back, the central directory right after them
// and the end record last, without a comment. archive/zip alone accepts
// bytes prepended or hidden between members.
func strictZip(r io.ReaderAt, size int64) (int64, error) {
	if size < 22 {
		return 0, errors.New("arquivo curto demais (incompleto)")
	}
	var sig [4]byte
	if _, err := r.ReadAt(sig[:], 0); err != nil || string(sig[:]) != "PK\x03\x04" {
		return 0, errors.New("o arquivo não começa com um membro zip (bytes acrescentados no início?)")
	}
	var end [22]byte
	if _, err := r.ReadAt(end[:], size-22); err != nil {
		return 0, fmt.Errorf("fim do zip ilegível: %v", err)
	}
	if string(end[:4]) != "PK\x05\x06" {
		return 0, errors.New("o arquivo não termina no registro final do zip (truncado, ou bytes acrescentados no fim?)")
	}
	if binary.LittleEndian.Uint16(end[20:]) != 0 {
		return 0, errors.New("o zip tem um comentário; o pacote não tem")
	}
	cdSize, cdOff, endOff := int64(binary.LittleEndian.Uint32(end[12:])), int64(binary.LittleEndian.Uint32(end[16:])), size-22
	if cdOff == 0xFFFFFFFF || cdSize == 0xFFFFFFFF { // zip64
		var loc [20]byte
		if size < 42 {
			return 0, errors.New("zip64 incompleto")
		}
		if _, err := r.ReadAt(loc[:], size-42); err != nil || string(loc[:4]) != "PK\x06\x07" {
			return 0, errors.New("zip64 sem localizador do registro final")
		}
		endOff = int64(binary.LittleEndian.Uint64(loc[8:]))
		var e64 [56]byte
		if endOff < 0 || endOff > size-42-56 {
			return 0, errors.New("zip64 com registro final fora do arquivo")
		}
		if _, err := r.ReadAt(e64[:], endOff); err != nil || string(e64[:4]) != "PK\x06\x06" {
			return 0, errors.New("zip64 com registro final ilegível")
		}
		cdSize, cdOff = int64(binary.LittleEndian.Uint64(e64[40:])), int64(binary.LittleEndian.Uint64(e64[48:]))
		if endOff+56 != size-42 {
			return 0, errors.New("bytes estranhos entre os registros finais do zip64")
		}
	}
	if cdOff < 0 || cdSize < 0 || cdOff+cdSize != endOff {
		return 0, errors.New("o diretório central do zip não está onde o registro final diz (bytes acrescentados no início ou no meio?)")
	}
	return cdOff, nil
}

// contiguous checks the members lie back to back from offset 0 up to the
// central directory, each local header (and data descriptor) saying what
// the central directory says of its member.
func contiguous(r io.ReaderAt, files []*zip.File, cdOff int64) error {
	type m struct {
		f   *zip.File
		off int64
	}
	ms := make([]m, 0, len(files))
	for _, f := range files {
		off, err := f.DataOffset()
		if err != nil {
			return fmt.Errorf("o cabeçalho local de %s está ilegível", f.Name)
		}
		ms = append(ms, m{f, off})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].off < ms[j].off })
	pos := int64(0)
	for _, x := range ms {
		var h [30]byte
		if _, err := r.ReadAt(h[:], pos); err != nil || string(h[:4]) != "PK\x03\x04" {
			return fmt.Errorf("o zip não é contíguo: bytes estranhos antes de %s", x.f.Name)
		}
		data := pos + 30 + int64(binary.LittleEndian.Uint16(h[26:])) + int64(binary.LittleEndian.Uint16(h[28:]))
		if data != x.off {
			return fmt.Errorf("o zip não é contíguo: bytes estranhos antes de %s", x.f.Name)
		}
		if err := localAgrees(r, pos, &h, x.f); err != nil {
			return err
		}
		pos = data + int64(x.f.CompressedSize64)
		if binary.LittleEndian.Uint16(h[6:])&0x8 != 0 { // data descriptor
			n, err := descriptorAgrees(r, pos, x.f)
			if err != nil {
				return err
			}
			pos += n
		}
	}
	if pos != cdOff {
		return errors.New("o zip não é contíguo: bytes estranhos entre o último membro e o diretório central")
	}
	return nil
}

// localAgrees checks that the local header h (at pos) names f as the
// central directory does, with the same flags and method, and, without a
// data descriptor, the same CRC-32 and sizes (with one, they are zero or
// the same). A tool that reads the local headers (a streaming unzip) must
// see the member the verifier checked.
func localAgrees(r io.ReaderAt, pos int64, h *[30]byte, f *zip.File) error {
	le := binary.LittleEndian
	name := make([]byte, le.Uint16(h[26:]))
	if _, err := r.ReadAt(name, pos+30); err != nil || string(name) != f.Name {
		return fmt.Errorf("o cabeçalho local do membro %q o chama de %q", f.Name, name)
	}
	if le.Uint16(h[6:]) != f.Flags || le.Uint16(h[8:]) != f.Method {
		return fmt.Errorf("o cabeçalho local de %s difere do diretório central (opções ou método de compressão)", f.Name)
	}
	crc, csize, usize := le.Uint32(h[14:]), uint64(le.Uint32(h[18:])), uint64(le.Uint32(h[22:]))
	if csize == 0xFFFFFFFF || usize == 0xFFFFFFFF {
		extra := make([]byte, le.Uint16(h[28:]))
		if _, err := r.ReadAt(extra, pos+30+int64(len(name))); err != nil {
			return fmt.Errorf("o cabeçalho local de %s está ilegível", f.Name)
		}
		usize, csize = zip64Sizes(extra, usize, csize)
	}
	if f.Flags&0x8 != 0 && crc == 0 && csize == 0 && usize == 0 {
		return nil
	}
	if crc != f.CRC32 || csize != f.CompressedSize64 || usize != f.UncompressedSize64 {
		return fmt.Errorf("o cabeçalho local de %s difere do diretório central (CRC-32 ou tamanhos)", f.Name)
	}
	return nil
}

// zip64Sizes reads the sizes a zip64 extra field gives for the ones a
// local header leaves at 0xFFFFFFFF (uncompressed first, then compressed).
func zip64Sizes(extra []byte, usize, csize uint64) (uint64, uint64) {
	le := binary.LittleEndian
	for len(extra) >= 4 {
		id, n := le.Uint16(extra), int(le.Uint16(extra[2:]))
		if n > len(extra)-4 {
			break
		}
		body := extra[4 : 4+n]
		if id == 0x0001 {
			for _, v := range []*uint64{&usize, &csize} {
				if *v == 0xFFFFFFFF && len(body) >= 8 {
					*v, body = le.Uint64(body), body[8:]
				}
			}
			break
		}
		extra = extra[4+n:]
	}
	return usize, csize
}

// descriptorAgrees checks the data descriptor at pos (after f's data) has
// the central directory's CRC-32 and sizes, and returns its length.
func descriptorAgrees(r io.ReaderAt, pos int64, f *zip.File) (int64, error) {
	le := binary.LittleEndian
	var d [24]byte
	n, _ := r.ReadAt(d[:], pos)
	b, start := d[:n], int64(0)
	if len(b) >= 4 && string(b[:4]) == "PK\x07\x08" {
		b, start = b[4:], 4
	}
	wide := f.CompressedSize64 >= 0xFFFFFFFF || f.UncompressedSize64 >= 0xFFFFFFFF
	var crc uint32
	var csize, usize uint64
	switch {
	case wide && len(b) >= 20:
		crc, csize, usize = le.Uint32(b), le.Uint64(b[4:]), le.Uint64(b[12:])
	case !wide && len(b) >= 12:
		crc, csize, usize = le.Uint32(b), uint64(le.Uint32(b[4:])), uint64(le.Uint32(b[8:]))
	default:
		return 0, fmt.Errorf("o descritor de dados de %s está incompleto", f.Name)
	}
	if crc != f.CRC32 || csize != f.CompressedSize64 || usize != f.UncompressedSize64 {
		return 0, fmt.Errorf("o descritor de dados de %s difere do diretório central (CRC-32 ou tamanhos)", f.Name)
	}
	if wide {
		return start + 20, nil
	}
	return start + 12, nil
}

type opener func() (io.ReadCloser, error)

// inflater reads a deflated zip member with klauspost/compress's inflater
// (about twice as fast as compress/flate's, the same format).
func inflater(r io.Reader) io.ReadCloser { return kflate.NewReader(r) }

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

// indexZip takes the zip's members: one top directory (the bag's name),
// safe relative names, no duplicates, back to back.
func (b *bagFiles) indexZip(r io.ReaderAt, members []*zip.File, cdOff int64) {
	root := ""
	for _, f := range members {
		name := f.Name
		if strings.HasSuffix(name, "/") {
			continue
		}
		if strings.Contains(name, "\\") || strings.HasPrefix(name, "/") || path.Clean(name) != name || strings.Contains(name, "..") {
			b.rep.add("nome de arquivo inseguro no zip: %q", name)
			continue
		}
		top, rest, ok := strings.Cut(name, "/")
		if !ok || rest == "" {
			b.rep.add("arquivo %q fora do diretório do pacote", name)
			continue
		}
		if root == "" {
			root = top
		} else if top != root {
			b.rep.add("arquivo %q fora do diretório do pacote %q", name, root)
			continue
		}
		if _, dup := b.files[rest]; dup {
			b.rep.add("arquivo %q aparece duas vezes no zip", rest)
			continue
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			b.rep.add("%s é um link simbólico no zip: não faz parte de um pacote", rest)
			continue
		}
		b.files[rest] = f.Open
		b.sizes[rest] = int64(min(f.UncompressedSize64, maxKeptFile))
	}
	b.rep.Bag = root
	if err := contiguous(r, members, cdOff); err != nil {
		b.rep.add("%v", err)
	}
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

// checkTagManifest: every tag file except the signature is listed, each
// hash right.
func (b *bagFiles) checkTagManifest(tagm []byte) {
	isListedTag := func(name string) bool {
		return !strings.HasPrefix(name, "data/") && name != sigName && name != "tagmanifest-sha256.txt"
	}
	listed := checkManifest(b.rep, "tagmanifest-sha256.txt", tagm, isListedTag, b.files, func(name string) (string, error) {
		d, err := b.read(name, maxTagBytes)
		if err != nil {
			return "", err
		}
		s := sha256.Sum256(d)
		return hex.EncodeToString(s[:]), nil
	})
	for name := range b.files {
		if isListedTag(name) && !listed[name] {
			b.rep.add("arquivo de controle %s não consta de tagmanifest-sha256.txt (arquivo acrescentado)", name)
		}
	}
	for _, need := range []string{"bag-info.txt", "bagit.txt", "manifest-sha256.txt", verificarTxt} {
		if b.files[need] != nil && !listed[need] {
			return // reported above
		}
	}
}

// checkPayload: every data/ file is listed, each hash right, nothing else
// in the bag, and Payload-Oxum matches what was read. The gateway batches
// are checked while the payload is still being read (see batchStream).
func (b *bagFiles) checkPayload(manifest []byte, fields map[string][]string, haveInfo bool) {
	var octets atomic.Int64
	listed := b.checkManifestParallel("manifest-sha256.txt", manifest, func(name string) bool { return strings.HasPrefix(name, "data/") },
		b.prepare, func(name string) (string, error) {
			c, sum, err := b.hashPayload(name)
			octets.Add(c)
			return sum, err
		})
	for name := range b.files {
		if strings.HasPrefix(name, "data/") && !listed[name] {
			b.rep.add("arquivo %s não consta de manifest-sha256.txt (arquivo acrescentado)", name)
		}
		if !strings.HasPrefix(name, "data/") && !isTag(name) {
			b.rep.add("arquivo %s não faz parte do pacote (arquivo acrescentado)", name)
		}
	}
	n := octets.Load()
	b.rep.PayloadFiles, b.rep.PayloadBytes = len(listed), n
	if ox := fields["Payload-Oxum"]; len(ox) == 1 {
		if want := fmt.Sprintf("%d.%d", n, len(listed)); ox[0] != want {
			b.rep.add("Payload-Oxum em bag-info.txt diz %s, mas o conteúdo tem %s (bytes.arquivos)", ox[0], want)
		}
	} else if haveInfo {
		b.rep.add("bag-info.txt sem Payload-Oxum")
	}
}

// checkSignature checks the signature over the tag manifest with the key
// the bag names, and that the key is one the verifier trusts.
func (b *bagFiles) checkSignature(fields map[string][]string, tagm, sig []byte, t Trust) {
	rep := b.rep
	keys := fields["Sossego-Signing-Key"]
	var pub ed25519.PublicKey
	if len(keys) == 1 {
		if k, err := base64.StdEncoding.DecodeString(keys[0]); err == nil && len(k) == ed25519.PublicKeySize {
			pub = k
		}
	}
	s, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sig)))
	switch {
	case pub == nil:
		rep.add("bag-info.txt não traz uma chave pública ed25519 válida em Sossego-Signing-Key")
		return
	case err != nil || len(s) != ed25519.SignatureSize || string(sig) != base64.StdEncoding.EncodeToString(s)+"\n":
		rep.add("%s não contém uma assinatura ed25519 válida (base64)", sigName)
		return
	case !ed25519.Verify(pub, tagm, s):
		rep.add("a assinatura ed25519 de %s não confere com tagmanifest-sha256.txt: o pacote foi alterado depois de assinado", sigName)
		return
	}
	fp := Fingerprint(pub)
	rep.KeyFingerprint = fp
	if v := fields["Sossego-Signing-Key-Fingerprint"]; len(v) != 1 || v[0] != fp {
		rep.add("bag-info.txt: Sossego-Signing-Key-Fingerprint não corresponde à chave que assinou (%s)", fp)
	}
	if t.empty() {
		rep.add("a assinatura confere com a chave que vem no próprio pacote (%s), mas nenhuma chave confiável foi informada: "+
			"sem comparar com a impressão digital impressa na notificação (--impressao) ou com a chave publicada pelo serviço "+
			"(--chave-publica, GET /api/v1/evidence/key), não se sabe QUEM assinou", fp)
		return
	}
	for _, k := range t.Keys {
		if k.Fingerprint != fp {
			continue
		}
		if k.Revoked {
			rep.add("o pacote foi assinado pela chave %s, REVOGADA em %s (%s): nada assinado por ela é confiável", fp,
				k.ValidUntil.In(saoPaulo).Format("02/01/2006 15:04"), dash(k.Reason))
			return
		}
		rep.Trusted = true
		if !k.ValidUntil.IsZero() {
			rep.TrustNote = "chave anterior do serviço, substituída em " + k.ValidUntil.In(saoPaulo).Format("02/01/2006 15:04")
		} else {
			rep.TrustNote = "chave atual do serviço"
		}
		return
	}
	for _, f := range t.Fingerprints {
		if f == fp {
			rep.Trusted = true
			rep.TrustNote = "impressão digital informada"
			return
		}
	}
	var want []string
	for _, k := range t.Keys {
		want = append(want, k.Fingerprint)
	}
	want = append(want, t.Fingerprints...)
	rep.add("o pacote foi assinado pela chave %s, que não é uma chave confiável do serviço (%s): foi assinado de novo por outra chave", fp, strings.Join(want, ", "))
}

func isTag(name string) bool {
	switch name {
	case "bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt", sigName, verificarTxt:
		return true
	}
	return false
}

// checkManifestParallel is checkManifest hashing two files at a time
// (the largest first: the readings and the batches are most of a bag),
// after calling before with the names of the files it will hash.
func (b *bagFiles) checkManifestParallel(mname string, data []byte, allowed func(string) bool, before func(names []string),
	sum func(string) (string, error)) map[string]bool {
	rep := b.rep
	type job struct {
		name, want string
		got        string
		err        error
	}
	var jobs []*job
	listed := checkManifest(rep, mname, data, allowed, b.files, func(name string) (string, error) {
		return "", errDeferred
	}, func(name, want string) { jobs = append(jobs, &job{name: name, want: want}) })
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.name
	}
	before(names)
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(x, y *job) int { return cmp.Compare(b.sizes[y.name], b.sizes[x.name]) })
	next := make(chan *job)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for j := range next {
				j.got, j.err = sum(j.name)
			}
		})
	}
	for _, j := range order {
		next <- j
	}
	close(next)
	wg.Wait()
	for _, j := range jobs {
		switch {
		case j.err != nil:
			rep.add("%s ilegível ou corrompido: %v", j.name, j.err)
		case j.got != j.want:
			rep.add("%s foi alterado: SHA-256 %s, esperado %s (%s)", j.name, j.got[:16]+"…", j.want[:16]+"…", mname)
		}
	}
	return listed
}

var errDeferred = errors.New("deferred")

// checkManifest parses a manifest and checks each listed file with sum
// (or hands it to deferred, when given).
func checkManifest(rep *Report, mname string, data []byte, allowed func(string) bool, files map[string]opener,
	sum func(string) (string, error), deferred ...func(name, want string)) map[string]bool {
	listed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ln := 0
	for sc.Scan() {
		ln++
		line := sc.Text()
		want, name, ok := strings.Cut(line, "  ")
		if !ok || len(want) != 64 || !isHex(want) || name == "" {
			rep.add("%s, linha %d: formato inválido (esperado \"<sha256>  <arquivo>\")", mname, ln)
			continue
		}
		if !allowed(name) {
			rep.add("%s, linha %d: %q não pertence a este manifesto", mname, ln, name)
			continue
		}
		if listed[name] {
			rep.add("%s, linha %d: %s listado duas vezes", mname, ln, name)
			continue
		}
		listed[name] = true
		if files[name] == nil {
			rep.add("falta o arquivo %s listado em %s (arquivo removido ou renomeado)", name, mname)
			continue
		}
		if len(deferred) > 0 {
			deferred[0](name, want)
			continue
		}
		got, err := sum(name)
		if err != nil {
			rep.add("%s ilegível ou corrompido: %v", name, err)
			continue
		}
		if got != want {
			rep.add("%s foi alterado: SHA-256 %s, esperado %s (%s)", name, got[:16]+"…", want[:16]+"…", mname)
		}
	}
	if err := sc.Err(); err != nil {
		rep.add("%s ilegível: %v", mname, err)
	}
	return listed
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

func parseInfo(b []byte) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[strings.TrimSpace(k)] = append(out[strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	return out
}

// checkContents re-checks what the payload says: the service key file
// matches the signing key, every gateway batch signature with the key in
// force when it was received, and every readings.csv row against the
// signed batch it names.
func (b *bagFiles) checkContents() {
	rep := b.rep
	if sj, ok := b.kept["data/keys/service.json"]; ok && rep.KeyFingerprint != "" {
		var doc struct {
			Fingerprint string `json:"fingerprint"`
		}
		if json.Unmarshal(sj, &doc) != nil || doc.Fingerprint != rep.KeyFingerprint {
			rep.add("data/keys/service.json não traz a chave que assinou o pacote (%s)", rep.KeyFingerprint)
		}
	}
	if !b.prepared {
		b.prepare(nil)
	}
	keys, ok := b.gwKeys, b.gwKeysOK
	if !ok {
		return
	}
	bt, ok := b.kept["data/batches.txt"]
	var bodies map[BatchKey][]recLine
	switch {
	case b.stream != nil && b.streamed:
		bodies = b.collectBatches(b.stream.wait()...)
	case b.stream != nil:
		b.stream.wait() // read in part, then unreadable: reported with its hash
		return
	case !ok:
		if b.files["data/batches.txt"] == nil {
			rep.add("falta o arquivo data/batches.txt (os lotes assinados pelos gateways)")
		}
		return
	default:
		bodies = b.checkBatches(bt, keys)
	}
	if ct, ok := b.kept["data/checks.txt"]; ok {
		b.checkChecks(ct, keys)
	}
	if rc, ok := b.kept["data/readings.csv"]; ok {
		b.checkReadings(rc, bodies)
	} else if b.files["data/readings.csv"] == nil {
		rep.add("falta o arquivo data/readings.csv")
	}
}

type gwKey struct {
	keyDoc
	pub  ed25519.PublicKey
	wire *signature.PublicKey
}

// gatewayKeys reads data/keys/gateways.json when the payload manifest
// lists it (hashed: it is hashed with the payload) and the PEM files it
// names.
func (b *bagFiles) gatewayKeys(hashed bool) (map[string]gwKey, bool) {
	rep := b.rep
	if !hashed {
		if b.files["data/keys/gateways.json"] == nil {
			rep.add("falta o arquivo data/keys/gateways.json (as chaves dos gateways)")
		}
		return nil, false
	}
	gj, err := b.read("data/keys/gateways.json", maxKeptFile)
	if err != nil {
		rep.add("data/keys/gateways.json ilegível: %v", err)
		return nil, false
	}
	var docs []keyDoc
	if err := json.Unmarshal(gj, &docs); err != nil {
		rep.add("data/keys/gateways.json ilegível: %v", err)
		return nil, false
	}
	out := map[string]gwKey{}
	for i, d := range docs {
		k, err := base64.StdEncoding.DecodeString(d.PublicKey)
		if err != nil || len(k) != ed25519.PublicKeySize || Fingerprint(k) != d.Fingerprint {
			rep.add("data/keys/gateways.json, item %d (gateway %s): chave ou impressão digital inválida", i+1, d.Gateway)
			continue
		}
		file := strings.TrimPrefix(d.File, "data/keys/")
		if b.files[d.File] == nil || file == d.File || strings.Contains(file, "/") {
			rep.add("data/keys/gateways.json, item %d: falta o arquivo %s da chave do gateway %s", i+1, d.File, d.Gateway)
			continue
		}
		if pb, err := b.read(d.File, 4096); err != nil || !pemIs(pb, k) {
			rep.add("%s não contém a chave do gateway %s que data/keys/gateways.json informa (%s)", d.File, d.Gateway, d.Fingerprint)
			continue
		}
		wk, _ := signature.NewPublicKey(k)
		out[file] = gwKey{keyDoc: d, pub: k, wire: wk}
	}
	return out, true
}

func pemIs(b []byte, want ed25519.PublicKey) bool {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return false
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return false
	}
	pk, ok := k.(ed25519.PublicKey)
	return ok && pk.Equal(want)
}
