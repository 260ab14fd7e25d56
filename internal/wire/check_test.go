package wire

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func goodCheck() *Batch {
	return &Batch{
		V: Version, Kind: KindCheck, Municipality: "lapa", Gateway: "gw-01", Sensor: "m1", Seq: 9, SentAt: now,
		Device: Device{Model: "sim", Serial: "0001", Grade: "class1"},
		Clock:  Clock{Synced: true, OffsetMs: 1.5, Source: "ntp"},
		Check: &Check{T: now.Add(-time.Minute), ReferenceDB: 94, MeasuredDB: 94.12, FrequencyHz: 1000,
			CalibratorModel: "Brüel & Kjær 4231", CalibratorSerial: "2671834"},
	}
}

func TestCheckTopic(t *testing.T) {
	tp, err := ParseTopic(CheckTopic("lapa", "gw-01", "m1"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Topic{"lapa", "gw-01", "m1", KindCheck}); tp != want {
		t.Fatalf("got %+v, want %+v", tp, want)
	}
	if SubCheck != "sossego/v1/+/+/+/check" {
		t.Fatalf("SubCheck = %q", SubCheck)
	}
}

func TestValidateCheck(t *testing.T) {
	tp := Topic{"lapa", "gw-01", "m1", KindCheck}
	tests := []struct {
		name   string
		edit   func(b *Batch)
		reason string // "" accepted
		msg    string // part of the pt-BR message
	}{
		{"94 dB", func(b *Batch) {}, "", ""},
		{"114 dB", func(b *Batch) { b.Check.ReferenceDB, b.Check.MeasuredDB = 114, 113.8 }, "", ""},
		{"no check", func(b *Batch) { b.Check = nil }, ReasonSchema, "precisa de check"},
		{"records too", func(b *Batch) { b.Records = goodLevels().Records }, ReasonSchema, "nenhum records"},
		{"check in levels", func(b *Batch) { b.Kind = KindLevels; b.Records = goodLevels().Records }, ReasonMismatch, "kind"},
		{"reference 100", func(b *Batch) { b.Check.ReferenceDB = 100 }, ReasonRange, "94 ou 114"},
		{"frequency 250", func(b *Batch) { b.Check.FrequencyHz = 250 }, ReasonRange, "1000 Hz"},
		{"measured NaN", func(b *Batch) { b.Check.MeasuredDB = math.NaN() }, ReasonRange, "fora da faixa"},
		{"measured far", func(b *Batch) { b.Check.MeasuredDB = 80 }, ReasonRange, "digitado errado"},
		{"no calibrator serial", func(b *Batch) { b.Check.CalibratorSerial = "" }, ReasonSchema, "obrigatórios"},
		{"long calibrator model", func(b *Batch) { b.Check.CalibratorModel = strings.Repeat("x", MaxTextLen+1) }, ReasonSchema, "excede"},
		{"long note", func(b *Batch) { b.Check.Note = strings.Repeat("x", MaxNoteLen+1) }, ReasonSchema, "check.note"},
		{"no time", func(b *Batch) { b.Check.T = time.Time{} }, ReasonSchema, "sem campo t"},
		{"future", func(b *Batch) { b.Check.T = now.Add(time.Hour) }, ReasonTime, "no futuro"},
		{"no serial", func(b *Batch) { b.Device.Serial = "" }, ReasonSchema, "device.serial"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := goodCheck()
			tc.edit(b)
			if tc.name == "check in levels" {
				tp := tp
				tp.Kind = KindLevels
				err := Validate(tp, nil, b, now, DefaultSkew, DefaultStale)
				if ReasonOf(err) != ReasonSchema || !strings.Contains(err.Error(), "só vale em mensagens check") {
					t.Fatalf("got %v", err)
				}
				return
			}
			err := Validate(tp, nil, b, now, DefaultSkew, DefaultStale)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if ReasonOf(err) != tc.reason || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want %s containing %q", err, tc.reason, tc.msg)
			}
		})
	}
}

func TestCheckSealOpenVerify(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 64)))
	p, err := Seal(goodCheck(), priv)
	if err != nil {
		t.Fatal(err)
	}
	env, b, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(pub, env.Body, env.Sig) {
		t.Fatal("the signature does not verify over the body bytes")
	}
	if b.Check == nil || b.Check.MeasuredDB != 94.12 || b.Check.CalibratorModel != "Brüel & Kjær 4231" {
		t.Fatalf("decoded %+v", b.Check)
	}
	if err := CheckSize(len(p), b); err != nil {
		t.Fatal(err)
	}
	if err := CheckSize(MaxCheckPayload+1, b); ReasonOf(err) != ReasonSize {
		t.Fatalf("oversized check: %v", err)
	}
	// The worst check a gateway can seal fits MaxCheckPayload.
	w := goodCheck()
	w.Municipality, w.Gateway, w.Sensor = strings.Repeat("a", 64), strings.Repeat("a", 64), strings.Repeat("a", 64)
	text := strings.Repeat("<", MaxTextLen)
	w.Device = Device{Model: text, Serial: text, Firmware: text, Grade: "screening", CalibratedAt: "2026-12-31"}
	w.Clock.Source = text
	w.Check.CalibratorModel, w.Check.CalibratorSerial, w.Check.Note = text, text, strings.Repeat("<", MaxNoteLen)
	w.Check.MeasuredDB, w.Clock.OffsetMs = worstFloat, worstFloat
	w.SentAt, w.Check.T, w.Seq = worstTime(), worstTime(), MaxSeq
	p, err = Seal(w, priv)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) > MaxCheckPayload {
		t.Fatalf("worst sealed check is %d bytes, over MaxCheckPayload %d", len(p), MaxCheckPayload)
	}
}

// FuzzCheck: whatever arrives on a check topic decodes and validates
// without panicking, every rejection has a reason, and what is accepted is
// a check whose values are in range and re-encodes to the same value.
func FuzzCheck(f *testing.F) {
	_, priv, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 64)))
	for _, b := range []*Batch{goodCheck(), goodLevels()} {
		p, err := Seal(b, priv)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
	}
	f.Add([]byte(`{"v":1,"kid":"gw-01","body":{"v":1,"kind":"check","check":{"reference_db":1e400}}}`))
	f.Add([]byte(`{"v":1,"kid":"gw-01","body":{"v":1,"kind":"check","check":null}}`))
	tp := Topic{"lapa", "gw-01", "m1", KindCheck}
	f.Fuzz(func(t *testing.T, payload []byte) {
		env, b, err := Open(payload)
		if err != nil {
			if ReasonOf(err) == "internal" {
				t.Fatalf("rejection without a reason: %v", err)
			}
			return
		}
		err = Validate(tp, env, b, now, DefaultSkew, DefaultStale)
		if err == nil {
			err = CheckSize(len(payload), b)
		}
		if err != nil {
			if ReasonOf(err) == "internal" {
				t.Fatalf("rejection without a reason: %v", err)
			}
			return
		}
		c := b.Check
		if c == nil || len(b.Records)+len(b.Env) != 0 {
			t.Fatalf("accepted a check message without a check alone: %+v", b)
		}
		if d := c.MeasuredDB - c.ReferenceDB; math.IsNaN(d) || math.Abs(d) > CheckTolerance || c.FrequencyHz != 1000 {
			t.Fatalf("accepted out-of-range check %+v", c)
		}
		body, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var b2 Batch
		if err := strictUnmarshal(body, &b2); err != nil {
			t.Fatalf("re-encoded check does not decode: %v", err)
		}
		c2 := b2.Check
		if c2 == nil || !c2.T.Equal(c.T) || c2.ReferenceDB != c.ReferenceDB || c2.MeasuredDB != c.MeasuredDB ||
			c2.CalibratorModel != c.CalibratorModel || c2.CalibratorSerial != c.CalibratorSerial || c2.Note != c.Note {
			t.Fatalf("round trip changed the check: %+v vs %+v", b2.Check, c)
		}
	})
}
