package signature

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"

	"github.com/sossego/sossego/internal/wire"
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

// TestVerifyMatchesStdlib: under a real key, the verifier accepts and
// rejects exactly what crypto/ed25519 does, one by one and in a batch, on
// valid signatures and on every kind of tampering (body, R, S,
// non-canonical S, wrong key, truncation).
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
	// The whole table in one batch, and every case again beside valid
	// signatures (a batch of one is checked on its own).
	var bv BatchVerifier
	for _, tc := range cases {
		k, err := NewPublicKey(tc.pub)
		if err != nil {
			t.Fatal(err)
		}
		bv.Add(k, &wire.Envelope{V: wire.Version, Kid: "gw", Body: tc.body, Sig: tc.sig})
	}
	verdicts := bv.Verify()
	if len(verdicts) != len(cases) || bv.Len() != 0 {
		t.Fatalf("%d verdicts for %d cases, %d left", len(verdicts), len(cases), bv.Len())
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := verdicts[i] == nil; got != tc.want {
				t.Errorf("in the whole table's batch: %v, want %v (%v)", got, tc.want, verdicts[i])
			}
			k, _ := NewPublicKey(tc.pub)
			good, _ := NewPublicKey(pub)
			for _, n := range []int{0, 1, 5} {
				for range n {
					bv.Add(good, &wire.Envelope{V: wire.Version, Kid: "gw", Body: body, Sig: sig})
				}
				idx := bv.Add(k, &wire.Envelope{V: wire.Version, Kid: "gw", Body: tc.body, Sig: tc.sig})
				v := bv.Verify()
				for j, err := range v {
					if j == idx {
						if got := err == nil; got != tc.want {
							t.Errorf("after %d valid: %v, want %v (%v)", n, got, tc.want, err)
						} else if err != nil && wire.ReasonOf(err) != wire.ReasonSignature {
							t.Errorf("reason %q, want %q", wire.ReasonOf(err), wire.ReasonSignature)
						}
					} else if err != nil {
						t.Errorf("a valid signature beside it rejected: %v", err)
					}
				}
			}
			std := ed25519.Verify(tc.pub, tc.body, tc.sig)
			if std != tc.want {
				t.Fatalf("crypto/ed25519 says %v, the case expects %v", std, tc.want)
			}
			env := &wire.Envelope{V: wire.Version, Kid: "gw", Body: tc.body, Sig: tc.sig}
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
	env := &wire.Envelope{V: wire.Version, Kid: "gw", Body: []byte("{}")}
	if err := Verify(env, pub); wire.ReasonOf(err) != wire.ReasonSignature {
		t.Errorf("no signature: %v", err)
	}
	env.Sig = make([]byte, 64)
	if err := Verify(env, pub[:31]); wire.ReasonOf(err) != wire.ReasonSignature {
		t.Errorf("short key: %v", err)
	}
	var nilKey *PublicKey
	if err := nilKey.Verify(env); wire.ReasonOf(err) != wire.ReasonSignature {
		t.Errorf("nil key: %v", err)
	}
	offCurve := make([]byte, 32)
	offCurve[0] = 2 // y = 2 has no x on edwards25519
	if _, err := NewPublicKey(offCurve); err == nil {
		t.Error("NewPublicKey accepted a point off the curve")
	}
	if err := Verify(env, offCurve); wire.ReasonOf(err) != wire.ReasonSignature {
		t.Errorf("off-curve key: %v", err)
	}
}

// levels is a valid levels batch, sealed by the tests below.
func levels() *wire.Batch {
	t0 := time.Date(2026, 3, 10, 23, 0, 0, 0, time.UTC)
	return &wire.Batch{
		V: wire.Version, Kind: wire.KindLevels, Municipality: "lapa", Gateway: "gw-01", Sensor: "m1", Seq: 7,
		SentAt: t0, Device: wire.Device{Model: "sim", Serial: "0001", Grade: "class1"},
		Records: []wire.Record{{T: t0.Add(-2 * time.Second), DurMs: 1000, LAeq: 60, LAFmax: 63, LAFmin: 55}},
	}
}

// TestVerifyRejects: Verify takes the sealed body and refuses it changed
// (even re-indented), unsigned, or under a wrong, missing or short key.
func TestVerifyRejects(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 64)))
	otherPub, _, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{1}, 64)))
	payload, err := wire.Seal(levels(), priv)
	if err != nil {
		t.Fatal(err)
	}
	unsigned, err := wire.Seal(levels(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Tamper: change one byte of the body (60 → 61 dB) keeping valid JSON.
	tampered := bytes.Replace(payload, []byte(`"laeq_db":60`), []byte(`"laeq_db":61`), 1)
	if bytes.Equal(tampered, payload) {
		t.Fatal("tamper did not change the payload")
	}
	// Re-indenting the body keeps the same JSON value but not the same bytes.
	env, _, _ := wire.Open(payload)
	var ind bytes.Buffer
	_ = json.Indent(&ind, env.Body, "", " ")
	sig, _ := json.Marshal(env.Sig)
	reformatted := []byte(`{"v":1,"kid":"gw-01","body":` + ind.String() + `,"sig":` + string(sig) + `}`)

	tests := []struct {
		name    string
		payload []byte
		pub     ed25519.PublicKey
	}{
		{"tampered body", tampered, pub},
		{"reformatted body", reformatted, pub},
		{"unsigned", unsigned, pub},
		{"wrong key", payload, otherPub},
		{"no key registered", payload, nil},
		{"short key", payload, pub[:10]},
	}
	env, _, err = wire.Open(payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(env, pub); err != nil {
		t.Fatalf("the sealed batch: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, _, err := wire.Open(tc.payload)
			if err != nil {
				t.Fatalf("wire.Open: %v", err)
			}
			err = Verify(env, tc.pub)
			if err == nil {
				t.Fatal("Verify accepted")
			}
			if wire.ReasonOf(err) != wire.ReasonSignature {
				t.Errorf("reason %q, want %q", wire.ReasonOf(err), wire.ReasonSignature)
			}
		})
	}
}

// FuzzVerifyMatchesStdlib: for any key NewPublicKey takes, message and
// signature bytes the verifier agrees with crypto/ed25519 (a disagreement
// needs an R built by the key's holder: TestVerifyCofactoredDifference).
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
		env := &wire.Envelope{V: wire.Version, Kid: "gw", Body: msg, Sig: sig}
		k, err := NewPublicKey(pub)
		if err != nil {
			// Refused keys: off the curve (crypto/ed25519 refuses them
			// too), or weak (TestNewPublicKeyRefusesWeakKeys).
			return
		}
		if got := k.Verify(env) == nil; got != std {
			t.Fatalf("PublicKey.Verify = %v, crypto/ed25519 = %v", got, std)
		}
	})
}

// TestNewPublicKeyRefusesWeakKeys: keys no real generator produces are
// refused — small order (anyone could sign for them), a small-order
// component, a non-canonical encoding — while crypto/ed25519 would take
// them.
func TestNewPublicKeyRefusesWeakKeys(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	var mixed curve.EdwardsPoint
	mixed.Add(decodePoint(t, pub), order2(t))
	var mixedC curve.CompressedEdwardsY
	mixedC.SetEdwardsPoint(&mixed)
	// y = 1 + p: the identity's y, not reduced (p = 2^255 - 19).
	nonCanonical := make([]byte, 32)
	nonCanonical[0] = 0xee
	for i := 1; i < 31; i++ {
		nonCanonical[i] = 0xff
	}
	nonCanonical[31] = 0x7f
	cases := []struct {
		name string
		key  []byte
		want string
	}{
		{"identity", append([]byte{1}, make([]byte, 31)...), "small order"},
		{"order 2", order2Bytes, "small order"},
		{"key plus a point of order 2", mixedC[:], "small-order component"},
		{"y not reduced", nonCanonical, "not canonically encoded"},
		{"off the curve", append([]byte{2}, make([]byte, 31)...), "not a point"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPublicKey(tc.key)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewPublicKey = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := NewPublicKey(pub); err != nil {
		t.Errorf("a generated key refused: %v", err)
	}
}

// order2Bytes encodes (0, -1), the point of order 2: y = p - 1.
var order2Bytes = append([]byte{0xec}, append(bytes.Repeat([]byte{0xff}, 30), 0x7f)...)

// decodePoint decompresses a 32-byte encoding, failing the test if it is
// not a point.
func decodePoint(t *testing.T, b []byte) *curve.EdwardsPoint {
	t.Helper()
	var c curve.CompressedEdwardsY
	var p curve.EdwardsPoint
	if _, err := c.SetBytes(b); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetCompressedY(&c); err != nil {
		t.Fatal(err)
	}
	return &p
}

func order2(t *testing.T) *curve.EdwardsPoint {
	t.Helper()
	p := decodePoint(t, order2Bytes)
	if !p.IsSmallOrder() || p.IsIdentity() {
		t.Fatal("order2Bytes is not a point of order 2")
	}
	return p
}

// TestVerifyCofactoredDifference pins the one place where the rule differs
// from crypto/ed25519 (docs/wire.md): a signature whose R the key's holder
// built with a small-order component satisfies RFC 8032's cofactored
// equation but not crypto/ed25519's cofactorless one. Only the holder of
// the private key can make one. Batch and single checks agree on it.
func TestVerifyCofactoredDifference(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 32)
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	msg := []byte(`{"v":1,"seq":9}`)

	h := sha512.Sum512(seed)
	h[0] &= 248
	h[31] &= 127
	h[31] |= 64
	var a, r, k, s scalar.Scalar
	if _, err := a.SetBytesModOrderWide(append(h[:32:32], make([]byte, 32)...)); err != nil {
		t.Fatal(err)
	}
	rh := sha512.Sum512(append(h[32:], msg...))
	if _, err := r.SetBytesModOrderWide(rh[:]); err != nil {
		t.Fatal(err)
	}
	var R curve.EdwardsPoint
	R.MulBasepoint(curve.ED25519_BASEPOINT_TABLE, &r)
	R.Add(&R, order2(t))
	var Rc curve.CompressedEdwardsY
	Rc.SetEdwardsPoint(&R)
	kh := sha512.New()
	kh.Write(Rc[:])
	kh.Write(pub)
	kh.Write(msg)
	if _, err := k.SetBytesModOrderWide(kh.Sum(nil)); err != nil {
		t.Fatal(err)
	}
	s.Mul(&k, &a)
	s.Add(&s, &r)
	sig := append(slices.Clone(Rc[:]), make([]byte, 32)...)
	if err := s.ToBytes(sig[32:]); err != nil {
		t.Fatal(err)
	}

	if ed25519.Verify(pub, msg, sig) {
		t.Fatal("crypto/ed25519 accepted the torsioned R; the test no longer shows the difference")
	}
	key, err := NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	env := &wire.Envelope{V: wire.Version, Kid: "gw", Body: msg, Sig: sig}
	if err := key.Verify(env); err != nil {
		t.Errorf("cofactored check refused it: %v", err)
	}
	var bv BatchVerifier
	good := &wire.Envelope{V: wire.Version, Kid: "gw", Body: []byte("x"), Sig: ed25519.Sign(priv, []byte("x"))}
	bv.Add(key, good)
	bv.Add(key, env)
	bv.Add(key, good)
	for i, err := range bv.Verify() {
		if err != nil {
			t.Errorf("batch verdict %d: %v", i, err)
		}
	}
}

// FuzzBatchMatchesSingle: whatever mix of valid and mangled signatures a
// batch holds, each verdict is the one PublicKey.Verify gives alone.
func FuzzBatchMatchesSingle(f *testing.F) {
	_, priv, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	_, priv2, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{9}, 64)))
	f.Add([]byte("abc"), uint16(0), byte(0), uint8(3))
	f.Add([]byte(`{"v":1}`), uint16(70), byte(1), uint8(9))
	f.Add([]byte{}, uint16(33), byte(0x80), uint8(1))
	f.Fuzz(func(t *testing.T, msg []byte, flipAt uint16, flip byte, n uint8) {
		keys := []ed25519.PrivateKey{priv, priv2}
		var bv BatchVerifier
		var envs []*wire.Envelope
		var pks []*PublicKey
		for i := range int(n%12) + 1 {
			p := keys[i%2]
			body := append(slices.Clone(msg), byte(i))
			sig := ed25519.Sign(p, body)
			// Every third entry is mangled: a byte of the body or the
			// signature (position flipAt over both) XORed with flip.
			if i%3 == 1 {
				at := int(flipAt) % (len(body) + len(sig))
				if at < len(body) {
					body[at] ^= flip
				} else {
					sig[at-len(body)] ^= flip
				}
			}
			k, err := NewPublicKey(p.Public().(ed25519.PublicKey))
			if err != nil {
				t.Fatal(err)
			}
			env := &wire.Envelope{V: wire.Version, Kid: "gw", Body: body, Sig: sig}
			envs, pks = append(envs, env), append(pks, k)
			bv.Add(k, env)
		}
		for i, err := range bv.Verify() {
			single := pks[i].Verify(envs[i])
			if (err == nil) != (single == nil) {
				t.Fatalf("entry %d: batch %v, alone %v", i, err, single)
			}
			if std := ed25519.Verify(pks[i].Raw(), envs[i].Body, envs[i].Sig); std != (single == nil) {
				t.Fatalf("entry %d: crypto/ed25519 %v, ours %v", i, std, single)
			}
		}
	})
}
