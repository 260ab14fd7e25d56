package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
)

func init() {
	register("loadgen", "simula gateways publicando lotes assinados (testes e benchmarks)", runLoadgen)
}

const loadgenUsage = `uso: sossego loadgen [opções]

Simula gateways publicando lotes assinados num broker MQTT (testes de carga e
benchmarks). As chaves derivam de --seed; com a semente padrão, que é pública,
o serviço central só aceita os lotes em sossego demo: para sossego central, grave
o cadastro com --write-registry e uma --seed sua, e passe-o em --registry.`

// loadgenFlags are the options of "sossego loadgen": which gateways to
// simulate and, in o, how they publish.
type loadgenFlags struct {
	url, regPath, seed, writeReg, municipality string
	gateways, sensorsPer                       int
	asJSON                                     bool
	startSeq                                   uint64
	o                                          loadgen.Options
}

func runLoadgen(ctx context.Context, args []string, io stdio) int {
	f, code, ok := parseLoadgen(args, io)
	if !ok {
		return code
	}
	if f.writeReg != "" {
		return f.writeRegistry(io)
	}
	o := f.o
	var err error
	if o.Gateways, err = f.simulated(); err != nil {
		fmt.Fprintf(io.err, "sossego loadgen: %s\n", describe(err))
		return 1
	}
	if len(o.Gateways) == 0 {
		fmt.Fprintln(io.err, "sossego loadgen: nenhum gateway com sensores para simular")
		return 1
	}
	o.URL, o.StartSeq = f.url, f.startSeq
	st, err := loadgen.Run(ctx, o)
	if err != nil {
		fmt.Fprintf(io.err, "sossego loadgen: %s\n", describe(err))
		return 1
	}
	printLoadgenStats(io, st, f.asJSON)
	if st.Acked < st.Published {
		fmt.Fprintf(io.err, "sossego loadgen: %d lotes sem ack\n", st.Published-st.Acked)
		return 1
	}
	return 0
}

// parseLoadgen reads the options; !ok means exit with code.
func parseLoadgen(args []string, io stdio) (*loadgenFlags, int, bool) {
	fs := newFlags("loadgen", loadgenUsage, io)
	f := &loadgenFlags{}
	fs.StringVar(&f.url, "mqtt-url", "tcp://127.0.0.1:1883", "broker MQTT")
	fs.StringVar(&f.regPath, "registry", "", "cadastro cujos gateways simular (vazio: o de demonstração, ou os sintéticos com --gateways)")
	fs.StringVar(&f.seed, "seed", loadgen.DefaultSeed, "semente das chaves e senhas dos gateways simulados")
	fs.IntVar(&f.gateways, "gateways", 0, "simular N gateways sintéticos lg-0001… (use o cadastro de --write-registry)")
	fs.IntVar(&f.sensorsPer, "sensors", 1, "sensores por gateway sintético")
	fs.StringVar(&f.municipality, "municipality", "lapa", "município dos gateways sintéticos")
	fs.StringVar(&f.writeReg, "write-registry", "", "grava o cadastro dos gateways sintéticos neste arquivo e sai")
	o := &f.o
	fs.Float64Var(&o.Rate, "rate", 1, "lotes por segundo por gateway (0 = o mais rápido possível)")
	fs.BoolVar(&o.Spread, "spread", true, "distribui os gateways ao longo do período, como gateways independentes (false: todos publicam no mesmo instante, o pior caso)")
	fs.IntVar(&o.RecordsPerBatch, "records", 1, "registros de 1 s por lote")
	fs.IntVar(&o.Batches, "batches", 0, "lotes por gateway (0 = até --duration ou Ctrl-C)")
	fs.DurationVar(&o.Duration, "duration", 0, "duração da simulação (0 = até --batches ou Ctrl-C)")
	fs.IntVar(&o.Window, "window", 1000, "máximo de lotes sem ack por gateway")
	fs.Uint64Var(&f.startSeq, "start-seq", 1, "primeiro seq de cada gateway (continue de onde o ack parou)")
	fs.DurationVar(&o.WaitAcks, "wait-acks", 30*time.Second, "quanto esperar pelos acks no fim")
	fs.BoolVar(&f.asJSON, "json", false, "resultado em JSON")
	if code, ok := fs.parse(args); !ok {
		return nil, code, false
	}
	return f, 0, true
}

// writeRegistry writes the register of the synthetic gateways (for
// sossego central's --registry) and exits.
func (f *loadgenFlags) writeRegistry(io stdio) int {
	if f.gateways <= 0 {
		fmt.Fprintln(io.err, "sossego loadgen: --write-registry precisa de --gateways N")
		return 2
	}
	b, err := loadgen.RegistryYAML(f.seed, f.gateways, f.sensorsPer, f.municipality)
	if err == nil {
		err = os.WriteFile(f.writeReg, b, 0o640)
	}
	if err != nil {
		fmt.Fprintf(io.err, "sossego loadgen: %s\n", describe(err))
		return 1
	}
	fmt.Fprintf(io.out, "cadastro com %d gateways gravado em %s\n", f.gateways, f.writeReg)
	return 0
}

// simulated returns the gateways to simulate: the synthetic ones with
// --gateways, else those of --registry or of the demo's register.
func (f *loadgenFlags) simulated() ([]loadgen.Gateway, error) {
	var data []byte
	if f.gateways > 0 {
		b, err := loadgen.RegistryYAML(f.seed, f.gateways, f.sensorsPer, f.municipality)
		if err != nil {
			return nil, err
		}
		data = b
	} else {
		data = registry.DemoYAML()
		if f.regPath != "" {
			var err error
			if data, err = os.ReadFile(f.regPath); err != nil {
				return nil, err
			}
		}
	}
	r, err := registry.Parse(data)
	if err != nil {
		return nil, err
	}
	return loadgen.FromRegistry(r, f.seed), nil
}

// printLoadgenStats prints the run's figures, as one line or as JSON.
func printLoadgenStats(io stdio, st loadgen.Stats, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(io.out)
		_ = enc.Encode(map[string]any{"gateways": st.Gateways, "published": st.Published, "republished": st.Republished,
			"acked": st.Acked, "records": st.Records, "elapsed_s": st.Elapsed.Seconds(), "msg_per_s": st.MsgRate(),
			"published_per_s": st.PublishRate(), "p50_ms": ms(st.Percentile(50)), "p99_ms": ms(st.Percentile(99)), "acked_seq": st.AckedSeq})
		return
	}
	fmt.Fprintf(io.out, "gateways=%d publicados=%d reenviados=%d confirmados=%d registros=%d tempo=%.2fs taxa=%.0f lotes/s publicação=%.0f lotes/s p50=%.1fms p99=%.1fms\n",
		st.Gateways, st.Published, st.Republished, st.Acked, st.Records, st.Elapsed.Seconds(), st.MsgRate(), st.PublishRate(),
		ms(st.Percentile(50)), ms(st.Percentile(99)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
