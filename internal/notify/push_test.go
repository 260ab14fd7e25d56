package notify

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notify"
)

// pushService is a Web Push service (RFC 8030) for tests: it checks the
// VAPID authorization (RFC 8292) and decrypts the aes128gcm payload (RFC
// 8291, RFC 8188) with the subscriber's keys, as a browser's push service
// and the browser would, written from the RFCs independently of the
// library under test.
type pushService struct {
	srv    *httptest.Server
	priv   *ecdh.PrivateKey
	auth   []byte
	status int // answer; 201 by default

	mu   sync.Mutex
	got  []pushPayload
	errs []error
}

func newPushService(t *testing.T) *pushService {
	p := &pushService{status: http.StatusCreated}
	var err error
	if p.priv, err = ecdh.P256().GenerateKey(rand.Reader); err != nil {
		t.Fatal(err)
	}
	p.auth = make([]byte, 16)
	rand.Read(p.auth)
	p.srv = httptest.NewTLSServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pushService) subscription() notify.PushSubscription {
	var s notify.PushSubscription
	s.Endpoint = p.srv.URL + "/push/abc123"
	s.Keys.P256dh = base64.RawURLEncoding.EncodeToString(p.priv.PublicKey().Bytes())
	s.Keys.Auth = base64.RawURLEncoding.EncodeToString(p.auth)
	return s
}

func (p *pushService) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var pl pushPayload
	err := p.check(r, body, &pl)
	p.mu.Lock()
	p.got, p.errs = append(p.got, pl), append(p.errs, err)
	status := p.status
	p.mu.Unlock()
	w.WriteHeader(status)
}

func hmacSHA256(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func (p *pushService) check(r *http.Request, body []byte, out *pushPayload) error {
	if r.Header.Get("Content-Encoding") != "aes128gcm" || r.Header.Get("TTL") == "" || r.Header.Get("Urgency") != "high" {
		return fmt.Errorf("headers %v", r.Header)
	}
	// RFC 8292: Authorization: vapid t=<JWT>, k=<public key>
	a := r.Header.Get("Authorization")
	var tok, key string
	for _, part := range strings.Split(strings.TrimPrefix(a, "vapid "), ",") {
		part = strings.TrimSpace(part)
		if v, ok := strings.CutPrefix(part, "t="); ok {
			tok = v
		}
		if v, ok := strings.CutPrefix(part, "k="); ok {
			key = v
		}
	}
	kb, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil || len(kb) != 65 {
		return fmt.Errorf("vapid key %q", key)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), kb)
	if err != nil {
		return fmt.Errorf("vapid key: %w", err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return fmt.Errorf("jwt %q", tok)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return errors.New("jwt signature is not ES256 r||s")
	}
	h := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return errors.New("jwt signature does not verify with k")
	}
	claimsJSON, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}
	if err := json.Unmarshal(claimsJSON, &claims); err != nil {
		return err
	}
	if claims.Aud != p.srv.URL || claims.Exp < time.Now().Unix() || claims.Exp > time.Now().Add(24*time.Hour).Unix() ||
		!strings.HasPrefix(claims.Sub, "mailto:") {
		return fmt.Errorf("claims %+v", claims)
	}
	// RFC 8188 header: salt(16) rs(4) idlen(1) keyid(idlen) = sender public key.
	if len(body) < 21 {
		return errors.New("short body")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if idlen != 65 || len(body) < 21+idlen || rs < 18 {
		return fmt.Errorf("header: idlen %d rs %d", idlen, rs)
	}
	asPub, err := ecdh.P256().NewPublicKey(body[21 : 21+idlen])
	if err != nil {
		return err
	}
	ct := body[21+idlen:]
	shared, err := p.priv.ECDH(asPub)
	if err != nil {
		return err
	}
	// RFC 8291 §3.4.
	prkKey := hmacSHA256(p.auth, shared)
	keyInfo := append(append([]byte("WebPush: info\x00"), p.priv.PublicKey().Bytes()...), asPub.Bytes()...)
	ikm := hmacSHA256(prkKey, keyInfo, []byte{1})
	prk := hmacSHA256(salt, ikm)
	cek := hmacSHA256(prk, []byte("Content-Encoding: aes128gcm\x00"), []byte{1})[:16]
	nonce := hmacSHA256(prk, []byte("Content-Encoding: nonce\x00"), []byte{1})[:12]
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, nonce, ct, nil)
	if err != nil {
		return fmt.Errorf("decrypt: %w", err)
	}
	// strip padding: the last non-zero byte is the delimiter 0x02
	i := len(plain) - 1
	for i >= 0 && plain[i] == 0 {
		i--
	}
	if i < 0 || plain[i] != 2 {
		return errors.New("no last-record delimiter")
	}
	return json.Unmarshal(plain[:i], out)
}

func TestWebPushProtocol(t *testing.T) {
	ps := newPushService(t)
	h := start(t, "", nil, func(o *Options) { o.Transport = ps.srv.Client().Transport; o.AllowInternalPush = true })
	set := baseSettings()
	set.Push = notify.PushSettings{Enabled: true, Subject: "mailto:ti@lapa.pr.gov.br"}
	h.put(set)
	if err := h.svc.Subscribe(context.Background(), "fiscal-b", ps.subscription()); err != nil {
		t.Fatal(err)
	}
	ev := firing("lapa-bar-01", t0)
	h.svc.Notify(context.Background(), ev)
	hs := h.waitHistory(ev.Alert.ID, notify.EntrySent, "fiscal-b")
	if !strings.Contains(dump(hs), "push") {
		t.Errorf("history:\n%s", dump(hs))
	}
	ps.mu.Lock()
	if len(ps.got) != 1 || ps.errs[0] != nil {
		t.Fatalf("push service: %v %v", ps.got, ps.errs)
	}
	got := ps.got[0]
	ps.mu.Unlock()
	if got.Title != "Sossego — Alerta em lapa" || !strings.Contains(got.Body, "lapa-bar-01 a 72,4 dB(A)") ||
		!strings.HasPrefix(got.URL, "https://sossego.lapa.pr.gov.br/#/alertas/") {
		t.Fatalf("payload %+v", got)
	}
	// The push service says the subscription expired: it is removed and
	// the delivery fails for good, visibly.
	ps.mu.Lock()
	ps.status = http.StatusGone
	ps.mu.Unlock()
	h.clock.Advance(3 * time.Minute) // past the group interval
	ev2 := firing("lapa-pub-02", h.clock.Now())
	h.svc.Notify(context.Background(), ev2)
	hs = h.waitHistory(ev2.Alert.ID, notify.EntryFailed, "fiscal-b")
	if !strings.Contains(dump(hs), "HTTP 410") {
		t.Errorf("history:\n%s", dump(hs))
	}
	if n, _ := h.svc.Devices(context.Background(), "fiscal-b"); n != 0 {
		t.Fatalf("%d devices after 410", n)
	}
	if err := h.svc.Subscribe(context.Background(), "fiscal-b", notify.PushSubscription{Endpoint: "http://x"}); err == nil {
		t.Fatal("a plain-http subscription was accepted")
	}
}

func FuzzCheckPushSubscription(f *testing.F) {
	f.Add(`{"endpoint":"https://push.example/x","keys":{"p256dh":"BAAA","auth":"AAAA"}}`)
	f.Add(`{"endpoint":"ftp://x"}`)
	f.Fuzz(func(t *testing.T, doc string) {
		var s notify.PushSubscription
		if json.Unmarshal([]byte(doc), &s) != nil {
			return
		}
		if notify.CheckPushSubscription(s) == nil && !strings.HasPrefix(s.Endpoint, "https://") {
			t.Fatalf("accepted %q", s.Endpoint)
		}
	})
}
