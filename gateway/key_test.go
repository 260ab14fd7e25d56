package gateway

import (
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
)

func TestLoadOrCreateKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	k1, created, err := LoadOrCreateKey(dir)
	if err != nil || !created {
		t.Fatalf("first run: created=%v err=%v", created, err)
	}
	st, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, err %v", st.Mode().Perm(), err)
	}
	k2, created, err := LoadOrCreateKey(dir)
	if err != nil || created || !k1.Equal(k2) {
		t.Fatalf("second run: created=%v err=%v same=%v", created, err, k1.Equal(k2))
	}
	pub, err := base64.StdEncoding.DecodeString(PublicKeyString(k1))
	if err != nil || !ed25519.PublicKey(pub).Equal(k1.Public()) {
		t.Errorf("PublicKeyString does not decode to the public key")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("state folder holds %d files, want only the key", len(entries))
	}
}

func TestLoadKeyRejects(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := LoadOrCreateKey(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, KeyFile)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(path); err == nil {
		t.Error("world-readable key accepted")
	}
	if _, _, err := LoadOrCreateKey(dir); err == nil {
		t.Error("LoadOrCreateKey replaced or accepted a world-readable key")
	}
	bad := filepath.Join(dir, "bad.key")
	os.WriteFile(bad, []byte("-----BEGIN SOSSEGO GATEWAY ED25519 SEED-----\nAAAA\n-----END SOSSEGO GATEWAY ED25519 SEED-----\n"), 0o600)
	if _, err := LoadKey(bad); err == nil {
		t.Error("short seed accepted")
	}
	os.WriteFile(bad, []byte("garbage"), 0o600)
	if _, err := LoadKey(bad); err == nil {
		t.Error("garbage accepted")
	}
}
