package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
)

// TestVerifyTrust: each flag of evidence verify adds what it names to the
// trusted keys, and a bad one is an error that says which flag.
func TestVerifyTrust(t *testing.T) {
	withHistory := t.TempDir()
	kr, err := evidence.LoadOrCreateKeyRing(withHistory, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	fp := kr.Fingerprint()
	older := t.TempDir() // the key alone, as before the history
	okr, err := evidence.LoadOrCreateKeyRing(older, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(older, evidence.KeyHistoryFile)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name                       string
		fp, pub, key, dir          string
		wantKeys, wantFingerprints []string
		wantErr                    string
	}{
		{name: "nothing"},
		{name: "fingerprint", fp: strings.ToLower(fp), wantFingerprints: []string{fp}},
		{name: "bad fingerprint", fp: "SHA256:12", wantErr: "impress"},
		{name: "public key in base64", pub: base64.StdEncoding.EncodeToString(kr.Public()), wantKeys: []string{fp}},
		{name: "bad public key", pub: "not-a-key", wantErr: "--chave-publica: "},
		{name: "private key file", key: filepath.Join(withHistory, evidence.KeyFile), wantKeys: []string{fp}},
		{name: "missing private key file", key: filepath.Join(t.TempDir(), "x.key"), wantErr: "x.key"},
		{name: "data directory with history", dir: withHistory, wantKeys: []string{fp}},
		{name: "older data directory: the key alone", dir: older, wantKeys: []string{okr.Fingerprint()}},
		{name: "data directory without a key", dir: t.TempDir(), wantErr: "não tem chave de evidências"},
		{name: "all at once", fp: fp, pub: base64.StdEncoding.EncodeToString(okr.Public()), dir: withHistory,
			wantKeys: []string{okr.Fingerprint(), fp}, wantFingerprints: []string{fp}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trust, err := verifyTrust(c.fp, c.pub, c.key, c.dir)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(describe(err), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, k := range trust.Keys {
				keys = append(keys, k.Fingerprint)
			}
			if strings.Join(keys, " ") != strings.Join(c.wantKeys, " ") ||
				strings.Join(trust.Fingerprints, " ") != strings.Join(c.wantFingerprints, " ") {
				t.Errorf("keys %v fingerprints %v, want %v %v", keys, trust.Fingerprints, c.wantKeys, c.wantFingerprints)
			}
		})
	}
}

// TestQuietCollectorRestores: the collector is off while a bag is
// verified, with the heap limit set, and both are as they were after.
func TestQuietCollectorRestores(t *testing.T) {
	gc := debug.SetGCPercent(100)
	defer debug.SetGCPercent(gc)
	restore := quietCollector()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("during a verification GOGC is %d, want off (-1)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != verifyHeapLimit {
		t.Errorf("during a verification the memory limit is %d, want %d", got, verifyHeapLimit)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after a verification GOGC is %d, want 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got == verifyHeapLimit {
		t.Errorf("after a verification the memory limit is still %d", got)
	}
}
