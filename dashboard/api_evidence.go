package dashboard

import (
	"log/slog"
	"net/http"
	"time"
)

// EvidenceKey is the service's evidence signing key as published at
// GET /api/v1/evidence/key (the JSON of alerts/evidence.Published).
type EvidenceKey struct {
	Algorithm          string             `json:"algorithm"`
	PublicKey          string             `json:"public_key"` // base64 of the 32 raw bytes
	Fingerprint        string             `json:"fingerprint"`
	FingerprintGrouped string             `json:"fingerprint_grouped"` // as the notices print it
	PEM                string             `json:"pem"`
	History            []EvidenceKeyEntry `json:"history"` // oldest first; the last is the current key
}

// EvidenceKeyEntry is one key of the history, with its validity.
type EvidenceKeyEntry struct {
	PublicKey   string    `json:"public_key"`
	Fingerprint string    `json:"fingerprint"`
	ValidFrom   time.Time `json:"valid_from,omitzero"`
	ValidUntil  time.Time `json:"valid_until,omitzero"`
	Revoked     bool      `json:"revoked,omitempty"`
	Reason      string    `json:"reason,omitempty"`
}

// EvidenceKeyHandler serves GET /api/v1/evidence/key: the public key that
// signs the evidence packages, its fingerprint and its history, so that a
// perito can compare them with a package (`sossego evidence verify
// --chave-publica`) without an account; ?formato=pem answers the PEM alone.
// It is public: mount it outside the session-protected API.
func EvidenceKeyHandler(key func() (EvidenceKey, error), log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key == nil {
			apiError(w, http.StatusServiceUnavailable, "chave de evidências não configurada neste serviço")
			return
		}
		k, err := key()
		if err != nil {
			serverError(w, log, "chave de evidências", err)
			return
		}
		switch f := r.URL.Query().Get("formato"); f {
		case "", "json":
			if k.History == nil {
				k.History = []EvidenceKeyEntry{}
			}
			apiJSON(w, http.StatusOK, k)
		case "pem":
			w.Header().Set("Content-Type", "application/x-pem-file")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write([]byte(k.PEM))
		default:
			apiError(w, http.StatusBadRequest, "formato "+f+" desconhecido; use json ou pem")
		}
	})
}
