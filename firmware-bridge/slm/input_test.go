package slm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// readAll drains a stream.
func readAll(s *Stream) ([]float64, error) {
	var out []float64
	buf := make([]float64, 333)
	for {
		n, err := s.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
}

func reasonOf(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Reason
	}
	return ""
}

// TestStreamFormats: every format decodes what we encoded, from the chosen
// channel, to within its quantisation step, at every read size.
func TestStreamFormats(t *testing.T) {
	left := sine(48000, 440, 0.9, 0.05)
	right := sine(48000, 1000, -0.5, 0.05)
	right[3] = -1 // full-scale negative
	for _, tc := range []struct {
		f    Format
		step float64
	}{
		{U8, 1.0 / 128}, {S16LE, 1.0 / (1 << 15)}, {S24LE, 1.0 / (1 << 23)},
		{S32LE, 1.0 / (1 << 31)}, {F32LE, 1e-7}, {F64LE, 0}, {S24LE32, 1.0 / (1 << 23)},
	} {
		for _, ch := range []int{0, 1} {
			t.Run(fmt.Sprintf("%v/ch%d", tc.f, ch), func(t *testing.T) {
				raw := encodePCM(t, tc.f, interleave(left, right))
				// One byte at a time: reads must assemble frames.
				s, err := NewStream(iotest.OneByteReader(bytes.NewReader(raw)), tc.f, 2, ch)
				if err != nil {
					t.Fatal(err)
				}
				got, err := readAll(s)
				if err != io.EOF {
					t.Fatalf("end of stream: %v", err)
				}
				want := [][]float64{left, right}[ch]
				if len(got) != len(want) || s.Frames() != int64(len(want)) {
					t.Fatalf("%d samples (Frames %d), want %d", len(got), s.Frames(), len(want))
				}
				for i := range want {
					if !near(got[i], want[i], tc.step) {
						t.Fatalf("sample %d = %v, want %v ± %v", i, got[i], want[i], tc.step)
					}
				}
			})
		}
	}
}

func TestStreamErrors(t *testing.T) {
	nan := binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.NaN())))
	inf := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Inf(-1)))
	one := binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.5))
	for _, tc := range []struct {
		name      string
		raw       []byte
		f         Format
		channels  int
		wantN     int
		reason    string
		wantFrame bool
	}{
		{"partial frame s16 stereo", make([]byte, 4*10+3), S16LE, 2, 10, ReasonFrame, false},
		{"partial frame s24", make([]byte, 3*5+1), S24LE, 1, 5, ReasonFrame, false},
		{"NaN float32 after one good sample", append(append([]byte{}, one...), nan...), F32LE, 1, 1, ReasonSample, false},
		{"first sample -Inf float64", inf, F64LE, 1, 0, ReasonSample, false},
		{"empty", nil, S32LE, 1, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewStream(bytes.NewReader(tc.raw), tc.f, tc.channels, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(s)
			if len(got) != tc.wantN {
				t.Errorf("%d samples before the error, want %d", len(got), tc.wantN)
			}
			if tc.reason == "" {
				if err != io.EOF {
					t.Errorf("error %v, want io.EOF", err)
				}
				return
			}
			if reasonOf(err) != tc.reason {
				t.Errorf("error %v, want reason %s", err, tc.reason)
			}
			// The error sticks.
			if _, err2 := s.Read(make([]float64, 4)); err2 != err {
				t.Errorf("second read: %v", err2)
			}
		})
	}
	// Errors of the underlying reader are wrapped, not disguised.
	boom := errors.New("usb unplugged")
	s, _ := NewStream(iotest.ErrReader(boom), S16LE, 1, 0)
	if _, err := s.Read(make([]float64, 4)); !errors.Is(err, boom) {
		t.Errorf("reader error: %v", err)
	}
}

func TestNewStreamRejects(t *testing.T) {
	for _, tc := range []struct {
		f          Format
		ch, chosen int
		reason     string
	}{
		{Format(0), 1, 0, ReasonFormat},
		{Format(99), 1, 0, ReasonFormat},
		{S16LE, 0, 0, ReasonChannels},
		{S16LE, 65, 0, ReasonChannels},
		{S16LE, 2, 2, ReasonChannels},
		{S16LE, 2, -1, ReasonChannels},
	} {
		_, err := NewStream(bytes.NewReader(nil), tc.f, tc.ch, tc.chosen)
		if reasonOf(err) != tc.reason {
			t.Errorf("NewStream(%v, %d, %d): %v, want reason %s", tc.f, tc.ch, tc.chosen, err, tc.reason)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{
		"s16le": S16LE, "S16_LE": S16LE, "s24le": S24LE, "S24_3LE": S24LE, "S32_LE": S32LE,
		"S24_LE": S24LE32, "s24le32": S24LE32,
		"f32le": F32LE, "FLOAT_LE": F32LE, "FLOAT64_LE": F64LE, "f64le": F64LE, "U8": U8,
	} {
		got, err := ParseFormat(in)
		if err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, err := ParseFormat(got.String()); err != nil || back != got {
			t.Errorf("ParseFormat(%q.String()) = %v, %v", in, back, err)
		}
	}
	for _, in := range []string{"", "s16be", "mp3", "s 16le"} {
		if _, err := ParseFormat(in); reasonOf(err) != ReasonFormat {
			t.Errorf("ParseFormat(%q): %v", in, err)
		}
	}
}

// TestWAVRoundTrip writes WAV files in every supported layout to a temp dir
// and checks that Analyze reads the level of the tone in the chosen channel.
func TestWAVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		spec    wavSpec
		channel int
	}{
		{wavSpec{format: S16LE, channels: 1, rate: 48000}, 0},
		{wavSpec{format: S16LE, channels: 2, rate: 44100, junk: true}, 1},
		{wavSpec{format: S24LE, channels: 2, rate: 48000, extensible: true}, 0},
		{wavSpec{format: S32LE, channels: 4, rate: 48000, extensible: true, junk: true}, 3},
		{wavSpec{format: F32LE, channels: 1, rate: 44100}, 0},
		{wavSpec{format: F32LE, channels: 2, rate: 48000, extensible: true}, 1},
		{wavSpec{format: F64LE, channels: 1, rate: 96000}, 0},
		{wavSpec{format: U8, channels: 1, rate: 48000}, 0},
		{wavSpec{format: S16LE, channels: 1, rate: 48000, dataSize: unknownSize}, 0},
	} {
		t.Run(fmt.Sprintf("%v/%dch/%d/ext=%v", tc.spec.format, tc.spec.channels, tc.spec.rate, tc.spec.extensible), func(t *testing.T) {
			chans := make([][]float64, tc.spec.channels)
			for c := range chans {
				db := -40.0
				if c == tc.channel {
					db = -12
				}
				chans[c] = sine(tc.spec.rate, 1000, ampFor(db), 1.5)
			}
			path := filepath.Join(dir, fmt.Sprintf("t%d.wav", i))
			if err := os.WriteFile(path, encodeWAV(t, tc.spec, interleave(chans...)), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			s, h, err := OpenWAV(f, tc.channel)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if h.Format != tc.spec.format || h.Channels != tc.spec.channels || h.SampleRate != tc.spec.rate {
				t.Errorf("header %+v", h)
			}
			sum, err := Analyze(s, Options{SampleRate: h.SampleRate})
			if err != nil {
				t.Fatal(err)
			}
			tol := 0.05
			if tc.spec.format == U8 {
				tol = 0.2 // 8-bit quantisation noise at -12 dBFS
			}
			if !near(sum.LAeq, -12, tol) || sum.DurationS != 1.5 {
				t.Errorf("LAeq %.3f dB over %v s, want -12 dB over 1.5 s", sum.LAeq, sum.DurationS)
			}
		})
	}
}

// TestWAVTrailingChunk: samples stop at the end of the data chunk even when
// another chunk follows, and a data chunk shorter than declared (a cut-off
// recording) is read to its last whole frame.
func TestWAVTrailingChunk(t *testing.T) {
	x := sine(48000, 1000, 0.5, 0.1)
	file := encodeWAV(t, wavSpec{format: S16LE, channels: 1, rate: 48000}, x)
	withList := append(append([]byte{}, file...), []byte("LIST\x04\x00\x00\x00abcd")...)
	s, _, err := OpenWAV(bytes.NewReader(withList), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(s); len(got) != len(x) || err != io.EOF {
		t.Errorf("with trailing chunk: %d samples, %v", len(got), err)
	}
	cut := file[:len(file)-200]
	s, _, err = OpenWAV(bytes.NewReader(cut), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(s); len(got) != len(x)-100 || err != io.EOF {
		t.Errorf("cut recording: %d samples, %v", len(got), err)
	}
}

func TestWAVRejects(t *testing.T) {
	good := encodeWAV(t, wavSpec{format: S16LE, channels: 2, rate: 48000}, make([]float64, 8))
	ext := encodeWAV(t, wavSpec{format: S24LE, channels: 1, rate: 48000, extensible: true}, make([]float64, 8))
	// Offsets in a plain file: fmt body starts at 20, data chunk at 36.
	patch := func(b []byte, off int, v ...byte) []byte {
		c := append([]byte{}, b...)
		copy(c[off:], v)
		return c
	}
	for _, tc := range []struct {
		name   string
		in     []byte
		reason string
	}{
		{"empty", nil, ReasonHeader},
		{"text file", []byte("hello, this is not audio at all"), ReasonNotWAV},
		{"RIFF but AVI", patch(good, 8, 'A', 'V', 'I', ' '), ReasonNotWAV},
		{"RF64", patch(good, 0, 'R', 'F', '6', '4'), ReasonNotWAV},
		{"header only", good[:12], ReasonHeader},
		{"cut inside fmt", good[:30], ReasonHeader},
		{"no data chunk", good[:36], ReasonHeader},
		{"data before fmt", patch(good, 12, 'd', 'a', 't', 'a'), ReasonHeader},
		{"fmt too short", patch(good, 16, 8), ReasonHeader},
		{"fmt absurdly long", patch(good, 16, 0, 0, 1), ReasonHeader},
		{"ADPCM", patch(good, 20, 2, 0), ReasonEncoding},
		{"mu-law", patch(good, 20, 7, 0), ReasonEncoding},
		{"12-bit PCM", patch(good, 34, 12), ReasonEncoding},
		{"float 16-bit", patch(patch(good, 20, 3, 0), 34, 16), ReasonEncoding},
		{"zero channels", patch(good, 22, 0, 0), ReasonChannels},
		{"100 channels", patch(good, 22, 100, 0), ReasonChannels},
		{"zero rate", patch(good, 24, 0, 0, 0, 0), ReasonHeader},
		{"block align wrong", patch(good, 32, 3, 0), ReasonHeader},
		{"extensible with odd GUID", patch(ext, 20+30, 0xFF), ReasonEncoding},
		{"extensible cbSize short", patch(ext, 20+16, 2, 0), ReasonHeader},
		{"extensible with ADPCM subformat", patch(ext, 20+24, 2, 0), ReasonEncoding},
		{"skipped chunk runs past the end", append(append([]byte{}, good[:12]...), []byte("LIST\xff\xff\x00\x00abc")...), ReasonHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := OpenWAV(bytes.NewReader(tc.in), 0)
			if reasonOf(err) != tc.reason {
				t.Errorf("error %v, want reason %s", err, tc.reason)
			}
		})
	}
	if _, _, err := OpenWAV(bytes.NewReader(good), 2); reasonOf(err) != ReasonChannels {
		t.Errorf("channel 2 of a stereo file: %v", err)
	}
}

func TestAnalyzeNoSamples(t *testing.T) {
	s, _, err := OpenWAV(bytes.NewReader(encodeWAV(t, wavSpec{format: S16LE, channels: 1, rate: 48000}, nil)), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Analyze(s, Options{SampleRate: 48000}); reasonOf(err) != ReasonNoSamples {
		t.Errorf("empty data chunk: %v", err)
	}
}

// FuzzReadWAV: arbitrary bytes never panic the WAV reader or the stream
// behind it; whatever is accepted is self-consistent.
func FuzzReadWAV(f *testing.F) {
	x := sine(48000, 1000, 0.5, 0.002)
	for _, w := range []wavSpec{
		{format: S16LE, channels: 1, rate: 48000},
		{format: S24LE, channels: 2, rate: 44100, extensible: true, junk: true},
		{format: F32LE, channels: 1, rate: 48000},
		{format: S32LE, channels: 1, rate: 48000, dataSize: unknownSize},
	} {
		f.Add(encodeWAV(f, w, x), 0)
	}
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"), 1)
	f.Fuzz(func(t *testing.T, b []byte, channel int) {
		s, h, err := OpenWAV(bytes.NewReader(b), channel%4)
		if err != nil {
			if reasonOf(err) == "" {
				t.Fatalf("non-input error from an in-memory reader: %v", err)
			}
			return
		}
		if h.Format.Size() == 0 || h.Channels < 1 || h.Channels > maxChannels || h.SampleRate < 1 {
			t.Fatalf("accepted inconsistent header %+v", h)
		}
		got, err := readAll(s)
		if err != io.EOF && reasonOf(err) == "" {
			t.Fatalf("stream error %v", err)
		}
		for _, v := range got {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite sample %v", v)
			}
		}
	})
}

// FuzzStream: arbitrary raw bytes in every format decode without panics,
// to exactly len/frame finite samples or a reasoned error.
func FuzzStream(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(2), uint8(1), uint8(0))
	f.Add(encodePCM(f, F32LE, []float64{0.1, -0.2, 0.3}), uint8(5), uint8(1), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, fm, channels, channel uint8) {
		format := Format(fm%7 + 1)
		ch := int(channels%4) + 1
		s, err := NewStream(bytes.NewReader(b), format, ch, int(channel)%ch)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(s)
		frame := ch * format.Size()
		switch reasonOf(err) {
		case "":
			if err != io.EOF || len(got) != len(b)/frame || len(b)%frame != 0 {
				t.Fatalf("%d bytes, frame %d: %d samples, %v", len(b), frame, len(got), err)
			}
		case ReasonFrame:
			if len(b)%frame == 0 {
				t.Fatalf("partial-frame error on whole frames")
			}
		case ReasonSample:
			if format != F32LE && format != F64LE {
				t.Fatalf("invalid-sample error for %v", format)
			}
		default:
			t.Fatalf("unexpected %v", err)
		}
		for _, v := range got {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite sample %v", v)
			}
		}
	})
}
