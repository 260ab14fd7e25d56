package registry

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func b64Key(seed byte) string {
	k := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	return base64.StdEncoding.EncodeToString(k.Public().(ed25519.PublicKey))
}

// rotated is good with the gateway's key rotated twice: key 1 until 10:00,
// key 2 (revoked) until 12:00, key 3 current from 12:00.
func rotated(extra string) string {
	return strings.Replace(good, "    public_key: WrzeNbYxVwayPNXiG85tUhP9oy1l28/sW1YVlsn/6G0=\n",
		"    public_key: "+b64Key(3)+"\n"+extra+
			"    previous_keys:\n"+
			"      - {public_key: "+b64Key(1)+", valid_until: 2026-03-10T10:00:00Z}\n"+
			"      - {public_key: "+b64Key(2)+", valid_from: 2026-03-10T10:00:00Z, valid_until: 2026-03-10T12:00:00Z, revoked: true, reason: cartão SD extraviado}\n", 1)
}

func TestGatewayKeyAt(t *testing.T) {
	r, err := Parse([]byte(rotated("")))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := r.Gateway("gw-1")
	if ks := g.Keys(); len(ks) != 3 || !ks[2].Current || ks[2].From != time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) || !ks[1].Revoked || ks[1].Reason != "cartão SD extraviado" {
		t.Fatalf("keys %+v", ks)
	}
	for _, tc := range []struct {
		at   string
		want string
	}{
		{"2020-01-01T00:00:00Z", b64Key(1)},
		{"2026-03-10T09:59:59Z", b64Key(1)},
		{"2026-03-10T10:00:00Z", b64Key(2)},
		{"2026-03-10T11:59:59.999Z", b64Key(2)},
		{"2026-03-10T12:00:00Z", b64Key(3)},
		{"2030-01-01T00:00:00Z", b64Key(3)},
	} {
		at, _ := time.Parse(time.RFC3339, tc.at)
		k, ok := g.KeyAt(at)
		if !ok || base64.StdEncoding.EncodeToString(k.Key) != tc.want || g.VerifyKeyAt(at) == nil {
			t.Errorf("KeyAt(%s) = %v %v, want %s", tc.at, k, ok, tc.want)
		}
	}
	if base64.StdEncoding.EncodeToString(g.Key()) != b64Key(3) {
		t.Error("Key() is not the current key")
	}

	// A planned rotation: the new key takes over at key_valid_from, the
	// previous one is in force until then.
	r, err = Parse([]byte(rotated("    key_valid_from: 2026-03-10T13:00:00Z\n")))
	if err != nil {
		t.Fatal(err)
	}
	g, _ = r.Gateway("gw-1")
	if _, ok := g.KeyAt(time.Date(2026, 3, 10, 12, 30, 0, 0, time.UTC)); ok {
		t.Error("a key in force between the revoked key's end and the new key's start")
	}
	if k, ok := g.KeyAt(time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC)); !ok || !k.Current {
		t.Error("current key not in force at key_valid_from")
	}

	// Without history: the one key, always.
	r, _ = Parse([]byte(good))
	g, _ = r.Gateway("gw-1")
	if k, ok := g.KeyAt(time.Time{}); !ok || !k.Current || len(g.Keys()) != 1 {
		t.Errorf("single key: %+v %v", k, ok)
	}
}

func TestGatewayKeyHistoryErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"no valid_until", strings.Replace(rotated(""), ", valid_until: 2026-03-10T10:00:00Z", "", 1), "previous_keys[0].valid_until obrigatório"},
		{"bad time", strings.Replace(rotated(""), "valid_until: 2026-03-10T10:00:00Z", "valid_until: ontem", 1), `previous_keys[0].valid_until "ontem" não é uma data e hora RFC 3339`},
		{"overlap", strings.Replace(rotated(""), "valid_from: 2026-03-10T10:00:00Z", "valid_from: 2026-03-10T09:00:00Z", 1), "previous_keys[1] começa antes do fim da chave anterior"},
		{"reversed", strings.Replace(rotated(""), "valid_until: 2026-03-10T12:00:00Z", "valid_until: 2026-03-10T10:00:00Z", 1), "valid_from deve ser anterior a valid_until"},
		{"bad key", strings.Replace(rotated(""), b64Key(1), "abc", 1), "previous_keys[0].public_key deve ser uma chave ed25519"},
		{"current repeated", strings.Replace(rotated(""), b64Key(1), b64Key(3), 1), "previous_keys[0].public_key repete outra chave"},
		{"current starts too early", rotated("    key_valid_from: 2026-03-10T11:00:00Z\n"), "key_valid_from é anterior ao fim da última chave"},
		{"bad key_valid_from", rotated("    key_valid_from: amanhã\n"), `key_valid_from "amanhã"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "linha 3:") {
				t.Errorf("error %v, want %q on line 3", err, tc.want)
			}
		})
	}
}
