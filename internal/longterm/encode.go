package longterm

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/sossego/sossego/internal/stats"
)

// An hour row holds its hour's total (columns, and its histogram in hist)
// and its minutes (each present minute's energy, duration and extremes:
// what reports need for the minutes above the limit); a row of mhists
// holds each minute's histogram, DEFLATE-compressed: read only for an hour
// a report must split, or an export by minute.
//
// A histogram is encoded as uvarint lowest bin, uvarint number of bins n,
// uvarint quantum q (ms), then n uvarints: each bin's time in ms, rounded
// to the millisecond, divided by q (q is the greatest common divisor of the
// times, so LAF histograms of 125-ms samples cost one byte a bin).
//
// The minutes blob is a format byte (2), then per present minute, in time
// order: its index in the hour (one byte), uvarint dur_ms, its LAeq as a
// float32 (little endian; 10⁻⁵ dB at these levels), LAFmax and LAFmin in
// 0.01 dB as int16, uvarint dur_ms − fast_ms (usually 0: one byte), then
// its L95, L90, L50 and L10 (stats.RowPercentiles, read from its histogram
// as stored): uvarint L95's bin + 1 (0: no histogram, nothing follows),
// then uvarint L90 − L95, L50 − L90 and L10 − L50 in bins (a byte each,
// usually). Exports read a year of minutes from these blobs alone.
// Format 1 (no percentiles) is what the first release wrote; schema step 2
// rewrites its rows.

const (
	minutesFormat1 = 1
	minutesFormat  = 2
)

var errFormat = errors.New("longterm: malformed row")

// hourData is an hour being updated: its minutes, nil where absent.
type hourData struct {
	mins [60]*stats.Agg
}

func (h *hourData) total() stats.Agg {
	var a stats.Agg
	for _, m := range h.mins {
		if m != nil {
			a.Merge(m)
		}
	}
	return a
}

func appendHist(dst []byte, h *stats.Hist) []byte {
	lo, hi := -1, -1
	var q uint64
	h.Each(func(bin int, ms float64) {
		v := uint64(math.Round(ms))
		if v == 0 {
			return
		}
		if lo < 0 {
			lo = bin
		}
		hi = bin
		q = gcd(q, v)
	})
	if lo < 0 {
		return append(dst, 0, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(lo))
	dst = binary.AppendUvarint(dst, uint64(hi-lo+1))
	dst = binary.AppendUvarint(dst, q)
	next := lo
	h.Each(func(bin int, ms float64) {
		v := uint64(math.Round(ms))
		if v == 0 || bin < lo || bin > hi {
			return
		}
		for ; next < bin; next++ {
			dst = append(dst, 0)
		}
		dst = binary.AppendUvarint(dst, v/q)
		next = bin + 1
	})
	return dst
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// reader walks an encoded blob.
type reader struct {
	p   []byte
	err bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.err, r.p = true, nil
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *reader) take(n int) []byte {
	if len(r.p) < n {
		r.err, r.p = true, nil
		return make([]byte, n)
	}
	b := r.p[:n]
	r.p = r.p[n:]
	return b
}

func (r *reader) hist(h *stats.Hist) {
	lo, n := r.uvarint(), r.uvarint()
	if n == 0 {
		h.Reset(0, 0)
		return
	}
	q := r.uvarint()
	if lo > stats.MaxBin || n > stats.MaxBin+1-lo {
		r.err = true
		return
	}
	ms := h.Reset(int(lo), int(n))
	for i := range ms {
		ms[i] = float64(r.uvarint() * q)
	}
}

func decodeHist(b []byte) (stats.Hist, error) {
	var h stats.Hist
	if len(b) == 0 {
		return h, nil
	}
	r := reader{p: b}
	r.hist(&h)
	if r.err {
		return h, fmt.Errorf("%w: histogram", errFormat)
	}
	return h, nil
}

func centi(v float64) int16 {
	return int16(max(min(math.Round(v*100), math.MaxInt16), math.MinInt16))
}

// encodeMinutes returns the minutes blob and the uncompressed histograms.
func encodeMinutes(h *hourData) (mins, hists []byte) {
	mins = append(mins, minutesFormat)
	var scratch stats.Hist
	var pct [4]float64
	for i, m := range h.mins {
		if m == nil || m.DurMs <= 0 {
			continue
		}
		lv, _ := m.LAeq()
		mins = append(mins, byte(i))
		mins = binary.AppendUvarint(mins, uint64(m.DurMs))
		mins = binary.LittleEndian.AppendUint32(mins, math.Float32bits(float32(lv)))
		mins = binary.LittleEndian.AppendUint16(mins, uint16(centi(m.Max)))
		mins = binary.LittleEndian.AppendUint16(mins, uint16(centi(m.Min)))
		mins = binary.AppendUvarint(mins, uint64(max(m.DurMs-m.FastMs, 0)))
		n := len(hists)
		hists = appendHist(hists, &m.Hist)
		// The percentiles of the histogram as it is stored (rounded to the
		// millisecond), so that they equal what a reader of it would find.
		r := reader{p: hists[n:]}
		r.hist(&scratch)
		mins = appendPercentiles(mins, &scratch, &pct)
	}
	return mins, hists
}

// appendPercentiles appends a minute's percentiles (see the format above).
func appendPercentiles(dst []byte, h *stats.Hist, pct *[4]float64) []byte {
	if !h.Percentiles(stats.RowPercentiles[:], pct[:]) {
		return append(dst, 0)
	}
	b10, b50, b90, b95 := stats.Bin(pct[0]), stats.Bin(pct[1]), stats.Bin(pct[2]), stats.Bin(pct[3])
	dst = binary.AppendUvarint(dst, uint64(b95)+1)
	dst = binary.AppendUvarint(dst, uint64(b90-b95))
	dst = binary.AppendUvarint(dst, uint64(b50-b90))
	return binary.AppendUvarint(dst, uint64(b10-b50))
}

// minuteRec is a minute as the minutes blob holds it.
type minuteRec struct {
	stats.Agg // its histogram left as it was
	laeq      float64
	pct       [4]float64 // L10, L50, L90, L95 (format 2)
	hasPct    bool
}

// eachMinute decodes the minutes blob of the hour starting at start,
// calling f with each present minute's index and figures.
func eachMinute(blob []byte, start time.Time, f func(i int, m *minuteRec)) error {
	return decodeMinutes(blob, start, true, f)
}

// decodeMinutes is eachMinute; without energy, Energy is left 0 (the rows
// of an export need the LAeq only, and 10^x was a fifth of their reading).
func decodeMinutes(blob []byte, start time.Time, energy bool, f func(i int, m *minuteRec)) error {
	if len(blob) == 0 || blob[0] != minutesFormat && blob[0] != minutesFormat1 {
		return fmt.Errorf("%w: minutes format", errFormat)
	}
	withPct := blob[0] == minutesFormat
	r := reader{p: blob[1:]}
	var m minuteRec
	for len(r.p) > 0 && !r.err {
		i := int(r.take(1)[0])
		dur := int64(r.uvarint())
		lv := float64(math.Float32frombits(binary.LittleEndian.Uint32(r.take(4))))
		mx := float64(int16(binary.LittleEndian.Uint16(r.take(2)))) / 100
		mn := float64(int16(binary.LittleEndian.Uint16(r.take(2)))) / 100
		fast := dur - int64(r.uvarint())
		m.hasPct = false
		if withPct {
			if b95 := r.uvarint(); b95 > 0 {
				b := int64(b95 - 1)
				for k := 3; k >= 0; k-- {
					if k < 3 {
						b += int64(r.uvarint())
					}
					m.pct[k] = float64(b) / 10
				}
				m.hasPct = b <= stats.MaxBin
			}
		}
		if r.err || i >= 60 {
			return fmt.Errorf("%w: minutes of %s", errFormat, start.UTC().Format(time.RFC3339))
		}
		m.DurMs, m.Max, m.Min, m.FastMs = dur, mx, mn, fast
		if energy {
			m.Energy = float64(dur) * math.Pow(10, lv/10)
		}
		m.laeq = lv
		f(i, &m)
	}
	if r.err {
		return fmt.Errorf("%w: minutes of %s", errFormat, start.UTC().Format(time.RFC3339))
	}
	return nil
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed) // level is valid
	w.Write(b)                                     //nolint:errcheck // bytes.Buffer does not fail
	w.Close()                                      //nolint:errcheck // bytes.Buffer does not fail
	return buf.Bytes()
}

// decoder decodes hour rows, reusing its buffers and minutes from one row to
// the next (reads of months of rows).
type decoder struct {
	fr   io.ReadCloser
	buf  bytes.Buffer
	aggs [60]stats.Agg
	h    hourData
}

func (d *decoder) inflate(b []byte) ([]byte, error) {
	if d.fr == nil {
		d.fr = flate.NewReader(bytes.NewReader(b))
	} else if err := d.fr.(flate.Resetter).Reset(bytes.NewReader(b), nil); err != nil {
		return nil, fmt.Errorf("%w: minute histograms: %v", errFormat, err)
	}
	d.buf.Reset()
	if _, err := d.buf.ReadFrom(d.fr); err != nil {
		return nil, fmt.Errorf("%w: minute histograms: %v", errFormat, err)
	}
	return d.buf.Bytes(), nil
}

// hour decodes an hour's minutes with their histograms into d's own
// storage: valid until the next call.
func (d *decoder) hour(start time.Time, mins, mhists []byte) (*hourData, error) {
	raw, err := d.inflate(mhists)
	if err != nil {
		return nil, err
	}
	d.h = hourData{}
	hr := reader{p: raw}
	err = eachMinute(mins, start, func(i int, m *minuteRec) {
		a := &d.aggs[i]
		hist := a.Hist
		*a = m.Agg
		a.Hist = hist
		hr.hist(&a.Hist)
		d.h.mins[i] = a
	})
	if err != nil {
		return nil, err
	}
	if hr.err {
		return nil, fmt.Errorf("%w: minute histograms of %s", errFormat, start.UTC().Format(time.RFC3339))
	}
	return &d.h, nil
}

// decodeHour rebuilds an hour's minutes with their histograms in new
// storage (the update path keeps them).
func decodeHour(start time.Time, mins, mhists []byte) (*hourData, error) {
	var d decoder
	h, err := d.hour(start, mins, mhists)
	if err != nil {
		return nil, err
	}
	out := &hourData{}
	for i, m := range h.mins {
		if m != nil {
			a := *m
			out.mins[i] = &a
		}
	}
	return out, nil
}
