package slm

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// sine returns dur seconds of a sine at f Hz with peak amplitude amp.
func sine(fs int, f, amp, dur float64) []float64 {
	n := int(math.Round(dur * float64(fs)))
	x := make([]float64, n)
	for i := range x {
		x[i] = amp * math.Sin(2*math.Pi*f*float64(i)/float64(fs))
	}
	return x
}

// ampFor is the peak amplitude of a sine at db relative to full scale.
func ampFor(db float64) float64 { return math.Pow(10, db/20) }

// run feeds x to a new meter in blocks of size block and returns the
// records (including the final partial one) and the summary.
func run(t testing.TB, opts Options, x []float64, block int) ([]Record, Summary) {
	t.Helper()
	m, err := NewMeter(opts)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for i := 0; i < len(x); i += block {
		recs = append(recs, m.Process(x[i:min(len(x), i+block)])...)
	}
	if last, ok := m.Finish(); ok {
		recs = append(recs, last)
	}
	s, err := m.Summary()
	if err != nil {
		t.Fatal(err)
	}
	return recs, s
}

// encodePCM encodes interleaved samples (full scale ±1) in format f.
func encodePCM(t testing.TB, f Format, x []float64) []byte {
	t.Helper()
	var b bytes.Buffer
	le := binary.LittleEndian
	clip := func(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, math.Round(v))) }
	for _, v := range x {
		switch f {
		case U8:
			b.WriteByte(byte(clip(v*128+128, 0, 255)))
		case S16LE:
			b.Write(le.AppendUint16(nil, uint16(int16(clip(v*(1<<15), -(1<<15), (1<<15)-1)))))
		case S24LE:
			u := uint32(int32(clip(v*(1<<23), -(1 << 23), (1<<23)-1)))
			b.Write([]byte{byte(u), byte(u >> 8), byte(u >> 16)})
		case S32LE:
			b.Write(le.AppendUint32(nil, uint32(int32(clip(v*(1<<31), -(1<<31), (1<<31)-1)))))
		case S24LE32: // ALSA S24_LE: the high byte is a sign extension (or junk we must ignore)
			u := uint32(int32(clip(v*(1<<23), -(1<<23), (1<<23)-1)))&0xFFFFFF | 0xA5000000
			b.Write(le.AppendUint32(nil, u))
		case F32LE:
			b.Write(le.AppendUint32(nil, math.Float32bits(float32(v))))
		case F64LE:
			b.Write(le.AppendUint64(nil, math.Float64bits(v)))
		default:
			t.Fatalf("encodePCM: format %v", f)
		}
	}
	return b.Bytes()
}

// wavSpec describes a WAV file for encodeWAV.
type wavSpec struct {
	format     Format
	channels   int
	rate       int
	extensible bool
	junk       bool   // add LIST chunks (odd-sized) before fmt and before data
	dataSize   uint32 // 0: the real size
}

// encodeWAV builds a WAV file holding interleaved samples x.
func encodeWAV(t testing.TB, w wavSpec, x []float64) []byte {
	t.Helper()
	le := binary.LittleEndian
	data := encodePCM(t, w.format, x)
	bits := w.format.Size() * 8
	tag := uint16(wavFormatPCM)
	if w.format == F32LE || w.format == F64LE {
		tag = wavFormatFloat
	}
	var fmtc []byte
	fmtc = le.AppendUint16(fmtc, tag)
	fmtc = le.AppendUint16(fmtc, uint16(w.channels))
	fmtc = le.AppendUint32(fmtc, uint32(w.rate))
	fmtc = le.AppendUint32(fmtc, uint32(w.rate*w.channels*w.format.Size()))
	fmtc = le.AppendUint16(fmtc, uint16(w.channels*w.format.Size()))
	fmtc = le.AppendUint16(fmtc, uint16(bits))
	if w.extensible {
		le.PutUint16(fmtc[0:], wavFormatExtensi)
		fmtc = le.AppendUint16(fmtc, 22)
		fmtc = le.AppendUint16(fmtc, uint16(bits))
		fmtc = le.AppendUint32(fmtc, 0x4)
		fmtc = le.AppendUint16(fmtc, tag)
		fmtc = append(fmtc, ksDataFormatSuffix...)
	}
	var body bytes.Buffer
	body.WriteString("WAVE")
	chunk := func(id string, b []byte) {
		body.WriteString(id)
		body.Write(le.AppendUint32(nil, uint32(len(b))))
		body.Write(b)
		if len(b)%2 == 1 {
			body.WriteByte(0)
		}
	}
	if w.junk {
		chunk("LIST", []byte("INFOISFT"+"\x05\x00\x00\x00sox\x00\x00"))
		chunk("junk", []byte{1, 2, 3})
	}
	chunk("fmt ", fmtc)
	if w.junk {
		chunk("fact", []byte{0, 0, 0, 0})
	}
	body.WriteString("data")
	size := uint32(len(data))
	if w.dataSize != 0 {
		size = w.dataSize
	}
	body.Write(le.AppendUint32(nil, size))
	body.Write(data)
	var out bytes.Buffer
	out.WriteString("RIFF")
	out.Write(le.AppendUint32(nil, uint32(body.Len())))
	out.Write(body.Bytes())
	return out.Bytes()
}

// interleave builds frames from per-channel signals of equal length.
func interleave(chans ...[]float64) []float64 {
	out := make([]float64, 0, len(chans)*len(chans[0]))
	for i := range chans[0] {
		for _, c := range chans {
			out = append(out, c[i])
		}
	}
	return out
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }
