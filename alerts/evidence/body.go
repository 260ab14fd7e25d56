package evidence

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
)

// decodeBody decodes the members of a signed batch body that Verify
// compares (gateway, seq, records). It first tries fastBody, a one-pass
// scanner without reflection; when that scanner meets anything it does not
// handle it gives up and the JSON library decodes the body, so the verdict
// is always the library's.
func decodeBody(body []byte, out *bodyRecords) error {
	if fastBody(body, out) {
		return nil
	}
	*out = bodyRecords{}
	return jsonv2.Unmarshal(body, out)
}

// fastBody decodes body into out in one pass and reports whether it
// could. It accepts only what the JSON library accepts and then gives the
// same values: strict JSON (RFC 8259), UTF-8, no duplicate member names,
// names matched exactly. It declines (false) on string escapes, nulls
// where a value is expected, integers written with a fraction or an
// exponent, timestamps not of the form 2006-01-02T15:04:05.999999999Z,
// nesting deeper than 64, and any syntax error; the caller then decodes
// with the library, which gives the verdict.
func fastBody(body []byte, out *bodyRecords) bool {
	recs := out.Records[:0]
	*out = bodyRecords{}
	var r rawRecord
	gw, seq, ok := scanBody(body, &r, func() {
		if recs == nil {
			recs = []batchRecord{} // an empty array is an empty, non-nil slice
		}
		out.Records = recs
	}, func(r *rawRecord) bool {
		br, ok := r.record()
		recs = append(recs, br)
		out.Records = recs
		return ok
	})
	out.Gateway, out.Seq = string(gw), seq
	return ok
}

// fastRecLines is fastBody giving the records as readings.csv shows them
// (recLines of fastBody's records, the same bytes) without decoding the
// values: the text of each is rewritten in the CSV's form. It declines
// (false) where fastBody does, and where a value needs a decoding that
// fails; the caller then decodes with decodeBody. The records are cut
// from sc's slabs.
func fastRecLines(body []byte, sc *recScratch) (gateway []byte, seq uint64, recs []recLine, ok bool) {
	if need := len(body)/2 + 64; cap(sc.text) < need { // the CSV is at most about half the JSON
		sc.text = make([]byte, 0, max(recSlab, need))
	}
	buf := sc.text[:0]
	spans := sc.spans[:0]
	defer func() { sc.spans = spans[:0] }()
	gateway, seq, ok = scanBody(body, &sc.rec, func() {}, func(r *rawRecord) bool {
		start := len(buf)
		var tl int
		var ok bool
		buf, tl, ok = r.appendCSV(buf)
		spans = append(spans, recSpan{tl, len(buf) - start - tl})
		return ok
	})
	if !ok {
		return nil, 0, nil, false
	}
	if cap(buf) == cap(sc.text) { // still in the slab: what is left of it is the next one's
		sc.text = sc.text[len(buf):len(buf)]
	}
	if len(spans) == 0 {
		return gateway, seq, []recLine{}, true // a verified batch's records are never nil
	}
	if cap(sc.lines) < len(spans) {
		sc.lines = make([]recLine, 0, max(recSlab/64, len(spans)))
	}
	recs, sc.lines = sc.lines[:len(spans):len(spans)], sc.lines[len(spans):len(spans)]
	off := 0
	for i, sp := range spans {
		recs[i] = recLine{t: buf[off : off+sp.t : off+sp.t], vals: buf[off+sp.t : off+sp.t+sp.vals : off+sp.t+sp.vals]}
		off += sp.t + sp.vals
	}
	return gateway, seq, recs, true
}

// recScratch is fastRecLines' space: the lengths of the records being
// read, and the slabs the records it returns are cut from (what is left
// of each), so that a few allocations serve many batches.
type recScratch struct {
	spans []recSpan
	text  []byte
	lines []recLine
	rec   rawRecord // the record being read
}

// recSlab is the size of a text slab.
const recSlab = 64 << 10

// recSpan is the lengths of a record's two parts in fastRecLines' buffer.
type recSpan struct{ t, vals int }

// scanBody reads a batch body's members in one pass: gateway and seq it
// returns, each record of "records" it reads into r and hands to rec,
// calling empty when "records" is there (an empty array is an empty list,
// not none); it skips (checking) the others. (r is the caller's so that
// the scanner, which rec never sees, stays on the stack.)
func scanBody(body []byte, r *rawRecord, empty func(), rec func(*rawRecord) bool) (gateway []byte, seq uint64, ok bool) {
	s := scanner{b: body}
	if !s.lit('{') {
		return nil, 0, false
	}
	var names nameSet
	if s.lit('}') {
		return nil, 0, s.end()
	}
	for {
		name, ok := s.str()
		if !ok || !names.add(name) || !s.lit(':') {
			return nil, 0, false
		}
		switch string(name) {
		case "gateway":
			if gateway, ok = s.str(); !ok {
				return nil, 0, false
			}
		case "seq":
			v, ok := s.num()
			if !ok || !allDigits(v) {
				return nil, 0, false
			}
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return nil, 0, false
			}
			seq = n
		case "records":
			empty()
			if !s.records(r, rec) {
				return nil, 0, false
			}
		default:
			if !s.skip(0) {
				return nil, 0, false
			}
		}
		if s.lit(',') {
			continue
		}
		return gateway, seq, s.lit('}') && s.end()
	}
}

// scanner reads JSON from b at i.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// lit consumes the structural byte c (after white space).
func (s *scanner) lit(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end: nothing but white space is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// word consumes a literal (true, false, null).
func (s *scanner) word(w string) bool {
	s.ws()
	if bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		s.i += len(w)
		return true
	}
	return false
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str reads a string without escapes and returns its bytes (valid UTF-8,
// no control characters).
func (s *scanner) str() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	ascii := true
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			v := s.b[start:j]
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			s.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false
}

// num reads a JSON number and returns its text.
func (s *scanner) num() ([]byte, bool) {
	s.ws()
	b, j := s.b, s.i
	digits := func() bool {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j > k
	}
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case !digits():
		return nil, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		if !digits() {
			return nil, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if !digits() {
			return nil, false
		}
	}
	v := b[s.i:j]
	s.i = j
	return v, true
}

func allDigits(v []byte) bool {
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(v) > 0
}

// skip checks one value of any kind and moves past it.
func (s *scanner) skip(depth int) bool {
	if depth > 64 {
		return false
	}
	switch s.peek() {
	case '{':
		s.i++
		if s.lit('}') {
			return true
		}
		var names nameSet
		for {
			name, ok := s.str()
			if !ok || !names.add(name) || !s.lit(':') || !s.skip(depth+1) {
				return false
			}
			if !s.lit(',') {
				return s.lit('}')
			}
		}
	case '[':
		s.i++
		if s.lit(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			if !s.lit(',') {
				return s.lit(']')
			}
		}
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.word("true")
	case 'f':
		return s.word("false")
	case 'n':
		return s.word("null")
	default:
		_, ok := s.num()
		return ok
	}
}

// records reads the records array, reading each record into r and
// handing it to rec.
func (s *scanner) records(r *rawRecord, rec func(*rawRecord) bool) bool {
	if !s.lit('[') {
		return false
	}
	if s.lit(']') {
		return true
	}
	for {
		*r = rawRecord{}
		if at := s.i; !s.plainRecord(r) {
			s.i, *r = at, rawRecord{}
			if !s.record(r) {
				return false
			}
		}
		if !rec(r) {
			return false
		}
		if !s.lit(',') {
			return s.lit(']')
		}
	}
}

// rawRecord is a record's members as they are written: the text of each
// value (nil: absent, or null for lcpeak_db), checked to be of its kind.
type rawRecord struct {
	t, dur, laeq, lafmax, lafmin, lcpeak []byte
	overload                             bool
}

func (s *scanner) record(r *rawRecord) bool {
	if !s.lit('{') {
		return false
	}
	if s.lit('}') {
		return true
	}
	var names nameSet // members other than the known ones
	var seen uint8    // the known members met, a bit each
	for {
		name, ok := s.str()
		if !ok || !s.lit(':') {
			return false
		}
		if bit := knownMember(name); bit != 0 {
			if seen&bit != 0 {
				return false // a repeated name
			}
			seen |= bit
		} else if !names.add(name) {
			return false
		}
		switch string(name) {
		case "t":
			r.t, ok = s.str()
			ok = ok && plainUTC(r.t)
		case "dur_ms":
			r.dur, ok = s.num()
			ok = ok && allDigits(bytes.TrimPrefix(r.dur, []byte("-")))
		case "laeq_db":
			r.laeq, ok = s.num()
		case "lafmax_db":
			r.lafmax, ok = s.num()
		case "lafmin_db":
			r.lafmin, ok = s.num()
		case "lcpeak_db":
			if s.peek() == 'n' {
				r.lcpeak, ok = nil, s.word("null")
			} else {
				r.lcpeak, ok = s.num()
			}
		case "overload":
			switch s.peek() {
			case 't':
				r.overload, ok = true, s.word("true")
			case 'f':
				r.overload, ok = false, s.word("false")
			default:
				ok = false
			}
		case "hist":
			ok = s.skipHist()
		default:
			ok = s.skip(1)
		}
		if !ok {
			return false
		}
		if !s.lit(',') {
			return s.lit('}')
		}
	}
}

// plainRecord reads a record written as a gateway writes it, members in
// wire.Record's order without white space — {"t":"…","dur_ms":…,
// "laeq_db":…,"lafmax_db":…,"lafmin_db":…[,"lcpeak_db":…][,"hist":…]
// [,"overload":true]} — giving what record gives for it. Anything else
// (another order, null, white space, other members) it declines, leaving
// s.i anywhere: the caller then reads the record with record.
func (s *scanner) plainRecord(r *rawRecord) bool {
	lit := func(l string) bool {
		if bytes.HasPrefix(s.b[s.i:], []byte(l)) {
			s.i += len(l)
			return true
		}
		return false
	}
	if !lit(`{"t":"`) {
		return false
	}
	j := bytes.IndexByte(s.b[s.i:], '"')
	if j < 0 || !plainUTC(s.b[s.i:s.i+j]) { // digits, '-', 'T', ':', '.', 'Z' only: no escape
		return false
	}
	r.t = s.b[s.i : s.i+j]
	s.i += j + 1
	var ok bool
	if !lit(`,"dur_ms":`) {
		return false
	}
	if r.dur, ok = s.num(); !ok || !allDigits(bytes.TrimPrefix(r.dur, []byte("-"))) {
		return false
	}
	for _, m := range [...]struct {
		name string
		v    *[]byte
	}{{`,"laeq_db":`, &r.laeq}, {`,"lafmax_db":`, &r.lafmax}, {`,"lafmin_db":`, &r.lafmin}} {
		if !lit(m.name) {
			return false
		}
		if *m.v, ok = s.num(); !ok {
			return false
		}
	}
	if lit(`,"lcpeak_db":`) {
		if r.lcpeak, ok = s.num(); !ok {
			return false
		}
	}
	if lit(`,"hist":`) {
		end, ok := plainHist(s.b, s.i)
		if !ok {
			return false
		}
		s.i = end
	}
	if lit(`,"overload":true`) {
		r.overload = true
	}
	return lit("}")
}

// knownMember is the bit of a record member that record reads (or the
// histogram, which it skips in its own way), 0 for any other name.
func knownMember(name []byte) uint8 {
	switch string(name) {
	case "t":
		return 1 << 0
	case "dur_ms":
		return 1 << 1
	case "laeq_db":
		return 1 << 2
	case "lafmax_db":
		return 1 << 3
	case "lafmin_db":
		return 1 << 4
	case "lcpeak_db":
		return 1 << 5
	case "overload":
		return 1 << 6
	case "hist":
		return 1 << 7
	}
	return 0
}

// skipHist moves past a record's histogram, which Verify does not
// compare but must find to be JSON the library accepts. The shape a
// gateway writes, {"bins":{"612":100,"613":200}} without white space and
// with the bin names in increasing byte order (so that none repeats), is
// checked in one tight pass; anything else goes through skip.
func (s *scanner) skipHist() bool {
	s.ws()
	if end, ok := plainHist(s.b, s.i); ok {
		s.i = end
		return true
	}
	return s.skip(1)
}

// plainHist reads the gateway's histogram shape at b[i:] and returns
// where it ends.
func plainHist(b []byte, i int) (int, bool) {
	const head = `{"bins":{`
	if !bytes.HasPrefix(b[i:], []byte(head)) {
		return 0, false
	}
	i += len(head)
	// Each name, up to 8 digits, left-aligned in a word: for digits (never
	// a zero byte) the words' order is the names' byte order.
	var prev uint64
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			// "digits":
			if i >= len(b) || b[i] != '"' {
				return 0, false
			}
			k := i + 1
			var name uint64
			for k < len(b) && b[k] >= '0' && b[k] <= '9' {
				if k-i > 8 {
					return 0, false
				}
				name = name<<8 | uint64(b[k])
				k++
			}
			n := k - i - 1
			if n == 0 || k+1 >= len(b) || b[k] != '"' || b[k+1] != ':' {
				return 0, false
			}
			if name <<= 8 * (8 - n); name <= prev {
				return 0, false
			}
			prev = name
			// a number: digits, then an optional fraction, as JSON writes
			// them (no leading zero but for 0 itself)
			j := k + 2
			d := j
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			if j == d || (b[d] == '0' && j-d > 1) {
				return 0, false
			}
			if j < len(b) && b[j] == '.' {
				j++
				f := j
				for j < len(b) && b[j] >= '0' && b[j] <= '9' {
					j++
				}
				if j == f {
					return 0, false
				}
			}
			if j >= len(b) {
				return 0, false
			}
			i = j + 1
			if b[j] == '}' {
				break
			}
			if b[j] != ',' {
				return 0, false
			}
		}
	}
	if i >= len(b) || b[i] != '}' {
		return 0, false
	}
	return i + 1, true
}

// record decodes the values as the JSON library does.
func (r *rawRecord) record() (batchRecord, bool) {
	var br batchRecord
	ok := true
	if r.t != nil {
		t, err := time.Parse(time.RFC3339Nano, string(r.t))
		br.T, ok = t, err == nil
	}
	if r.dur != nil {
		n, err := strconv.ParseInt(string(r.dur), 10, 64)
		br.DurMs, ok = n, ok && err == nil
	}
	for _, f := range [...]struct {
		text []byte
		v    *float64
	}{{r.laeq, &br.LAeq}, {r.lafmax, &br.LAFmax}, {r.lafmin, &br.LAFmin}} {
		if f.text != nil {
			v, err := strconv.ParseFloat(string(f.text), 64)
			*f.v, ok = v, ok && err == nil
		}
	}
	if r.lcpeak != nil {
		v, err := strconv.ParseFloat(string(r.lcpeak), 64)
		br.LCpeak, ok = &v, ok && err == nil
	}
	br.Overload = r.overload
	return br, ok
}

// plainUTC: YYYY-MM-DDTHH:MM:SS, then an optional fraction of 1–9 digits,
// then Z.
func plainUTC(t []byte) bool {
	const pat = "dddd-dd-ddTdd:dd:dd"
	if len(t) < len(pat)+1 || t[len(t)-1] != 'Z' {
		return false
	}
	for i := range len(pat) {
		if pat[i] == 'd' {
			if t[i] < '0' || t[i] > '9' {
				return false
			}
		} else if t[i] != pat[i] {
			return false
		}
	}
	frac := t[len(pat) : len(t)-1]
	if len(frac) == 0 {
		return true
	}
	return frac[0] == '.' && len(frac) >= 2 && len(frac) <= 10 && allDigits(frac[1:])
}

// nameSet holds an object's member names, to refuse duplicates.
type nameSet struct {
	small [12][]byte
	n     int
	big   map[string]struct{}
}

func (ns *nameSet) add(name []byte) bool {
	if ns.big != nil {
		if _, dup := ns.big[string(name)]; dup {
			return false
		}
		ns.big[string(name)] = struct{}{}
		return true
	}
	for _, x := range ns.small[:ns.n] {
		if bytes.Equal(x, name) {
			return false
		}
	}
	if ns.n < len(ns.small) {
		ns.small[ns.n] = name
		ns.n++
		return true
	}
	ns.big = make(map[string]struct{}, 2*len(ns.small))
	for _, x := range ns.small {
		ns.big[string(x)] = struct{}{}
	}
	ns.big[string(name)] = struct{}{}
	return true
}

// appendUTCMillis appends t in UTC as 2006-01-02T15:04:05.000Z, as
// AppendFormat does, without its layout interpretation.
func appendUTCMillis(buf []byte, t time.Time) []byte {
	return appendMillis(buf, t.UTC(), 'T', "Z", "2006-01-02T15:04:05.000Z")
}

// appendLocalMillis appends t in its own location as
// 2006-01-02 15:04:05.000.
func appendLocalMillis(buf []byte, t time.Time) []byte {
	return appendMillis(buf, t, ' ', "", "2006-01-02 15:04:05.000")
}

func appendMillis(buf []byte, t time.Time, sep byte, zone, layout string) []byte {
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(buf, layout)
	}
	h, mi, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	buf = append(buf, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), sep,
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+sec/10), byte('0'+sec%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(buf, zone...)
}
