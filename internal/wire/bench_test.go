package wire

import (
	"crypto/ed25519"
	"strconv"
	"testing"
	"time"
)

func benchPayload(b *testing.B, records int) []byte {
	b.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
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
	return p
}

// BenchmarkOpen measures the strict decode of a sealed batch of 1 and of
// 10 records (envelope and body), without the signature check (that is
// internal/wire/signature's BenchmarkVerify).
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run("records="+strconv.Itoa(n), func(b *testing.B) {
			p := benchPayload(b, n)
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				if _, _, err := Open(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
