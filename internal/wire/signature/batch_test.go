package signature

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha512"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
	voied25519 "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"

	"github.com/sossego/sossego/internal/wire"
)

// testSigner is a gateway key for the batch tests, with what it takes to
// build signatures by hand (a chosen nonce point R).
type testSigner struct {
	priv ed25519.PrivateKey
	pub  *PublicKey
	a    scalar.Scalar // the secret scalar
}

func newTestSigner(t *testing.T, b byte) *testSigner {
	t.Helper()
	seed := bytes.Repeat([]byte{b}, 32)
	s := &testSigner{priv: ed25519.NewKeyFromSeed(seed)}
	var err error
	if s.pub, err = NewPublicKey(s.priv.Public().(ed25519.PublicKey)); err != nil {
		t.Fatal(err)
	}
	h := sha512.Sum512(seed)
	h[0] &= 248
	h[31] &= 127
	h[31] |= 64
	if _, err := s.a.SetBytesModOrder(h[:32]); err != nil {
		t.Fatal(err)
	}
	return s
}

func testSigners(t *testing.T, n int) []*testSigner {
	t.Helper()
	out := make([]*testSigner, n)
	for i := range out {
		out[i] = newTestSigner(t, byte(11+i))
	}
	return out
}

// signWithR signs msg with the nonce point R = [r]B + add (add may be nil),
// its encoding replaced by enc if enc is not nil; S = r + k·a with k
// hashed over the bytes actually sent, so that the group equation holds
// whatever R's encoding.
func (s *testSigner) signWithR(t *testing.T, msg []byte, r *scalar.Scalar, add *curve.EdwardsPoint, enc []byte) []byte {
	t.Helper()
	var R curve.EdwardsPoint
	R.MulBasepoint(curve.ED25519_BASEPOINT_TABLE, r)
	if add != nil {
		R.Add(&R, add)
	}
	var Rc curve.CompressedEdwardsY
	Rc.SetEdwardsPoint(&R)
	rb := slices.Clone(Rc[:])
	if enc != nil {
		rb = slices.Clone(enc)
	}
	h := sha512.New()
	h.Write(rb)
	h.Write(s.pub.Raw())
	h.Write(msg)
	var k, S scalar.Scalar
	if _, err := k.SetBytesModOrderWide(h.Sum(nil)); err != nil {
		t.Fatal(err)
	}
	S.Mul(&k, &s.a)
	S.Add(&S, r)
	sig := append(rb, make([]byte, 32)...)
	if err := S.ToBytes(sig[32:]); err != nil {
		t.Fatal(err)
	}
	return sig
}

// nonce is a per-message r, as RFC 8032 would derive it (any r will do).
func nonce(t *testing.T, msg []byte) *scalar.Scalar {
	t.Helper()
	h := sha512.Sum512(append([]byte("nonce"), msg...))
	var r scalar.Scalar
	if _, err := r.SetBytesModOrderWide(h[:]); err != nil {
		t.Fatal(err)
	}
	return &r
}

func testBody(i int) []byte { return []byte(`{"v":1,"seq":` + strconv.Itoa(i) + `}`) }

// decodesR reports whether sig's R is a canonical encoding of a point.
func decodesR(sig []byte) bool {
	var c curve.CompressedEdwardsY
	var p curve.EdwardsPoint
	copy(c[:], sig[:32])
	_, err := p.SetCompressedY(&c)
	return err == nil && c.IsCanonicalVartime()
}

// flipR flips bits of R, one at a time from the lowest, until R is (onCurve)
// or is not (!onCurve) a canonical encoding of a point.
func flipR(t *testing.T, sig []byte, onCurve bool) []byte {
	t.Helper()
	for bit := range 254 {
		c := slices.Clone(sig)
		c[bit/8] ^= 1 << (bit % 8)
		if decodesR(c) == onCurve {
			return c
		}
	}
	t.Fatal("no bit flip of R gives what the case needs")
	return nil
}

// equation adds the entries to bv and runs the batch equation alone,
// without the one-by-one fallback: whether it held, and the rejections
// of the decoding step (which also holds precheck's). bv is then empty.
func equation(bv *BatchVerifier, keys []*PublicKey, envs []*wire.Envelope) (bool, []error) {
	for i := range envs {
		bv.Add(keys[i], envs[i])
	}
	defer bv.reset()
	out := make([]error, len(envs))
	copy(out, bv.pre)
	return bv.batch(out), out
}

// checkVerdicts runs Verify on the entries and compares every verdict with
// PublicKey.Verify's, reason and message.
func checkVerdicts(t *testing.T, bv *BatchVerifier, keys []*PublicKey, envs []*wire.Envelope) []error {
	t.Helper()
	for i := range envs {
		if got := bv.Add(keys[i], envs[i]); got != i {
			t.Fatalf("Add returned %d for entry %d", got, i)
		}
	}
	if bv.Len() != len(envs) {
		t.Fatalf("Len = %d after %d Adds", bv.Len(), len(envs))
	}
	verdicts := bv.Verify()
	if len(verdicts) != len(envs) || bv.Len() != 0 {
		t.Fatalf("%d verdicts for %d entries, %d left", len(verdicts), len(envs), bv.Len())
	}
	for i, err := range verdicts {
		single := keys[i].Verify(envs[i])
		if fmt.Sprint(err) != fmt.Sprint(single) {
			t.Errorf("entry %d: batch %v, alone %v", i, err, single)
		}
	}
	return verdicts
}

// interleavings assign one of nkeys keys to each of n entries.
var interleavings = []struct {
	name string
	key  func(i, n, nkeys int, rng *rand.Rand) int
}{
	{"round robin", func(i, n, nkeys int, _ *rand.Rand) int { return i % nkeys }},
	{"runs", func(i, n, nkeys int, _ *rand.Rand) int { return i * nkeys / n }},
	{"random", func(i, n, nkeys int, rng *rand.Rand) int { return rng.IntN(nkeys) }},
	{"one odd out", func(i, n, nkeys int, _ *rand.Rand) int {
		if i == n/2 {
			return nkeys - 1
		}
		return 0
	}},
}

// TestBatchAggregatedKeysValid: batches of valid signatures by 1 – 5 keys
// in various interleavings pass the aggregated equation itself (not only
// through the one-by-one fallback), with one term per distinct key.
func TestBatchAggregatedKeysValid(t *testing.T) {
	signers := testSigners(t, 5)
	rng := rand.New(rand.NewPCG(1, 2))
	var bv BatchVerifier // reused across every case
	for _, n := range []int{2, 3, 17, 64} {
		for nkeys := 1; nkeys <= 5; nkeys++ {
			for _, il := range interleavings {
				t.Run(fmt.Sprintf("n=%d/keys=%d/%s", n, nkeys, il.name), func(t *testing.T) {
					var keys []*PublicKey
					var envs []*wire.Envelope
					distinct := map[*PublicKey]bool{}
					for i := range n {
						s := signers[il.key(i, n, nkeys, rng)]
						body := testBody(i)
						keys = append(keys, s.pub)
						envs = append(envs, &wire.Envelope{V: wire.Version, Kid: "gw", Body: body, Sig: ed25519.Sign(s.priv, body)})
						distinct[s.pub] = true
					}
					held, out := equation(&bv, keys, envs)
					if !held {
						t.Error("the batch equation failed on valid signatures")
					}
					if got := len(bv.coef) - 1; got != len(distinct) {
						t.Errorf("%d key terms for %d distinct keys", got, len(distinct))
					}
					for i, err := range out {
						if err != nil {
							t.Errorf("entry %d rejected while decoding: %v", i, err)
						}
					}
					for i, err := range checkVerdicts(t, &bv, keys, envs) {
						if err != nil {
							t.Errorf("valid entry %d: %v", i, err)
						}
					}
				})
			}
		}
	}
}

// tampering is one way to spoil entry i's signature (signed by owner).
type tampering struct {
	name string
	// malformed: rejected while decoding (length, S ≥ ℓ, R not a
	// canonical encoding of a point), so it never enters the equation;
	// otherwise it makes the equation fail.
	malformed bool
	apply     func(t *testing.T, signers []*testSigner, owner int, body, sig []byte) ([]byte, []byte)
}

var tamperings = []tampering{
	{"S bit flipped", false, func(t *testing.T, _ []*testSigner, _ int, body, sig []byte) ([]byte, []byte) {
		sig = slices.Clone(sig)
		sig[32] ^= 1
		if !scalar.ScMinimalVartime(sig[32:]) {
			t.Fatal("flipped S is not canonical; the case needs another bit")
		}
		return body, sig
	}},
	{"R another point", false, func(t *testing.T, _ []*testSigner, _ int, body, sig []byte) ([]byte, []byte) {
		return body, flipR(t, sig, true)
	}},
	{"body bit flipped", false, func(t *testing.T, _ []*testSigner, _ int, body, sig []byte) ([]byte, []byte) {
		body = slices.Clone(body)
		body[len(body)/2] ^= 4
		return body, sig
	}},
	{"signed by another key", false, func(t *testing.T, signers []*testSigner, owner int, body, sig []byte) ([]byte, []byte) {
		return body, ed25519.Sign(signers[(owner+1)%len(signers)].priv, body)
	}},
	{"S not canonical (S+ℓ)", true, func(t *testing.T, _ []*testSigner, _ int, body, sig []byte) ([]byte, []byte) {
		return body, nonCanonicalS(sig)
	}},
	{"R not on the curve", true, func(t *testing.T, _ []*testSigner, _ int, body, sig []byte) ([]byte, []byte) {
		return body, flipR(t, sig, false)
	}},
	// The next two satisfy the group equation (R is the identity and
	// S = k·a): only the canonical-encoding check rejects them.
	{"R y not reduced (1+p)", true, func(t *testing.T, signers []*testSigner, owner int, body, _ []byte) ([]byte, []byte) {
		enc := append([]byte{0xee}, bytes.Repeat([]byte{0xff}, 30)...)
		return body, zip215Only(t, signers[owner], body, append(enc, 0x7f))
	}},
	{"R sign bit set with x = 0", true, func(t *testing.T, signers []*testSigner, owner int, body, _ []byte) ([]byte, []byte) {
		enc := append([]byte{0x01}, make([]byte, 31)...)
		enc[31] = 0x80
		return body, zip215Only(t, signers[owner], body, enc)
	}},
	{"truncated", true, func(t *testing.T, _ []*testSigner, _ int, body, sig []byte) ([]byte, []byte) {
		return body, sig[:63]
	}},
	{"one byte too many", true, func(t *testing.T, _ []*testSigner, _ int, body, sig []byte) ([]byte, []byte) {
		return body, append(slices.Clone(sig), 0)
	}},
}

// zip215Only signs body with R the identity sent as enc, a non-canonical
// encoding: valid under ZIP 215 (which skips the encoding check), so the
// canonical-R check is what rejects it.
func zip215Only(t *testing.T, s *testSigner, body, enc []byte) []byte {
	t.Helper()
	var zero scalar.Scalar
	sig := s.signWithR(t, body, &zero, nil, enc)
	zip215 := &voied25519.Options{Verify: voied25519.VerifyOptionsZIP_215}
	if !voied25519.VerifyWithOptions(voied25519.PublicKey(s.pub.Raw()), body, sig, zip215) {
		t.Fatal("the non-canonical R signature does not even satisfy the equation")
	}
	return sig
}

// TestBatchAggregatedKeysBad: in batches by several keys, exactly the
// spoilt signatures are rejected, each verdict is PublicKey.Verify's, and
// the equation itself fails whenever a spoilt signature enters it (so it
// is the equation, not only the fallback, that notices).
func TestBatchAggregatedKeysBad(t *testing.T) {
	signers := testSigners(t, 4)
	rng := rand.New(rand.NewPCG(3, 4))
	var bv BatchVerifier
	type spoil struct {
		at int
		tm tampering
	}
	run := func(t *testing.T, n int, il int, spoils []spoil) {
		var keys []*PublicKey
		var envs []*wire.Envelope
		bad := map[int]bool{}
		wrong, malformed := false, 0
		for i := range n {
			owner := interleavings[il].key(i, n, len(signers), rng)
			s := signers[owner]
			body := testBody(i)
			sig := ed25519.Sign(s.priv, body)
			for _, sp := range spoils {
				if sp.at == i {
					body, sig = sp.tm.apply(t, signers, owner, body, sig)
					bad[i] = true
					if sp.tm.malformed {
						malformed++
					} else {
						wrong = true
					}
				}
			}
			keys = append(keys, s.pub)
			envs = append(envs, &wire.Envelope{V: wire.Version, Kid: "gw-" + strconv.Itoa(owner), Body: body, Sig: sig})
		}
		for i := range envs {
			if single := keys[i].Verify(envs[i]); (single != nil) != bad[i] {
				t.Fatalf("entry %d: PublicKey.Verify = %v, the case expects bad=%v", i, single, bad[i])
			}
		}
		held, out := equation(&bv, keys, envs)
		if want := !wrong && n-malformed >= 2; held != want {
			t.Errorf("the batch equation held=%v, want %v", held, want)
		}
		for i, err := range out {
			isMalformed := false
			for _, sp := range spoils {
				isMalformed = isMalformed || sp.at == i && sp.tm.malformed
			}
			if (err != nil) != isMalformed {
				t.Errorf("entry %d: decoding verdict %v, malformed=%v", i, err, isMalformed)
			}
		}
		for i, err := range checkVerdicts(t, &bv, keys, envs) {
			if (err != nil) != bad[i] {
				t.Errorf("entry %d: verdict %v, want bad=%v", i, err, bad[i])
			} else if err != nil && wire.ReasonOf(err) != wire.ReasonSignature {
				t.Errorf("entry %d: reason %q", i, wire.ReasonOf(err))
			}
		}
	}
	for _, tm := range tamperings {
		for _, n := range []int{2, 3, 17, 64} {
			for _, at := range [][]int{{0}, {n / 2}, {n - 1}, {0, n / 2, n - 1}} {
				at = slices.Compact(at)
				t.Run(fmt.Sprintf("%s/n=%d/at=%v", tm.name, n, at), func(t *testing.T) {
					var spoils []spoil
					for _, i := range at {
						spoils = append(spoils, spoil{i, tm})
					}
					run(t, n, len(at)%len(interleavings), spoils)
				})
			}
		}
	}
	// Every kind at once, spread over a batch of 64 by 4 keys, and the
	// malformed ones alone (the equation then holds for the rest).
	for _, only := range []string{"all", "malformed"} {
		t.Run("every kind/"+only, func(t *testing.T) {
			var spoils []spoil
			for j, tm := range tamperings {
				if only == "all" || tm.malformed {
					spoils = append(spoils, spoil{3 + 6*j, tm})
				}
			}
			run(t, 64, 2, spoils)
		})
	}
}

// TestBatchSmallOrderR: signatures whose R has a small-order component
// (valid under the cofactored rule, which a batch must agree with) pass
// the aggregated equation beside ordinary ones by the same and other keys.
func TestBatchSmallOrderR(t *testing.T) {
	signers := testSigners(t, 3)
	var zero scalar.Scalar
	kinds := []struct {
		name string
		sign func(t *testing.T, s *testSigner, body []byte) []byte
	}{
		{"R plus a point of order 2", func(t *testing.T, s *testSigner, body []byte) []byte {
			return s.signWithR(t, body, nonce(t, body), order2(t), nil)
		}},
		{"R of order 2", func(t *testing.T, s *testSigner, body []byte) []byte {
			return s.signWithR(t, body, &zero, order2(t), nil)
		}},
		{"R the identity", func(t *testing.T, s *testSigner, body []byte) []byte { return s.signWithR(t, body, &zero, nil, nil) }},
		{"R by hand, no torsion", func(t *testing.T, s *testSigner, body []byte) []byte {
			return s.signWithR(t, body, nonce(t, body), nil, nil)
		}},
	}
	var bv BatchVerifier
	for _, kind := range kinds {
		for _, n := range []int{2, 3, 17} {
			for _, at := range [][]int{{0}, {n - 1}, {0, n / 2}} {
				t.Run(fmt.Sprintf("%s/n=%d/at=%v", kind.name, n, at), func(t *testing.T) {
					var keys []*PublicKey
					var envs []*wire.Envelope
					for i := range n {
						s := signers[i%len(signers)]
						body := testBody(i)
						sig := ed25519.Sign(s.priv, body)
						if slices.Contains(at, i) {
							sig = kind.sign(t, s, body)
						}
						keys = append(keys, s.pub)
						envs = append(envs, &wire.Envelope{V: wire.Version, Kid: "gw", Body: body, Sig: sig})
					}
					for i := range envs {
						if err := keys[i].Verify(envs[i]); err != nil {
							t.Fatalf("entry %d: PublicKey.Verify refused it: %v", i, err)
						}
					}
					if held, _ := equation(&bv, keys, envs); !held {
						t.Error("the batch equation failed")
					}
					for i, err := range checkVerdicts(t, &bv, keys, envs) {
						if err != nil {
							t.Errorf("entry %d: %v", i, err)
						}
					}
				})
			}
		}
	}
}

// TestBatchSameKeyTwoValues: two PublicKey values made from the same bytes
// share one term of the equation; verdicts stay PublicKey.Verify's,
// beside entries that never reach the equation (no key, no signature).
func TestBatchSameKeyTwoValues(t *testing.T) {
	signers := testSigners(t, 2)
	twin, err := NewPublicKey(signers[0].pub.Raw())
	if err != nil {
		t.Fatal(err)
	}
	if twin == signers[0].pub {
		t.Fatal("NewPublicKey returned the same value twice")
	}
	var bv BatchVerifier
	for _, badAt := range []int{-1, 0, 3, 9} {
		t.Run("bad at "+strconv.Itoa(badAt), func(t *testing.T) {
			var keys []*PublicKey
			var envs []*wire.Envelope
			for i := range 10 {
				k, s := signers[0].pub, signers[0]
				switch i % 3 {
				case 1:
					k = twin
				case 2:
					k, s = signers[1].pub, signers[1]
				}
				body := testBody(i)
				sig := ed25519.Sign(s.priv, body)
				if i == badAt {
					sig[40] ^= 0x10
				}
				keys = append(keys, k)
				envs = append(envs, &wire.Envelope{V: wire.Version, Kid: "gw", Body: body, Sig: sig})
			}
			held, _ := equation(&bv, keys, envs)
			if held != (badAt < 0) {
				t.Errorf("the batch equation held=%v with bad entry at %d", held, badAt)
			}
			if got := len(bv.coef) - 1; got != 2 {
				t.Errorf("%d key terms, want 2 (the twin keys share one)", got)
			}
			// Precheck rejections beside them: no key, no signature.
			keys = append(keys, nil, twin)
			envs = append(envs, &wire.Envelope{V: wire.Version, Kid: "gw", Body: testBody(10), Sig: envs[0].Sig},
				&wire.Envelope{V: wire.Version, Kid: "gw", Body: testBody(11)})
			for i, err := range checkVerdicts(t, &bv, keys, envs) {
				if want := i == badAt || i >= 10; (err != nil) != want {
					t.Errorf("entry %d: %v, want rejected=%v", i, err, want)
				}
			}
		})
	}
}
