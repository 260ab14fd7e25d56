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
	s := scanner{b: body}
	recs := out.Records[:0]
	*out = bodyRecords{}
	if !s.lit('{') {
		return false
	}
	var names nameSet
	if s.lit('}') {
		return s.end()
	}
	for {
		name, ok := s.str()
		if !ok || !names.add(name) || !s.lit(':') {
			return false
		}
		switch string(name) {
		case "gateway":
			v, ok := s.str()
			if !ok {
				return false
			}
			out.Gateway = string(v)
		case "seq":
			v, ok := s.num()
			if !ok || !allDigits(v) {
				return false
			}
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return false
			}
			out.Seq = n
		case "records":
			if recs, ok = s.records(recs); !ok {
				return false
			}
			out.Records = recs
		default:
			if !s.skip(0) {
				return false
			}
		}
		if s.lit(',') {
			continue
		}
		return s.lit('}') && s.end()
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

// records reads the records array, appending to recs.
func (s *scanner) records(recs []batchRecord) ([]batchRecord, bool) {
	if !s.lit('[') {
		return nil, false
	}
	if recs == nil {
		recs = []batchRecord{} // an empty array is an empty, non-nil slice
	}
	if s.lit(']') {
		return recs, true
	}
	for {
		var r batchRecord
		if !s.record(&r) {
			return nil, false
		}
		recs = append(recs, r)
		if !s.lit(',') {
			return recs, s.lit(']')
		}
	}
}

func (s *scanner) record(r *batchRecord) bool {
	if !s.lit('{') {
		return false
	}
	if s.lit('}') {
		return true
	}
	var names nameSet
	for {
		name, ok := s.str()
		if !ok || !names.add(name) || !s.lit(':') {
			return false
		}
		switch string(name) {
		case "t":
			ok = s.time(&r.T)
		case "dur_ms":
			ok = s.int(&r.DurMs)
		case "laeq_db":
			ok = s.float(&r.LAeq)
		case "lafmax_db":
			ok = s.float(&r.LAFmax)
		case "lafmin_db":
			ok = s.float(&r.LAFmin)
		case "lcpeak_db":
			if s.peek() == 'n' {
				r.LCpeak, ok = nil, s.word("null")
			} else {
				var v float64
				ok = s.float(&v)
				r.LCpeak = &v
			}
		case "overload":
			switch s.peek() {
			case 't':
				r.Overload, ok = true, s.word("true")
			case 'f':
				r.Overload, ok = false, s.word("false")
			default:
				ok = false
			}
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

func (s *scanner) float(v *float64) bool {
	t, ok := s.num()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(t), 64)
	*v = f
	return err == nil
}

func (s *scanner) int(v *int64) bool {
	t, ok := s.num()
	if !ok {
		return false
	}
	digits := t
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if !allDigits(digits) {
		return false
	}
	n, err := strconv.ParseInt(string(t), 10, 64)
	*v = n
	return err == nil
}

// time reads a UTC timestamp of the form 2006-01-02T15:04:05[.9…]Z.
func (s *scanner) time(v *time.Time) bool {
	t, ok := s.str()
	if !ok || !plainUTC(t) {
		return false
	}
	p, err := time.Parse(time.RFC3339Nano, string(t))
	*v = p
	return err == nil
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
