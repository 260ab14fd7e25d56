package wire

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/level"
)

var now = time.Date(2026, 3, 10, 23, 0, 0, 0, time.UTC)

func f64(v float64) *float64 { return &v }

func goodLevels() *Batch {
	return &Batch{
		V: Version, Kind: KindLevels, Municipality: "lapa", Gateway: "gw-01", Sensor: "m1", Seq: 7,
		SentAt: now,
		Device: Device{Model: "sim", Serial: "0001", Grade: "class1", CalibratedAt: "2026-01-02"},
		Clock:  Clock{Synced: true, OffsetMs: 1.5, Source: "ntp"},
		Records: []Record{{
			T: now.Add(-2 * time.Second), DurMs: 1000, LAeq: 60, LAFmax: 63, LAFmin: 55, LCpeak: f64(80),
			Hist: &level.Histogram{Bins: map[int]float64{600: 1000}},
		}},
	}
}

func goodEnv() *Batch {
	return &Batch{
		V: Version, Kind: KindEnv, Municipality: "lapa", Gateway: "gw-01", Sensor: "m1", Seq: 8,
		Device: Device{Model: "bme280", Serial: "76", Grade: "screening"},
		Env:    []EnvRecord{{T: now, TemperatureC: f64(25), HumidityPct: f64(60), PressureHPa: f64(1013)}},
	}
}

func TestTopicBuildersRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		topic string
		want  Topic
	}{
		{"levels", LevelsTopic("lapa", "gw-01", "m1"), Topic{"lapa", "gw-01", "m1", KindLevels}},
		{"env", EnvTopic("lapa", "gw-01", "m1"), Topic{"lapa", "gw-01", "m1", KindEnv}},
		{"status", StatusTopic("lapa", "gw-01"), Topic{"lapa", "gw-01", "", KindStatus}},
		{"ack", AckTopic("lapa", "gw_2"), Topic{"lapa", "gw_2", "", KindAck}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTopic(tc.topic)
			if err != nil {
				t.Fatalf("ParseTopic(%q): %v", tc.topic, err)
			}
			if got != tc.want {
				t.Errorf("ParseTopic(%q) = %+v, want %+v", tc.topic, got, tc.want)
			}
		})
	}
}

func TestParseTopicRejects(t *testing.T) {
	for _, name := range []string{
		"",
		"sossego",
		"sossego/v2/lapa/gw/m1/levels",
		"other/v1/lapa/gw/m1/levels",
		"sossego/v1/lapa/gw/m1/alerts",
		"sossego/v1/lapa/gw/levels",
		"sossego/v1/lapa/gw/m1/status",
		"sossego/v1/lapa/gw/m1/x/levels",
		"sossego/v1/Lapa/gw/m1/levels",
		"sossego/v1/lapa/+/m1/levels",
		"sossego/v1/lapa/gw/#/levels",
		"sossego/v1//gw/m1/levels",
		"sossego/v1/lapa/-gw/status",
		"sossego/v1/lapa/" + strings.Repeat("a", 65) + "/status",
		"sossego/v1/lapa/gw/ack/",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseTopic(name)
			if err == nil {
				t.Fatalf("ParseTopic(%q) accepted", name)
			}
			if got := ReasonOf(err); got != ReasonTopic {
				t.Errorf("reason = %q, want %q", got, ReasonTopic)
			}
		})
	}
}

// An empty sensor segment on a levels/env topic is rejected.
func TestParseTopicEmptySensor(t *testing.T) {
	for _, name := range []string{"sossego/v1/lapa/gw//levels", "sossego/v1/lapa/gw//env"} {
		if _, err := ParseTopic(name); err == nil || ReasonOf(err) != ReasonTopic {
			t.Errorf("ParseTopic(%q) = %v, want a topic rejection", name, err)
		}
	}
}

// A "null" body is not an Open error (Open only decodes); Validate rejects
// the resulting zero batch.
func TestNullBodyRejectedByValidate(t *testing.T) {
	env, b, err := Open([]byte(`{"v":1,"kid":"gw-01","body":null}`))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	err = Validate(Topic{"lapa", "gw-01", "m1", KindLevels}, env, b, now, DefaultSkew, DefaultStale)
	check(t, err, ReasonSchema)
}

func TestValidID(t *testing.T) {
	tests := map[string]bool{
		"a": true, "gw-01": true, "0": true, "x_y": true, strings.Repeat("a", 64): true,
		"": false, "-a": false, "_a": false, "A": false, "a/b": false, "a+b": false, "a#": false,
		strings.Repeat("a", 65): false, "é": false, "a b": false,
	}
	for id, want := range tests {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestSealOpenVerifyRoundTrip(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(bytes.NewReader(make([]byte, 64)))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*Batch{goodLevels(), goodEnv()} {
		t.Run(b.Kind, func(t *testing.T) {
			payload, err := Seal(b, priv)
			if err != nil {
				t.Fatalf("Seal: %v", err)
			}
			env, got, err := Open(payload)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if env.Kid != b.Gateway || env.V != Version {
				t.Errorf("envelope kid=%q v=%d", env.Kid, env.V)
			}
			if !ed25519.Verify(pub, env.Body, env.Sig) {
				t.Error("the signature does not verify over the body bytes")
			}
			want, _ := json.Marshal(b)
			if !bytes.Equal(env.Body, want) {
				t.Errorf("body bytes changed:\n got %s\nwant %s", env.Body, want)
			}
			again, _ := json.Marshal(got)
			if !bytes.Equal(again, want) {
				t.Errorf("decoded batch re-marshals differently:\n got %s\nwant %s", again, want)
			}
			topic, _ := ParseTopic(LevelsTopic(b.Municipality, b.Gateway, b.Sensor))
			topic.Kind = b.Kind
			if err := Validate(topic, env, got, now, DefaultSkew, DefaultStale); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestOpenRejects(t *testing.T) {
	good, err := Seal(goodLevels(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		payload []byte
		reason  string
	}{
		{"too large", append(good, bytes.Repeat([]byte(" "), MaxPayload)...), ReasonSize},
		{"empty", nil, ReasonJSON},
		{"not json", []byte("offline"), ReasonJSON},
		{"truncated", good[:len(good)/2], ReasonJSON},
		{"trailing data", append(append([]byte{}, good...), []byte(`{}`)...), ReasonJSON},
		{"unknown envelope field", []byte(`{"v":1,"kid":"gw","body":{},"extra":1}`), ReasonJSON},
		{"unknown body field", []byte(`{"v":1,"kid":"gw","body":{"v":1,"gw":"x"}}`), ReasonJSON},
		{"wrong body type", []byte(`{"v":1,"kid":"gw","body":{"seq":"7"}}`), ReasonJSON},
		{"bad sig base64", []byte(`{"v":1,"kid":"gw","body":{},"sig":"***"}`), ReasonJSON},
		{"version 2", []byte(`{"v":2,"kid":"gw","body":{}}`), ReasonSchema},
		{"version missing", []byte(`{"kid":"gw","body":{}}`), ReasonSchema},
		{"no body", []byte(`{"v":1,"kid":"gw"}`), ReasonSchema},
		{"body array", []byte(`{"v":1,"kid":"gw","body":[1]}`), ReasonJSON},
		// Signed bytes must mean one thing to every reader: a duplicated
		// member (first or last wins?) is refused, as are names that only
		// match case-insensitively and invalid UTF-8.
		{"duplicate body member", []byte(`{"v":1,"kid":"gw","body":{"seq":1,"seq":2}}`), ReasonJSON},
		{"duplicate envelope member", []byte(`{"v":1,"kid":"gw","kid":"gx","body":{}}`), ReasonJSON},
		{"member name in other case", []byte(`{"v":1,"kid":"gw","body":{"SEQ":1}}`), ReasonJSON},
		{"invalid UTF-8", []byte("{\"v\":1,\"kid\":\"g\xffw\",\"body\":{}}"), ReasonJSON},
		{"number out of range", []byte(`{"v":1,"kid":"gw","body":{"records":[{"laeq_db":1e999}]}}`), ReasonJSON},
		{"status payload", OfflinePayload, ReasonJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Open(tc.payload)
			if err == nil {
				t.Fatal("Open accepted")
			}
			if got := ReasonOf(err); got != tc.reason {
				t.Errorf("reason = %q, want %q (%v)", got, tc.reason, err)
			}
			var we *Error
			if !errors.As(err, &we) || we.Msg == "" {
				t.Errorf("error %v is not a *wire.Error with a message", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	levelsTopic := Topic{"lapa", "gw-01", "m1", KindLevels}
	envTopic := Topic{"lapa", "gw-01", "m1", KindEnv}
	tests := []struct {
		name   string
		topic  Topic
		kid    string
		mutate func(b *Batch)
		reason string // "" = accepted
	}{
		{"levels ok", levelsTopic, "gw-01", func(*Batch) {}, ""},
		{"env ok", envTopic, "gw-01", nil, ""},
		{"no calibration date ok", levelsTopic, "gw-01", func(b *Batch) { b.Device.CalibratedAt = "" }, ""},
		{"lcpeak absent ok", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].LCpeak = nil }, ""},
		{"just inside skew", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].T = now.Add(DefaultSkew) }, ""},
		{"rounding tolerance", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].LAFmax = b.Records[0].LAeq - 0.04 }, ""},
		{"version", levelsTopic, "gw-01", func(b *Batch) { b.V = 2 }, ReasonSchema},
		{"kind vs topic", levelsTopic, "gw-01", func(b *Batch) { b.Kind = KindEnv }, ReasonMismatch},
		{"municipality vs topic", levelsTopic, "gw-01", func(b *Batch) { b.Municipality = "pato" }, ReasonMismatch},
		{"gateway vs topic", levelsTopic, "gw-01", func(b *Batch) { b.Gateway = "gw-02" }, ReasonMismatch},
		{"sensor vs topic", levelsTopic, "gw-01", func(b *Batch) { b.Sensor = "m2" }, ReasonMismatch},
		{"kid vs gateway", levelsTopic, "gw-02", func(*Batch) {}, ReasonMismatch},
		{"seq zero", levelsTopic, "gw-01", func(b *Batch) { b.Seq = 0 }, ReasonSchema},
		{"grade", levelsTopic, "gw-01", func(b *Batch) { b.Device.Grade = "class3" }, ReasonSchema},
		{"grade missing", levelsTopic, "gw-01", func(b *Batch) { b.Device.Grade = "" }, ReasonSchema},
		{"model missing", levelsTopic, "gw-01", func(b *Batch) { b.Device.Model = "" }, ReasonSchema},
		{"serial missing", levelsTopic, "gw-01", func(b *Batch) { b.Device.Serial = "" }, ReasonSchema},
		{"calibration date", levelsTopic, "gw-01", func(b *Batch) { b.Device.CalibratedAt = "02/01/2026" }, ReasonSchema},
		{"no records", levelsTopic, "gw-01", func(b *Batch) { b.Records = nil }, ReasonSchema},
		{"env in levels", levelsTopic, "gw-01", func(b *Batch) { b.Env = goodEnv().Env }, ReasonSchema},
		{"too many records", levelsTopic, "gw-01", func(b *Batch) {
			r := b.Records[0]
			b.Records = nil
			for i := 0; i <= MaxRecords; i++ {
				b.Records = append(b.Records, r)
			}
		}, ReasonSchema},
		{"t missing", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].T = time.Time{} }, ReasonSchema},
		{"t future", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].T = now.Add(DefaultSkew + time.Second) }, ReasonTime},
		{"t stale", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].T = now.Add(-DefaultStale - time.Second) }, ReasonTime},
		{"dur zero", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].DurMs = 0 }, ReasonSchema},
		{"dur negative", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].DurMs = -1000 }, ReasonSchema},
		{"dur too long", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].DurMs = MaxDurMs + 1 }, ReasonSchema},
		{"laeq negative", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].LAeq = -1; b.Records[0].LAFmin = -2 }, ReasonRange},
		{"lafmax too high", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].LAFmax = 160.1 }, ReasonRange},
		{"lafmin NaN", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].LAFmin = math.NaN() }, ReasonRange},
		{"laeq Inf", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].LAeq = math.Inf(1) }, ReasonRange},
		{"lcpeak out of range", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].LCpeak = f64(170) }, ReasonRange},
		{"min above leq", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].LAFmin = 61 }, ReasonRange},
		{"leq above max", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].LAFmax = 59 }, ReasonRange},
		{"hist bad bin", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].Hist = &level.Histogram{Bins: map[int]float64{2001: 1}} }, ReasonSchema},
		{"hist negative time", levelsTopic, "gw-01", func(b *Batch) { b.Records[0].Hist = &level.Histogram{Bins: map[int]float64{600: -1}} }, ReasonSchema},
		{"unknown kind", Topic{"lapa", "gw-01", "m1", "alerts"}, "gw-01", func(b *Batch) { b.Kind = "alerts" }, ReasonSchema},
	}
	envTests := []struct {
		name   string
		mutate func(b *Batch)
		reason string
	}{
		{"env empty", func(b *Batch) { b.Env = nil }, ReasonSchema},
		{"records in env", func(b *Batch) { b.Records = goodLevels().Records }, ReasonSchema},
		{"env no quantity", func(b *Batch) { b.Env[0] = EnvRecord{T: now} }, ReasonSchema},
		{"env t missing", func(b *Batch) { b.Env[0].T = time.Time{} }, ReasonSchema},
		{"env t future", func(b *Batch) { b.Env[0].T = now.Add(time.Hour) }, ReasonTime},
		{"temperature", func(b *Batch) { b.Env[0].TemperatureC = f64(91) }, ReasonRange},
		{"humidity", func(b *Batch) { b.Env[0].HumidityPct = f64(-0.1) }, ReasonRange},
		{"pressure", func(b *Batch) { b.Env[0].PressureHPa = f64(299) }, ReasonRange},
		{"only pressure ok", func(b *Batch) { b.Env[0].TemperatureC, b.Env[0].HumidityPct = nil, nil }, ""},
		{"too many env readings", func(b *Batch) {
			for len(b.Env) <= MaxRecords {
				b.Env = append(b.Env, b.Env[0])
			}
		}, ReasonSchema},
		{"env stale", func(b *Batch) { b.Env[0].T = now.Add(-DefaultStale - time.Second) }, ReasonTime},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := goodLevels()
			if tc.topic.Kind == KindEnv {
				b = goodEnv()
			}
			if tc.mutate != nil {
				tc.mutate(b)
			}
			err := Validate(tc.topic, &Envelope{V: 1, Kid: tc.kid}, b, now, DefaultSkew, DefaultStale)
			check(t, err, tc.reason)
		})
	}
	for _, tc := range envTests {
		t.Run(tc.name, func(t *testing.T) {
			b := goodEnv()
			tc.mutate(b)
			check(t, Validate(envTopic, nil, b, now, DefaultSkew, DefaultStale), tc.reason)
		})
	}
}

func check(t *testing.T, err error, reason string) {
	t.Helper()
	if reason == "" {
		if err != nil {
			t.Fatalf("rejected: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("accepted, want rejection %q", reason)
	}
	if got := ReasonOf(err); got != reason {
		t.Errorf("reason = %q, want %q (%v)", got, reason, err)
	}
}

func TestReasonOf(t *testing.T) {
	if got := ReasonOf(errors.New("x")); got != "internal" {
		t.Errorf("ReasonOf(plain) = %q", got)
	}
	wrapped := errors.Join(errors.New("ctx"), &Error{Reason: ReasonRange, Msg: "m"})
	if got := ReasonOf(wrapped); got != ReasonRange {
		t.Errorf("ReasonOf(wrapped) = %q", got)
	}
	if got := (&Error{Reason: "a", Msg: "b"}).Error(); got != "a: b" {
		t.Errorf("Error() = %q", got)
	}
}

func TestOfflinePayloadIsStatus(t *testing.T) {
	var s Status
	dec := json.NewDecoder(bytes.NewReader(OfflinePayload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.V != Version || s.State != "offline" {
		t.Errorf("OfflinePayload decodes to %+v", s)
	}
}
