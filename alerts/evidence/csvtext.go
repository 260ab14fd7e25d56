package evidence

import (
	"bytes"
	"strconv"
	"time"
)

// appendCSV appends the record as readings.csv shows it, t_utc then the
// values (dur_ms … overload), and returns the length of t_utc. The bytes
// are recLines' for the record the JSON library decodes from the same
// text; each value is rewritten from its text when that is exact, and
// decoded and formatted otherwise. It reports false when a value does not
// decode (the body is then the library's to judge).
func (r *rawRecord) appendCSV(buf []byte) ([]byte, int, bool) {
	start := len(buf)
	buf, ok := appendTimeText(buf, r.t)
	if !ok {
		return buf, 0, false
	}
	tl := len(buf) - start
	if buf, ok = appendIntText(buf, r.dur); !ok {
		return buf, 0, false
	}
	for _, v := range [3][]byte{r.laeq, r.lafmax, r.lafmin} {
		buf = append(buf, ',')
		if buf, ok = appendFixed2Text(buf, v); !ok {
			return buf, 0, false
		}
	}
	buf = append(buf, ',')
	if r.lcpeak != nil {
		if buf, ok = appendFixed2Text(buf, r.lcpeak); !ok {
			return buf, 0, false
		}
	}
	buf = append(buf, ',')
	buf = strconv.AppendBool(buf, r.overload)
	return buf, tl, true
}

// appendTimeText appends a plainUTC timestamp (nil: the zero time) as
// appendUTCMillis does after time.Parse: the same date and time, the
// fraction cut to milliseconds. Fields out of range go through
// time.Parse, which then gives the verdict.
func appendTimeText(buf, t []byte) ([]byte, bool) {
	if t == nil {
		return appendUTCMillis(buf, time.Time{}), true
	}
	d := func(i, n int) int {
		v := 0
		for _, c := range t[i : i+n] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, day, h, mi, sec := d(0, 4), d(5, 2), d(8, 2), d(11, 2), d(14, 2), d(17, 2)
	if mo < 1 || mo > 12 || day < 1 || day > daysIn(y, mo) || h > 23 || mi > 59 || sec > 59 {
		p, err := time.Parse(time.RFC3339Nano, string(t))
		if err != nil {
			return buf, false
		}
		return appendUTCMillis(buf, p), true
	}
	buf = append(buf, t[:19]...)
	buf = append(buf, '.')
	frac := t[19 : len(t)-1] // "" or "." and 1–9 digits
	for i := 1; i <= 3; i++ {
		if i < len(frac) {
			buf = append(buf, frac[i])
		} else {
			buf = append(buf, '0')
		}
	}
	return append(buf, 'Z'), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// appendIntText appends an integer's text (nil: 0) as strconv.AppendInt
// of its value.
func appendIntText(buf, v []byte) ([]byte, bool) {
	switch {
	case v == nil:
		return append(buf, '0'), true
	case string(v) == "-0":
		return append(buf, '0'), true
	case len(v) <= 18:
		return append(buf, v...), true // JSON has no leading zeros
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return buf, false
	}
	return strconv.AppendInt(buf, n, 10), true
}

// appendFixed2Text appends a JSON number's text (nil: 0) as
// strconv.AppendFloat(ParseFloat(v), 'f', 2, 64) does. Rounding the
// decimal text gives the same digits unless the value is within the
// float's precision of a rounding boundary: with at most 5 integer digits
// an ulp is below 1.5e-11, so text whose digits after the second decimal
// do not begin 49999999 or 50000000 is at least 1e-10 from one. Anything
// else (exponents, longer numbers, near boundaries) is decoded.
func appendFixed2Text(buf, v []byte) ([]byte, bool) {
	if v == nil {
		return append(buf, "0.00"...), true
	}
	text := v
	neg := len(text) > 0 && text[0] == '-'
	if neg {
		text = text[1:]
	}
	ip, frac, _ := bytes.Cut(text, []byte("."))
	if len(ip) == 0 || len(ip) > 5 || len(frac) > 17 || !allDigits(ip) || (len(frac) > 0 && !allDigits(frac)) {
		return appendFloatSlow(buf, v)
	}
	if len(frac) > 2 {
		var tail [8]byte
		for i := range tail {
			tail[i] = '0'
			if 2+i < len(frac) {
				tail[i] = frac[2+i]
			}
		}
		if string(tail[:]) == "49999999" || string(tail[:]) == "50000000" {
			return appendFloatSlow(buf, v)
		}
	}
	if neg {
		buf = append(buf, '-')
	}
	start := len(buf)
	buf = append(buf, ip...)
	buf = append(buf, '.')
	for i := range 2 {
		if i < len(frac) {
			buf = append(buf, frac[i])
		} else {
			buf = append(buf, '0')
		}
	}
	if len(frac) > 2 && frac[2] >= '5' {
		buf = roundUp(buf, start)
	}
	return buf, true
}

// roundUp adds one unit of the last digit to the decimal in buf[start:].
func roundUp(buf []byte, start int) []byte {
	for i := len(buf) - 1; i >= start; i-- {
		switch buf[i] {
		case '.':
			continue
		case '9':
			buf[i] = '0'
		default:
			buf[i]++
			return buf
		}
	}
	buf = append(buf, 0)
	copy(buf[start+1:], buf[start:])
	buf[start] = '1'
	return buf
}

func appendFloatSlow(buf, v []byte) ([]byte, bool) {
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return buf, false
	}
	return strconv.AppendFloat(buf, f, 'f', 2, 64), true
}
