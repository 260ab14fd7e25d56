package gateway

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KeyFile is the name of the gateway's private key inside the state folder.
const KeyFile = "gateway.key"

const pemType = "SOSSEGO GATEWAY ED25519 SEED"

// LoadOrCreateKey reads the gateway's ed25519 key from dir/gateway.key, or
// creates one (mode 0600, written to a temporary file, synced and renamed)
// on first run. created reports a new key.
func LoadOrCreateKey(dir string) (key ed25519.PrivateKey, created bool, err error) {
	path := filepath.Join(dir, KeyFile)
	key, err = LoadKey(path)
	if err == nil {
		return key, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("gateway: key folder: %w", err)
	}
	_, key, err = ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, fmt.Errorf("gateway: generate key: %w", err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: pemType, Bytes: key.Seed()})
	tmp, err := os.CreateTemp(dir, ".gateway.key-*")
	if err != nil {
		return nil, false, fmt.Errorf("gateway: write key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("gateway: write key: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("gateway: write key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("gateway: write key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, false, fmt.Errorf("gateway: write key: %w", err)
	}
	// Link, not rename: never replace a key another process created meanwhile.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			key, err = LoadKey(path)
			return key, false, err
		}
		return nil, false, fmt.Errorf("gateway: write key: %w", err)
	}
	syncDir(dir)
	return key, true, nil
}

// LoadKey reads a key written by LoadOrCreateKey. It refuses a key file
// that group or others can read.
func LoadKey(path string) (ed25519.PrivateKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("gateway: key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("gateway: key %s has mode %v; run chmod 600 %s", path, st.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gateway: key: %w", err)
	}
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != pemType || len(blk.Bytes) != ed25519.SeedSize {
		return nil, fmt.Errorf("gateway: key %s is not a %q PEM block of %d bytes", path, pemType, ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(blk.Bytes), nil
}

// PublicKeyString is the base64 (standard, padded) public key the central
// service registers for this gateway.
func PublicKeyString(key ed25519.PrivateKey) string {
	return base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
