package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Webhook headers (docs/notifications.md).
const (
	HeaderTimestamp = "X-Sossego-Timestamp" // unix seconds of the attempt
	HeaderSignature = "X-Sossego-Signature" // v1=<hex HMAC-SHA256(secret, timestamp "." body)>
	HeaderDelivery  = "X-Sossego-Delivery"  // the delivery id: the same on every retry
	HeaderEvent     = "X-Sossego-Event"     // the payload's type
)

// WebhookVersion is the payload version.
const WebhookVersion = 1

// WebhookRecipient is who the message is for.
type WebhookRecipient struct {
	User  string `json:"user"`
	Email string `json:"email,omitempty"`
	Phone string `json:"phone,omitempty"`
}

// WebhookAlert is one alert in a webhook payload.
type WebhookAlert struct {
	ID                   string    `json:"id"`
	Kind                 string    `json:"kind"`  // exceedance | no_data
	Class                Class     `json:"class"` // level | no_data | clock
	State                string    `json:"state"` // firing | resolved | cancelled
	Sensor               string    `json:"sensor"`
	Address              string    `json:"address,omitempty"`
	Gateway              string    `json:"gateway,omitempty"`
	Municipality         string    `json:"municipality"`
	Establishment        string    `json:"establishment,omitempty"`
	EstablishmentAddress string    `json:"establishment_address,omitempty"`
	LAeqDB               float64   `json:"laeq_db,omitempty"`
	LimitDB              float64   `json:"limit_db,omitempty"`
	MarginDB             float64   `json:"margin_db,omitempty"`
	Article              string    `json:"article,omitempty"`
	CodeID               string    `json:"code_id,omitempty"`
	Period               string    `json:"period,omitempty"`
	Reason               string    `json:"reason,omitempty"` // no_data: silent | gateway_offline
	Screening            bool      `json:"screening,omitempty"`
	FiringAt             time.Time `json:"firing_at,omitzero"`
	ResolvedAt           time.Time `json:"resolved_at,omitzero"`
	URL                  string    `json:"url,omitempty"`
}

// WebhookPayload is the JSON body a webhook receives.
type WebhookPayload struct {
	Version      int              `json:"version"`
	Delivery     string           `json:"delivery"`
	Notification string           `json:"notification"`
	Type         Type             `json:"type"`
	Municipality string           `json:"municipality,omitempty"`
	Group        string           `json:"group,omitempty"`
	Class        Class            `json:"class,omitempty"`
	Step         int              `json:"step"`
	Called       []string         `json:"called,omitempty"`
	Recipient    WebhookRecipient `json:"recipient"`
	Subject      string           `json:"subject"`
	Text         string           `json:"text"`
	Short        string           `json:"short"`
	URL          string           `json:"url,omitempty"`
	CreatedAt    time.Time        `json:"created_at"`
	Alerts       []WebhookAlert   `json:"alerts"`
}

// BuildWebhook makes the payload of a notification for a recipient.
func BuildWebhook(delivery string, n Notification, msg Message, to WebhookRecipient, rc RenderContext) WebhookPayload {
	p := WebhookPayload{Version: WebhookVersion, Delivery: delivery, Notification: n.ID, Type: n.Type, Municipality: n.Municipality,
		Group: n.Group, Class: n.Class, Step: n.Step, Called: n.Called, Recipient: to, Subject: msg.Subject, Text: msg.Text,
		Short: msg.Short, URL: msg.URL, CreatedAt: n.At.UTC(), Alerts: []WebhookAlert{}}
	for _, a := range n.Alerts {
		d := rc.details(a.Sensor)
		wa := WebhookAlert{ID: a.ID, Kind: string(a.Kind), Class: ClassOf(a), State: string(a.State), Sensor: a.Sensor,
			Address: d.Address, Gateway: a.Gateway, Municipality: a.Municipality, Establishment: a.Establishment,
			EstablishmentAddress: d.EstablishmentAddress, LAeqDB: a.LAeqDB, LimitDB: a.LimitDB, MarginDB: a.MarginDB,
			Article: a.Article, CodeID: a.CodeID, Period: a.PeriodLabel, Reason: a.Reason, Screening: a.Screening,
			FiringAt: a.FiringAt.UTC(), ResolvedAt: a.ResolvedAt.UTC(), URL: AlertURL(rc.PublicURL, a.ID)}
		if d.Establishment != "" {
			wa.Establishment = d.Establishment
		}
		p.Alerts = append(p.Alerts, wa)
	}
	return p
}

// Marshal encodes a payload (UTF-8, no HTML escaping).
func (p WebhookPayload) Marshal() ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("notify: webhook payload: %w", err)
	}
	return []byte(b.String()), nil
}

// Sign returns the signature header value of body sent at ts.
func Sign(secret []byte, ts time.Time, body []byte) string {
	return "v1=" + hex.EncodeToString(mac(secret, strconv.FormatInt(ts.Unix(), 10), body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Errors of Verify.
var (
	ErrBadTimestamp = errors.New("timestamp header missing or malformed")
	ErrStale        = errors.New("timestamp outside the tolerance (replayed or clock off)")
	ErrBadSignature = errors.New("signature does not match")
)

// Verify checks a received webhook as a receiver should: the timestamp
// header is unix seconds within tolerance of now, and one of the
// comma-separated v1= values of the signature header is the HMAC-SHA256
// of timestamp "." body under secret (compared in constant time).
func Verify(secret []byte, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64)
	if err != nil || ts <= 0 || len(timestamp) > 20 {
		return ErrBadTimestamp
	}
	d := now.Sub(time.Unix(ts, 0))
	if d < -tolerance || d > tolerance {
		return ErrStale
	}
	want := mac(secret, strconv.FormatInt(ts, 10), body)
	for _, part := range strings.Split(signature, ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(part), "v1=")
		if !ok {
			continue
		}
		got, err := hex.DecodeString(v)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrBadSignature
}
