package evidence

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

// signedBatch is one line of data/batches.txt.
type signedBatch struct {
	line     int
	gateway  string
	seq      uint64
	received time.Time
	key      string
	body     []byte
	sig      []byte
	ok       bool // the line parsed
}

// batchRecord is what readings.csv is compared with.
type batchRecord struct {
	T        time.Time `json:"t"`
	DurMs    int64     `json:"dur_ms"`
	LAeq     float64   `json:"laeq_db"`
	LAFmax   float64   `json:"lafmax_db"`
	LAFmin   float64   `json:"lafmin_db"`
	LCpeak   *float64  `json:"lcpeak_db"`
	Overload bool      `json:"overload"`
}

type bodyRecords struct {
	Gateway string        `json:"gateway"`
	Seq     uint64        `json:"seq"`
	Records []batchRecord `json:"records"`
}

// batchVerdict is what checking one line of batches.txt found.
type batchVerdict struct {
	problem  string
	warn     string
	verified bool
	recs     []recLine // the records of a verified batch
}

// recLine is a signed record as readings.csv must show it: its start
// (t_utc) and its values (dur_ms … overload), in the CSV's own format.
type recLine struct{ t, vals []byte }

// verifyChunk is how many signatures go into one batch equation.
const verifyChunk = 512

// signedKind is one kind of signed message a bag carries, with the words
// its problems use.
type signedKind struct {
	file     string // data/batches.txt
	noun     string // "lote"
	unsigned string // why an unsigned one matters
	what     string // what its body must be
	// body checks a verified message's body and fills its verdict.
	body func(c *batchChecker, sb *signedBatch, v *batchVerdict) bool
}

var (
	batchKind = &signedKind{file: "data/batches.txt", noun: "lote", unsigned: "suas leituras não são atestadas pelo gateway",
		what: "um lote desse gateway com esse número", body: (*batchChecker).batchBody}
	checkKind = &signedKind{file: "data/checks.txt", noun: "registro de verificação de campo", unsigned: "não é atestado pelo gateway",
		what: "uma verificação de campo desse gateway com esse número", body: (*batchChecker).checkBody}
)

// checkBatches verifies every batch's signature with the key in force
// when it was received and returns the records of the verified ones.
func (b *bagFiles) checkBatches(data []byte, keys map[string]gwKey) map[BatchKey][]recLine {
	batches, verdicts := b.checkSigned(batchKind, data, keys)
	return b.collectBatches(checkedPart{batches, verdicts})
}

// checkSigned parses and checks the lines of a file of signed messages in
// contiguous parts, one per processor.
func (b *bagFiles) checkSigned(kind *signedKind, data []byte, keys map[string]gwKey) ([]signedBatch, []batchVerdict) {
	lines := splitLines(nil, data, 1)
	batches := make([]signedBatch, len(lines))
	verdicts := make([]batchVerdict, len(lines))
	b.parallel(len(lines), 64, func(lo, hi int) {
		c := batchChecker{keys: keys, kind: kind}
		for start := lo; start < hi; start += verifyChunk {
			end := min(start+verifyChunk, hi)
			c.parse(lines[start:end], batches[start:end], verdicts[start:end])
			c.verify(batches[start:end], verdicts[start:end])
		}
	})
	return batches, verdicts
}

// checkChecks verifies the signed field checks (data/checks.txt) like the
// batches: the key in force when each was received, and that each body is
// that gateway's check with that number.
func (b *bagFiles) checkChecks(data []byte, keys map[string]gwKey) {
	rep := b.rep
	checks, verdicts := b.checkSigned(checkKind, data, keys)
	for i, v := range verdicts {
		if checks[i].ok {
			rep.Checks++
		}
		if v.problem != "" {
			rep.Problems = append(rep.Problems, v.problem)
		}
		if v.warn != "" {
			rep.Warnings = append(rep.Warnings, v.warn)
		}
		if v.verified {
			rep.ChecksVerified++
		}
	}
}

// checkedPart is the batches of consecutive lines with their verdicts.
type checkedPart struct {
	batches  []signedBatch
	verdicts []batchVerdict
}

// collectBatches gathers the verdicts in line order (the parts in order)
// and returns the records of each batch batches.txt holds: nil for one
// that was not verified (unsigned, or its signature or body refused).
func (b *bagFiles) collectBatches(parts ...checkedPart) map[BatchKey][]recLine {
	rep := b.rep
	n := 0
	for _, p := range parts {
		n += len(p.batches)
	}
	out := make(map[BatchKey][]recLine, n)
	unsigned := 0
	for _, p := range parts {
		b.collectPart(p, out, &unsigned)
	}
	if unsigned > 5 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("… e mais %d lotes sem assinatura", unsigned-5))
	}
	return out
}

func (b *bagFiles) collectPart(p checkedPart, out map[BatchKey][]recLine, unsigned *int) {
	rep := b.rep
	for i, v := range p.verdicts {
		sb := &p.batches[i]
		if v.problem != "" {
			rep.Problems = append(rep.Problems, v.problem)
		}
		if v.warn != "" {
			*unsigned++
			if *unsigned <= 5 {
				rep.Warnings = append(rep.Warnings, v.warn)
			}
		}
		if !sb.ok {
			continue
		}
		rep.Batches++
		k := BatchKey{sb.gateway, sb.seq}
		if v.recs != nil {
			rep.BatchesVerified++
			out[k] = v.recs
		} else if _, ok := out[k]; !ok {
			out[k] = nil // listed, not verified
		}
	}
}

// numbered is a non-empty line with its number (from 1).
type numbered struct {
	n int
	b []byte
}

// splitLines splits data into its non-empty lines, the first numbered
// first, appending them to out[:0].
func splitLines(out []numbered, data []byte, first int) []numbered {
	out = slices.Grow(out[:0], len(data)/1024+1) // a batch's line is a few kB
	for n := first; len(data) > 0; n++ {
		line := data
		if k := bytes.IndexByte(data, '\n'); k >= 0 {
			line, data = data[:k], data[k+1:]
		} else {
			data = nil
		}
		if len(line) > 0 {
			out = append(out, numbered{n, line})
		}
	}
	return out
}

// parallel runs fn over [0, n) in contiguous parts, at most one per
// processor and none smaller than minPart. A panic in a part is a problem
// of the report, as in Verify itself.
func (b *bagFiles) parallel(n, minPart int, fn func(lo, hi int)) {
	w := max(1, min(runtime.GOMAXPROCS(0), n/max(1, minPart)))
	panics := make([]any, w)
	var wg sync.WaitGroup
	for i := range w {
		lo, hi := i*n/w, (i+1)*n/w
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			fn(lo, hi)
		})
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			b.rep.add("erro interno ao conferir o pacote: %v", p)
		}
	}
}

// batchChecker checks the lines of one part of batches.txt, with its own
// scratch space.
type batchChecker struct {
	kind  *signedKind
	keys  map[string]gwKey
	bv    signature.BatchVerifier
	envs  []wire.Envelope
	idx   []int
	split []signedLine // parse's
	lines []numbered   // the lines of the segment being checked (batchStream)
	body  bodyRecords
	recs  recScratch // fastRecLines' space
}

// parse reads the lines: gateway seq received key sig-base64 body (the
// body as written, or base64: and its base64), or, as bags written before
// have them, gateway seq received key body-base64 sig-base64. A body
// written as it is stays where it is read; the base64 ones of the part
// share one buffer.
func (c *batchChecker) parse(lines []numbered, batches []signedBatch, verdicts []batchVerdict) {
	c.split = slices.Grow(c.split[:0], len(lines))[:len(lines)]
	split := c.split
	clear(split)
	size := 0
	for i, l := range lines {
		sl, ok := splitSigned(l.b)
		if !ok {
			verdicts[i].problem = fmt.Sprintf("%s, linha %d: formato inválido (esperado: gateway seq recebido chave assinatura corpo)", c.kind.file, l.n)
			continue
		}
		split[i] = sl
		size += base64.StdEncoding.DecodedLen(len(sl.sig))
		if !sl.raw {
			size += base64.StdEncoding.DecodedLen(len(sl.body))
		}
	}
	buf := make([]byte, size)
	arena := func(n int) []byte {
		out := buf[:n:n]
		buf = buf[n:]
		return out
	}
	for i, l := range lines {
		if split[i].head[0] == nil {
			continue
		}
		sb, ok := parseLine(l.n, &split[i], arena)
		if !ok && split[i].exact && !split[i].current {
			// The plain split may hide what strings.Fields sees (a
			// carriage return base64 skips): the line the slow way.
			var g [6][]byte
			if !fields6(l.b, &g) {
				verdicts[i].problem = fmt.Sprintf("%s, linha %d: formato inválido (esperado: gateway seq recebido chave assinatura corpo)", c.kind.file, l.n)
				continue
			}
			slow := earlierLine(&g, false)
			sb, ok = parseLine(l.n, &slow, func(n int) []byte { return make([]byte, n) })
		}
		if !ok {
			verdicts[i].problem = fmt.Sprintf("%s, linha %d: campo ilegível (seq, data de recebimento, assinatura ou corpo)", c.kind.file, l.n)
			continue
		}
		batches[i] = sb
	}
}

// signedLine is a line of a file of signed messages split into its
// fields, the signature and the body still as written.
type signedLine struct {
	head    [4][]byte // gateway, seq, received, key file
	sig     []byte    // base64, or "-": none
	body    []byte    // base64, or the signed bytes themselves (raw)
	raw     bool
	current bool // the line is in Export's form (signature before the body)
	exact   bool // split as Export writes: base64 must decode to exactly its length
}

// splitSigned splits a line in either form. Export's: five fields of
// printable ASCII separated by single spaces, then the body, which begins
// with '{' (the signed bytes) or bodyBase64Prefix. The earlier form: six
// fields, body then signature, both base64, split by single spaces or
// else as strings.Fields does.
func splitSigned(line []byte) (signedLine, bool) {
	var f [6][]byte
	if head5(line, &f) {
		rest := f[5]
		switch {
		case rest[0] == '{':
			return signedLine{head: [4][]byte(f[:4]), sig: f[4], body: rest, raw: true, current: true, exact: true}, true
		case bytes.HasPrefix(rest, []byte(bodyBase64Prefix)):
			return signedLine{head: [4][]byte(f[:4]), sig: f[4], body: rest[len(bodyBase64Prefix):], current: true, exact: true}, true
		}
	}
	if plainFields6(line, &f) {
		return earlierLine(&f, true), true
	}
	if fields6(line, &f) {
		return earlierLine(&f, false), true
	}
	return signedLine{}, false
}

// earlierLine is a line of the earlier form: body-base64 sig-base64.
func earlierLine(f *[6][]byte, exact bool) signedLine {
	return signedLine{head: [4][]byte(f[:4]), body: f[4], sig: f[5], exact: exact}
}

// head5 splits off the five short fields of a line in Export's form
// (printable ASCII, no space, separated by single spaces); f[5] is the
// rest, not empty.
func head5(line []byte, f *[6][]byte) bool {
	for i := range 5 {
		k := bytes.IndexByte(line, ' ')
		if k <= 0 {
			return false
		}
		for _, c := range line[:k] {
			if c <= ' ' || c >= 0x7f {
				return false
			}
		}
		f[i], line = line[:k], line[k+1:]
	}
	f[5] = line
	return len(line) > 0
}

// parseLine reads a split line, decoding base64 into space from alloc.
// exact: the base64 must decode to exactly the length its text implies
// (nothing skipped), as it does when the plain split was right.
func parseLine(n int, sl *signedLine, alloc func(int) []byte) (signedBatch, bool) {
	decode := func(src []byte) ([]byte, bool) {
		dst := alloc(base64.StdEncoding.DecodedLen(len(src)))
		k, err := base64.StdEncoding.Decode(dst, src)
		if err != nil {
			return nil, false
		}
		if sl.exact {
			pad := len(src) - len(bytes.TrimRight(src, "="))
			if len(src)%4 != 0 || k != len(src)/4*3-min(pad, 2) {
				return nil, false
			}
		}
		return dst[:k:k], true
	}
	seq, err1 := strconv.ParseUint(string(sl.head[1]), 10, 64)
	rec, err2 := time.Parse(time.RFC3339Nano, string(sl.head[2]))
	body, ok3 := sl.body[:len(sl.body):len(sl.body)], true
	if !sl.raw {
		body, ok3 = decode(sl.body)
	}
	var sig []byte
	ok4 := true
	if string(sl.sig) != "-" {
		sig, ok4 = decode(sl.sig)
	}
	if err1 != nil || err2 != nil || !ok3 || !ok4 {
		return signedBatch{}, false
	}
	return signedBatch{line: n, gateway: string(sl.head[0]), seq: seq, received: rec, key: string(sl.head[3]), body: body, sig: sig, ok: true}, true
}

// plainFields6 splits a line of the earlier form, six fields separated by
// single spaces: the short fields (all but the body) printable ASCII
// without spaces. The body is checked by decoding it exactly.
func plainFields6(line []byte, f *[6][]byte) bool {
	for i := range 5 {
		k := bytes.IndexByte(line, ' ')
		if k <= 0 {
			return false
		}
		f[i], line = line[:k], line[k+1:]
	}
	f[5] = line
	for i, x := range f {
		if len(x) == 0 {
			return false
		}
		if i == 4 {
			continue
		}
		for _, c := range x {
			if c <= ' ' || c >= 0x7f {
				return false
			}
		}
	}
	return true
}

// fields6 splits a line into exactly six fields separated by white space,
// as strings.Fields does.
func fields6(line []byte, f *[6][]byte) bool {
	for _, c := range line {
		if c >= 0x80 { // Unicode white space: the slow way
			ss := strings.Fields(string(line))
			if len(ss) != 6 {
				return false
			}
			for i, s := range ss {
				f[i] = []byte(s)
			}
			return true
		}
	}
	n := 0
	for i := 0; i < len(line); {
		for i < len(line) && asciiSpace(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && !asciiSpace(line[j]) {
			j++
		}
		if n == 6 {
			return false
		}
		f[n] = line[i:j]
		n++
		i = j
	}
	return n == 6
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// verify checks the part's parsed batches: the key each names, then all
// their signatures in one batch equation, then each verified body.
func (c *batchChecker) verify(batches []signedBatch, verdicts []batchVerdict) {
	c.idx = c.idx[:0]
	// The verifier holds pointers to the envelopes until Verify, which
	// drops them: the next part may use the same space.
	c.envs = slices.Grow(c.envs[:0], len(batches))[:len(batches)]
	clear(c.envs)
	for i := range batches {
		c.idx = append(c.idx, -1)
		sb, v := &batches[i], &verdicts[i]
		if !sb.ok {
			continue
		}
		k, ok := c.keys[sb.key]
		kd := c.kind
		switch {
		case len(sb.sig) == 0:
			v.warn = fmt.Sprintf("%s %d do gateway %s sem assinatura: %s", kd.noun, sb.seq, sb.gateway, kd.unsigned)
			continue
		case !ok:
			v.problem = fmt.Sprintf("%s, linha %d: %s %d do gateway %s aponta a chave %q, que não está em data/keys/gateways.json", kd.file, sb.line, kd.noun, sb.seq, sb.gateway, sb.key)
			continue
		case k.Gateway != sb.gateway:
			v.problem = fmt.Sprintf("%s, linha %d: %s %d do gateway %s aponta a chave de outro gateway (%s)", kd.file, sb.line, kd.noun, sb.seq, sb.gateway, k.Gateway)
			continue
		case !(GatewayKey{ValidFrom: k.ValidFrom, ValidUntil: k.ValidUntil}).covers(sb.received):
			v.problem = fmt.Sprintf("%s %d do gateway %s: recebido em %s, fora do período de validade da chave data/keys/%s", kd.noun, sb.seq, sb.gateway,
				sb.received.UTC().Format(time.RFC3339), sb.key)
			continue
		}
		c.envs[i] = wire.Envelope{V: 1, Kid: sb.gateway, Body: sb.body, Sig: sb.sig}
		c.idx[i] = c.bv.Add(k.wire, &c.envs[i])
	}
	res := c.bv.Verify()
	for i := range batches {
		sb, v := &batches[i], &verdicts[i]
		if c.idx[i] < 0 {
			continue
		}
		if res[c.idx[i]] != nil {
			v.problem = fmt.Sprintf("%s %d do gateway %s: a assinatura ed25519 não confere com a chave data/keys/%s (em vigor quando foi recebido)", c.kind.noun, sb.seq, sb.gateway, sb.key)
			continue
		}
		if !c.kind.body(c, sb, v) {
			v.problem = fmt.Sprintf("%s %d do gateway %s: o corpo assinado não é %s", c.kind.noun, sb.seq, sb.gateway, c.kind.what)
			continue
		}
		v.verified = true
	}
}

// batchBody decodes a verified batch's records (fastRecLines, or the
// decoder that gives the library's verdict).
func (c *batchChecker) batchBody(sb *signedBatch, v *batchVerdict) bool {
	if gw, seq, recs, ok := fastRecLines(sb.body, &c.recs); ok {
		if string(gw) != sb.gateway || seq != sb.seq {
			return false
		}
		v.recs = recs
		return true
	}
	br := &c.body
	if err := decodeBody(sb.body, br); err != nil || br.Gateway != sb.gateway || br.Seq != sb.seq {
		return false
	}
	v.recs = recLines(br.Records)
	return true
}

// checkBody: a verified check's body is a check message of that gateway
// with that number.
func (c *batchChecker) checkBody(sb *signedBatch, _ *batchVerdict) bool {
	var k struct {
		Kind    string          `json:"kind"`
		Gateway string          `json:"gateway"`
		Seq     uint64          `json:"seq"`
		Check   *map[string]any `json:"check"`
	}
	return jsonv2.Unmarshal(sb.body, &k) == nil && k.Kind == "check" && k.Gateway == sb.gateway && k.Seq == sb.seq && k.Check != nil
}

// recLines formats a batch's records as readings.csv shows them, in one
// buffer.
func recLines(rs []batchRecord) []recLine {
	out := make([]recLine, len(rs))
	buf := make([]byte, 0, 64*len(rs))
	for i, r := range rs {
		start := len(buf)
		buf = appendUTCMillis(buf, r.T)
		n := len(buf)
		buf = strconv.AppendInt(buf, r.DurMs, 10)
		for _, v := range [3]float64{r.LAeq, r.LAFmax, r.LAFmin} {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, v, 'f', 2, 64)
		}
		buf = append(buf, ',')
		if r.LCpeak != nil {
			buf = strconv.AppendFloat(buf, *r.LCpeak, 'f', 2, 64)
		}
		buf = append(buf, ',')
		buf = strconv.AppendBool(buf, r.Overload)
		out[i] = recLine{t: buf[start:n:n], vals: buf[n:len(buf):len(buf)]}
	}
	// buf may have moved while growing: slice the final buffer again.
	for i, off := 0, 0; i < len(out); i++ {
		tl, vl := len(out[i].t), len(out[i].vals)
		out[i] = recLine{t: buf[off : off+tl : off+tl], vals: buf[off+tl : off+tl+vl : off+tl+vl]}
		off += tl + vl
	}
	return out
}

// readingsPart is what checking one part of readings.csv found.
type readingsPart struct {
	checked, nbad int
	bad           []string // the first five
}

// checkReadings compares each row of readings.csv with the record of the
// same second in the signed batch it names, in contiguous parts, one per
// processor.
func (b *bagFiles) checkReadings(data []byte, bodies map[BatchKey][]recLine) {
	rep := b.rep
	if !bytes.HasPrefix(data, []byte(readingsHeader)) {
		rep.add("data/readings.csv: cabeçalho alterado")
		return
	}
	rest := data[len(readingsHeader):]
	w := max(1, min(runtime.GOMAXPROCS(0), len(rest)/(256<<10)))
	parts := make([]readingsPart, w)
	bounds := make([]int, w+1) // part i is rest[bounds[i]:bounds[i+1]]
	bounds[w] = len(rest)
	for i := 1; i < w; i++ {
		at := max(bounds[i-1], i*len(rest)/w)
		if k := bytes.IndexByte(rest[at:], '\n'); k >= 0 {
			bounds[i] = at + k + 1
		} else {
			bounds[i] = len(rest)
		}
	}
	b.parallel(w, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			first := 2 + bytes.Count(rest[:bounds[i]], []byte("\n"))
			parts[i] = b.checkReadingsPart(rest[bounds[i]:bounds[i+1]], first, bodies)
		}
	})
	var bad []string
	nbad := 0
	for _, p := range parts {
		rep.ReadingsChecked += p.checked
		nbad += p.nbad
		bad = append(bad, p.bad...)
	}
	if nbad > 0 {
		bad = bad[:min(5, len(bad))]
		more := ""
		if nbad > len(bad) {
			more = fmt.Sprintf(" (e mais %d)", nbad-len(bad))
		}
		rep.add("data/readings.csv não confere com os lotes assinados pelos gateways em %d linhas: %s%s", nbad, strings.Join(bad, "; "), more)
	}
}

// checkReadingsPart checks the rows of data, the first being line ln.
func (b *bagFiles) checkReadingsPart(data []byte, ln int, bodies map[BatchKey][]recLine) readingsPart {
	var p readingsPart
	fail := func(ln int, why string) {
		p.nbad++
		if len(p.bad) < 5 {
			p.bad = append(p.bad, fmt.Sprintf("linha %d: %s", ln, why))
		}
	}
	var gw string // the last row's gateway, kept to spare a string per row
	var last []recLine
	var lastSeq uint64
	var lastOK bool
	hint := 0 // where the next row's record likely is: rows follow their batch's records
	var off [15]int
	for ; len(data) > 0; ln++ {
		line := data
		if k := bytes.IndexByte(data, '\n'); k >= 0 {
			line, data = data[:k], data[k+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			continue
		}
		if !csvFields14(line, &off) {
			fail(ln, "formato inválido")
			continue
		}
		field := func(i int) []byte { return line[off[i] : off[i+1]-1] }
		seq, ok := parseSeq(field(9))
		if !ok {
			fail(ln, "número do lote ilegível")
			continue
		}
		if g := field(8); gw != string(g) {
			gw, last = string(g), nil
		}
		if last == nil || seq != lastSeq { // rows of one batch come together: one look-up for them
			last, lastOK = bodies[BatchKey{gw, seq}]
			lastSeq = seq
		}
		recs := last
		switch {
		case !lastOK:
			fail(ln, fmt.Sprintf("o lote %d do gateway %s não está em data/batches.txt", seq, gw))
			continue
		case recs == nil:
			continue // not verified: reported with the batch
		}
		t := field(0)
		j := nextRec(recs, t, hint)
		hint = j + 1
		if j == len(recs) || !bytes.Equal(recs[j].t, t) {
			fail(ln, fmt.Sprintf("o lote %d do gateway %s não tem registro em %s", seq, gw, t))
			continue
		}
		if got := line[off[2] : off[8]-1]; !bytes.Equal(got, recs[j].vals) {
			fail(ln, fmt.Sprintf("difere do lote assinado %d do gateway %s (%s no CSV, %s no lote)", seq, gw, got, recs[j].vals))
			continue
		}
		p.checked++
	}
	return p
}

// nextRec is the first record at or after t in recs (sorted by t), found
// at hint when it is there (the rows of a batch come in its order).
func nextRec(recs []recLine, t []byte, hint int) int {
	if hint < len(recs) && bytes.Equal(recs[hint].t, t) && (hint == 0 || bytes.Compare(recs[hint-1].t, t) < 0) {
		return hint
	}
	return sort.Search(len(recs), func(j int) bool { return bytes.Compare(recs[j].t, t) >= 0 })
}

// csvFields14 finds the 14 comma-separated fields of a row: field i is
// line[off[i] : off[i+1]-1].
func csvFields14(line []byte, off *[15]int) bool {
	off[0] = 0
	n := 1
	// A plain loop: the fields are a few bytes each, shorter than what
	// IndexByte's call pays for.
	for i, c := range line {
		if c != ',' {
			continue
		}
		if n == 14 {
			return false // too many fields
		}
		off[n] = i + 1
		n++
	}
	off[14] = len(line) + 1
	return n == 14
}

// parseSeq is strconv.ParseUint(s, 10, 64) without a string.
func parseSeq(s []byte) (uint64, bool) {
	if len(s) == 0 || len(s) > 19 {
		v, err := strconv.ParseUint(string(s), 10, 64)
		return v, err == nil
	}
	var v uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}
