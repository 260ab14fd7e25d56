package evidence

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeyFile is the name of the service's signing key in the data directory.
const KeyFile = "evidence-ed25519.key"

// LoadOrCreateKey returns the service's evidence signing key from
// dir/KeyFile, generating it (mode 0600) on first use. A key file readable
// by others is refused.
func LoadOrCreateKey(dir string) (ed25519.PrivateKey, error) {
	p := filepath.Join(dir, KeyFile)
	k, err := LoadKey(p)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("evidence: key dir: %w", err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("evidence: generate key: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // created concurrently
		return LoadKey(p)
	}
	if err != nil {
		return nil, fmt.Errorf("evidence: create key: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%s\n", base64.StdEncoding.EncodeToString(priv.Seed())); err != nil {
		f.Close()
		return nil, fmt.Errorf("evidence: write key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("evidence: write key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("evidence: write key: %w", err)
	}
	return priv, nil
}

// LoadKey reads a key file written by LoadOrCreateKey.
func LoadKey(p string) (ed25519.PrivateKey, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("evidence: key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("evidence: a chave %s tem permissões %v; restrinja com chmod 600", p, st.Mode().Perm())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("evidence: key: %w", err)
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("evidence: a chave %s está corrompida (esperada semente ed25519 em base64)", p)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
