package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/central"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/tz"
)

func init() {
	register("calibration", "registro de calibração dos medidores: certificados, verificações de campo, situação das leituras", runCalibration)
}

const calibrationUsage = `uso: sossego calibration <list|add|history|check|policy> --data-dir DIR [opções]
  list                               cada sensor: certificado em vigor, validade, última verificação de campo,
                                     se as leituras valem para constatação ou são indicativas (e por quê)
                                     segundo o registro e a decisão da regra do fluxo (classe do medidor no cadastro)
  add --sensor S --number N --laboratory L --meter-model M --meter-serial X
      --calibrated-on AAAA-MM-DD --expires AAAA-MM-DD --uncertainty DB [--file CERT.pdf] [--note T]
      [--replaces REVISÃO]           registra uma revisão do certificado (nada é sobrescrito; --replaces
                                     corrige uma revisão anterior, que continua no histórico)
  history --sensor S                 todas as revisões do certificado e as verificações de campo
  check --sensor S [--at DATA]       as leituras do sensor em DATA (RFC 3339; padrão: agora) valem para
                                     constatação? sai com 0 se sim, 3 se são indicativas (pela decisão da regra
                                     do fluxo quando há cadastro de sensores; sem ele, pelo registro só)
  policy --municipality M --days N   prazo da verificação de campo do município (padrão 30 dias; 0 volta ao padrão)
opções:
  --data-dir DIR   diretório de dados do serviço central (arquivo ` + calibration.FileName + `)
  --registry ARQ   cadastro de sensores (padrão: DIR/registry.yaml, se existir): a classe e a calibração de
                   cada medidor, que a decisão da regra do fluxo usa
  --by NOME        quem registra (padrão: o usuário do sistema)`

// calibrationCmd is one run of "sossego calibration <sub>": its options,
// the register once open, and where it writes.
type calibrationCmd struct {
	sub, dir, by, sensor, file, muni, at string
	regPath                              string // --registry
	days                                 int
	when                                 time.Time // --at, or now
	cert                                 calibration.Certificate
	r                                    *calibrationdb.Register
	reg                                  *registry.Registry // the register of sensors; nil: none
	io                                   stdio
}

func runCalibration(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(io.err, calibrationUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, code, ok := parseCalibration(args[0], args[1:], io)
	if !ok {
		return code
	}
	if code, ok := c.checkArgs(); !ok {
		return code
	}
	if code, ok := c.dataDir(); !ok {
		return code
	}
	var err error
	var o calibrationdb.Options
	if c.sub == "list" || c.sub == "check" {
		if c.reg, err = c.sensors(); err != nil {
			fmt.Fprintf(io.err, "sossego calibration %s: %s\n", c.sub, describe(err))
			return 1
		}
		if reg := c.reg; reg != nil {
			o.Sensors = func() []calibration.Sensor { return central.CalibrationSensors(reg) }
		}
	}
	r, err := calibrationdb.Open(ctx, filepath.Join(c.dir, calibration.FileName), o)
	if err != nil {
		fmt.Fprintf(io.err, "sossego calibration: não foi possível abrir o registro de calibração: %s\n", describe(err))
		return 1
	}
	defer r.Close()
	c.r = r
	switch c.sub {
	case "add":
		return c.add(ctx)
	case "policy":
		return c.policy(ctx)
	case "check":
		return c.check(ctx)
	case "history":
		return c.history(ctx)
	default: // list
		return c.list(ctx)
	}
}

// dataDir makes the data folder for the commands that write (add,
// policy); the others read the service's folder, which must exist.
func (c *calibrationCmd) dataDir() (int, bool) {
	return dataFolder("sossego calibration "+c.sub, c.dir, c.sub == "add" || c.sub == "policy", c.io)
}

// parseCalibration reads the options of sub (every sub-command takes the
// same set; each uses its own).
func parseCalibration(sub string, args []string, io stdio) (*calibrationCmd, int, bool) {
	c := &calibrationCmd{sub: sub, io: io}
	fs := newFlagsUsage("calibration "+sub, calibrationUsage, io)
	fs.StringVar(&c.dir, "data-dir", "", "diretório de dados do serviço central")
	fs.StringVar(&c.regPath, "registry", "", "cadastro de sensores")
	fs.StringVar(&c.by, "by", "", "quem registra")
	fs.StringVar(&c.sensor, "sensor", "", "sensor")
	fs.StringVar(&c.cert.Number, "number", "", "número do certificado")
	fs.StringVar(&c.cert.Laboratory, "laboratory", "", "laboratório")
	fs.StringVar(&c.cert.MeterModel, "meter-model", "", "modelo do medidor")
	fs.StringVar(&c.cert.MeterSerial, "meter-serial", "", "número de série do medidor")
	fs.StringVar(&c.cert.CalibratedOn, "calibrated-on", "", "data de calibração")
	fs.StringVar(&c.cert.Expires, "expires", "", "validade")
	fs.Float64Var(&c.cert.UncertaintyDB, "uncertainty", 0, "incerteza expandida (dB)")
	fs.StringVar(&c.cert.Note, "note", "", "observação")
	fs.Int64Var(&c.cert.Replaces, "replaces", 0, "revisão corrigida")
	fs.StringVar(&c.file, "file", "", "arquivo do certificado (PDF)")
	fs.StringVar(&c.at, "at", "", "data e hora (RFC 3339)")
	fs.StringVar(&c.muni, "municipality", "", "município")
	fs.IntVar(&c.days, "days", -1, "prazo em dias")
	if code, ok := fs.parse(args); !ok {
		return nil, code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "sossego calibration %s: argumento inesperado %q (as opções começam com --)\n", sub, fs.Arg(0))
		return nil, 2, false
	}
	return c, 0, true
}

// checkArgs checks the sub-command and the options it needs, and fills in
// the time (--at, or now) and who records (--by, or the system user).
func (c *calibrationCmd) checkArgs() (int, bool) {
	if c.dir == "" {
		fmt.Fprintln(c.io.err, "sossego calibration: informe --data-dir (o diretório de dados do serviço central)")
		return 2, false
	}
	switch c.sub {
	case "list", "add", "history", "check", "policy":
	default:
		fmt.Fprintf(c.io.err, "sossego calibration: subcomando desconhecido %q\n", c.sub)
		fmt.Fprintln(c.io.err, calibrationUsage)
		return 2, false
	}
	if (c.sub == "add" || c.sub == "history" || c.sub == "check") && c.sensor == "" {
		fmt.Fprintf(c.io.err, "sossego calibration %s: informe --sensor\n", c.sub)
		return 2, false
	}
	if c.sub == "policy" && (c.muni == "" || c.days < 0) {
		fmt.Fprintln(c.io.err, "sossego calibration policy: informe --municipality e --days (1 a 366; 0 volta ao padrão de 30)")
		return 2, false
	}
	c.when = time.Now()
	if c.at != "" {
		t, err := time.Parse(time.RFC3339, c.at)
		if err != nil {
			fmt.Fprintf(c.io.err, "sossego calibration check: --at %q inválido: use RFC 3339, como 2026-12-01T22:00:00-03:00\n", c.at)
			return 2, false
		}
		c.when = t
	}
	if c.by == "" {
		c.by = "cli"
		if u, err := user.Current(); err == nil && u.Username != "" {
			c.by = "cli:" + u.Username
		}
	}
	return 0, true
}

// fail prints err: a validation error's problems one per line, anything
// else on one line. It returns the exit status 1.
func (c *calibrationCmd) fail(err error) int {
	var ve *calibration.ValidationError
	if errors.As(err, &ve) {
		fmt.Fprintf(c.io.err, "sossego calibration %s: nada foi registrado; corrija:\n", c.sub)
		for _, p := range ve.Problems {
			fmt.Fprintf(c.io.err, "  - %s\n", p)
		}
		return 1
	}
	fmt.Fprintf(c.io.err, "sossego calibration %s: %s\n", c.sub, describe(err))
	return 1
}

// add registers a certificate revision, with its file if --file names one.
func (c *calibrationCmd) add(ctx context.Context) int {
	cert := c.cert
	cert.Sensor = c.sensor
	var data []byte
	if c.file != "" {
		var err error
		if data, err = os.ReadFile(c.file); err != nil {
			fmt.Fprintf(c.io.err, "sossego calibration add: --file: %s\n", describe(err))
			return 1
		}
		cert.FileName = filepath.Base(c.file)
	}
	got, err := c.r.Add(ctx, cert, data, c.by)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.io.out, "certificado nº %s registrado para o sensor %s (revisão %d, válido até %s)\n", got.Number, got.Sensor, got.ID, brDay(got.Expires))
	if got.FileSHA256 != "" {
		fmt.Fprintf(c.io.out, "arquivo %s guardado, sha256 %s\n", got.FileName, got.FileSHA256)
	}
	return 0
}

// policy sets a municipality's field-check interval.
func (c *calibrationCmd) policy(ctx context.Context) int {
	if err := c.r.SetPolicy(ctx, c.muni, c.days, c.by); err != nil {
		return c.fail(err)
	}
	if c.days == 0 {
		fmt.Fprintf(c.io.out, "%s: verificação de campo a cada %d dias (padrão)\n", c.muni, int(calibration.DefaultCheckMaxAge/(24*time.Hour)))
	} else {
		fmt.Fprintf(c.io.out, "%s: verificação de campo a cada %d dias\n", c.muni, c.days)
	}
	return 0
}

// sensors reads the register of sensors: --registry, else
// DIR/registry.yaml when it exists (nil, and a note, when it does not).
func (c *calibrationCmd) sensors() (*registry.Registry, error) {
	path := c.regPath
	if path == "" {
		path = filepath.Join(c.dir, "registry.yaml")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(c.io.err, "aviso: cadastro de sensores não encontrado (%s; informe --registry): "+
				"a situação das leituras é só a do registro de calibrações, sem a classe de cada medidor\n", path)
			return nil, nil
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cadastro de sensores: %w", err)
	}
	reg, err := registry.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("cadastro de sensores %s: %w", path, err)
	}
	return reg, nil
}

// check prints the sensor's verdict at the time asked and, with the
// register of sensors, the decision the workflow applies
// (calibration.Decide); exit status 3 when its readings are indicativas
// (by the decision, or by the verdict without a register of sensors).
func (c *calibrationCmd) check(ctx context.Context) int {
	v, err := c.r.Verdict(ctx, c.sensor, c.when)
	if err != nil {
		return c.fail(err)
	}
	ok := v.OK
	var d *calibration.Decision
	if c.reg != nil {
		sn, _ := c.reg.Sensor(c.sensor)
		dec := c.r.Decide(ctx, c.sensor, sn.Meter.Calibration(), c.when)
		d, ok = &dec, dec.OK
	}
	printSensor(c.io, c.sensor, v, d)
	if !ok {
		return 3
	}
	return 0
}

// history prints every certificate revision of the sensor, then its field
// checks.
func (c *calibrationCmd) history(ctx context.Context) int {
	hist, err := c.r.History(ctx, c.sensor)
	if err != nil {
		return c.fail(err)
	}
	checks, err := c.r.Checks(ctx, c.sensor, 0)
	if err != nil {
		return c.fail(err)
	}
	out := c.io.out
	if len(hist) == 0 {
		fmt.Fprintf(out, "%s: nenhum certificado registrado\n", c.sensor)
	}
	for _, h := range hist {
		fix := ""
		if h.Replaces != 0 {
			fix = fmt.Sprintf(" (corrige a revisão %d)", h.Replaces)
		}
		fmt.Fprintf(out, "revisão %d%s: nº %s, %s; medidor %s nº %s; calibrado em %s, válido até %s; incerteza ± %s dB; registrado em %s por %s\n",
			h.ID, fix, h.Number, h.Laboratory, h.MeterModel, h.MeterSerial, brDay(h.CalibratedOn), brDay(h.Expires),
			brDB(h.UncertaintyDB), h.RecordedAt.In(tz.Brasilia()).Format("02/01/2006 15:04"), h.RecordedBy)
		if h.FileSHA256 != "" {
			fmt.Fprintf(out, "  arquivo %s (%d bytes), sha256 %s\n", h.FileName, h.FileSize, h.FileSHA256)
		}
	}
	for _, k := range checks {
		fmt.Fprintf(out, "verificação de campo %s: %s dB do calibrador %s nº %s, medido %s dB, desvio %s dB (gateway %s, seq %d)\n",
			k.At.In(tz.Brasilia()).Format("02/01/2006 15:04"), brDB(k.ReferenceDB), k.CalibratorModel, k.CalibratorSerial,
			brDB(k.MeasuredDB), brSigned(k.Drift()), k.Gateway, k.Seq)
	}
	return 0
}

// list prints every sensor's verdict now (or at --at) and, with the
// register of sensors, the decision the workflow applies.
func (c *calibrationCmd) list(ctx context.Context) int {
	rows, err := c.r.Overview(ctx, c.when)
	if err != nil {
		return c.fail(err)
	}
	if len(rows) == 0 {
		fmt.Fprintln(c.io.out, "nenhum certificado registrado")
	}
	for _, row := range rows {
		var d *calibration.Decision
		if c.reg != nil {
			d = &row.Decision
		}
		printSensor(c.io, row.Sensor, row.Verdict, d)
	}
	return 0
}

// printSensor prints a sensor's standing: with the register of sensors,
// the decision the workflow applies first (d), then the calibration
// register's own verdict, labelled; without it, the register's verdict
// alone. Then the register's warnings.
func printSensor(io stdio, sensor string, v calibration.Verdict, d *calibration.Decision) {
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
	if d == nil {
		fmt.Fprintf(io.out, "%s: %s; %s; %s\n", sensor, cert, check, state)
	} else {
		decided := "leituras válidas para constatação: " + d.Why
		if !d.OK {
			decided = d.Why
		}
		fmt.Fprintf(io.out, "%s: %s (decidido pelo %s)\n", sensor, decided, d.Source)
		fmt.Fprintf(io.out, "  registro de calibrações: %s; %s; %s\n", cert, check, state)
	}
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
