package evidence

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// KeyFile is the name of the service's signing key in the data directory.
const KeyFile = "evidence-ed25519.key"

// KeyHistoryFile is the public history of the service's signing keys in the
// data directory: every key the service ever signed with, with its validity.
// Only the current key's private half exists (KeyFile); a rotation destroys
// the previous one, so a bag signed by a retired key was signed before it
// was retired.
const KeyHistoryFile = "evidence-keys.json"

// PublicKeyInfo is one service (or gateway) public key with its validity.
type PublicKeyInfo struct {
	PublicKey   string    `json:"public_key"`  // ed25519, standard base64
	Fingerprint string    `json:"fingerprint"` // Fingerprint(key)
	ValidFrom   time.Time `json:"valid_from,omitzero"`
	ValidUntil  time.Time `json:"valid_until,omitzero"` // zero: in force
	Revoked     bool      `json:"revoked,omitempty"`    // compromised: nothing it signed is trusted
	Reason      string    `json:"reason,omitempty"`
}

// Key decodes the public key (nil when malformed).
func (k PublicKeyInfo) Key() ed25519.PublicKey {
	b, err := base64.StdEncoding.DecodeString(k.PublicKey)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil
	}
	return b
}

// NewPublicKeyInfo describes pub.
func NewPublicKeyInfo(pub ed25519.PublicKey, from, until time.Time) PublicKeyInfo {
	return PublicKeyInfo{PublicKey: base64.StdEncoding.EncodeToString(pub), Fingerprint: Fingerprint(pub),
		ValidFrom: from.UTC(), ValidUntil: until.UTC()}
}

// Fingerprint is the full SHA-256 of the raw 32-byte ed25519 public key,
// "SHA256:" and 64 lowercase hex digits. It is what notices print and what
// `sossego evidence verify --impressao` pins; `sha256sum` of the raw key
// bytes gives the same digits.
func Fingerprint(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return "SHA256:" + hex.EncodeToString(h[:])
}

// ShortKeyID is the first 16 hex digits of the fingerprint (display only;
// never enough to pin a key).
func ShortKeyID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return "sha256:" + hex.EncodeToString(h[:8])
}

// GroupedFingerprint is the fingerprint in groups of four hex digits, for
// print ("SHA256: 1a2b 3c4d …").
func GroupedFingerprint(fp string) string {
	hexPart := strings.TrimPrefix(fp, "SHA256:")
	var b strings.Builder
	b.WriteString("SHA256:")
	for i := 0; i < len(hexPart); i += 4 {
		b.WriteByte(' ')
		b.WriteString(hexPart[i:min(i+4, len(hexPart))])
	}
	return b.String()
}

// NormalizeFingerprint accepts a fingerprint as printed (any case, with or
// without "SHA256:", spaces or colons) and returns it as Fingerprint writes
// it; only the full 64 hex digits are accepted.
func NormalizeFingerprint(s string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimPrefix(t, "sha256:")
	t = strings.NewReplacer(" ", "", ":", "", "-", "").Replace(t)
	if len(t) != 64 || !isHex(t) {
		return "", fmt.Errorf("impressão digital %q inválida: são 64 dígitos hexadecimais (SHA256: seguido de 16 grupos de 4)", s)
	}
	return "SHA256:" + t, nil
}

// PublicKeyPEM is pub as a PEM SubjectPublicKeyInfo ("PUBLIC KEY"), the
// form `openssl pkeyutl -pubin -inkey` reads.
func PublicKeyPEM(pub ed25519.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil { // only for a key of the wrong length
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// KeyRing is the service's current signing key and the public history of
// all its keys (oldest first; the last is the current one).
type KeyRing struct {
	Signer  ed25519.PrivateKey
	History []PublicKeyInfo
}

// Public is the current public key.
func (k *KeyRing) Public() ed25519.PublicKey { return k.Signer.Public().(ed25519.PublicKey) }

// Fingerprint is the current key's fingerprint: what the integrator passes to
// the notice PDF to print.
func (k *KeyRing) Fingerprint() string { return Fingerprint(k.Public()) }

// Current is the current key's entry of the history.
func (k *KeyRing) Current() PublicKeyInfo {
	fp := k.Fingerprint()
	for _, e := range k.History {
		if e.Fingerprint == fp {
			return e
		}
	}
	return NewPublicKeyInfo(k.Public(), time.Time{}, time.Time{})
}

// Published is the service key as GET /api/v1/evidence/key and
// `sossego evidence key show --json` publish it.
type Published struct {
	Algorithm          string          `json:"algorithm"`
	PublicKey          string          `json:"public_key"` // base64 of the 32 raw bytes
	Fingerprint        string          `json:"fingerprint"`
	FingerprintGrouped string          `json:"fingerprint_grouped"` // as the notices print it
	PEM                string          `json:"pem"`
	History            []PublicKeyInfo `json:"history"` // oldest first; the last is the current key
}

// PublishedKey describes k for publication.
func PublishedKey(k *KeyRing) Published {
	pub := k.Public()
	return Published{Algorithm: "ed25519", PublicKey: base64.StdEncoding.EncodeToString(pub), Fingerprint: Fingerprint(pub),
		FingerprintGrouped: GroupedFingerprint(Fingerprint(pub)), PEM: string(PublicKeyPEM(pub)), History: k.History}
}

// LoadOrCreateKey returns the service's evidence signing key from
// dir/KeyFile, generating it (mode 0600) on first use. A key file readable
// by others is refused.
func LoadOrCreateKey(dir string) (ed25519.PrivateKey, error) {
	kr, err := LoadOrCreateKeyRing(dir, time.Now())
	if err != nil {
		return nil, err
	}
	return kr.Signer, nil
}

// LoadOrCreateKeyRing loads the signing key and its history, creating the
// key on first use (valid from now) and the history when an older data
// directory has only the key.
func LoadOrCreateKeyRing(dir string, now time.Time) (*KeyRing, error) {
	p := filepath.Join(dir, KeyFile)
	k, err := LoadKey(p)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("evidence: pasta da chave de evidências: %w", err)
		}
		k, err = createKey(p)
	}
	if err != nil {
		return nil, err
	}
	hist, err := LoadKeyHistory(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	kr := &KeyRing{Signer: k, History: hist}
	if !kr.inHistory() {
		for i := range kr.History { // a rotation cut short: the key file is newer than the history
			if kr.History[i].ValidUntil.IsZero() {
				kr.History[i].ValidUntil = now.UTC()
			}
		}
		kr.History = append(kr.History, NewPublicKeyInfo(kr.Public(), now, time.Time{}))
		if err := writeHistory(dir, kr.History); err != nil {
			return nil, err
		}
	}
	return kr, nil
}

func (k *KeyRing) inHistory() bool {
	fp := k.Fingerprint()
	for _, e := range k.History {
		if e.Fingerprint == fp {
			return true
		}
	}
	return false
}

// RotateKey replaces the service's signing key by a new one: the previous
// key's history entry gets valid_until = now (and revoked, with the reason,
// when it was compromised) and its private key is destroyed. Bags signed
// before stay verifiable against the published history.
func RotateKey(dir string, now time.Time, revoke bool, reason string) (*KeyRing, error) {
	old, err := LoadOrCreateKeyRing(dir, now)
	if err != nil {
		return nil, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("evidence: gerar a chave de evidências: %w", err)
	}
	hist := append([]PublicKeyInfo(nil), old.History...)
	for i := range hist {
		if hist[i].ValidUntil.IsZero() {
			hist[i].ValidUntil = now.UTC()
		}
		if hist[i].Fingerprint == old.Fingerprint() {
			hist[i].Revoked, hist[i].Reason = revoke, reason
		}
	}
	hist = append(hist, NewPublicKeyInfo(priv.Public().(ed25519.PublicKey), now, time.Time{}))
	// History first: a crash before the key file moves leaves a history
	// that names a key not yet in use, which the next load repairs.
	if err := writeHistory(dir, hist); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(dir, KeyFile), []byte(base64.StdEncoding.EncodeToString(priv.Seed())+"\n"), 0o600); err != nil {
		return nil, err
	}
	return &KeyRing{Signer: priv, History: hist}, nil
}

// LoadKeyHistory reads dir/KeyHistoryFile.
func LoadKeyHistory(dir string) ([]PublicKeyInfo, error) {
	b, err := os.ReadFile(filepath.Join(dir, KeyHistoryFile))
	if err != nil {
		return nil, fmt.Errorf("evidence: histórico de chaves de evidências: %w", err)
	}
	return ParseKeyHistory(b)
}

// ParseKeyHistory decodes a key history: the file, or the body of
// GET /api/v1/evidence/key (an object with "history"), or a single entry.
func ParseKeyHistory(b []byte) ([]PublicKeyInfo, error) {
	b = bytes.TrimSpace(b)
	var hist []PublicKeyInfo
	if len(b) > 0 && b[0] == '{' {
		var doc struct {
			PublicKeyInfo
			History []PublicKeyInfo `json:"history"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("evidence: histórico de chaves ilegível: %w", err)
		}
		hist = doc.History
		if len(hist) == 0 && doc.PublicKey != "" {
			hist = []PublicKeyInfo{doc.PublicKeyInfo}
		}
	} else if err := json.Unmarshal(b, &hist); err != nil {
		return nil, fmt.Errorf("evidence: histórico de chaves ilegível: %w", err)
	}
	for i, e := range hist {
		k := e.Key()
		if k == nil {
			return nil, fmt.Errorf("evidence: histórico de chaves, item %d: public_key não é uma chave ed25519 em base64", i+1)
		}
		if e.Fingerprint != Fingerprint(k) {
			return nil, fmt.Errorf("evidence: histórico de chaves, item %d: a impressão digital não corresponde à chave", i+1)
		}
	}
	return hist, nil
}

func writeHistory(dir string, hist []PublicKeyInfo) error {
	b, err := json.MarshalIndent(hist, "", "  ")
	if err != nil {
		return fmt.Errorf("evidence: histórico de chaves de evidências: %w", err)
	}
	return writeFileAtomic(filepath.Join(dir, KeyHistoryFile), append(b, '\n'), 0o644)
}

func writeFileAtomic(p string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		return fmt.Errorf("evidence: gravar %s: %w", filepath.Base(p), err)
	}
	defer os.Remove(f.Name())
	if err = f.Chmod(mode); err == nil {
		if _, err = f.Write(data); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		return fmt.Errorf("evidence: gravar %s: %w", filepath.Base(p), err)
	}
	return nil
}

func createKey(p string) (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("evidence: gerar a chave de evidências: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // created concurrently
		return LoadKey(p)
	}
	if err != nil {
		return nil, fmt.Errorf("evidence: criar a chave de evidências: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%s\n", base64.StdEncoding.EncodeToString(priv.Seed())); err != nil {
		f.Close()
		return nil, fmt.Errorf("evidence: gravar a chave de evidências: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("evidence: gravar a chave de evidências: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("evidence: gravar a chave de evidências: %w", err)
	}
	return priv, nil
}

// LoadKey reads a key file written by LoadOrCreateKey.
func LoadKey(p string) (ed25519.PrivateKey, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("evidence: chave de evidências: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("evidence: a chave %s tem permissões %v; restrinja com chmod 600", p, st.Mode().Perm())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("evidence: chave de evidências: %w", err)
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("evidence: a chave %s está corrompida (esperada semente ed25519 em base64)", p)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
