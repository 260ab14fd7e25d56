package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/tz"
)

func init() {
	register("calibration", "registro de calibração dos medidores: certificados, verificações de campo, situação das leituras", runCalibration)
}

const calibrationUsage = `uso: sossego calibration <list|add|history|check|policy> --data-dir DIR [opções]
  list                               cada sensor: certificado em vigor, validade, última verificação de campo,
                                     se as leituras valem para constatação ou são indicativas (e por quê)
  add --sensor S --number N --laboratory L --meter-model M --meter-serial X
      --calibrated-on AAAA-MM-DD --expires AAAA-MM-DD --uncertainty DB [--file CERT.pdf] [--note T]
      [--replaces REVISÃO]           registra uma revisão do certificado (nada é sobrescrito; --replaces
                                     corrige uma revisão anterior, que continua no histórico)
  history --sensor S                 todas as revisões do certificado e as verificações de campo
  check --sensor S [--at DATA]       as leituras do sensor em DATA (RFC 3339; padrão: agora) valem para
                                     constatação? sai com 0 se sim, 3 se são indicativas
  policy --municipality M --days N   prazo da verificação de campo do município (padrão 30 dias; 0 volta ao padrão)
opções:
  --data-dir DIR   diretório de dados do serviço central (arquivo ` + calibration.FileName + `)
  --by NOME        quem registra (padrão: o usuário do sistema)`

func runCalibration(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(io.err, calibrationUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	fs := newFlagsUsage("calibration "+sub, calibrationUsage, io)
	dir := fs.String("data-dir", "", "diretório de dados do serviço central")
	by := fs.String("by", "", "quem registra")
	sensor := fs.String("sensor", "", "sensor")
	var c calibration.Certificate
	fs.StringVar(&c.Number, "number", "", "número do certificado")
	fs.StringVar(&c.Laboratory, "laboratory", "", "laboratório")
	fs.StringVar(&c.MeterModel, "meter-model", "", "modelo do medidor")
	fs.StringVar(&c.MeterSerial, "meter-serial", "", "número de série do medidor")
	fs.StringVar(&c.CalibratedOn, "calibrated-on", "", "data de calibração")
	fs.StringVar(&c.Expires, "expires", "", "validade")
	fs.Float64Var(&c.UncertaintyDB, "uncertainty", 0, "incerteza expandida (dB)")
	fs.StringVar(&c.Note, "note", "", "observação")
	fs.Int64Var(&c.Replaces, "replaces", 0, "revisão corrigida")
	file := fs.String("file", "", "arquivo do certificado (PDF)")
	at := fs.String("at", "", "data e hora (RFC 3339)")
	muni := fs.String("municipality", "", "município")
	days := fs.Int("days", -1, "prazo em dias")
	if code, ok := fs.parse(args[1:]); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "sossego calibration %s: argumento inesperado %q (as opções começam com --)\n", sub, fs.Arg(0))
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(io.err, "sossego calibration: informe --data-dir (o diretório de dados do serviço central)")
		return 2
	}
	switch sub {
	case "list", "add", "history", "check", "policy":
	default:
		fmt.Fprintf(io.err, "sossego calibration: subcomando desconhecido %q\n", sub)
		fmt.Fprintln(io.err, calibrationUsage)
		return 2
	}
	if (sub == "add" || sub == "history" || sub == "check") && *sensor == "" {
		fmt.Fprintf(io.err, "sossego calibration %s: informe --sensor\n", sub)
		return 2
	}
	if sub == "policy" && (*muni == "" || *days < 0) {
		fmt.Fprintln(io.err, "sossego calibration policy: informe --municipality e --days (1 a 366; 0 volta ao padrão de 30)")
		return 2
	}
	when := time.Now()
	if *at != "" {
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			fmt.Fprintf(io.err, "sossego calibration check: --at %q inválido: use RFC 3339, como 2026-12-01T22:00:00-03:00\n", *at)
			return 2
		}
		when = t
	}
	if *by == "" {
		*by = "cli"
		if u, err := user.Current(); err == nil && u.Username != "" {
			*by = "cli:" + u.Username
		}
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fmt.Fprintf(io.err, "sossego calibration: %s\n", describe(err))
		return 1
	}
	r, err := calibration.Open(ctx, filepath.Join(*dir, calibration.FileName), calibration.Options{})
	if err != nil {
		fmt.Fprintf(io.err, "sossego calibration: não foi possível abrir o registro de calibração: %s\n", describe(err))
		return 1
	}
	defer r.Close()
	fail := func(err error) int {
		var ve *calibration.ValidationError
		if errors.As(err, &ve) {
			fmt.Fprintf(io.err, "sossego calibration %s: nada foi registrado; corrija:\n", sub)
			for _, p := range ve.Problems {
				fmt.Fprintf(io.err, "  - %s\n", p)
			}
			return 1
		}
		fmt.Fprintf(io.err, "sossego calibration %s: %s\n", sub, describe(err))
		return 1
	}
	switch sub {
	case "add":
		c.Sensor = *sensor
		var data []byte
		if *file != "" {
			if data, err = os.ReadFile(*file); err != nil {
				fmt.Fprintf(io.err, "sossego calibration add: --file: %s\n", describe(err))
				return 1
			}
			c.FileName = filepath.Base(*file)
		}
		got, err := r.Add(ctx, c, data, *by)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(io.out, "certificado nº %s registrado para o sensor %s (revisão %d, válido até %s)\n", got.Number, got.Sensor, got.ID, brDay(got.Expires))
		if got.FileSHA256 != "" {
			fmt.Fprintf(io.out, "arquivo %s guardado, sha256 %s\n", got.FileName, got.FileSHA256)
		}
		return 0
	case "policy":
		if err := r.SetPolicy(ctx, *muni, *days, *by); err != nil {
			return fail(err)
		}
		if *days == 0 {
			fmt.Fprintf(io.out, "%s: verificação de campo a cada %d dias (padrão)\n", *muni, int(calibration.DefaultCheckMaxAge/(24*time.Hour)))
		} else {
			fmt.Fprintf(io.out, "%s: verificação de campo a cada %d dias\n", *muni, *days)
		}
		return 0
	case "check":
		v, err := r.Verdict(ctx, *sensor, when)
		if err != nil {
			return fail(err)
		}
		printVerdict(io, *sensor, v)
		if !v.OK {
			return 3
		}
		return 0
	case "history":
		hist, err := r.History(ctx, *sensor)
		if err != nil {
			return fail(err)
		}
		checks, err := r.Checks(ctx, *sensor, 0)
		if err != nil {
			return fail(err)
		}
		if len(hist) == 0 {
			fmt.Fprintf(io.out, "%s: nenhum certificado registrado\n", *sensor)
		}
		for _, c := range hist {
			fix := ""
			if c.Replaces != 0 {
				fix = fmt.Sprintf(" (corrige a revisão %d)", c.Replaces)
			}
			fmt.Fprintf(io.out, "revisão %d%s: nº %s, %s; medidor %s nº %s; calibrado em %s, válido até %s; incerteza ± %s dB; registrado em %s por %s\n",
				c.ID, fix, c.Number, c.Laboratory, c.MeterModel, c.MeterSerial, brDay(c.CalibratedOn), brDay(c.Expires),
				brDB(c.UncertaintyDB), c.RecordedAt.In(tz.Brasilia()).Format("02/01/2006 15:04"), c.RecordedBy)
			if c.FileSHA256 != "" {
				fmt.Fprintf(io.out, "  arquivo %s (%d bytes), sha256 %s\n", c.FileName, c.FileSize, c.FileSHA256)
			}
		}
		for _, k := range checks {
			fmt.Fprintf(io.out, "verificação de campo %s: %s dB do calibrador %s nº %s, medido %s dB, desvio %s dB (gateway %s, seq %d)\n",
				k.At.In(tz.Brasilia()).Format("02/01/2006 15:04"), brDB(k.ReferenceDB), k.CalibratorModel, k.CalibratorSerial,
				brDB(k.MeasuredDB), brSigned(k.Drift()), k.Gateway, k.Seq)
		}
		return 0
	default: // list
		rows, err := r.Overview(ctx, when)
		if err != nil {
			return fail(err)
		}
		if len(rows) == 0 {
			fmt.Fprintln(io.out, "nenhum certificado registrado")
		}
		for _, row := range rows {
			printVerdict(io, row.Sensor, row.Verdict)
		}
		return 0
	}
}

// printVerdict prints a sensor's verdict: one line, then its warnings.
func printVerdict(io stdio, sensor string, v calibration.Verdict) {
	cert := "sem certificado"
	if c := v.Certificate; c != nil {
		cert = fmt.Sprintf("certificado nº %s (%s), válido até %s", c.Number, c.Laboratory, brDay(c.Expires))
	}
	check := "nenhuma verificação de campo"
	if k := v.LastCheck; k != nil {
		check = fmt.Sprintf("verificação de campo em %s, desvio %s dB", k.At.In(tz.Brasilia()).Format("02/01/2006"), brSigned(k.Drift()))
	}
	state := "leituras válidas para constatação"
	if !v.OK {
		state = v.Why()
	}
	fmt.Fprintf(io.out, "%s: %s; %s; %s\n", sensor, cert, check, state)
	for _, w := range v.Warnings {
		fmt.Fprintf(io.out, "  aviso: %s\n", w)
	}
}

func brDay(d string) string {
	t, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return d
	}
	return t.Format("02/01/2006")
}

func brDB(v float64) string { return strings.Replace(fmt.Sprintf("%.2f", v), ".", ",", 1) }

func brSigned(v float64) string {
	if v > 0 {
		return "+" + brDB(v)
	}
	return brDB(v)
}
