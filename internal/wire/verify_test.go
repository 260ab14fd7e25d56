package wire

import (
	"bytes"
	"crypto/ed25519"
	"math/big"
	"slices"
	"testing"
)

// nonCanonicalS returns sig with S replaced by S + ℓ (the group order):
// the same point equation holds, but RFC 8032 and crypto/ed25519 reject it.
func nonCanonicalS(sig []byte) []byte {
	l, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	le := slices.Clone(sig[32:])
	slices.Reverse(le)
	s := new(big.Int).SetBytes(le)
	s.Add(s, l)
	be := s.FillBytes(make([]byte, 32))
	slices.Reverse(be)
	return append(slices.Clone(sig[:32]), be...)
}

// TestVerifyMatchesStdlib: the fast verifier accepts and rejects exactly
// what crypto/ed25519 does, on valid signatures and on every kind of
// tampering (body, R, S, non-canonical S, wrong key, truncation).
func TestVerifyMatchesStdlib(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{9}, 64)))
	body := []byte(`{"v":1,"seq":1}`)
	sig := ed25519.Sign(priv, body)
	flip := func(b []byte, i int) []byte { c := slices.Clone(b); c[i] ^= 1; return c }
	cases := []struct {
		name string
		pub  ed25519.PublicKey
		body []byte
		sig  []byte
		want bool
	}{
		{"valid", pub, body, sig, true},
		{"body changed", pub, flip(body, 3), sig, false},
		{"R changed", pub, body, flip(sig, 0), false},
		{"S changed", pub, body, flip(sig, 40), false},
		{"S not canonical", pub, body, nonCanonicalS(sig), false},
		{"other key", otherPub, body, sig, false},
		{"truncated", pub, body, sig[:63], false},
		{"empty body", pub, nil, ed25519.Sign(priv, nil), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			std := ed25519.Verify(tc.pub, tc.body, tc.sig)
			if std != tc.want {
				t.Fatalf("crypto/ed25519 says %v, the case expects %v", std, tc.want)
			}
			env := &Envelope{V: Version, Kid: "gw", Body: tc.body, Sig: tc.sig}
			k, err := NewPublicKey(tc.pub)
			if err != nil {
				t.Fatal(err)
			}
			if got := k.Verify(env) == nil; got != std {
				t.Errorf("PublicKey.Verify = %v, crypto/ed25519 = %v", got, std)
			}
			if got := Verify(env, tc.pub) == nil; got != std {
				t.Errorf("Verify = %v, crypto/ed25519 = %v", got, std)
			}
		})
	}
}

func TestVerifyRejections(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	env := &Envelope{V: Version, Kid: "gw", Body: []byte("{}")}
	if err := Verify(env, pub); ReasonOf(err) != ReasonSignature {
		t.Errorf("no signature: %v", err)
	}
	env.Sig = make([]byte, 64)
	if err := Verify(env, pub[:31]); ReasonOf(err) != ReasonSignature {
		t.Errorf("short key: %v", err)
	}
	var nilKey *PublicKey
	if err := nilKey.Verify(env); ReasonOf(err) != ReasonSignature {
		t.Errorf("nil key: %v", err)
	}
	offCurve := make([]byte, 32)
	offCurve[0] = 2 // y = 2 has no x on edwards25519
	if _, err := NewPublicKey(offCurve); err == nil {
		t.Error("NewPublicKey accepted a point off the curve")
	}
	if err := Verify(env, offCurve); ReasonOf(err) != ReasonSignature {
		t.Errorf("off-curve key: %v", err)
	}
}

// FuzzVerifyMatchesStdlib: for any key, message and signature bytes the
// fast verifier agrees with crypto/ed25519.
func FuzzVerifyMatchesStdlib(f *testing.F) {
	pub, priv, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	msg := []byte(`{"v":1}`)
	sig := ed25519.Sign(priv, msg)
	f.Add([]byte(pub), msg, sig)
	f.Add([]byte(pub), msg, nonCanonicalS(sig))
	f.Add(make([]byte, 32), msg, make([]byte, 64))
	f.Fuzz(func(t *testing.T, pub, msg, sig []byte) {
		if len(pub) != ed25519.PublicKeySize {
			return
		}
		std := ed25519.Verify(pub, msg, sig)
		env := &Envelope{V: Version, Kid: "gw", Body: msg, Sig: sig}
		k, err := NewPublicKey(pub)
		if err != nil {
			if std {
				t.Fatalf("crypto/ed25519 accepted a signature under a key NewPublicKey refused: %v", err)
			}
			return
		}
		if got := k.Verify(env) == nil; got != std {
			t.Fatalf("PublicKey.Verify = %v, crypto/ed25519 = %v", got, std)
		}
	})
}
