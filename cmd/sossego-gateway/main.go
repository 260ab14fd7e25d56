// Command sossego-gateway is the Sossego edge daemon for a Raspberry Pi: it
// reads a sound-level meter, keeps 1-s records in a durable outbox and
// delivers signed batches over MQTT until the central service acknowledges
// them. See docs/gateway.md.
//
//	sossego-gateway [run] --config /etc/sossego/gateway.yaml [flags]
//	sossego-gateway key   --config /etc/sossego/gateway.yaml
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/gateway/mqttconn"
)

var version = "dev"

func main() {
	// The daemon's heap is small and its allocation rate low (one batch per
	// 10 s, 50 a second while replaying): collecting at 50 % growth instead
	// of Go's default 100 % keeps the peak resident memory about 2 MB lower
	// for no measurable throughput (BENCHMARKS.md, gateway memory). GOGC in
	// the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run", "key":
	case "check":
		return runCheck(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, version)
		return 0
	case "help":
		_, code := loadConfig("run", []string{"-h"}, stdout, stderr)
		return code
	default:
		fmt.Fprintf(stderr, "sossego-gateway: subcomando %q desconhecido; use run, key, check, version ou help\n", cmd)
		return 2
	}
	cfg, code := loadConfig(cmd, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if cmd == "key" {
		key, created, err := gateway.LoadOrCreateKey(cfg.StateDir)
		if err != nil {
			fmt.Fprintf(stderr, "sossego-gateway: chave: %v\n", err)
			return 1
		}
		if created {
			fmt.Fprintf(stderr, "nova chave criada em %s\n", filepath.Join(cfg.StateDir, gateway.KeyFile))
		}
		fmt.Fprintln(stdout, gateway.PublicKeyString(key))
		return 0
	}
	if err := runGateway(ctx, cfg, stdin, stderr); err != nil {
		fmt.Fprintf(stderr, "sossego-gateway: %v\n", err)
		return 1
	}
	return 0
}

// usageHeader is the help text above the flag list (pt-BR).
const usageHeader = `sossego-gateway — gateway de medição do Sossego (Raspberry Pi): lê o medidor, guarda registros de 1 s
numa fila durável e os entrega assinados por MQTT até o serviço central confirmar (docs/gateway.md).

Uso:
  sossego-gateway [run] --config /etc/sossego/gateway.yaml [opções]   executa o gateway (padrão)
  sossego-gateway key   --config /etc/sossego/gateway.yaml            mostra a chave pública (cria na 1ª vez)
  sossego-gateway check --config … --reference 94 --measured 94.1 --calibrator-model M --calibrator-serial S
                                                                      registra uma verificação de campo com calibrador
  sossego-gateway version                                             mostra a versão
  sossego-gateway help                                                mostra esta ajuda

As opções valem sobre o arquivo de configuração.
`

// loadConfig reads --config and applies flags over it; code is -1 to go on.
// -h prints the help on stdout and exits 0; a usage error goes to stderr
// with exit 2.
func loadConfig(cmd string, args []string, stdout, stderr io.Writer) (Config, int) {
	fl := newConfigFlags(cmd)
	fs := fl.fs
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			// Asked for: the help goes to stdout and is not an error.
			fmt.Fprint(stdout, usageHeader+"\nOpções:\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return Config{}, 0
		}
		fmt.Fprintf(stderr, "sossego-gateway: %s; use -h para ver as opções\n", parseError(err))
		return Config{}, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sossego-gateway: argumentos inesperados: %v\n", fs.Args())
		return Config{}, 2
	}
	cfg := defaultConfig()
	if *fl.cfgPath != "" {
		var err error
		if cfg, err = readConfigFile(*fl.cfgPath); err != nil {
			fmt.Fprintf(stderr, "sossego-gateway: %v\n", err)
			return Config{}, 1
		}
	}
	fl.applyTo(&cfg)
	if cmd == "key" {
		if cfg.StateDir == "" {
			fmt.Fprintln(stderr, "sossego-gateway: state_dir vazio")
			return Config{}, 2
		}
		return cfg, -1
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(stderr, "sossego-gateway: configuração inválida:\n%v\n", err)
		return Config{}, 2
	}
	return cfg, -1
}

// configFlags are the daemon's command-line options, each of which
// overrides its field of the configuration file when given.
type configFlags struct {
	fs                                                   *flag.FlagSet
	cfgPath, meter, broker, username, password, ca, cert *string
	tlsKey, stateDir, muni, gw, sensor, serial, pcmInput *string
	logLevel, simScene                                   *string
	rate, simSpeed                                       *float64
}

// newConfigFlags defines the options of subcommand cmd, with their help in
// pt-BR.
func newConfigFlags(cmd string) *configFlags {
	fs := flag.NewFlagSet("sossego-gateway "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the flag package's own messages are English: parseError says it in pt-BR
	fs.Usage = func() {}
	return &configFlags{
		fs:       fs,
		cfgPath:  fs.String("config", "", "`arquivo` YAML de configuração (docs/sossego-gateway.example.yaml)"),
		meter:    fs.String("meter", "", "`medidor`: sim|pcbartists|sen0232|nsrt|xl2|pcm"),
		broker:   fs.String("broker", "", "`URL` do broker MQTT (tcp://, mqtts://, ws://)"),
		username: fs.String("username", "", "`usuário` MQTT"),
		password: fs.String("password-file", "", "`arquivo` com a senha MQTT"),
		ca:       fs.String("tls-ca", "", "`arquivo` PEM com a CA do broker"),
		cert:     fs.String("tls-cert", "", "`arquivo` PEM com o certificado do gateway"),
		tlsKey:   fs.String("tls-key", "", "`arquivo` PEM com a chave do certificado do gateway"),
		stateDir: fs.String("state-dir", "", "`pasta` de estado: chave ed25519 e fila (outbox)"),
		muni:     fs.String("municipality", "", "`id` do município"),
		gw:       fs.String("gateway", "", "`id` do gateway (também o client id MQTT)"),
		sensor:   fs.String("sensor", "", "`id` do sensor"),
		rate:     fs.Float64("sample-rate", 0, "leituras do medidor por segundo (`Hz`)"),
		serial:   fs.String("serial-port", "", "`porta` serial do medidor (nsrt, xl2)"),
		pcmInput: fs.String("pcm-input", "", "áudio PCM: `arquivo` ou - (stdin)"),
		logLevel: fs.String("log-level", "", "`nível` do log: debug|info|warn|error"),
		simSpeed: fs.Float64("sim-speed", 0, "`velocidade` do medidor simulado (1 = tempo real)"),
		simScene: fs.String("sim-scenario", "", "`cenário` do medidor simulado"),
	}
}

// readConfigFile parses the configuration file at path; the error names
// the file.
func readConfigFile(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("configuração: %w", err)
	}
	cfg, err := parseConfig(f)
	f.Close()
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// applyTo overrides cfg's fields with the options given on the command
// line (after Parse).
func (fl *configFlags) applyTo(cfg *Config) {
	set := map[string]bool{}
	fl.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	str := func(name string, dst *string, v string) {
		if set[name] {
			*dst = v
		}
	}
	str("meter", &cfg.Meter.Type, *fl.meter)
	str("broker", &cfg.MQTT.Broker, *fl.broker)
	str("username", &cfg.MQTT.Username, *fl.username)
	str("password-file", &cfg.MQTT.PasswordFile, *fl.password)
	str("tls-ca", &cfg.MQTT.CAFile, *fl.ca)
	str("tls-cert", &cfg.MQTT.CertFile, *fl.cert)
	str("tls-key", &cfg.MQTT.KeyFile, *fl.tlsKey)
	str("state-dir", &cfg.StateDir, *fl.stateDir)
	str("municipality", &cfg.Municipality, *fl.muni)
	str("gateway", &cfg.Gateway, *fl.gw)
	str("sensor", &cfg.Sensor, *fl.sensor)
	str("serial-port", &cfg.Meter.SerialPort, *fl.serial)
	str("pcm-input", &cfg.Meter.PCMInput, *fl.pcmInput)
	str("log-level", &cfg.LogLevel, *fl.logLevel)
	str("sim-scenario", &cfg.Meter.SimScenario, *fl.simScene)
	if set["sample-rate"] {
		cfg.Meter.SampleRateHz = *fl.rate
	}
	if set["sim-speed"] {
		cfg.Meter.SimSpeed = *fl.simSpeed
	}
}

// parseError says a flag package error in pt-BR.
func parseError(err error) string {
	msg := err.Error()
	for _, t := range []struct{ en, pt string }{
		{"flag provided but not defined: ", "opção desconhecida: "},
		{"flag needs an argument: ", "falta o valor da opção "},
		{"bad flag syntax: ", "opção mal escrita: "},
	} {
		if rest, ok := strings.CutPrefix(msg, t.en); ok {
			return t.pt + rest
		}
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		// invalid value "x" for flag -f: parse error
		v, f, _ := strings.Cut(rest, " for flag ")
		f, _, _ = strings.Cut(f, ":")
		return fmt.Sprintf("valor inválido %s para a opção %s", v, f)
	}
	return msg
}

func runGateway(ctx context.Context, cfg Config, stdin io.Reader, stderr io.Writer) error {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.LogLevel))
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))

	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return fmt.Errorf("pasta de estado: %w", err)
	}
	key, created, err := gateway.LoadOrCreateKey(cfg.StateDir)
	if err != nil {
		return err
	}
	if created {
		log.Info("nova chave do gateway; cadastre a chave pública no serviço central",
			"public_key", gateway.PublicKeyString(key))
	}
	box, err := gateway.OpenOutboxOptions(filepath.Join(cfg.StateDir, "outbox.db"), cfg.Outbox.outboxOptions())
	if err != nil {
		return err
	}
	defer box.Close()

	meter, closeMeter, err := openMeter(cfg.Meter, stdin)
	if err != nil {
		return fmt.Errorf("medidor %s: %w", cfg.Meter.Type, err)
	}
	defer closeMeter()
	defer meter.Halt() //nolint:errcheck // best effort on the way out

	// A missing environmental sensor must not stop the noise monitoring:
	// the gateway logs the error and runs with the meter alone.
	var env gateway.EnvSensor
	if cfg.Env.Type != "" {
		s, closeEnv, err := openEnv(cfg.Env)
		if err != nil {
			log.Error("sensor ambiental indisponível; seguindo só com o medidor",
				"type", cfg.Env.Type, "i2c_bus", cfg.Env.I2CBus, "address", fmt.Sprintf("%#x", cfg.Env.Address), "erro", err)
		} else {
			defer closeEnv()
			defer s.Halt() //nolint:errcheck // best effort on the way out
			env = s
			log.Info("sensor ambiental", "sensor", s.String(), "interval", cfg.Env.Interval)
		}
	}

	mo := mqttconn.Options{Broker: cfg.MQTT.Broker, ClientID: cfg.Gateway, Username: cfg.MQTT.Username,
		Password: cfg.MQTT.Password, KeepAlive: cfg.MQTT.KeepAlive, MaxReconnectInterval: cfg.MQTT.MaxReconnectInterval}
	if cfg.MQTT.PasswordFile != "" {
		b, err := os.ReadFile(cfg.MQTT.PasswordFile)
		if err != nil {
			return fmt.Errorf("senha MQTT: %w", err)
		}
		mo.Password = strings.TrimRight(string(b), "\r\n")
	}
	if cfg.MQTT.CAFile != "" || cfg.MQTT.CertFile != "" {
		mo.TLS, err = mqttconn.LoadTLS(mqttconn.TLSFiles{CA: cfg.MQTT.CAFile, Cert: cfg.MQTT.CertFile,
			Key: cfg.MQTT.KeyFile, ServerName: cfg.MQTT.ServerName})
		if err != nil {
			return err
		}
	}
	log.Info("gateway iniciando", "gateway", cfg.Gateway, "meter", meter.String(), "broker", cfg.MQTT.Broker,
		"outbox_pending", box.Stats().Pending, "version", version)
	return mqttconn.RunNode(ctx, mqttconn.NodeOptions{Gateway: cfg.gatewayOptions(version), MQTT: mo, Meter: meter,
		Env: env, Sync: gateway.KernelSync{Source: cfg.ClockSource}, Outbox: box, Key: key, Log: log})
}
