package wire

import (
	"bytes"
	"crypto/ed25519"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/level"
)

// TestMaxMessageSizeHoldsForTheWorstBatch seals batches with every field
// at its longest and checks that each fits MaxMessageSize for its record
// count exactly (the bound is tight: no shorter limit would take them), and
// that one more byte does not.
func TestMaxMessageSizeHoldsForTheWorstBatch(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 64)))
	id := strings.Repeat("a", MaxIDLength)
	text := strings.Repeat("<", MaxTextLen)
	for _, kind := range []string{KindLevels, KindEnv} {
		for _, n := range []int{1, 2, 5} {
			b := &Batch{V: Version, Kind: kind, Municipality: id, Gateway: id, Sensor: id, Seq: MaxSeq, SentAt: worstTime(),
				Device: Device{Model: text, Serial: text, Firmware: text, Grade: "screening", CalibratedAt: "2026-12-31"},
				Clock:  Clock{OffsetMs: worstFloat, Source: text}}
			for range n {
				if kind == KindEnv {
					b.Env = append(b.Env, worstEnvRecord())
				} else {
					b.Records = append(b.Records, worstRecord())
				}
			}
			p, err := Seal(b, priv)
			if err != nil {
				t.Fatal(err)
			}
			if got, limit := len(p), MaxMessageSize(kind, n); got != limit && limit != MaxPayload {
				t.Errorf("%s × %d: worst sealed batch has %d bytes, MaxMessageSize %d", kind, n, got, limit)
			}
			if err := CheckSize(len(p), b); err != nil {
				t.Errorf("%s × %d: %v", kind, n, err)
			}
			if err := CheckSize(len(p)+1, b); ReasonOf(err) != ReasonSize && len(p) < MaxPayload {
				t.Errorf("%s × %d: one byte more accepted (%v)", kind, n, err)
			}
		}
	}
	if MaxMessageSize(KindLevels, MaxRecords) != MaxPayload {
		t.Error("a full levels batch may not take more than MaxPayload")
	}
	t.Logf("largest message: levels %d B for 1 record, env %d B for 1 reading, %d B for %d readings",
		MaxMessageSize(KindLevels, 1), MaxMessageSize(KindEnv, 1), MaxMessageSize(KindEnv, MaxRecords), MaxRecords)
}

// TestCheckSizeRefusesPadding: a valid one-record batch padded to 1 MiB
// with white space (valid JSON, and signed by the key holder) is refused,
// while a gateway-sized batch of 3600 records is not.
func TestCheckSizeRefusesPadding(t *testing.T) {
	b := goodLevels()
	p, err := Seal(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	padded := append(bytes.Repeat([]byte(" "), MaxPayload-len(p)-1), p...)
	_, ob, err := Open(padded)
	if err != nil {
		t.Fatalf("padded message does not open: %v", err)
	}
	if err := CheckSize(len(padded), ob); ReasonOf(err) != ReasonSize {
		t.Errorf("1 MiB for one record: %v, want a size rejection", err)
	}
	big := goodLevels()
	big.Records = nil
	for i := range MaxRecords {
		bins := map[int]float64{}
		for k := range 10 {
			bins[500+k] = 100
		}
		big.Records = append(big.Records, Record{T: now.Add(time.Duration(i) * time.Second), DurMs: 1000,
			LAeq: 61.23, LAFmax: 70.01, LAFmin: 50.99, Hist: &level.Histogram{Bins: bins}})
	}
	bp, err := Seal(big, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(bp) <= MaxPayload {
		if err := CheckSize(len(bp), big); err != nil {
			t.Errorf("an hour of 1-s records with histograms (%d bytes): %v", len(bp), err)
		}
	}
}

// TestValidateOrderSpanSeqText covers the batch-level rules: records in
// strictly increasing time order within MaxBatchSpan, seq within int64,
// bounded free text.
func TestValidateOrderSpanSeqText(t *testing.T) {
	tp := Topic{Municipality: "lapa", Gateway: "gw-01", Sensor: "m1", Kind: KindLevels}
	rec := func(at time.Time) Record { return Record{T: at, DurMs: 1000, LAeq: 60, LAFmax: 61, LAFmin: 59} }
	base := now.Add(-2 * time.Hour)
	cases := []struct {
		name   string
		edit   func(b *Batch)
		reason string
	}{
		{"in order", func(b *Batch) { b.Records = []Record{rec(base), rec(base.Add(time.Second))} }, ""},
		{"out of order (clock stepped back)", func(b *Batch) {
			b.Records = []Record{rec(base), rec(base.Add(2 * time.Second)), rec(base.Add(time.Second))}
		}, ReasonTime},
		{"second repeated", func(b *Batch) { b.Records = []Record{rec(base), rec(base)} }, ReasonTime},
		{"an hour exactly", func(b *Batch) { b.Records = []Record{rec(base), rec(base.Add(MaxBatchSpan))} }, ""},
		{"over an hour", func(b *Batch) {
			b.Records = []Record{rec(base), rec(base.Add(MaxBatchSpan + time.Second))}
		}, ReasonTime},
		{"seq 2^63-1", func(b *Batch) { b.Seq = math.MaxInt64 }, ""},
		{"seq 2^63", func(b *Batch) { b.Seq = math.MaxInt64 + 1 }, ReasonSchema},
		{"seq 2^64-1", func(b *Batch) { b.Seq = math.MaxUint64 }, ReasonSchema},
		{"long model", func(b *Batch) { b.Device.Model = strings.Repeat("x", MaxTextLen+1) }, ReasonSchema},
		{"long firmware", func(b *Batch) { b.Device.Firmware = strings.Repeat("x", MaxTextLen+1) }, ReasonSchema},
		{"long clock source", func(b *Batch) { b.Clock.Source = strings.Repeat("x", MaxTextLen+1) }, ReasonSchema},
		{"longest model", func(b *Batch) { b.Device.Model = strings.Repeat("x", MaxTextLen) }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := goodLevels()
			b.Gateway, b.Municipality, b.Sensor = tp.Gateway, tp.Municipality, tp.Sensor
			tc.edit(b)
			env := &Envelope{V: 1, Kid: b.Gateway}
			err := Validate(tp, env, b, now, DefaultSkew, DefaultStale)
			if tc.reason == "" && err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if tc.reason != "" && ReasonOf(err) != tc.reason {
				t.Fatalf("got %v, want reason %q", err, tc.reason)
			}
		})
	}
	// Env readings follow the same order rule.
	e := goodEnv()
	e.Env = append(e.Env, e.Env[0])
	if err := Validate(Topic{Municipality: "lapa", Gateway: "gw-01", Sensor: "m1", Kind: KindEnv}, nil, e, now, DefaultSkew, DefaultStale); ReasonOf(err) != ReasonTime {
		t.Errorf("env reading repeated: %v", err)
	}
}

// FuzzSealedSizeBound: whatever Open accepts and the bound's assumptions
// hold for (ids, text, seq, durations and bins within the contract),
// re-sealed as a gateway would, fits MaxMessageSize.
func FuzzSealedSizeBound(f *testing.F) {
	addSealedSeeds(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		_, b, err := Open(payload)
		if err != nil {
			return
		}
		if !ValidID(b.Municipality) || !ValidID(b.Gateway) || !ValidID(b.Sensor) || b.Seq > MaxSeq {
			return
		}
		if (b.Kind != KindLevels || len(b.Env) > 0) && (b.Kind != KindEnv || len(b.Records) > 0) {
			return
		}
		for _, s := range []string{b.Device.Model, b.Device.Serial, b.Device.Firmware, b.Clock.Source} {
			if len(s) > MaxTextLen {
				return
			}
		}
		if b.Device.CalibratedAt != "" {
			if _, err := time.Parse(time.DateOnly, b.Device.CalibratedAt); err != nil {
				return
			}
		}
		switch b.Device.Grade {
		case "class1", "class2", "screening":
		default:
			return
		}
		if len(b.Kind) > len(KindLevels) {
			return
		}
		for _, r := range b.Records {
			if r.DurMs < 0 || r.DurMs > MaxDurMs || (r.Hist != nil && r.Hist.Validate() != nil) {
				return
			}
		}
		p, err := Seal(b, ed25519.NewKeyFromSeed(make([]byte, 32)))
		if err != nil {
			return // a time outside years 0–9999 does not marshal
		}
		if err := CheckSize(len(p), b); err != nil && len(p) <= MaxPayload {
			t.Fatalf("a contract-conforming batch re-sealed to %d bytes: %v", len(p), err)
		}
	})
}
