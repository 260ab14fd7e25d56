package wire

import (
	"crypto/ed25519"
	"strconv"
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

// BenchmarkBatchVerify measures BatchVerifier on n valid one-record
// batches signed by 4 gateways (the ingest workers take up to 64 queued
// messages at once); us/sig is the cost per signature.
func BenchmarkBatchVerify(b *testing.B) {
	const keys = 4
	var envs []*Envelope
	var pks []*PublicKey
	privs := make([]ed25519.PrivateKey, keys)
	for i := range privs {
		pub, priv, _ := ed25519.GenerateKey(nil)
		privs[i] = priv
		k, err := NewPublicKey(pub)
		if err != nil {
			b.Fatal(err)
		}
		pks = append(pks, k)
	}
	t0 := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	for i := range 64 {
		bt := &Batch{V: 1, Kind: KindLevels, Municipality: "lapa", Gateway: "lg-0001", Sensor: "lg-0001-s1",
			Seq: uint64(i + 1), SentAt: t0, Device: Device{Model: "m", Serial: "s", Grade: "class2"},
			Records: []Record{{T: t0, DurMs: 1000, LAeq: 60.1, LAFmax: 64.2, LAFmin: 55.3}}}
		p, err := Seal(bt, privs[i%keys])
		if err != nil {
			b.Fatal(err)
		}
		env, _, err := Open(p)
		if err != nil {
			b.Fatal(err)
		}
		envs = append(envs, env)
	}
	for _, n := range []int{2, 4, 16, 64} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			var bv BatchVerifier
			for b.Loop() {
				for i := range n {
					bv.Add(pks[i%keys], envs[i])
				}
				for _, err := range bv.Verify() {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "us/sig")
		})
	}
}
