// Package signature checks the ed25519 signatures of gateway envelopes
// (internal/wire's contract): a gateway's public key pre-expanded once, and
// a batch verifier for many signatures at once, both under RFC 8032's
// cofactored rule via curve25519-voi. Every rejection is a *wire.Error
// with reason wire.ReasonSignature.
//
// Overview of its parts: the envelopes' signature checks: `PublicKey` (a
// gateway key pre-expanded once) and `BatchVerifier` (RFC 8032 cofactored
// checks, one by one or in batches, via curve25519-voi; differential fuzz
// tests against crypto/ed25519); used by `internal/ingest`,
// `internal/registry`, `alerts/evidence`.
package signature

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"slices"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
	voied25519 "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"

	"github.com/sossego/sossego/internal/wire"
)

// reject is a signature rejection with a Portuguese message.
func reject(format string, a ...any) error {
	return &wire.Error{Reason: wire.ReasonSignature, Msg: fmt.Sprintf(format, a...)}
}

// Verify checks the envelope signature with pub. It returns a signature
// rejection when the signature is missing or wrong. The rule is
// PublicKey's.
func Verify(env *wire.Envelope, pub ed25519.PublicKey) error {
	if len(env.Sig) == 0 {
		return reject("mensagem sem assinatura do gateway %q", env.Kid)
	}
	if len(pub) != ed25519.PublicKeySize {
		return reject("chave pública do gateway %q ausente ou inválida no cadastro", env.Kid)
	}
	k, err := NewPublicKey(pub)
	if err != nil {
		return reject("chave pública do gateway %q inválida no cadastro: %v", env.Kid, err)
	}
	return k.Verify(env)
}

// PublicKey is a gateway's ed25519 public key decompressed once for
// verification: the central service checks one signature per message, and
// curve25519-voi with a pre-expanded key does it in about half the time of
// crypto/ed25519 (BENCHMARKS.md), and in a fifth to a quarter when many
// are checked together (BatchVerifier).
//
// The verification rule is RFC 8032 §5.1.7's group equation
// [8][S]B = [8]R + [8][k]A (cofactored), with canonical encodings of R and
// S required; it is the only rule under which checking signatures one by
// one and in a batch always agree, so the result never depends on how the
// messages happened to arrive. NewPublicKey refuses keys that are not
// canonical, have small order or a small-order component (none of which a
// real key generator produces; a small-order key would let anyone forge).
// Under such a key, every signature an RFC 8032 signer produces (our
// gateways sign with crypto/ed25519) verifies exactly as crypto/ed25519's
// cofactorless check [S]B = R + [k]A would; the two rules differ only for a
// signature whose R the key's holder deliberately built with a small-order
// component. The evidence package re-checks every body with crypto/ed25519
// (verified_now), so such a signature would show there.
type PublicKey struct {
	raw ed25519.PublicKey
	x   *voied25519.ExpandedPublicKey // for Verify (voi keeps -A inside)
	a   *curve.ExpandedEdwardsPoint   // A, for BatchVerifier's aggregated equation
}

// cofactored is the verification rule (see PublicKey). Small-order R is
// allowed as RFC 8032 allows it; A is checked once in NewPublicKey.
var cofactored = &voied25519.Options{Verify: &voied25519.VerifyOptions{AllowSmallOrderR: true}}

// NewPublicKey prepares pub for verification. It refuses keys that are not
// a canonical encoding of a point of the prime-order subgroup.
func NewPublicKey(pub ed25519.PublicKey) (*PublicKey, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("signature: public key has %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	var c curve.CompressedEdwardsY
	if _, err := c.SetBytes(pub); err != nil {
		return nil, fmt.Errorf("signature: public key: %w", err)
	}
	var p curve.EdwardsPoint
	if _, err := p.SetCompressedY(&c); err != nil {
		return nil, fmt.Errorf("signature: public key is not a point of edwards25519: %w", err)
	}
	switch {
	case !c.IsCanonicalVartime():
		return nil, errors.New("signature: public key is not canonically encoded")
	case p.IsSmallOrder():
		return nil, errors.New("signature: public key has small order (anyone could sign for it)")
	case !p.IsTorsionFree():
		return nil, errors.New("signature: public key has a small-order component")
	}
	x, err := voied25519.NewExpandedPublicKey(voied25519.PublicKey(pub))
	if err != nil {
		return nil, fmt.Errorf("signature: public key: %w", err)
	}
	return &PublicKey{raw: bytes.Clone(pub), x: x, a: curve.NewExpandedEdwardsPoint(&p)}, nil
}

// Raw returns the key's 32 bytes.
func (k *PublicKey) Raw() ed25519.PublicKey { return k.raw }

// precheck returns the rejection for an envelope that cannot be verified
// at all (no signature, no key), or nil.
func (k *PublicKey) precheck(env *wire.Envelope) error {
	if len(env.Sig) == 0 {
		return reject("mensagem sem assinatura do gateway %q", env.Kid)
	}
	if k == nil || k.x == nil {
		return reject("chave pública do gateway %q ausente ou inválida no cadastro", env.Kid)
	}
	return nil
}

func badSignature(env *wire.Envelope) error {
	return reject("assinatura ed25519 do gateway %q não confere", env.Kid)
}

// Verify checks the envelope signature. It returns a signature rejection
// when the signature is missing or wrong, or k is nil.
func (k *PublicKey) Verify(env *wire.Envelope) error {
	if err := k.precheck(env); err != nil {
		return err
	}
	if !voied25519.VerifyExpandedWithOptions(k.x, env.Body, env.Sig, cofactored) {
		return badSignature(env)
	}
	return nil
}

// basepoint is B expanded once for the batch equation's multi-scalar
// multiplication (a static point there: its table is not rebuilt per batch).
var basepoint = curve.NewExpandedEdwardsPoint(curve.ED25519_BASEPOINT_POINT)

// BatchVerifier checks many envelopes' signatures at once: one
// multi-scalar multiplication for the whole batch instead of one double
// multiplication per signature: ~10 µs per signature in batches of 64 by 4
// keys (~15 µs when every signature has its own key) against ~26 µs one by
// one (go test -bench BatchVerify ./internal/wire/signature/). The verdicts are exactly PublicKey.Verify's: when the batch equation fails,
// each signature is checked on its own to find the bad ones. The zero
// value is ready to use; it is not safe for concurrent use (the keys may
// be shared between verifiers).
//
// The batch equation. Entry i has signature (R_i, S_i) by key A_i over
// M_i, with k_i = SHA-512(R_i || A_i || M_i) mod ℓ; it is valid under the
// rule (see PublicKey) when its encodings are canonical and
// X_i = [S_i]B - R_i - [k_i]A_i has small order ([8]X_i = 0). With
// independent uniformly random 128-bit z_i, Verify checks
//
//	[8]( [-Σ z_i S_i]B + Σ [z_i]R_i + Σ_keys [c_A]A ) = 0,  c_A = Σ_{i: A_i = A} z_i k_i,
//
// which is [8](-Σ z_i X_i) = 0 with the terms of equal points A gathered:
// [z_i k_i]A + [z_j k_j]A = [z_i k_i + z_j k_j]A, so the sum, and hence
// the verdict, is that of the usual per-signature batch equation (the one
// voi's ed25519.BatchVerifier checks), with one point per key instead of
// one per signature in the multi-scalar multiplication — a gateway drains
// its outbox in bursts, so a batch holds many signatures by the same few
// keys, and n signatures by g keys cost n + g + 1 points instead of
// 2n + 1. Keys are gathered by their bytes (two PublicKey values for one
// key share a term).
//
// Why it agrees with one-by-one checks: the encodings (length, canonical
// S < ℓ, R a canonical encoding of a curve point) are checked per entry
// exactly as voi's single check does, and a malformed entry is rejected
// without entering the equation. If every X_i has small order, so has any
// combination of them: a batch of valid signatures always passes (the
// cofactor 8 clears whatever small-order parts the R_i carry; this is why
// the rule is cofactored). If some X_j has a component of order ℓ, the sum
// has small order for at most one value of z_j mod ℓ given the others,
// probability at most 2^-128; then, and only then, could a bad signature
// pass in a batch. A failed equation says only that some entry is bad, so
// every entry is then checked on its own.
type BatchVerifier struct {
	envs []*wire.Envelope
	keys []*PublicKey
	pre  []error // precheck rejections, by index
	n    int     // entries that passed precheck

	// Scratch for Verify, kept between calls.
	h      hash.Hash // SHA-512
	digest [sha512.Size]byte
	rnd    []byte           // 16 random bytes per entry: the z_i
	ents   []batchEntry     // the entries in the equation
	group  map[[32]byte]int // key bytes → index in coef and statP
	coef   []scalar.Scalar  // c_A per key, then -Σ z_i S_i for B last
	statS  []*scalar.Scalar // → coef
	statP  []*curve.ExpandedEdwardsPoint
	dynS   []*scalar.Scalar // → the z_i in ents
	dynP   []*curve.EdwardsPoint
}

// batchEntry is one signature in the batch equation.
type batchEntry struct {
	i int                // index in envs
	R curve.EdwardsPoint // decompressed R
	z scalar.Scalar      // its random weight
}

// Add queues env for verification with k and returns its index in the
// verdicts Verify returns.
func (bv *BatchVerifier) Add(k *PublicKey, env *wire.Envelope) int {
	i := len(bv.envs)
	bv.envs, bv.keys = append(bv.envs, env), append(bv.keys, k)
	err := k.precheck(env)
	bv.pre = append(bv.pre, err)
	if err == nil {
		bv.n++
	}
	return i
}

// Len is the number of envelopes added since the last Verify.
func (bv *BatchVerifier) Len() int { return len(bv.envs) }

// Verify checks everything added and returns one verdict per Add, in
// order: nil or the same rejection PublicKey.Verify gives. The verifier is
// then empty and can be reused. A single entry is checked on its own (a
// batch of one costs more than a plain check).
func (bv *BatchVerifier) Verify() []error {
	defer bv.reset()
	out := make([]error, len(bv.envs))
	copy(out, bv.pre)
	if bv.n == 0 {
		return out
	}
	if bv.n >= 2 && bv.batch(out) {
		return out
	}
	// One entry, or the batch equation failed: each on its own. Entries
	// batch already rejected (malformed signatures) keep their verdict,
	// the one Verify gives.
	for i, env := range bv.envs {
		if out[i] == nil {
			out[i] = bv.keys[i].Verify(env)
		}
	}
	return out
}

// batch decodes the signatures that passed precheck, rejecting malformed
// ones in out, and reports whether the batch equation holds for the rest
// (then every one of them is valid). It reports false when fewer than two
// entries are left, so that Verify checks the one left on its own.
func (bv *BatchVerifier) batch(out []error) bool {
	if bv.h == nil {
		bv.h = sha512.New()
	}
	if bv.group == nil {
		bv.group = make(map[[32]byte]int)
	}
	m := bv.decode(out)
	if m < 2 {
		return false
	}
	return bv.equation(bv.ents[:m])
}

// decode fills bv.ents with the entries whose signature is well formed
// and returns how many there are; the others get their rejection in out.
func (bv *BatchVerifier) decode(out []error) int {
	ents := slices.Grow(bv.ents[:0], bv.n)[:bv.n]
	m := 0
	for i, env := range bv.envs {
		if out[i] != nil {
			continue
		}
		k := bv.keys[i]
		if k.a == nil {
			// Not from NewPublicKey; cannot happen, but check it alone.
			out[i] = k.Verify(env)
			continue
		}
		if !decodeR(&ents[m].R, env.Sig) {
			out[i] = badSignature(env)
			continue
		}
		ents[m].i = i
		m++
	}
	bv.ents = ents
	return m
}

// decodeR is voi's decoding for VerifyExpandedWithOptions with
// cofactored: 64 bytes, S < ℓ, R a point whose encoding is canonical
// (small order allowed). It reports whether sig is well formed and sets R.
func decodeR(R *curve.EdwardsPoint, sig []byte) bool {
	if len(sig) != ed25519.SignatureSize || !scalar.ScMinimalVartime(sig[32:]) {
		return false
	}
	var rc curve.CompressedEdwardsY
	copy(rc[:], sig[:32])
	_, err := R.SetCompressedY(&rc)
	return err == nil && rc.IsCanonicalVartime()
}

// equation weighs the entries with random z_i, gathers the terms of each
// key and checks the batch equation (see BatchVerifier).
func (bv *BatchVerifier) equation(ents []batchEntry) bool {
	if len(bv.rnd) < 16*len(ents) {
		bv.rnd = make([]byte, 16*cap(bv.ents))
	}
	rnd := bv.rnd[:16*len(ents)]
	if _, err := rand.Read(rnd); err != nil {
		return false // crypto/rand never fails; if it did, one by one
	}
	coef := bv.coef[:0]
	statP := bv.statP[:0]
	var sumZS, s, hram, t scalar.Scalar
	var zb [32]byte
	for j := range ents {
		e := &ents[j]
		k, sig, body := bv.keys[e.i], bv.envs[e.i].Sig, bv.envs[e.i].Body
		copy(zb[:16], rnd[16*j:])
		if _, err := e.z.SetBytesModOrder(zb[:]); err != nil {
			return false
		}
		if _, err := s.SetBytesModOrder(sig[32:]); err != nil {
			return false
		}
		bv.h.Reset()
		bv.h.Write(sig[:32])
		bv.h.Write(k.raw)
		bv.h.Write(body)
		if _, err := hram.SetBytesModOrderWide(bv.h.Sum(bv.digest[:0])); err != nil {
			return false
		}
		g, ok := bv.group[[32]byte(k.raw)]
		if !ok {
			g = len(coef)
			bv.group[[32]byte(k.raw)] = g
			coef = append(coef, scalar.Scalar{})
			statP = append(statP, k.a)
		}
		coef[g].Add(&coef[g], t.Mul(&e.z, &hram))
		sumZS.Add(&sumZS, t.Mul(&e.z, &s))
	}
	// Static points: the keys' A, then B; dynamic: the R_i.
	coef = append(coef, scalar.Scalar{})
	coef[len(coef)-1].Neg(&sumZS)
	statP = append(statP, basepoint)
	bv.coef, bv.statP = coef, statP
	return bv.sumIsSmallOrder(ents)
}

// sumIsSmallOrder computes Σ coef·statP + Σ z_i·R_i in one multi-scalar
// multiplication and reports whether it has small order ([8]sum = 0).
func (bv *BatchVerifier) sumIsSmallOrder(ents []batchEntry) bool {
	statS := bv.statS[:0]
	for g := range bv.coef {
		statS = append(statS, &bv.coef[g])
	}
	dynS, dynP := bv.dynS[:0], bv.dynP[:0]
	for j := range ents {
		dynS, dynP = append(dynS, &ents[j].z), append(dynP, &ents[j].R)
	}
	bv.statS, bv.dynS, bv.dynP = statS, dynS, dynP
	var sum curve.EdwardsPoint
	sum.ExpandedMultiscalarMulVartime(statS, bv.statP, dynS, dynP)
	return sum.IsSmallOrder()
}

// reset empties the verifier for the next batch, keeping the scratch
// space but no reference to envelopes or keys.
func (bv *BatchVerifier) reset() {
	clear(bv.envs)
	clear(bv.keys)
	clear(bv.pre)
	clear(bv.statP[:cap(bv.statP)]) // also what an early return left past len
	clear(bv.group)
	bv.envs, bv.keys, bv.pre, bv.statP, bv.n = bv.envs[:0], bv.keys[:0], bv.pre[:0], bv.statP[:0], 0
}
