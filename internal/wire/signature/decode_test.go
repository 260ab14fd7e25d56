package signature

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"testing"

	"github.com/oasisprotocol/curve25519-voi/curve"
)

// TestDecodeR: the batch takes into its equation exactly the signatures
// voi's single check would decode (64 bytes, S < ℓ, R a canonically
// encoded curve point, small order allowed), and every entry it takes
// has R set to the point the signature names.
func TestDecodeR(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	good := ed25519.Sign(priv, []byte("corpo"))
	with := func(edit func(s []byte)) []byte {
		s := bytes.Clone(good)
		edit(s)
		return s
	}
	// ℓ = 2^252 + 27742317777372353535851937790883648493, little-endian.
	ell := []byte{0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10}
	// p + 1 = 2^255 - 18: the non-canonical encoding of y = 1.
	pPlus1 := append([]byte{0xee}, bytes.Repeat([]byte{0xff}, 30)...)
	pPlus1 = append(pPlus1, 0x7f)
	offCurve := notOnCurve(t)
	identity := make([]byte, 32)
	identity[0] = 1
	cases := []struct {
		name string
		sig  []byte
		ok   bool
	}{
		{"valid", good, true},
		{"63 bytes", good[:63], false},
		{"65 bytes", append(bytes.Clone(good), 0), false},
		{"empty", nil, false},
		{"S = ℓ", with(func(s []byte) { copy(s[32:], ell) }), false},
		{"S with the top bit", with(func(s []byte) { s[63] |= 0x80 }), false},
		{"R not canonical", with(func(s []byte) { copy(s[:32], pPlus1) }), false},
		{"R not on the curve", with(func(s []byte) { copy(s[:32], offCurve) }), false},
		{"R of small order (the identity)", with(func(s []byte) { copy(s[:32], identity) }), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var R curve.EdwardsPoint
			if got := decodeR(&R, c.sig); got != c.ok {
				t.Fatalf("decodeR = %v, want %v", got, c.ok)
			}
			if !c.ok {
				return
			}
			var enc curve.CompressedEdwardsY
			enc.SetEdwardsPoint(&R)
			if !bytes.Equal(enc[:], c.sig[:32]) {
				t.Errorf("R encodes as %x, the signature says %x", enc[:], c.sig[:32])
			}
		})
	}
}

// notOnCurve is a canonical y whose x² has no square root.
func notOnCurve(t *testing.T) []byte {
	for y := uint64(2); y < 100; y++ {
		var b [32]byte
		binary.LittleEndian.PutUint64(b[:], y)
		var c curve.CompressedEdwardsY
		copy(c[:], b[:])
		var p curve.EdwardsPoint
		if _, err := p.SetCompressedY(&c); err != nil {
			return b[:]
		}
	}
	t.Fatal("no y below 100 off the curve")
	return nil
}
