package notify

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Delivery outcomes the shell writes to an alert's history beside the
// engine's entries.
const (
	EntryEnqueued  EntryKind = "enqueued"   // a delivery was queued for a receiver
	EntrySent      EntryKind = "sent"       // the receiver accepted it (SMTP 250, HTTP 2xx, push 201)
	EntryRetry     EntryKind = "retry"      // it failed and will be tried again
	EntryFailed    EntryKind = "failed"     // it failed for good (attempts exhausted or a permanent refusal)
	EntryNoChannel EntryKind = "no_channel" // the user has no e-mail, webhook or device
)

// HistoryEntry is one line of an alert's notification history: a decision
// of the engine or the outcome of one delivery attempt.
type HistoryEntry struct {
	Entry
	Receiver string `json:"receiver,omitempty"` // email | webhook:<name> | push
	Target   string `json:"target,omitempty"`   // address, webhook name or device (shortened)
	Attempt  int    `json:"attempt,omitempty"`
}

// SilenceAudit is one line of a silence's audit trail.
type SilenceAudit struct {
	SilenceID string    `json:"silence_id"`
	At        time.Time `json:"at"`
	Action    string    `json:"action"` // created | ended | expired
	By        string    `json:"by,omitempty"`
	Detail    string    `json:"detail"`
}

// PushSubscription is a browser's Web Push subscription (the JSON of
// PushSubscription.toJSON()).
type PushSubscription struct {
	Endpoint string `json:"endpoint"`
	Keys     struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// CheckPushSubscription validates a subscription sent by a browser: an
// https endpoint, a P-256 public key (65 bytes, uncompressed) and a
// 16-byte authentication secret, both base64url.
func CheckPushSubscription(s PushSubscription) error {
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" || len(s.Endpoint) > 2048 {
		return fmt.Errorf("inscrição de push inválida: o endereço do serviço de push deve ser https")
	}
	k, err := decodeB64URL(s.Keys.P256dh)
	if err != nil || len(k) != 65 || k[0] != 4 {
		return fmt.Errorf("inscrição de push inválida: chave p256dh malformada")
	}
	a, err := decodeB64URL(s.Keys.Auth)
	if err != nil || len(a) != 16 {
		return fmt.Errorf("inscrição de push inválida: segredo auth malformado")
	}
	return nil
}

func decodeB64URL(s string) ([]byte, error) {
	if b, err := base64.RawURLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.URLEncoding.DecodeString(s)
}

// Errors the delivery shell returns and the HTTP API maps.
var (
	// ErrFileManaged: the settings come from a configuration file and
	// cannot be changed in the dashboard.
	ErrFileManaged = errors.New("settings come from a file")
	// ErrNotFound: an unknown silence or push subscription.
	ErrNotFound = errors.New("not found")
)
