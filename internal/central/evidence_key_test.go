package central

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
)

// TestEvidenceKeyPublished: the key that signs the evidence packages is
// served without a login, the same one the service keeps in its data
// directory, as JSON and as PEM.
func TestEvidenceKeyPublished(t *testing.T) {
	dir := t.TempDir()
	a := startCentral(t, Options{DataDir: dir})
	kr, err := evidence.LoadOrCreateKeyRing(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Fingerprint string `json:"fingerprint"`
		History     []struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"history"`
	}
	if code := getJSON(t, "http://"+a.HTTP+"/api/v1/evidence/key", &got); code != http.StatusOK || got.Fingerprint != kr.Fingerprint() ||
		len(got.History) == 0 || got.History[len(got.History)-1].Fingerprint != kr.Fingerprint() {
		t.Fatalf("GET /api/v1/evidence/key: HTTP %d %+v, want the fingerprint %s", code, got, kr.Fingerprint())
	}
	resp, err := http.Get("http://" + a.HTTP + "/api/v1/evidence/key?formato=pem") // no session
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != string(evidence.PublicKeyPEM(kr.Public())) || !strings.Contains(string(b), "PUBLIC KEY") {
		t.Fatalf("PEM without a session: HTTP %d %q", resp.StatusCode, b)
	}
}
