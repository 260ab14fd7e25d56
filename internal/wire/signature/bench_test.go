package signature

import (
	"crypto/ed25519"
	"strconv"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/wire"
)

func benchPayload(b *testing.B, records int) ([]byte, ed25519.PublicKey) {
	b.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	bt := &wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: "lg-0001", Sensor: "lg-0001-s1",
		Seq: 42, SentAt: t0, Device: wire.Device{Model: "m", Serial: "s", Grade: "class2"}}
	for j := range records {
		bt.Records = append(bt.Records, wire.Record{T: t0.Add(time.Duration(j) * time.Second), DurMs: 1000,
			LAeq: 60.1, LAFmax: 64.2, LAFmin: 55.3})
	}
	p, err := wire.Seal(bt, priv)
	if err != nil {
		b.Fatal(err)
	}
	return p, pub
}

// BenchmarkVerify measures the ed25519 check of a sealed one-record batch
// as ingest does it (key expanded once, curve25519-voi).
func BenchmarkVerify(b *testing.B) {
	p, pub := benchPayload(b, 1)
	env, _, err := wire.Open(p)
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
	env, _, err := wire.Open(p)
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
// messages at once; a gateway drains its outbox in bursts, so a batch
// holds many signatures by the same few keys); us/sig is the cost per
// signature. The keys=n variant signs every entry with its own key: the
// case where nothing can be aggregated.
func BenchmarkBatchVerify(b *testing.B) {
	const keys, most = 4, 512
	sealed := func(priv ed25519.PrivateKey, seq int) *wire.Envelope {
		t0 := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
		bt := &wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: "lg-0001", Sensor: "lg-0001-s1",
			Seq: uint64(seq), SentAt: t0, Device: wire.Device{Model: "m", Serial: "s", Grade: "class2"},
			Records: []wire.Record{{T: t0, DurMs: 1000, LAeq: 60.1, LAFmax: 64.2, LAFmin: 55.3}}}
		p, err := wire.Seal(bt, priv)
		if err != nil {
			b.Fatal(err)
		}
		env, _, err := wire.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		return env
	}
	newKey := func() (*PublicKey, ed25519.PrivateKey) {
		pub, priv, err := ed25519.GenerateKey(nil)
		if err != nil {
			b.Fatal(err)
		}
		k, err := NewPublicKey(pub)
		if err != nil {
			b.Fatal(err)
		}
		return k, priv
	}
	// Entry i: envs[i] signed by the key pks[i]; few cycles through 4
	// keys, distinct has its own key per entry.
	type set struct {
		pks  []*PublicKey
		envs []*wire.Envelope
	}
	var few, distinct set
	fewKeys := make([]*PublicKey, keys)
	fewPrivs := make([]ed25519.PrivateKey, keys)
	for i := range keys {
		fewKeys[i], fewPrivs[i] = newKey()
	}
	for i := range most {
		few.pks = append(few.pks, fewKeys[i%keys])
		few.envs = append(few.envs, sealed(fewPrivs[i%keys], i+1))
		k, priv := newKey()
		distinct.pks = append(distinct.pks, k)
		distinct.envs = append(distinct.envs, sealed(priv, i+1))
	}
	run := func(b *testing.B, s set) {
		for _, n := range []int{2, 4, 16, 64, 128, 256, most} {
			b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
				var bv BatchVerifier
				for b.Loop() {
					for i := range n {
						bv.Add(s.pks[i], s.envs[i])
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
	// The 4-key figures keep their names (n=…) for comparison with
	// earlier runs.
	run(b, few)
	b.Run("keys=n", func(b *testing.B) { run(b, distinct) })
}
