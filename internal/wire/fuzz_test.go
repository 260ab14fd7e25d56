package wire

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

func FuzzOpen(f *testing.F) {
	_, priv, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 64)))
	for _, b := range []*Batch{goodLevels(), goodEnv()} {
		p, err := Seal(b, priv)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
	}
	f.Add([]byte(`{"v":1,"kid":"gw","body":{}}`))
	f.Add([]byte(`{"v":1,"kid":"gw","body":{"records":[{"t":"2026-01-01T00:00:00Z","hist":{"bins":{"1":2}}}]}}`))
	f.Add(OfflinePayload)
	f.Add([]byte(`{"v":1,"body":{"seq":18446744073709551615}}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		env, b, err := Open(payload)
		if err != nil {
			if ReasonOf(err) == "internal" {
				t.Fatalf("rejection without a reason: %v", err)
			}
			return
		}
		// Differential: what Open (encoding/json/v2 semantics) accepts, the
		// strict encoding/json decoder it replaced accepts too, with the same
		// value — v2 is only ever stricter (exact names, no duplicates, valid
		// UTF-8), never more lenient.
		var env1 Envelope
		var b1 Batch
		if err := strictV1(payload, &env1); err != nil {
			t.Fatalf("accepted by Open, refused by encoding/json: %v", err)
		}
		if err := strictV1(env1.Body, &b1); err != nil {
			t.Fatalf("body accepted by Open, refused by encoding/json: %v", err)
		}
		j1, _ := json.Marshal(&b1)
		j2, _ := json.Marshal(b)
		if !bytes.Equal(j1, j2) || env1.V != env.V || env1.Kid != env.Kid || !bytes.Equal(env1.Sig, env.Sig) {
			t.Fatalf("decoders disagree:\nv1 %s\nv2 %s", j1, j2)
		}
		// An accepted body re-marshals, and the result opens again to the same value.
		body, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("accepted batch does not re-marshal: %v", err)
		}
		again, err := json.Marshal(Envelope{V: env.V, Kid: env.Kid, Body: body, Sig: env.Sig})
		if err != nil {
			t.Fatalf("accepted envelope does not re-marshal: %v", err)
		}
		_, b2, err := Open(again)
		if err != nil {
			t.Fatalf("re-marshalled message rejected: %v\n%s", err, again)
		}
		body2, _ := json.Marshal(b2)
		if !bytes.Equal(body, body2) {
			t.Fatalf("round trip not stable:\n%s\n%s", body, body2)
		}
		// Validation of anything Open accepted must not panic either.
		if t2, err := ParseTopic(LevelsTopic(b.Municipality, b.Gateway, b.Sensor)); err == nil {
			_ = Validate(t2, env, b, now, DefaultSkew, DefaultStale)
		}
	})
}

func FuzzParseTopic(f *testing.F) {
	for _, s := range []string{
		LevelsTopic("lapa", "gw-01", "m1"), EnvTopic("a", "b", "c"), StatusTopic("a", "b"), AckTopic("a", "b"),
		"sossego/v1/+/+/+/levels", "sossego/v1/a/b/c/d/e", "", "/", "sossego/v1/a/b/ack/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		tp, err := ParseTopic(name)
		if err != nil {
			if ReasonOf(err) != ReasonTopic {
				t.Fatalf("reason %q", ReasonOf(err))
			}
			return
		}
		var rebuilt string
		switch tp.Kind {
		case KindLevels:
			rebuilt = LevelsTopic(tp.Municipality, tp.Gateway, tp.Sensor)
		case KindEnv:
			rebuilt = EnvTopic(tp.Municipality, tp.Gateway, tp.Sensor)
		case KindStatus:
			rebuilt = StatusTopic(tp.Municipality, tp.Gateway)
		case KindAck:
			rebuilt = AckTopic(tp.Municipality, tp.Gateway)
		default:
			t.Fatalf("unknown kind %q accepted", tp.Kind)
		}
		if rebuilt != name {
			t.Fatalf("ParseTopic(%q) rebuilds to %q", name, rebuilt)
		}
		for _, id := range []string{tp.Municipality, tp.Gateway} {
			if !ValidID(id) {
				t.Fatalf("invalid id %q accepted", id)
			}
		}
	})
}

// strictV1 is the decoder wire.Open used before encoding/json/v2 semantics:
// encoding/json with unknown fields refused and nothing after the value.
func strictV1(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

// FuzzValidID checks ValidID against the regular expression it spells out.
func FuzzValidID(f *testing.F) {
	oracle := regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	for _, s := range []string{"", "a", "gw-01", "-a", "_a", "A", "a/b", "é", "a\n", strings.Repeat("a", 64), strings.Repeat("b", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidID(s), oracle.MatchString(s); got != want {
			t.Fatalf("ValidID(%q) = %v, the regexp says %v", s, got, want)
		}
	})
}
