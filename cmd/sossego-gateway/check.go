package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sossego/sossego/gateway"
)

const checkUsage = `sossego-gateway check — registra uma verificação de campo do medidor com um calibrador acústico
(94 ou 114 dB a 1 kHz). O gateway em execução a envia assinada, na sua sequência, ao serviço central,
que mostra o desvio (medido − referência) no registro de calibração (docs/metrology.md).

Uso:
  sossego-gateway check --config /etc/sossego/gateway.yaml --reference 94 --measured 94.1 \
      --calibrator-model "B&K 4231" --calibrator-serial 2671834 [--note TEXTO] [--at DATA]

Opções:
`

// runCheck records a calibrator check in the state folder.
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sossego-gateway check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var (
		cfgPath   = fs.String("config", "", "`arquivo` YAML de configuração do gateway")
		stateDir  = fs.String("state-dir", "", "`pasta` de estado (padrão: state_dir da configuração)")
		ref       = fs.Float64("reference", 0, "nível do calibrador em `dB`: 94 ou 114")
		measured  = fs.Float64("measured", 0, "nível que o medidor mostrou, em `dB`")
		calModel  = fs.String("calibrator-model", "", "`modelo` do calibrador")
		calSerial = fs.String("calibrator-serial", "", "`número de série` do calibrador")
		note      = fs.String("note", "", "`observação` (opcional)")
		at        = fs.String("at", "", "quando foi feita, RFC 3339 (padrão: agora)")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, checkUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "sossego-gateway check: %s\nUse \"sossego-gateway check -h\" para ver as opções.\n", parseError(err))
		return 2
	}
	dir := *stateDir
	if dir == "" && *cfgPath != "" {
		f, err := os.Open(*cfgPath)
		if err != nil {
			fmt.Fprintf(stderr, "sossego-gateway check: --config: %v\n", err)
			return 1
		}
		cfg, err := parseConfig(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "sossego-gateway check: %s: %v\n", *cfgPath, err)
			return 2
		}
		dir = cfg.StateDir
	}
	if dir == "" {
		fmt.Fprintln(stderr, "sossego-gateway check: informe --config (ou --state-dir)")
		return 2
	}
	when := time.Now()
	if *at != "" {
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			fmt.Fprintf(stderr, "sossego-gateway check: --at %q inválido: use RFC 3339, como 2026-12-01T09:30:00-03:00\n", *at)
			return 2
		}
		when = t
	}
	c, err := gateway.NewCheck(when, *ref, *measured, *calModel, *calSerial, *note)
	if err != nil {
		fmt.Fprintf(stderr, "sossego-gateway check: verificação não registrada: %v\n", err)
		return 2
	}
	path, err := gateway.RecordCheck(dir, c)
	if err != nil {
		fmt.Fprintf(stderr, "sossego-gateway check: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "verificação registrada (%s): calibrador %s dB, medido %s dB, desvio %s dB; "+
		"o gateway em execução a envia assinada ao serviço central\n", path, ptNum("%.1f", c.ReferenceDB), ptNum("%.2f", c.MeasuredDB), ptNum("%+.2f", c.MeasuredDB-c.ReferenceDB))
	return 0
}

// ptNum formats v with a decimal comma.
func ptNum(format string, v float64) string {
	return strings.Replace(fmt.Sprintf(format, v), ".", ",", 1)
}
