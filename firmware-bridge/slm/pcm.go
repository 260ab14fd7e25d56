package slm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Reasons of an InputError (machine-readable, stable).
const (
	ReasonNotWAV     = "not_wav"        // no RIFF/WAVE header
	ReasonHeader     = "bad_header"     // truncated or inconsistent header
	ReasonEncoding   = "encoding"       // compressed or unknown sample encoding
	ReasonChannels   = "channels"       // channel count or chosen channel out of range
	ReasonRate       = "sample_rate"    // sample rate outside what the filters support
	ReasonFormat     = "format"         // unknown raw format name
	ReasonFrame      = "partial_frame"  // the stream ends inside a frame
	ReasonSample     = "invalid_sample" // NaN or infinite float sample
	ReasonNoSamples  = "no_samples"     // no audio at all
	maxChannels      = 64               // more than any capture device we know
	maxReadBytes     = 64 << 10         // bytes read from the source per call
	wavFormatPCM     = 0x0001           // WAVE_FORMAT_PCM
	wavFormatFloat   = 0x0003           // WAVE_FORMAT_IEEE_FLOAT
	wavFormatExtensi = 0xFFFE           // WAVE_FORMAT_EXTENSIBLE
)

// InputError rejects PCM input that the meter cannot read. Msg is written
// for the operator, in Portuguese, and says what to fix.
type InputError struct {
	Reason string
	Msg    string
}

func (e *InputError) Error() string { return "slm: " + e.Reason + ": " + e.Msg }

func inputErr(reason, format string, a ...any) error {
	return &InputError{Reason: reason, Msg: fmt.Sprintf(format, a...)}
}

// Format is the encoding of one PCM sample.
type Format int

// Sample formats, little-endian. S24LE is packed in 3 bytes (ffmpeg's
// s24le, ALSA's S24_3LE); S24LE32 holds 24 bits in the low bytes of a 32-bit
// word (ALSA's S24_LE, what `arecord -f S24_LE` writes).
const (
	U8 Format = iota + 1
	S16LE
	S24LE
	S32LE
	F32LE
	F64LE
	S24LE32
)

var formatNames = map[Format]string{U8: "u8", S16LE: "s16le", S24LE: "s24le", S32LE: "s32le", F32LE: "f32le", F64LE: "f64le", S24LE32: "s24le32"}

// formatAliases maps every accepted name (lower case) to its format.
var formatAliases = map[string]Format{
	"u8": U8, "s16le": S16LE, "s16_le": S16LE,
	"s24le": S24LE, "s24_3le": S24LE,
	"s24le32": S24LE32, "s24_le": S24LE32,
	"s32le": S32LE, "s32_le": S32LE,
	"f32le": F32LE, "float_le": F32LE,
	"f64le": F64LE, "float64_le": F64LE,
}

func (f Format) String() string {
	if n, ok := formatNames[f]; ok {
		return n
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Size is the number of bytes of one sample (0 for an unknown format).
func (f Format) Size() int {
	switch f {
	case U8:
		return 1
	case S16LE:
		return 2
	case S24LE:
		return 3
	case S32LE, F32LE, S24LE32:
		return 4
	case F64LE:
		return 8
	}
	return 0
}

// ParseFormat accepts our names (u8, s16le, s24le, s24le32, s32le, f32le,
// f64le) and ALSA's (U8, S16_LE, S24_3LE, S24_LE, S32_LE, FLOAT_LE,
// FLOAT64_LE), in any case. Beware: ALSA's S24_LE is a 4-byte sample,
// unlike ffmpeg's s24le.
func ParseFormat(s string) (Format, error) {
	if f, ok := formatAliases[strings.ToLower(s)]; ok {
		return f, nil
	}
	return 0, inputErr(ReasonFormat, "formato bruto %q desconhecido: use s16le, s24le (3 bytes), s24le32 (S24_LE do arecord), s32le, f32le, f64le ou u8", s)
}

// Stream decodes one channel of interleaved little-endian PCM frames from a
// reader (a raw capture such as `arecord -t raw`, or the data chunk of a WAV
// file).
type Stream struct {
	r        io.Reader
	format   Format
	channels int
	channel  int
	frame    int
	buf      []byte
	frames   int64
	err      error
	closer   io.Closer // what Close closes: the reader given to NewStream or OpenWAV
}

// NewStream reads channel (0-based) of frames with the given channel count.
func NewStream(r io.Reader, f Format, channels, channel int) (*Stream, error) {
	if f.Size() == 0 {
		return nil, inputErr(ReasonFormat, "formato de amostra %v desconhecido", f)
	}
	if channels < 1 || channels > maxChannels {
		return nil, inputErr(ReasonChannels, "%d canais: use de 1 a %d", channels, maxChannels)
	}
	if channel < 0 || channel >= channels {
		return nil, inputErr(ReasonChannels, "canal %d não existe: a entrada tem %d canal(is), numerados de 0 a %d", channel, channels, channels-1)
	}
	frame := channels * f.Size()
	c, _ := r.(io.Closer)
	return &Stream{
		r: r, format: f, channels: channels, channel: channel, frame: frame,
		buf:    make([]byte, max(frame, maxReadBytes/frame*frame)),
		closer: c,
	}, nil
}

// Close closes the reader the stream was opened on, if it is an io.Closer,
// and makes further reads fail. It is idempotent.
func (s *Stream) Close() error {
	if s.err == nil || errors.Is(s.err, io.EOF) {
		s.err = errClosed
	}
	c := s.closer
	s.closer = nil
	if c != nil {
		if err := c.Close(); err != nil {
			return fmt.Errorf("slm: close: %w", err)
		}
	}
	return nil
}

var errClosed = errors.New("slm: stream closed")

// Format, Channels and Channel describe the stream.
func (s *Stream) Format() Format { return s.format }

// Channels is the number of interleaved channels per frame.
func (s *Stream) Channels() int { return s.channels }

// Channel is the channel being read.
func (s *Stream) Channel() int { return s.channel }

// Frames is the number of frames decoded so far.
func (s *Stream) Frames() int64 { return s.frames }

// Read decodes up to len(dst) frames into dst (full scale = ±1) and
// returns how many. It blocks until dst is full or the input ends; at the
// end of the input it returns 0, io.EOF. A stream that ends inside a frame,
// or a float sample that is NaN or infinite, is an *InputError; errors of
// the underlying reader are returned wrapped.
func (s *Stream) Read(dst []float64) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	want := min(len(dst), len(s.buf)/s.frame)
	if want == 0 {
		return 0, nil
	}
	got, err := io.ReadFull(s.r, s.buf[:want*s.frame])
	n := got / s.frame
	var next error
	switch {
	case err == nil:
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		next = io.EOF
		if rest := got % s.frame; rest != 0 {
			next = inputErr(ReasonFrame, "a entrada termina no meio de um quadro (%d de %d bytes após %d quadros): arquivo truncado, ou formato/número de canais errado",
				rest, s.frame, s.frames+int64(n))
		}
	default:
		next = fmt.Errorf("slm: read pcm: %w", err)
	}
	if bad := s.decode(dst[:n], s.buf[:n*s.frame]); bad >= 0 {
		s.err = inputErr(ReasonSample, "amostra inválida (NaN ou infinita) no quadro %d: a entrada float está corrompida", s.frames+int64(bad))
		s.frames += int64(bad)
		if bad == 0 {
			return 0, s.err
		}
		return bad, nil
	}
	s.err = next
	s.frames += int64(n)
	if n == 0 {
		return 0, s.err
	}
	return n, nil
}

// decode converts frames; it returns the index of the first non-finite
// sample, or -1.
func (s *Stream) decode(dst []float64, b []byte) int {
	off, step := s.channel*s.format.Size(), s.frame
	switch s.format {
	case U8:
		for i := range dst {
			dst[i] = (float64(b[off+i*step]) - 128) / 128
		}
	case S16LE:
		for i := range dst {
			dst[i] = float64(int16(binary.LittleEndian.Uint16(b[off+i*step:]))) / (1 << 15)
		}
	case S24LE:
		for i := range dst {
			p := b[off+i*step:]
			v := int32(uint32(p[0])<<8|uint32(p[1])<<16|uint32(p[2])<<24) >> 8
			dst[i] = float64(v) / (1 << 23)
		}
	case S24LE32:
		for i := range dst {
			dst[i] = float64(int32(binary.LittleEndian.Uint32(b[off+i*step:])<<8)>>8) / (1 << 23)
		}
	case S32LE:
		for i := range dst {
			dst[i] = float64(int32(binary.LittleEndian.Uint32(b[off+i*step:]))) / (1 << 31)
		}
	case F32LE:
		for i := range dst {
			v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[off+i*step:])))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return i
			}
			dst[i] = v
		}
	case F64LE:
		for i := range dst {
			v := math.Float64frombits(binary.LittleEndian.Uint64(b[off+i*step:]))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return i
			}
			dst[i] = v
		}
	}
	return -1
}
