package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const slmTone = "../../firmware-bridge/slm/testdata/tone-1k-m20dbfs-48k-s16.wav"

// rawS32 is dur seconds of a 1 kHz sine at db dBFS as S32_LE frames with
// the tone in channel 0 and silence in the other channels.
func rawS32(fs int, db, dur float64, channels int) []byte {
	var b []byte
	amp := math.Pow(10, db/20) * (1 << 31)
	for i := 0; i < int(dur*float64(fs)); i++ {
		v := int32(math.Round(amp * math.Sin(2*math.Pi*1000*float64(i)/float64(fs))))
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
		for c := 1; c < channels; c++ {
			b = binary.LittleEndian.AppendUint32(b, 0)
		}
	}
	return b
}

func TestSLMAnalyze(t *testing.T) {
	wav, err := os.ReadFile(slmTone)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		stdin   []byte
		laeq    float64
		rate    float64
		dur     float64
		channel float64
	}{
		{"file", []string{"analyze", slmTone}, nil, -20, 48000, 0.5, 0},
		{"file with offset after the name", []string{"analyze", slmTone, "--offset-db", "94"}, nil, 74, 48000, 0.5, 0},
		{"WAV on stdin", []string{"analyze", "--offset-db=120", "-"}, wav, 100, 48000, 0.5, 0},
		{"raw S32_LE on stdin", []string{"analyze", "--raw", "S32_LE", "--rate", "44100", "-"}, rawS32(44100, -30, 1, 1), -30, 44100, 1, 0},
		{"raw stereo, channel 1 silent", []string{"analyze", "--raw", "s32le", "--rate", "48000", "--channels", "2", "--channel", "1", "-"}, rawS32(48000, -30, 1, 2), -197, 48000, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"slm"}, tc.args...), stdio{in: bytes.NewReader(tc.stdin), out: &out, err: &errb})
			if code != 0 {
				t.Fatalf("exit %d, stderr: %s", code, errb.String())
			}
			if strings.Count(out.String(), "\n") != 1 {
				t.Errorf("want exactly one JSON line, got %q", out.String())
			}
			var got map[string]any
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, out.String())
			}
			for _, k := range []string{"laeq_db", "lafmax_db", "lafmin_db", "lcpeak_db", "l10_db", "l50_db", "l90_db", "duration_s", "sample_rate", "channels", "offset_db"} {
				if _, ok := got[k].(float64); !ok {
					t.Errorf("field %s missing or not a number in %s", k, out.String())
				}
			}
			if v := got["laeq_db"].(float64); math.Abs(v-tc.laeq) > 0.05 {
				t.Errorf("laeq_db %v, want %v", v, tc.laeq)
			}
			if got["sample_rate"] != tc.rate || got["duration_s"] != tc.dur || got["channel"] != tc.channel {
				t.Errorf("sample_rate %v, duration_s %v, channel %v", got["sample_rate"], got["duration_s"], got["channel"])
			}
		})
	}
}

func TestSLMAnalyzeErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notas.txt")
	if err := os.WriteFile(text, []byte("isto não é áudio, é um texto qualquer"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin []byte
		code  int
		msg   string // must appear in stderr
	}{
		{"no sub-command", nil, nil, 2, "uso: sossego slm"},
		{"help", []string{"-h"}, nil, 0, "uso: sossego slm"},
		{"unknown sub-command", []string{"measure"}, nil, 2, "subcomando desconhecido"},
		{"no file", []string{"analyze"}, nil, 2, "informe exatamente um arquivo"},
		{"two files", []string{"analyze", slmTone, slmTone}, nil, 2, "recebi 2"},
		{"unknown flag", []string{"analyze", "--weighting", "Z", slmTone}, nil, 2, "weighting"},
		{"rate without raw", []string{"analyze", "--rate", "48000", slmTone}, nil, 2, "só valem com --raw"},
		{"raw without rate", []string{"analyze", "--raw", "s16le", "-"}, nil, 2, "--rate 48000"},
		{"unknown raw format", []string{"analyze", "--raw", "mp3", "--rate", "48000", "-"}, nil, 2, "formato bruto \"mp3\" desconhecido"},
		{"negative channel", []string{"analyze", "--channel", "-1", slmTone}, nil, 2, "--channel começa em 0"},
		{"missing file", []string{"analyze", filepath.Join(dir, "nada.wav")}, nil, 1, "arquivo não encontrado"},
		{"not a WAV", []string{"analyze", text}, nil, 1, "não é um arquivo WAV"},
		{"channel not in file", []string{"analyze", "--channel", "1", slmTone}, nil, 1, "canal 1 não existe"},
		{"unsupported rate", []string{"analyze", "--raw", "s16le", "--rate", "8000", "-"}, make([]byte, 1600), 1, "taxa de amostragem de 8000 Hz"},
		{"empty raw input", []string{"analyze", "--raw", "s16le", "--rate", "48000", "-"}, nil, 1, "nenhuma amostra"},
		{"raw cut inside a frame", []string{"analyze", "--raw", "s32le", "--rate", "48000", "-"}, make([]byte, 4003), 1, "meio de um quadro"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"slm"}, tc.args...), stdio{in: bytes.NewReader(tc.stdin), out: &out, err: &errb})
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, errb.String())
			}
			if !strings.Contains(errb.String(), tc.msg) {
				t.Errorf("stderr %q does not contain %q", errb.String(), tc.msg)
			}
			if out.Len() != 0 {
				t.Errorf("stdout not empty on error: %q", out.String())
			}
		})
	}
}

// cancellingReader serves data in 999-byte pieces and cancels a context
// once it has served at least at bytes: Ctrl-C during a live capture.
type cancellingReader struct {
	data   []byte
	pos    int
	at     int
	cancel context.CancelFunc
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	if c.pos >= len(c.data) {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 999)], c.data[c.pos:])
	c.pos += n
	if c.pos >= c.at {
		c.cancel()
	}
	return n, nil
}

// TestSLMAnalyzeInterrupted: a cancelled context ends the input on a frame
// boundary and still prints the summary of what was read.
func TestSLMAnalyzeInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := &cancellingReader{data: rawS32(48000, -30, 2, 1), at: 96002, cancel: cancel}
	var out, errb bytes.Buffer
	code := run(ctx, []string{"slm", "analyze", "--raw", "s32le", "--rate", "48000", "-"}, stdio{in: in, out: &out, err: &errb})
	if code != 0 || !strings.Contains(errb.String(), "interrompido") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	var got struct {
		Samples float64 `json:"samples"`
		LAeq    float64 `json:"laeq_db"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// Reading stopped right after the cancel, on a frame boundary, and
	// every byte read was measured.
	if in.pos%4 != 0 || in.pos < in.at || in.pos > in.at+999+3 {
		t.Errorf("read %d bytes after cancelling at %d", in.pos, in.at)
	}
	if want := float64(in.pos / 4); got.Samples != want || math.Abs(got.LAeq+30) > 0.1 {
		t.Errorf("%v samples at %v dB, want %v samples at -30 dB", got.Samples, got.LAeq, want)
	}

	// Cancelled before the first byte: nothing was measured.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	out.Reset()
	errb.Reset()
	code = run(ctx2, []string{"slm", "analyze", "--raw", "s32le", "--rate", "48000", "-"}, stdio{in: bytes.NewReader(rawS32(48000, -30, 1, 1)), out: &out, err: &errb})
	if code != 1 || !strings.Contains(errb.String(), "nenhuma amostra") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}
