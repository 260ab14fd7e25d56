package evidence

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// Limits that keep Verify safe on hostile input.
const (
	maxMembers  = 10000
	maxTagBytes = 8 << 20  // a tag file larger than this is refused
	maxTotal    = 16 << 30 // uncompressed bytes read in all
)

// Report is the outcome of Verify. OK is true only when Problems is empty.
type Report struct {
	OK           bool     `json:"ok"`
	Problems     []string `json:"problems"` // pt-BR, one per finding, exact file names
	Bag          string   `json:"bag"`
	AlertID      string   `json:"alert_id,omitempty"`
	PayloadFiles int      `json:"payload_files"`
	PayloadBytes int64    `json:"payload_bytes"`
	KeyID        string   `json:"key_id,omitempty"`
	// Trusted is true when a trusted key was given and the bag is signed
	// by it.
	Trusted bool `json:"trusted"`
}

func (r *Report) add(format string, a ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, a...))
}

// Verify checks a zipped bag: its structure, every payload and tag hash,
// the Payload-Oxum, and the ed25519 signature over the tag manifest with the
// key the bag names. With trusted set, the bag must be signed by that key.
// It never panics on malformed input; every problem is reported in pt-BR.
func Verify(r io.ReaderAt, size int64, trusted ed25519.PublicKey) *Report {
	rep := &Report{}
	defer func() { rep.OK = len(rep.Problems) == 0 }()
	zr, err := zip.NewReader(r, size)
	if err != nil {
		rep.add("o arquivo não é um zip válido (%v): o pacote está corrompido ou incompleto", err)
		return rep
	}
	if len(zr.File) > maxMembers {
		rep.add("o zip tem %d membros; um pacote de evidências tem poucos arquivos", len(zr.File))
		return rep
	}
	bag := &bagFiles{rep: rep, files: map[string]*zip.File{}}
	bag.index(zr.File)
	bagit, info, manifest, tagm, sig := bag.tag("bagit.txt"), bag.tag("bag-info.txt"), bag.tag("manifest-sha256.txt"),
		bag.tag("tagmanifest-sha256.txt"), bag.tag(sigName)
	if bagit != nil && string(bagit) != bagitTxt {
		rep.add("bagit.txt alterado: deve declarar exatamente BagIt-Version: 1.0 e Tag-File-Character-Encoding: UTF-8")
	}
	fields := parseInfo(info)
	if v := fields["External-Identifier"]; len(v) > 0 {
		rep.AlertID = v[0]
	}
	if tagm != nil {
		bag.checkTagManifest(tagm)
	}
	if manifest != nil {
		bag.checkPayload(manifest, fields, info != nil)
	}
	if tagm != nil && sig != nil && info != nil {
		checkSignature(rep, fields, tagm, sig, trusted)
	}
	sort.Strings(rep.Problems)
	return rep
}

// bagFiles is a bag's zip members by their path inside the bag directory,
// with the bytes read so far (bounded by maxTotal).
type bagFiles struct {
	rep   *Report
	files map[string]*zip.File
	total int64
}

// index takes the zip's members: one top directory (the bag's name), safe
// relative names, no duplicates; anything else is a problem.
func (b *bagFiles) index(members []*zip.File) {
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
		b.files[rest] = f
	}
	b.rep.Bag = root
}

// read returns a member's bytes, refusing more than limit.
func (b *bagFiles) read(name string, limit int64) ([]byte, error) {
	rc, err := b.files[name].Open()
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
	b.total += int64(len(data))
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
		b.rep.add("%s ilegível ou corrompido no zip: %v", name, err)
		return nil
	}
	return data
}

// checkTagManifest: every tag file except the signature is listed, each
// hash right.
func (b *bagFiles) checkTagManifest(tagm []byte) {
	isListedTag := func(name string) bool {
		return !strings.HasPrefix(name, "data/") && name != sigName && name != "tagmanifest-sha256.txt"
	}
	listed := checkManifest(b.rep, "tagmanifest-sha256.txt", tagm, isListedTag, b.files,
		func(name string) ([]byte, error) { return b.read(name, maxTagBytes) }, nil)
	for name := range b.files {
		if isListedTag(name) && !listed[name] {
			b.rep.add("arquivo de controle %s não consta de tagmanifest-sha256.txt (arquivo acrescentado)", name)
		}
	}
}

// checkPayload: every data/ file is listed, each hash right, nothing else
// in the bag, and Payload-Oxum matches what was read.
func (b *bagFiles) checkPayload(manifest []byte, fields map[string][]string, haveInfo bool) {
	var n int64
	listed := checkManifest(b.rep, "manifest-sha256.txt", manifest, func(name string) bool { return strings.HasPrefix(name, "data/") },
		b.files, nil, func(name string) (string, int64, error) {
			rc, err := b.files[name].Open()
			if err != nil {
				return "", 0, err
			}
			defer rc.Close()
			h := sha256.New()
			c, err := io.Copy(h, io.LimitReader(rc, maxTotal-b.total))
			b.total += c
			n += c
			if err != nil {
				return "", c, err
			}
			return hex.EncodeToString(h.Sum(nil)), c, nil
		})
	for name := range b.files {
		if strings.HasPrefix(name, "data/") && !listed[name] {
			b.rep.add("arquivo %s não consta de manifest-sha256.txt (arquivo acrescentado)", name)
		}
		if !strings.HasPrefix(name, "data/") && !isTag(name) {
			b.rep.add("arquivo %s não faz parte do pacote (arquivo acrescentado)", name)
		}
	}
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
// the bag names, and whether that key is the trusted one.
func checkSignature(rep *Report, fields map[string][]string, tagm, sig []byte, trusted ed25519.PublicKey) {
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
	case err != nil || len(s) != ed25519.SignatureSize || string(sig) != base64.StdEncoding.EncodeToString(s)+"\n":
		rep.add("%s não contém uma assinatura ed25519 válida (base64)", sigName)
	case !ed25519.Verify(pub, tagm, s):
		rep.add("a assinatura ed25519 não confere com tagmanifest-sha256.txt: o pacote foi alterado depois de assinado")
	default:
		fp := sha256.Sum256(pub)
		rep.KeyID = "sha256:" + hex.EncodeToString(fp[:8])
		if trusted == nil {
			return
		}
		if bytes.Equal(pub, trusted) {
			rep.Trusted = true
		} else {
			tfp := sha256.Sum256(trusted)
			rep.add("o pacote foi assinado pela chave %s, que não é a chave do serviço (sha256:%s)", rep.KeyID, hex.EncodeToString(tfp[:8]))
		}
	}
}

func isTag(name string) bool {
	switch name {
	case "bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt", sigName:
		return true
	}
	return false
}

// checkManifest parses a manifest and checks each listed file. Either read
// (small files) or hashFile (streamed) is given.
func checkManifest(rep *Report, mname string, data []byte, allowed func(string) bool, files map[string]*zip.File,
	read func(string) ([]byte, error), hashFile func(string) (string, int64, error)) map[string]bool {
	listed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ln := 0
	for sc.Scan() {
		ln++
		line := sc.Text()
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 || !isHex(sum) || name == "" {
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
			rep.add("falta o arquivo %s listado em %s (arquivo removido)", name, mname)
			continue
		}
		var got string
		if read != nil {
			b, err := read(name)
			if err != nil {
				rep.add("%s ilegível ou corrompido no zip: %v", name, err)
				continue
			}
			s := sha256.Sum256(b)
			got = hex.EncodeToString(s[:])
		} else {
			s, _, err := hashFile(name)
			if err != nil {
				rep.add("%s ilegível ou corrompido no zip: %v", name, err)
				continue
			}
			got = s
		}
		if got != sum {
			rep.add("%s foi alterado: SHA-256 %s, esperado %s (%s)", name, got[:16]+"…", sum[:16]+"…", mname)
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
