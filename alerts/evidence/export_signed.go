package evidence

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

// gatewayKeys indexes the gateway keys of a package; each gets a file
// name under data/keys/.
type gatewayKeys struct {
	keys  []GatewayKey
	files []string
	wire  []*signature.PublicKey
}

func newGatewayKeys(ks []GatewayKey) *gatewayKeys {
	g := &gatewayKeys{keys: ks}
	n := map[string]int{}
	for _, k := range ks {
		n[k.Gateway]++
		g.files = append(g.files, fmt.Sprintf("%s-%d.pem", safeName(k.Gateway), n[k.Gateway]))
		wk, _ := signature.NewPublicKey(k.PublicKey) // nil for an unusable key: the signature then fails
		g.wire = append(g.wire, wk)
	}
	return g
}

// packageKeys is p.GatewayKeys with, from GatewayKeysFor, the keys of every
// other gateway the batches (keys) or the field checks name.
func packageKeys(p *Package, keys []BatchKey) []GatewayKey {
	gks := p.GatewayKeys
	if p.GatewayKeysFor == nil {
		return gks
	}
	have := map[string]bool{}
	for _, k := range gks {
		have[k.Gateway] = true
	}
	more := func(gw string) {
		if !have[gw] {
			have[gw] = true
			gks = append(gks, p.GatewayKeysFor(gw)...)
		}
	}
	for _, k := range keys {
		more(k.Gateway)
	}
	for _, c := range p.Meter.Checks {
		more(c.Gateway)
	}
	return gks
}

// at returns the index of the gateway's key in force at t, or -1.
func (g *gatewayKeys) at(gateway string, t time.Time) int {
	for i := len(g.keys) - 1; i >= 0; i-- {
		if g.keys[i].Gateway == gateway && g.keys[i].covers(t) {
			return i
		}
	}
	return -1
}

// verify checks the signatures of bs with the key in force when each was
// received, in one batch equation per processor: checked[i] is false when
// batch i is unsigned or no key was in force.
func (g *gatewayKeys) verify(bs []Batch) (ok, checked []bool) {
	ok, checked = make([]bool, len(bs)), make([]bool, len(bs))
	parts := max(1, min(runtime.GOMAXPROCS(0), len(bs)/16))
	var wg sync.WaitGroup
	for part := range parts {
		lo, hi := part*len(bs)/parts, (part+1)*len(bs)/parts
		wg.Go(func() {
			var bv signature.BatchVerifier
			idx := make([]int, hi-lo)
			envs := make([]wire.Envelope, hi-lo)
			for i := lo; i < hi; i++ {
				b := &bs[i]
				idx[i-lo] = -1
				ki := g.at(b.Gateway, b.ReceivedAt)
				if len(b.Sig) > 0 && ki >= 0 && g.wire[ki] != nil {
					envs[i-lo] = wire.Envelope{V: 1, Kid: b.Gateway, Body: b.Body, Sig: b.Sig}
					idx[i-lo] = bv.Add(g.wire[ki], &envs[i-lo])
				}
			}
			verdicts := bv.Verify()
			for i := lo; i < hi; i++ {
				if j := idx[i-lo]; j >= 0 {
					checked[i], ok[i] = true, verdicts[j] == nil
				}
			}
		})
	}
	wg.Wait()
	return ok, checked
}

// batchStats counts the batches' verdicts and what they report.
type batchStats struct {
	n, verified, failed, unsigned, noKey int
	devices                              map[string]int // "model|serial|grade" → batches
}

type batchLine struct {
	Gateway          string          `json:"gateway"`
	Seq              uint64          `json:"seq"`
	ReceivedAt       time.Time       `json:"received_at"`
	Key              string          `json:"key,omitempty"` // data/keys/<file>: the key in force when received
	BodySHA256       string          `json:"body_sha256"`
	VerifiedAtIngest bool            `json:"verified_at_ingest"`
	VerifiedNow      *bool           `json:"verified_now"` // null: unsigned, or no key in force when received
	Clock            json.RawMessage `json:"clock,omitempty"`
	Device           json.RawMessage `json:"device,omitempty"`
	Check            json.RawMessage `json:"check,omitempty"` // a field check: what the calibrator and the meter read
}

// signedFile is one file of signed messages: data/<name>.txt, the
// signed bytes as "gateway seq received_at key-file signature-base64 body"
// lines (streamed), and data/<name>.ndjson, the verdicts (held until the
// end: small). The body is the signed bytes themselves when plainBody
// says a line can carry them, else bodyBase64Prefix and their base64.
//
// Bags written before kept the body in base64 before the signature
// ("… key-file body-base64 signature-base64"); Verify reads both forms.
type signedFile struct {
	gk      *gatewayKeys
	lastDev []byte // the last device member decoded, and its key in devices
	devKey  string
	out     *bufio.Writer
	st      batchStats
	nd, lb  []byte
	pending []Batch
}

// bodyBase64Prefix marks a body written in base64 in a line of signed
// messages: one plainBody refuses (a body with a line break, say).
const bodyBase64Prefix = "base64:"

// plainBody reports whether a signed body can be written as it is, as
// the last field of its line, and read back byte for byte, also by sh's
// read: a JSON object's text ('{' to '}'), valid UTF-8 with no control
// character (so no line break, no tab, no white space at either end).
// A gateway's compact JSON always is.
func plainBody(body []byte) bool {
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return false
	}
	ascii := true
	for _, c := range body {
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	return ascii || utf8.Valid(body)
}

// signedChunk is how many messages are checked in one go.
const signedChunk = 256

// signed writes the signed messages src yields as data/<name>.txt and
// data/<name>.ndjson.
func (w *writer) signed(name string, gk *gatewayKeys, src func(yield func(Batch) error) error) (batchStats, error) {
	fw, h, err := w.create("data/" + name + ".txt")
	if err != nil {
		return batchStats{}, err
	}
	cw := &countWriter{w: fw}
	sf := &signedFile{gk: gk, out: bufio.NewWriterSize(cw, 64<<10), st: batchStats{devices: map[string]int{}}}
	if err := src(sf.add); err != nil {
		return sf.st, err
	}
	if err := sf.flush(); err != nil {
		return sf.st, err
	}
	if err := sf.out.Flush(); err != nil {
		return sf.st, fmt.Errorf("evidence: %s: %w", name, err)
	}
	w.payload = append(w.payload, entry{"data/" + name + ".txt", hex.EncodeToString(h.Sum(nil))})
	w.bytes += cw.n
	_, err = w.file("data/"+name+".ndjson", sf.nd)
	return sf.st, err
}

func (sf *signedFile) add(b Batch) error {
	sf.pending = append(sf.pending, b)
	if len(sf.pending) == signedChunk {
		return sf.flush()
	}
	return nil
}

// flush checks the pending messages' signatures and writes their lines.
func (sf *signedFile) flush() error {
	ok, checked := sf.gk.verify(sf.pending)
	for i := range sf.pending {
		if err := sf.line(&sf.pending[i], ok[i], checked[i]); err != nil {
			return err
		}
	}
	sf.pending = sf.pending[:0]
	return nil
}

// line writes one message's verdict line and signed line.
func (sf *signedFile) line(b *Batch, ok, checked bool) error {
	st := &sf.st
	st.n++
	ki := sf.gk.at(b.Gateway, b.ReceivedAt)
	s := sha256.Sum256(b.Body)
	line := batchLine{Gateway: b.Gateway, Seq: b.Seq, ReceivedAt: b.ReceivedAt.UTC(), BodySHA256: hex.EncodeToString(s[:]),
		VerifiedAtIngest: b.VerifiedAtIngest}
	keyFile := "-"
	if ki >= 0 {
		keyFile = sf.gk.files[ki]
		line.Key = "data/keys/" + keyFile
	}
	switch {
	case len(b.Sig) == 0:
		st.unsigned++
	case !checked:
		st.noKey++
	default:
		line.VerifiedNow = &ok
		if ok {
			st.verified++
		} else {
			st.failed++
		}
	}
	line.Clock, line.Device, line.Check = bodyMeta(b.Body)
	if line.Device != nil {
		if !bytes.Equal(line.Device, sf.lastDev) { // a gateway repeats its device: decode it once
			var d struct{ Model, Serial, Grade string }
			sf.lastDev, sf.devKey = nil, ""
			if json.Unmarshal(line.Device, &d) == nil {
				sf.lastDev, sf.devKey = line.Device, d.Model+"|"+d.Serial+"|"+d.Grade
			}
		}
		if sf.lastDev != nil {
			st.devices[sf.devKey]++
		}
	}
	l, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("evidence: %s/%d: %w", b.Gateway, b.Seq, err)
	}
	sf.nd = append(append(sf.nd, l...), '\n')
	lb := append(sf.lb[:0], csvSafe(b.Gateway)...)
	lb = append(lb, ' ')
	lb = strconv.AppendUint(lb, b.Seq, 10)
	lb = append(lb, ' ')
	lb = b.ReceivedAt.UTC().AppendFormat(lb, time.RFC3339Nano)
	lb = append(lb, ' ')
	lb = append(lb, keyFile...)
	lb = append(lb, ' ')
	if len(b.Sig) > 0 {
		lb = base64.StdEncoding.AppendEncode(lb, b.Sig)
	} else {
		lb = append(lb, '-')
	}
	lb = append(lb, ' ')
	if plainBody(b.Body) {
		lb = append(lb, b.Body...)
	} else {
		lb = append(lb, bodyBase64Prefix...)
		lb = base64.StdEncoding.AppendEncode(lb, b.Body)
	}
	sf.lb = append(lb, '\n')
	if _, err := sf.out.Write(sf.lb); err != nil {
		return fmt.Errorf("evidence: %s/%d: %w", b.Gateway, b.Seq, err)
	}
	return nil
}

// batchSource yields the package's batches: LoadBatches over the batches
// the records and env readings name, or Batches.
func batchSource(p *Package, keys []BatchKey) func(yield func(Batch) error) error {
	return func(yield func(Batch) error) error {
		if p.LoadBatches != nil {
			if err := p.LoadBatches(keys, yield); err != nil {
				return fmt.Errorf("evidence: lotes: %w", err)
			}
			return nil
		}
		for _, b := range p.Batches {
			if err := yield(b); err != nil {
				return err
			}
		}
		return nil
	}
}

// checkSource yields the meter's signed field checks.
func checkSource(p *Package) func(yield func(Batch) error) error {
	return func(yield func(Batch) error) error {
		for _, c := range p.Meter.Checks {
			if err := yield(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// bodyMeta returns the clock, device and check members of a signed body,
// reading only up to them (a gateway writes clock and device before the
// records; a check body ends with its check).
func bodyMeta(body []byte) (clock, device, check json.RawMessage) {
	if clock, device, check, ok := bodyMetaFast(body); ok {
		return clock, device, check
	}
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

// bodyMetaFast is bodyMeta with the one-pass scanner; ok false when the
// scanner declines the body (escapes, duplicate names, bad syntax before
// the members): bodyMeta then reads it with the JSON library.
func bodyMetaFast(body []byte) (clock, device, check json.RawMessage, ok bool) {
	s := scanner{b: body}
	if !s.lit('{') {
		return nil, nil, nil, false
	}
	var names nameSet
	kind := ""
	for clock == nil || device == nil || (kind == "check" && check == nil) {
		if s.peek() == '}' {
			break
		}
		name, ok := s.str()
		if !ok || !names.add(name) || !s.lit(':') {
			return nil, nil, nil, false
		}
		s.ws()
		start := s.i
		if !s.skip(1) {
			return nil, nil, nil, false
		}
		v := body[start:s.i]
		switch string(name) {
		case "kind":
			if len(v) >= 2 && v[0] == '"' {
				kind = string(v[1 : len(v)-1]) // str: no escapes
			}
		case "clock":
			clock = bytes.Clone(v)
		case "device":
			device = bytes.Clone(v)
		case "check":
			check = bytes.Clone(v)
		}
		if !s.lit(',') {
			break
		}
	}
	return clock, device, check, true
}
