package dashboard

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestEvidenceKeyHandler(t *testing.T) {
	k := EvidenceKey{Algorithm: "ed25519", PublicKey: "AAAA", Fingerprint: "SHA256:ab", PEM: "-----BEGIN PUBLIC KEY-----\nx\n-----END PUBLIC KEY-----\n",
		History: []EvidenceKeyEntry{{PublicKey: "BBBB", Fingerprint: "SHA256:cd", ValidUntil: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}, {PublicKey: "AAAA", Fingerprint: "SHA256:ab"}}}
	ok := func() (EvidenceKey, error) { return k, nil }
	for _, tc := range []struct {
		name   string
		key    func() (EvidenceKey, error)
		query  string
		status int
		want   string
	}{
		{"json", ok, "", 200, `"fingerprint":"SHA256:ab"`},
		{"history", ok, "?formato=json", 200, `"valid_until":"2026-06-01T00:00:00Z"`},
		{"pem", ok, "?formato=pem", 200, "-----BEGIN PUBLIC KEY-----"},
		{"bad format", ok, "?formato=xml", 400, `"erro":"formato xml desconhecido; use json ou pem"`},
		{"no key", nil, "", 503, "chave de evidências não configurada"},
		{"broken", func() (EvidenceKey, error) { return EvidenceKey{}, errors.New("disco") }, "", 500, "erro interno"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			EvidenceKeyHandler(tc.key, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/evidence/key"+tc.query, nil))
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if tc.name == "json" {
				var got EvidenceKey
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.History) != 2 {
					t.Errorf("%v %+v", err, got)
				}
			}
		})
	}
}
