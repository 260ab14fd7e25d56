package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/sossego/sossego/firmware-bridge/slm"
)

func init() {
	register("slm", "medidor de nível sonoro em software (WAV ou PCM bruto → LAeq, LAFmax, LCpeak, L10/L50/L90)", runSLM)
}

const slmUsage = `uso: sossego slm analyze [opções] ARQUIVO.wav
     sossego slm analyze [opções] -                       (WAV pela entrada padrão)
     sossego slm analyze --raw FORMATO --rate HZ [opções] ARQUIVO|-
  Imprime um objeto JSON com laeq_db, lceq_db, lafmax_db, lafmin_db, lasmax_db,
  lcpeak_db, l10_db, l50_db, l90_db, duration_s, sample_rate, channels, offset_db.
  Nível = 20·lg(rms / (fundo de escala/√2)) + offset: sem offset, uma senoide de
  fundo de escala em 1 kHz mede 0 dB.

opções:
  --offset-db N   calibração: nível em dB re 20 µPa de uma senoide de fundo de escala (padrão 0)
  --channel K     canal a medir, a partir de 0 (padrão 0)
  --raw FORMATO   entrada PCM bruta: s16le, s24le (3 bytes), s24le32 (S24_LE do arecord),
                  s32le, f32le, f64le, u8 (aceita também os nomes do arecord: S16_LE, S32_LE…)
  --rate HZ       taxa de amostragem da entrada bruta (44100 e 48000 são as validadas)
  --channels N    canais intercalados da entrada bruta (padrão 1)

exemplo ao vivo (Ctrl-C encerra e imprime o resumo):
  arecord -D hw:1,0 -f S32_LE -r 48000 -c 1 -t raw | sossego slm analyze --raw S32_LE --rate 48000 --offset-db 120 -`

// slmResult is the JSON printed by `sossego slm analyze`.
type slmResult struct {
	slm.Summary
	Channels int    `json:"channels"`
	Channel  int    `json:"channel"`
	Format   string `json:"format"`
}

func runSLM(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(io.err, slmUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] != "analyze" {
		fmt.Fprintf(io.err, "sossego slm: subcomando desconhecido %q; o único é analyze\n\n%s\n", args[0], slmUsage)
		return 2
	}
	return slmAnalyze(ctx, args[1:], io)
}

func slmAnalyze(ctx context.Context, args []string, sio stdio) int {
	a, code, ok := parseSLMArgs(args, sio)
	if !ok {
		return code
	}
	in, name, closeIn, err := openSLMInput(a.file, sio.in)
	if err != nil {
		fmt.Fprintf(sio.err, "sossego slm analyze: não foi possível abrir %s: %s; confira o caminho e a permissão de leitura\n", a.file, openReason(err))
		return 1
	}
	defer closeIn()
	cr := &ctxReader{ctx: ctx, r: in}
	st, sr, err := a.open(cr)
	if err != nil {
		fmt.Fprintf(sio.err, "sossego slm analyze: %s: %s\n", name, slmMessage(err))
		return 1
	}
	cr.startFrames(st.Channels() * st.Format().Size())
	sum, err := slm.Analyze(st, slm.Options{SampleRate: sr, OffsetDB: a.offset})
	if err != nil {
		fmt.Fprintf(sio.err, "sossego slm analyze: %s: %s\n", name, slmMessage(err))
		return 1
	}
	if ctx.Err() != nil {
		fmt.Fprintf(sio.err, "sossego slm analyze: interrompido; resumo dos primeiros %.1f s\n", sum.DurationS)
	}
	res := slmResult{Summary: roundSummary(sum), Channels: st.Channels(), Channel: st.Channel(), Format: st.Format().String()}
	enc := json.NewEncoder(sio.out)
	if err := enc.Encode(res); err != nil {
		fmt.Fprintf(sio.err, "sossego slm analyze: escrever o resultado: %s\n", describe(err))
		return 1
	}
	return 0
}

// slmArgs are the options of `sossego slm analyze`.
type slmArgs struct {
	files          []string
	file           string // files[0], once checked
	offset         float64
	channel        int
	raw            string
	format         slm.Format // parsed from raw
	rate, channels int
}

// parseSLMArgs reads the options, before or after the file name, and
// checks them; when !ok the command ends with code (usage printed).
func parseSLMArgs(args []string, sio stdio) (a slmArgs, code int, ok bool) {
	fs := newFlagsUsage("slm analyze", slmUsage, sio)
	offset := fs.Float64("offset-db", 0, "calibração em dB")
	channel := fs.Int("channel", 0, "canal a medir, a partir de 0")
	raw := fs.String("raw", "", "formato da entrada PCM bruta")
	rate := fs.Int("rate", 0, "taxa de amostragem da entrada bruta, em Hz")
	channels := fs.Int("channels", 1, "canais da entrada bruta")
	// Flags may come before or after the file name.
	for {
		if code, ok := fs.parse(args); !ok {
			return a, code, false
		}
		if fs.NArg() == 0 {
			break
		}
		a.files = append(a.files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	a.offset, a.channel, a.raw, a.rate, a.channels = *offset, *channel, *raw, *rate, *channels
	if msg := a.check(); msg != "" {
		fmt.Fprintf(sio.err, "sossego slm analyze: %s\n\n%s\n", msg, slmUsage)
		return a, 2, false
	}
	return a, 0, true
}

// check says what is wrong with the options, empty when nothing is, and
// parses the raw format.
func (a *slmArgs) check() string {
	switch {
	case len(a.files) != 1:
		return fmt.Sprintf("informe exatamente um arquivo (ou - para a entrada padrão); recebi %d", len(a.files))
	case math.IsNaN(a.offset) || math.IsInf(a.offset, 0):
		return "--offset-db precisa ser um número"
	case a.channel < 0:
		return fmt.Sprintf("--channel começa em 0; recebi %d", a.channel)
	case a.raw == "" && (a.rate != 0 || a.channels != 1):
		return "--rate e --channels só valem com --raw (um WAV já traz taxa e canais no cabeçalho)"
	case a.raw != "" && a.rate <= 0:
		return "com --raw informe a taxa de amostragem, por exemplo --rate 48000"
	}
	a.file = a.files[0]
	if a.raw != "" {
		f, err := slm.ParseFormat(a.raw)
		if err != nil {
			return slmMessage(err)
		}
		a.format = f
	}
	return ""
}

// openSLMInput opens file, or stands for stdin when it is "-"; name is how
// messages call it.
func openSLMInput(file string, stdin io.Reader) (in io.Reader, name string, closeIn func(), err error) {
	if file == "-" {
		return stdin, "entrada padrão", func() {}, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, "", nil, err
	}
	return f, file, func() { f.Close() }, nil
}

// open reads the input as raw PCM in the given format, or as a WAV whose
// header gives the sample rate, and returns the stream of the channel
// measured and its sample rate.
func (a *slmArgs) open(in io.Reader) (*slm.Stream, int, error) {
	if a.raw != "" {
		st, err := slm.NewStream(in, a.format, a.channels, a.channel)
		return st, a.rate, err
	}
	st, h, err := slm.OpenWAV(in, a.channel)
	return st, h.SampleRate, err
}

// slmMessage is the operator-facing text of an error: the Portuguese
// message of input problems, the error itself otherwise.
func slmMessage(err error) string {
	var ie *slm.InputError
	if errors.As(err, &ie) {
		return ie.Msg
	}
	return err.Error()
}

func openReason(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "arquivo não encontrado"
	case errors.Is(err, os.ErrPermission):
		return "sem permissão"
	}
	return strings.TrimPrefix(err.Error(), "open ")
}

// roundSummary rounds levels to 0.001 dB, far below any meaningful
// precision, so that the JSON reads cleanly.
func roundSummary(s slm.Summary) slm.Summary {
	r := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	for _, p := range []*float64{&s.LAeq, &s.LCeq, &s.LAFmax, &s.LAFmin, &s.LASmax, &s.LCpeak, &s.L10, &s.L50, &s.L90} {
		*p = r(*p)
	}
	s.DurationS = math.Round(s.DurationS*1e6) / 1e6
	return s
}

// ctxReader ends the input when ctx is cancelled, so that Ctrl-C during a
// live capture prints the summary of what was read. Once the samples start
// it only stops on a frame boundary.
type ctxReader struct {
	ctx   context.Context
	r     io.Reader
	frame int   // bytes per frame; 0 while reading a header
	n     int64 // bytes read since the samples started
}

func (c *ctxReader) startFrames(frame int) { c.frame, c.n = frame, 0 }

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		rest := 0
		if c.frame > 0 {
			rest = (c.frame - int(c.n%int64(c.frame))) % c.frame
		}
		if rest == 0 {
			return 0, io.EOF
		}
		p = p[:min(len(p), rest)]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
