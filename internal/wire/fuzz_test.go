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

// addSealedSeeds adds a sealed levels and a sealed env batch to f's corpus.
func addSealedSeeds(f *testing.F) {
	_, priv, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 64)))
	for _, b := range []*Batch{goodLevels(), goodEnv()} {
		p, err := Seal(b, priv)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
	}
}

func FuzzOpen(f *testing.F) {
	addSealedSeeds(f)
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

// onePassCases are envelopes the one-pass decoder must either decode
// exactly as the two-pass one does or leave to it.
var onePassCases = []string{
	`{"v":1,"kid":"gw","body":{"v":1,"kind":"levels","seq":3}}`,
	`{"body" :  {"v":1,"records":[{"t":"2026-01-01T00:00:00Z","dur_ms":1000}]} , "v":1,"kid":"gw","sig":"AQI="}`,
	"{\"v\":1,\"kid\":\"gw\",\"body\":\t\r\n{\"seq\":3}\n}\n",
	`{"v":1,"kid":"gw","body":{"seq":3,"extra":1}}`,                              // unknown body member
	`{"v":1,"kid":"gw","body":{"records":[{"t":"2026-01-01T00:00:00Z","x":1}]}}`, // unknown record member
	`{"v":1,"kid":"gw","body":{"seq":3},"extra":1}`,                              // unknown envelope member
	`{"v":1,"kid":"gw","body":{"seq":3},"body":{"seq":4}}`,                       // duplicate
	`{"v":1,"kid":"gw","body":{"seq":3,"seq":4}}`,                                // duplicate in body
	`{"\u0076":1,"kid":"gw","\u0062ody":{"seq":3}}`,                              // escaped names
	`{"v":1,"kid":"gw","body":null}`,
	`{"v":1,"kid":"gw","body":"x"}`,
	`{"v":1,"kid":"gw","body":[]}`,
	`{"v":1,"kid":"gw"}`,
	`{"v":1,"kid":"gw","body":{"seq":3}} x`,
	`{"v":1,"kid":"gw","body":{"seq":3}`,
	`{"V":1,"kid":"gw","body":{"seq":3}}`, // names are exact
	`{"v":2,"kid":"gw","body":{"seq":3}}`,
	`{"v":1,"kid":null,"sig":null,"body":{"seq":3}}`,
	`[]`, `null`, ``,
}

// checkOnePass fails when the one-pass decoder accepts payload but the
// two-pass one does not, or decodes it differently (body bytes included).
func checkOnePass(t *testing.T, payload []byte) (accepted bool) {
	t.Helper()
	env1, b1, ok := openOnePass(payload)
	env2, b2, err := openTwoPass(payload)
	if !ok {
		return false
	}
	if env1.V != Version {
		// Open refuses it by version after the one pass, as the two-pass
		// decoder does before decoding the body.
		if ReasonOf(err) != ReasonSchema {
			t.Fatalf("envelope version %d: two passes say %v, want a schema rejection", env1.V, err)
		}
		return true
	}
	if err != nil {
		t.Fatalf("one pass accepted what two passes reject (%v): %q", err, payload)
	}
	j1, _ := json.Marshal(b1)
	j2, _ := json.Marshal(b2)
	if !bytes.Equal(j1, j2) || env1.V != env2.V || env1.Kid != env2.Kid || !bytes.Equal(env1.Sig, env2.Sig) ||
		!bytes.Equal(env1.Body, env2.Body) || (b1.Records == nil) != (b2.Records == nil) || (b1.Env == nil) != (b2.Env == nil) {
		t.Fatalf("one pass and two passes disagree on %q:\nbody %q / %q\nbatch %s / %s", payload, env1.Body, env2.Body, j1, j2)
	}
	return true
}

func TestOpenOnePass(t *testing.T) {
	accepted := 0
	for _, c := range onePassCases {
		if checkOnePass(t, []byte(c)) {
			accepted++
		}
	}
	// The well-formed ones (the first three, the escaped names, the null
	// sig/kid and v=2, which Open then refuses by version) take the fast path.
	if accepted != 6 {
		t.Errorf("one pass accepted %d of the cases, want 6", accepted)
	}
	// A body kept verbatim: what was signed is what is stored.
	p := []byte(`{"v":1,"kid":"gw","body": {"seq" : 3 } }`)
	env, _, err := Open(p)
	if err != nil || string(env.Body) != `{"seq" : 3 }` {
		t.Errorf("body %q, %v", env.Body, err)
	}
	if _, _, err := Open([]byte(`{"v":2,"kid":"gw","body":{"seq":3}}`)); ReasonOf(err) != ReasonSchema {
		t.Errorf("envelope v2: %v, want a schema rejection", err)
	}
}

// FuzzOpenOnePass: whatever the one-pass decoder accepts, the two-pass
// decoder accepts with the same values and body bytes.
func FuzzOpenOnePass(f *testing.F) {
	addSealedSeeds(f)
	for _, c := range onePassCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		checkOnePass(t, payload)
	})
}
