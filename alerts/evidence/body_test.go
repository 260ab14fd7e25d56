package evidence

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/wire"
)

// sameAsLibrary fails when fastBody accepts body and decodes it otherwise
// than the JSON library, or accepts what the library refuses. It returns
// whether fastBody took the body.
func sameAsLibrary(t *testing.T, body []byte) bool {
	t.Helper()
	var fast, lib bodyRecords
	took := fastBody(body, &fast)
	err := jsonv2.Unmarshal(body, &lib)
	var sc recScratch
	gw, seq, lines, tookLines := fastRecLines(body, &sc)
	if tookLines != took {
		t.Errorf("fastRecLines took %s: %v, fastBody: %v", body, tookLines, took)
	}
	if tookLines && err == nil {
		if want := recLines(lib.Records); string(gw) != lib.Gateway || seq != lib.Seq || !reflect.DeepEqual(lines, want) {
			t.Errorf("fastRecLines(%s) = %s %d %s, library's records as CSV %s %d %s", body, gw, seq, csvText(lines), lib.Gateway, lib.Seq, csvText(want))
		}
	}
	if !took {
		var dec bodyRecords
		if derr := decodeBody(body, &dec); (derr == nil) != (err == nil) || (err == nil && !reflect.DeepEqual(dec, lib)) {
			t.Errorf("decodeBody(%s) = %+v, %v; library %+v, %v", body, dec, derr, lib, err)
		}
		return false
	}
	if err != nil {
		t.Errorf("fastBody accepts %s, the library refuses it: %v", body, err)
		return true
	}
	if !reflect.DeepEqual(fast, lib) {
		t.Errorf("fastBody(%s) = %+v, library %+v", body, fast, lib)
	}
	return true
}

func TestFastBodyAgreesWithLibrary(t *testing.T) {
	pk := 91.5
	b := wire.Batch{V: 1, Kind: "levels", Municipality: "lapa", Gateway: "lapa-gw-01", Sensor: "lapa-bar-01", Seq: 1234,
		SentAt: time.Date(2026, 3, 7, 2, 10, 0, 0, time.UTC), Device: wire.Device{Model: "NSRT_mk4", Serial: "NSRT-0001", Grade: "class2"},
		Clock: wire.Clock{Synced: true, OffsetMs: 1.5, Source: "ntp"}}
	for i := range 10 {
		r := wire.Record{T: b.SentAt.Add(time.Duration(i) * time.Second).Add(123456789), DurMs: 1000, LAeq: 61.234 + float64(i), LAFmax: 70.1, LAFmin: 55}
		if i%3 == 0 {
			r.LCpeak, r.Overload = &pk, true
			r.Hist = &level.Histogram{Bins: map[int]float64{612: 500, 613: 250, 700: 250}}
		}
		b.Records = append(b.Records, r)
	}
	marshalled, _ := json.Marshal(&b)
	cases := []struct {
		name string
		body string
		fast bool // fastBody takes it
	}{
		{"gateway's own body", string(marshalled), true},
		{"white space", ` { "gateway" : "g" , "seq" : 7 , "records" : [ { "t" : "2026-03-07T02:10:00Z" , "dur_ms" : 1000 } ] } `, true},
		{"empty records", `{"gateway":"g","seq":7,"records":[]}`, true},
		{"no records", `{"gateway":"g","seq":7}`, true},
		{"empty object", `{}`, true},
		{"exponent and negative zero", `{"records":[{"laeq_db":6.1e1,"lafmin_db":-0,"lafmax_db":1E+2,"dur_ms":-0}]}`, true},
		{"lcpeak null", `{"records":[{"lcpeak_db":null}]}`, true},
		{"unknown members of every kind", `{"x":[1,{"a":null,"b":[true,false]}],"y":"é","records":[{"z":{"k":"v"},"t":"2026-03-07T02:10:00.5Z"}]}`, true},
		{"hist with many bins", `{"records":[{"hist":{"bins":{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"11":11,"12":12,"13":13,"14":14}}}]}`, true},
		{"hist as a gateway writes it", `{"records":[{"hist":{"bins":{"612":100,"613":200.5,"1000":0}},"laeq_db":61.3}]}`, true},
		{"records in the gateway's order", `{"records":[{"t":"2026-03-07T02:10:00Z","dur_ms":1000,"laeq_db":61.25,"lafmax_db":70.1,"lafmin_db":55,"lcpeak_db":88.5,"hist":{"bins":{"612":1000}},"overload":true},{"t":"2026-03-07T02:10:01.5Z","dur_ms":999,"laeq_db":61,"lafmax_db":62,"lafmin_db":60}]}`, true},
		{"gateway's order, then more", `{"records":[{"t":"2026-03-07T02:10:00Z","dur_ms":1000,"laeq_db":61,"lafmax_db":62,"lafmin_db":60,"overload":false,"x":1}]}`, true},
		{"gateway's order, a member repeated after", `{"records":[{"t":"2026-03-07T02:10:00Z","dur_ms":1000,"laeq_db":61,"lafmax_db":62,"lafmin_db":60,"laeq_db":1}]}`, false},
		{"gateway's order, lcpeak null", `{"records":[{"t":"2026-03-07T02:10:00Z","dur_ms":1000,"laeq_db":61,"lafmax_db":62,"lafmin_db":60,"lcpeak_db":null}]}`, true},
		{"gateway's order, bad time", `{"records":[{"t":"2026-03-07T02:10:00\u005a","dur_ms":1000,"laeq_db":61,"lafmax_db":62,"lafmin_db":60}]}`, false},
		{"gateway's order, bad number", `{"records":[{"t":"2026-03-07T02:10:00Z","dur_ms":1000,"laeq_db":061,"lafmax_db":62,"lafmin_db":60}]}`, false},
		{"hist, empty bins", `{"records":[{"hist":{"bins":{}}}]}`, true},
		{"hist, bins out of order", `{"records":[{"hist":{"bins":{"613":1,"612":2}}}]}`, true},
		{"hist, white space", `{"records":[{"hist":{ "bins" : { "612" : 1 } }}]}`, true},
		{"hist, other members", `{"records":[{"hist":{"bins":{"612":1},"n":2}}]}`, true},
		{"hist, exponent and negative", `{"records":[{"hist":{"bins":{"612":1e2,"613":-1}}}]}`, true},
		{"hist null", `{"records":[{"hist":null}]}`, true},
		{"hist, a bin repeated", `{"records":[{"hist":{"bins":{"612":1,"612":2}}}]}`, false},
		{"hist, leading zero", `{"records":[{"hist":{"bins":{"612":01}}}]}`, false},
		{"hist, fraction without digits", `{"records":[{"hist":{"bins":{"612":1.}}}]}`, false},
		{"hist, truncated", `{"records":[{"hist":{"bins":{"612":1`, false},
		{"hist, unclosed", `{"records":[{"hist":{"bins":{"612":1}]}`, false},
		{"hist twice", `{"records":[{"hist":{"bins":{}},"hist":{"bins":{}}}]}`, false},
		{"a known and an unknown name", `{"records":[{"laeq_db":1,"x":1,"x":2}]}`, false},
		{"duplicate top-level name", `{"seq":1,"seq":2}`, false},
		{"duplicate record name", `{"records":[{"laeq_db":1,"laeq_db":2}]}`, false},
		{"duplicate nested name", `{"device":{"model":"a","model":"b"}}`, false},
		{"duplicate among many bins", `{"records":[{"hist":{"bins":{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"11":11,"12":12,"13":13,"1":14}}}]}`, false},
		{"escape in gateway", `{"gateway":"g\u0041","seq":1}`, false},
		{"records null", `{"records":null}`, false},
		{"record null", `{"records":[null]}`, false},
		{"seq with fraction", `{"seq":1.0}`, false},
		{"seq negative", `{"seq":-1}`, false},
		{"dur with exponent", `{"records":[{"dur_ms":1e3}]}`, false},
		{"overload null", `{"records":[{"overload":null}]}`, false},
		{"time with offset", `{"records":[{"t":"2026-03-07T02:10:00-03:00"}]}`, false},
		{"time without zone", `{"records":[{"t":"2026-03-07T02:10:00"}]}`, false},
		{"month 13", `{"records":[{"t":"2026-13-07T02:10:00Z"}]}`, false},
		{"float out of range", `{"records":[{"laeq_db":1e400}]}`, false},
		{"leading zero", `{"seq":01}`, false},
		{"trailing comma", `{"seq":1,}`, false},
		{"trailing bytes", `{"seq":1}x`, false},
		{"invalid UTF-8", "{\"gateway\":\"\xff\"}", false},
		{"control character", "{\"gateway\":\"a\tb\"}", false},
		{"not an object", `[1]`, false},
		{"truncated", `{"records":[{"t":"2026`, false},
		{"case of a name", `{"Seq":1,"GATEWAY":"g"}`, true},
		{"values rounded from their text", `{"records":[{"laeq_db":52.156,"lafmax_db":99.995,"lafmin_db":-0.001},{"laeq_db":-0,"lafmax_db":0.004,"lafmin_db":9.9999999}]}`, true},
		{"values near a rounding boundary", `{"records":[{"laeq_db":0.125,"lafmax_db":1.005,"lafmin_db":2.67499999999,"lcpeak_db":0.0050000000001}]}`, true},
		{"values decoded", `{"records":[{"laeq_db":123456.785,"lafmax_db":1.5e1,"lafmin_db":0.12345678901234567890123,"lcpeak_db":-99999.995}]}`, true},
		{"integers", `{"records":[{"dur_ms":-0},{"dur_ms":1234567890123456789},{"dur_ms":-9223372036854775808}]}`, true},
		{"integer out of range", `{"records":[{"dur_ms":9223372036854775808}]}`, false},
		{"times", `{"records":[{"t":"2024-02-29T23:59:59.999999999Z"},{"t":"2026-03-07T02:10:00.1Z"},{"t":"0000-01-01T00:00:00Z"}]}`, true},
		{"29 February of a common year", `{"records":[{"t":"2023-02-29T00:00:00Z"}]}`, false},
		{"second 60", `{"records":[{"t":"2026-03-07T23:59:60Z"}]}`, false},
		{"hour 24", `{"records":[{"t":"2026-03-07T24:00:00Z"}]}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if took := sameAsLibrary(t, []byte(c.body)); took != c.fast {
				t.Errorf("fastBody took it: %v, want %v", took, c.fast)
			}
		})
	}
}

// TestRecLinesShareSlabs: records cut from one scratch's slabs for many
// bodies (some declined, some larger than a slab) stay what they were
// when a later body is read.
func TestRecLinesShareSlabs(t *testing.T) {
	var sc recScratch
	type kept struct {
		lines []recLine
		want  string
	}
	var all []kept
	for i := range 3000 {
		n := 1 + i%12
		if i%500 == 7 {
			n = 900 // more than a slab holds
		}
		b := wire.Batch{V: 1, Kind: "levels", Gateway: "g", Seq: uint64(i + 1)}
		for j := range n {
			b.Records = append(b.Records, wire.Record{T: time.Date(2026, 3, 7, 2, 0, 0, 0, time.UTC).Add(time.Duration(i*1000+j) * time.Second),
				DurMs: 1000, LAeq: 40 + float64(i%500)/7, LAFmax: 60.125, LAFmin: 30})
		}
		body, _ := json.Marshal(&b)
		if i%9 == 4 {
			body = append(body[:len(body)-1], `,"x":}`...) // declined: not JSON
		}
		_, _, lines, ok := fastRecLines(body, &sc)
		if i%9 == 4 {
			if ok {
				t.Fatalf("body %d taken", i)
			}
			continue
		}
		var lib bodyRecords
		if err := jsonv2.Unmarshal(body, &lib); err != nil || !ok {
			t.Fatalf("body %d: %v %v", i, ok, err)
		}
		all = append(all, kept{lines, csvText(recLines(lib.Records))})
	}
	for i, k := range all {
		if got := csvText(k.lines); got != k.want {
			t.Fatalf("records %d changed:\n%s\nwant\n%s", i, got, k.want)
		}
	}
}

// csvText shows records as CSV lines.
func csvText(rs []recLine) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(string(r.t) + "," + string(r.vals) + "; ")
	}
	return b.String()
}

func FuzzFastBody(f *testing.F) {
	f.Add([]byte(`{"gateway":"g","seq":7,"records":[{"t":"2026-03-07T02:10:00.123Z","dur_ms":1000,"laeq_db":61.2,"lcpeak_db":null,"overload":true}]}`))
	f.Add([]byte(`{"records":[{"hist":{"bins":{"612":1}}}],"device":{"model":"x"}}`))
	f.Add([]byte(`{"seq":1,"seq":2}`))
	f.Add([]byte(`{"records":[{"t":"2026-03-07T02:10:00Z","laeq_db":61.2,"hist":{"bins":{"612":100,"613":900}}},{"hist":{"bins":{"612":1,"612":2}}}]}`))
	f.Add([]byte(`{"records":[{"laeq_db":99.995,"lafmax_db":1.005,"lafmin_db":-0.001,"lcpeak_db":12345.6789,"dur_ms":-0,"t":"2024-02-29T23:59:59.9Z"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAsLibrary(t, body)
	})
}

func TestAppendUTCMillis(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 3, 7, 2, 10, 0, 999_999_999, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 1_000_000, time.FixedZone("BRT", -3*3600)),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC),
		time.Date(2018, 11, 4, 2, 30, 0, 0, time.UTC), // Brazilian summer time, the last years it was kept
		time.Date(2019, 2, 17, 1, 59, 59, 999_000_000, time.UTC),
	} {
		if got, want := string(appendUTCMillis(nil, tm)), tm.UTC().Format("2006-01-02T15:04:05.000Z"); got != want {
			t.Errorf("appendUTCMillis(%v) = %s, want %s", tm, got, want)
		}
		if got, want := string(appendLocalMillis(nil, tm.In(saoPaulo))), tm.In(saoPaulo).Format("2006-01-02 15:04:05.000"); got != want {
			t.Errorf("appendLocalMillis(%v) = %s, want %s", tm, got, want)
		}
	}
}

func BenchmarkDecodeBody(b *testing.B) {
	bt := wire.Batch{V: 1, Kind: "levels", Municipality: "lapa", Gateway: "lapa-gw-01", Sensor: "lapa-bar-01", Seq: 1234,
		SentAt: time.Date(2026, 3, 7, 2, 10, 0, 0, time.UTC), Device: wire.Device{Model: "NSRT_mk4", Serial: "NSRT-0001", Grade: "class2"},
		Clock: wire.Clock{Synced: true, OffsetMs: 1.5, Source: "ntp"}}
	for i := range 10 {
		bt.Records = append(bt.Records, wire.Record{T: bt.SentAt.Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: 61.234 + float64(i), LAFmax: 70.12, LAFmin: 55.3})
	}
	body, _ := json.Marshal(&bt)
	b.Run("fast", func(b *testing.B) {
		var br bodyRecords
		for b.Loop() {
			if !fastBody(body, &br) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		var br bodyRecords
		for b.Loop() {
			if err := jsonv2.Unmarshal(body, &br); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("recLines", func(b *testing.B) {
		var br bodyRecords
		fastBody(body, &br)
		for b.Loop() {
			recLines(br.Records)
		}
	})
}

// TestBatchLinesSplitLikeFields: the plain split of batches.txt lines of
// the earlier form (body-base64 sig-base64) agrees with strings.Fields on
// every line, whichever way it is written.
func TestBatchLinesSplitLikeFields(t *testing.T) {
	body := "eyJzZXEiOjF9" // {"seq":1}
	sig := strings.Repeat("A", 86) + "=="
	lines := []string{
		"gw 1 2026-03-07T02:10:00Z gw-1.pem " + body + " " + sig,
		"gw  1 2026-03-07T02:10:00Z gw-1.pem " + body + " " + sig,
		"gw 1 2026-03-07T02:10:00Z gw-1.pem " + body + " -",
		"gw 1 2026-03-07T02:10:00Z gw-1.pem " + body[:4] + "\r" + body[4:] + " " + sig,
		"gw 1 2026-03-07T02:10:00Z gw-1.pem " + body[:4] + "\t" + body[4:] + " " + sig,
		"gw 1 2026-03-07T02:10:00Z gw-1.pem " + body + " " + sig + " extra",
		"gw\u00a01 2026-03-07T02:10:00Z gw-1.pem " + body + " " + sig,
		"gw 1 2026-03-07T02:10:00Z gw-1.pem " + body + "= " + sig,
		"gw 1 2026-03-07T02:10:00Z gw-1.pem " + body,
	}
	for _, line := range lines {
		var c batchChecker
		c.kind = batchKind
		got := make([]signedBatch, 1)
		v := make([]batchVerdict, 1)
		c.parse([]numbered{{1, []byte(line)}}, got, v)
		want, wantOK := signedBatch{}, false
		if f := strings.Fields(line); len(f) == 6 {
			var ff [6][]byte
			for i := range f {
				ff[i] = []byte(f[i])
			}
			sl := earlierLine(&ff, false)
			want, wantOK = parseLine(1, &sl, func(n int) []byte { return make([]byte, n) })
		}
		if got[0].ok != wantOK || !reflect.DeepEqual(got[0], want) {
			t.Errorf("%q: parsed %+v (%s), want %+v", line, got[0], v[0].problem, want)
		}
	}
}

// TestSignedLineForms: a line in Export's form carries the signed body
// as it is (or after base64:) as its last field, spaces and all; a line
// of the earlier form still reads; anything else is refused with the
// reason.
func TestSignedLineForms(t *testing.T) {
	body := `{"seq":1,"device":{"model":"Medidor  simulado (obra)"},"x":"a\\b"}`
	b64 := base64.StdEncoding.EncodeToString([]byte(body))
	sig := strings.Repeat("A", 86) + "=="
	head := "gw 1 2026-03-07T02:10:00Z gw-1.pem "
	cases := []struct {
		name, line string
		body       string // "" when refused
		sig        bool
		problem    string
	}{
		{"raw body", head + sig + " " + body, body, true, ""},
		{"raw body, unsigned", head + "- " + body, body, false, ""},
		{"base64 body", head + sig + " base64:" + b64, body, true, ""},
		{"base64 body with a line break", head + sig + " base64:" + base64.StdEncoding.EncodeToString([]byte("{\n}")), "{\n}", true, ""},
		{"earlier form", head + b64 + " " + sig, body, true, ""},
		{"earlier form, unsigned", head + b64 + " -", body, false, ""},
		{"raw body, carriage return kept", head + sig + " " + body + "\r", body + "\r", true, ""},
		{"tab in the head", "gw\t1 2026-03-07T02:10:00Z gw-1.pem " + sig + " " + body, "", false, "formato inválido"},
		{"no body", head + sig + " ", "", false, "formato inválido"},
		{"bad base64 body", head + sig + " base64:!!!!", "", false, "campo ilegível"},
		{"bad signature text", head + "AAA " + body, "", false, "campo ilegível"},
		{"bad seq", "gw x 2026-03-07T02:10:00Z gw-1.pem " + sig + " " + body, "", false, "campo ilegível"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var bc batchChecker
			bc.kind = batchKind
			got := make([]signedBatch, 1)
			v := make([]batchVerdict, 1)
			bc.parse([]numbered{{1, []byte(c.line)}}, got, v)
			if c.body == "" {
				if got[0].ok || !strings.Contains(v[0].problem, c.problem) {
					t.Errorf("parsed %+v, problem %q; want refused with %q", got[0], v[0].problem, c.problem)
				}
				return
			}
			if !got[0].ok || string(got[0].body) != c.body || (len(got[0].sig) == 64) != c.sig || got[0].gateway != "gw" || got[0].seq != 1 || got[0].key != "gw-1.pem" {
				t.Errorf("parsed %+v (%s), want body %q", got[0], v[0].problem, c.body)
			}
		})
	}
}

// FuzzBodyMeta: the scanner's reading of a body's clock, device and check
// members is the JSON library's whenever the scanner takes the body.
func FuzzBodyMeta(f *testing.F) {
	f.Add([]byte(`{"v":1,"kind":"check","device":{"model":"x"},"clock":{"synced":true},"check":{"reference_db":94}}`))
	f.Add([]byte(`{"kind":"levels","clock":{},"device":{},"records":[]}`))
	f.Add([]byte(`{"clock":1,"clock":2}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, d, k, ok := bodyMetaFast(body)
		if !ok {
			return
		}
		lc, ld, lk := bodyMetaLibrary(body)
		if !bytes.Equal(c, lc) || !bytes.Equal(d, ld) || !bytes.Equal(k, lk) {
			t.Errorf("%s: scanner %s %s %s, library %s %s %s", body, c, d, k, lc, ld, lk)
		}
	})
}

// bodyMetaLibrary is bodyMeta without the scanner.
func bodyMetaLibrary(body []byte) (clock, device, check []byte) {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, nil
	}
	kind := ""
	for clock == nil || device == nil || (kind == "check" && check == nil) {
		tok, err := dec.ReadToken()
		if err != nil || tok.Kind() != '"' {
			break
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			break
		}
		switch name {
		case "kind":
			_ = json.Unmarshal(v, &kind)
		case "clock":
			clock = bytes.Clone(v)
		case "device":
			device = bytes.Clone(v)
		case "check":
			check = bytes.Clone(v)
		}
	}
	return clock, device, check
}

// TestFixed2TextAgrees: the value rewritten from its text is the one
// strconv gives after decoding, for the numbers gateways write (shortest
// form of a float) and for decimals of every length, halves included.
func TestFixed2TextAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(text string) {
		got, ok := appendFixed2Text(nil, []byte(text))
		want, wok := appendFloatSlow(nil, []byte(text))
		if ok != wok || string(got) != string(want) {
			t.Fatalf("%s: %q %v, strconv %q %v", text, got, ok, want, wok)
		}
	}
	for range 200000 {
		v := (r.Float64() - 0.1) * math.Pow(10, float64(r.IntN(7)))
		check(strconv.FormatFloat(v, 'f', -1, 64))
		check(strconv.FormatFloat(v, 'f', r.IntN(12), 64))
		check(strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)) // many halves: x.xx5
	}
}
