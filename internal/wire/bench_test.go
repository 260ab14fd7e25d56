package wire

import (
	"crypto/ed25519"
	"testing"
	"time"
)

func benchPayload(b *testing.B, records int) ([]byte, ed25519.PublicKey) {
	b.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	bt := &Batch{V: 1, Kind: KindLevels, Municipality: "lapa", Gateway: "lg-0001", Sensor: "lg-0001-s1",
		Seq: 42, SentAt: t0, Device: Device{Model: "m", Serial: "s", Grade: "class2"}}
	for j := range records {
		bt.Records = append(bt.Records, Record{T: t0.Add(time.Duration(j) * time.Second), DurMs: 1000,
			LAeq: 60.1, LAFmax: 64.2, LAFmin: 55.3})
	}
	p, err := Seal(bt, priv)
	if err != nil {
		b.Fatal(err)
	}
	return p, pub
}

// BenchmarkOpen measures the strict decode of a sealed one-record batch
// (envelope and body), without the signature check.
func BenchmarkOpen(b *testing.B) {
	p, _ := benchPayload(b, 1)
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if _, _, err := Open(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify measures the ed25519 check of a sealed one-record batch
// as ingest does it (key expanded once, curve25519-voi).
func BenchmarkVerify(b *testing.B) {
	p, pub := benchPayload(b, 1)
	env, _, err := Open(p)
	if err != nil {
		b.Fatal(err)
	}
	k, err := NewPublicKey(pub)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := k.Verify(env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyStdlib is the same check with crypto/ed25519, for
// comparison.
func BenchmarkVerifyStdlib(b *testing.B) {
	p, pub := benchPayload(b, 1)
	env, _, err := Open(p)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !ed25519.Verify(pub, env.Body, env.Sig) {
			b.Fatal("signature does not verify")
		}
	}
}
