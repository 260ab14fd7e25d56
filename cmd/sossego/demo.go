package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/errgroup"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/sim"
	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/gateway/mqttconn"
	"github.com/sossego/sossego/internal/central"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/tz"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
	"github.com/sossego/sossego/internal/wire"
)

func init() {
	register("demo", "demonstração: serviço central + 4 gateways simulados (o que `make run` inicia)", runDemo)
}

// demoGateway is one simulated gateway of the demonstration.
type demoGateway struct {
	ID, Municipality, Name      string
	Sensor, Zone, Address       string
	Lat, Lon                    float64
	Grade, Model, Serial        string
	EstName, EstDoc, EstAddress string
	EstType, Mechanism          string
	Scenario                    sim.Scenario
	// SimStart is how far before the scenario's key moment the simulation
	// starts (the bar's music starts at 22:00 simulated time).
	SimStart                string // HH:MM:SS local, "" = follow the wall clock
	PublicKey, PasswordHash string
}

var demoGateways = []demoGateway{
	{ID: "lapa-centro-01", Municipality: "lapa", Name: "Gateway Centro Histórico da Lapa",
		Sensor: "lapa-bar-01", Zone: "other", Address: "Rua XV de Novembro, 100, Centro, Lapa - PR", Lat: -25.7697, Lon: -49.7158,
		Grade: "class1", Model: "NTi XL2 (simulado)", Serial: "SIM-LAPA-BAR",
		EstName: "Bar do Tropeiro Ltda (fictício)", EstDoc: "12.345.678/0001-95", EstAddress: "Rua XV de Novembro, 98, Centro, Lapa - PR",
		EstType: "bar", Mechanism: "sound_system", Scenario: sim.BarMusic, SimStart: "21:59:50"},
	{ID: "lapa-saude-01", Municipality: "lapa", Name: "Gateway Hospital Regional da Lapa",
		Sensor: "lapa-hospital-01", Zone: "hospital_surroundings", Address: "Rua Barão do Rio Branco, 300, Lapa - PR", Lat: -25.7712, Lon: -49.7189,
		Grade: "screening", Model: "PCBA-DBM-r3 (simulado)", Serial: "SIM-LAPA-HOSP",
		EstName: "Igreja Exemplo (fictícia)", EstDoc: "11.222.333/0001-81", EstAddress: "Rua Barão do Rio Branco, 310, Lapa - PR",
		EstType: "church_or_temple", Mechanism: "sound_system", Scenario: sim.QuietNight},
	{ID: "macabu-praca-01", Municipality: "conceicao-de-macabu", Name: "Gateway Praça de Conceição de Macabu",
		Sensor: "macabu-praca-01", Zone: "other", Address: "Praça José Bonifácio, Centro, Conceição de Macabu - RJ", Lat: -22.0850, Lon: -41.8680,
		Grade: "class1", Model: "NTi XL2 (simulado)", Serial: "SIM-MACABU-PRACA",
		EstName: "Restaurante Exemplo (fictício)", EstDoc: "98.765.432/0001-98", EstAddress: "Praça José Bonifácio, 12, Centro, Conceição de Macabu - RJ",
		EstType: "restaurant", Mechanism: "live_music", Scenario: sim.BarMusic, SimStart: "22:00:30"},
	{ID: "macabu-obra-01", Municipality: "conceicao-de-macabu", Name: "Gateway Rua da Obra",
		Sensor: "macabu-obra-01", Zone: "residential", Address: "Rua Teixeira Brandão, 50, Conceição de Macabu - RJ", Lat: -22.0871, Lon: -41.8702,
		Grade: "class2", Model: "NSRT_mk4 (simulado)", Serial: "SIM-MACABU-OBRA",
		EstName: "Construtora Exemplo (fictícia)", EstDoc: "45.723.174/0001-10", EstAddress: "Rua Teixeira Brandão, 52, Conceição de Macabu - RJ",
		EstType: "construction_site", Mechanism: "machinery", Scenario: sim.Construction},
}

var demoRegistry = template.Must(template.New("r").Parse(`# Cadastro da demonstração (gerado por sossego demo; chaves derivadas da semente pública "sossego-demo").
version: 1
gateways:
{{- range .}}
  - id: {{.ID}}
    municipality: {{.Municipality}}
    name: {{.Name}}
    public_key: {{.PublicKey}}
    mqtt_password_hash: {{.PasswordHash}}
{{- end}}
sensors:
{{- range .}}
  - id: {{.Sensor}}
    gateway: {{.ID}}
    zone: {{.Zone}}
    location: {lat: {{.Lat}}, lon: {{.Lon}}}
    address: {{.Address}}
    meter:
      grade: {{.Grade}}
      model: {{.Model}}
      serial: {{.Serial}}
      calibrated_at: 2026-05-02
    establishments:
      - name: {{.EstName}}
        document: {{.EstDoc}}
        address: {{.EstAddress}}
        type: {{.EstType}}
        mechanism: {{.Mechanism}}
{{- end}}
`))

// Demo accounts: printed at start; the demo's data is reset every time.
var demoUsers = []struct {
	name, password string
	role           users.Role
}{
	{"fiscal", "fiscal-demo-2026", users.Fiscal},
	{"operador", "operador-demo-2026", users.Operador},
	{"admin", "admin-demo-2026", users.Admin},
}

const demoUsage = `uso: sossego demo [opções]

Demonstração (o que make run inicia): o serviço central com o cadastro de
demonstração, três usuários de exemplo e 4 gateways simulados. As chaves e senhas
da demonstração derivam de uma semente pública: nunca use este cadastro de verdade.`

// demoFlags are the options of sossego demo, checked.
type demoFlags struct {
	dataDir, httpAddr, mqttAddr string
	keep                        bool
	log                         *slog.Logger
}

func runDemo(ctx context.Context, args []string, io stdio) int {
	f, code, ok := parseDemo(args, io)
	if !ok {
		return code
	}
	if err := prepareDemo(ctx, f.dataDir, f.keep); err != nil {
		fmt.Fprintf(io.err, "sossego demo: %s\n", describe(err))
		return 1
	}
	fmt.Fprintf(io.err, "sossego demo: gravando %d dias de histórico simulado para os relatórios…\n", demoHistoryDays)
	if err := backfillDemo(ctx, f.dataDir, time.Now()); err != nil {
		fmt.Fprintf(io.err, "sossego demo: %v\n", err)
		return 1
	}
	if err := runDemoServices(ctx, f, io); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(io.err, "sossego demo: %s\n", describe(err))
		return 1
	}
	fmt.Fprintln(io.out, "demonstração encerrada.")
	return 0
}

// parseDemo reads and checks the options; a busy default port is replaced
// by a free one. !ok means exit with code.
func parseDemo(args []string, io stdio) (demoFlags, int, bool) {
	fs := newFlags("demo", demoUsage, io)
	var f demoFlags
	fs.StringVar(&f.dataDir, "data-dir", "./var/demo", "pasta dos dados da demonstração (apagada e recriada a cada início, salvo --keep)")
	fs.BoolVar(&f.keep, "keep", false, "mantém os dados de uma demonstração anterior")
	fs.StringVar(&f.httpAddr, "http", central.DefaultHTTP, "endereço do painel e da API")
	fs.StringVar(&f.mqttAddr, "mqtt-listen", central.DefaultMQTTListen, "endereço do broker MQTT embutido")
	logLevel := fs.String("log", "warn", "nível de log: debug, info, warn, error")
	if code, ok := fs.parse(args); !ok {
		return f, code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "sossego demo: argumento inesperado %q\n", fs.Arg(0))
		return f, 2, false
	}
	// A busy default port (a system Mosquitto on 1883, another service on
	// 8080) must not stop the demo: take a free one; the banner prints it.
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for name, addr := range map[string]*string{"http": &f.httpAddr, "mqtt-listen": &f.mqttAddr} {
		if !set[name] && !portFree(*addr) {
			fmt.Fprintf(io.err, "sossego demo: %s ocupado; usando uma porta livre (veja o endereço abaixo)\n", *addr)
			*addr = "127.0.0.1:0"
		}
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(io.err, "sossego demo: --log %q inválido; use debug, info, warn ou error\n", *logLevel)
		return f, 2, false
	}
	f.log = slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{Level: lvl}))
	return f, 0, true
}

// runDemoServices runs the central service and, once it listens, the
// simulated gateways, until ctx ends or the service stops. Shutdown order:
// on Ctrl-C the simulated gateways stop first (each flushes its open batch
// and says "offline"), then the central service, so that neither side logs
// lost connections.
func runDemoServices(ctx context.Context, f demoFlags, io stdio) error {
	cfg := alerts.DefaultConfig()
	// The demo shortens the lifecycle so that the bar's alert fires within
	// two minutes of start; production keeps the documented defaults.
	cfg.Window, cfg.MinDuration, cfg.ResolveTime = 20*time.Second, 20*time.Second, 60*time.Second
	ready := make(chan central.Addrs, 1)
	o := central.Options{DataDir: f.dataDir, HTTP: f.httpAddr, MQTTListen: f.mqttAddr, AlertConfig: &cfg, Log: f.log,
		Registry: filepath.Join(f.dataDir, "registry.yaml"), Demo: true, Ready: func(a central.Addrs) { ready <- a },
		NotifyDefaults: demoNotify(f.dataDir, f.httpAddr)}
	cctx, stopCentral := context.WithCancel(context.WithoutCancel(ctx))
	defer stopCentral()
	centralDone := make(chan error, 1)
	go func() { centralDone <- central.Run(cctx, o) }()
	gctx, stopGateways := context.WithCancel(ctx)
	defer stopGateways()
	var gws errgroup.Group
	var err error
	centralEnded := false
	select {
	case a := <-ready:
		printDemoBanner(io, a, f.dataDir)
		for _, d := range demoGateways {
			gws.Go(func() error { return runDemoGateway(gctx, d, a.MQTT, f.dataDir, f.log) })
		}
		select {
		case <-ctx.Done():
		case err = <-centralDone:
			centralEnded = true
		}
	case <-ctx.Done():
	case err = <-centralDone:
		centralEnded = true
	}
	stopGateways()
	if gerr := gws.Wait(); err == nil && gerr != nil && !errors.Is(gerr, context.Canceled) {
		err = gerr
	}
	if !centralEnded {
		// Let the service store the gateways' last batches and "offline"
		// statuses before it stops.
		select {
		case <-time.After(time.Second):
		case err = <-centralDone:
			centralEnded = true
		}
	}
	stopCentral()
	if !centralEnded {
		if cerr := <-centralDone; err == nil {
			err = cerr
		}
	}
	return err
}

func portFree(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// prepareDemo writes the register and the demo users.
func prepareDemo(ctx context.Context, dir string, keep bool) error {
	if !keep {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("limpar %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	gws := make([]demoGateway, len(demoGateways))
	var wg sync.WaitGroup
	var herr error
	var mu sync.Mutex
	for i, d := range demoGateways {
		d.PublicKey = loadgen.PublicKeyBase64(loadgen.DefaultSeed, d.ID)
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := bcrypt.GenerateFromPassword([]byte(loadgen.Password(loadgen.DefaultSeed, d.ID)), bcrypt.MinCost)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				herr = err
			}
			d.PasswordHash = string(h)
			gws[i] = d
		}()
	}
	wg.Wait()
	if herr != nil {
		return herr
	}
	var b strings.Builder
	if err := demoRegistry.Execute(&b, gws); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "registry.yaml"), []byte(b.String()), 0o640); err != nil {
		return err
	}
	us, err := usersdb.OpenDir(ctx, dir, users.Options{})
	if err != nil {
		return err
	}
	defer us.Close()
	for _, u := range demoUsers {
		if err := addDemoUser(ctx, us, u.name, u.role, u.password); err != nil {
			return err
		}
	}
	if err := setDemoCalibration(ctx, dir, time.Now()); err != nil {
		return err
	}
	return setDemoUnits(ctx, dir)
}

func printDemoBanner(io stdio, a central.Addrs, dir string) {
	url := "http://" + a.HTTP
	fmt.Fprintf(io.out, `
Sossego — demonstração
  painel:        %s
  API:           %s/api/v1   métricas: %s/metrics
  broker MQTT:   %s
  dados:         %s (apagados a cada início)
  mensagens:     e-mails de alerta gravados em %s (arquivos .eml);
                 plantão: fiscal, todos os dias; sem reconhecimento em 15 min vai ao admin

  Entre no painel com:
`, url, url, url, a.MQTT, dir, filepath.Join(dir, demoMailDir))
	for _, u := range demoUsers {
		fmt.Fprintf(io.out, "    %-9s senha %-20s (%s)\n", u.name, u.password, u.role)
	}
	fmt.Fprintf(io.out, `
  4 gateways simulados publicam níveis a cada segundo (Lapa e Conceição de Macabu)
  e temperatura, umidade e pressão (BME280 simulado) a cada 10 s.
  Em cerca de 1–2 minutos o bar da Lapa passa do limite do Art. 96 e um alerta aparece em "Alertas".
  Em "Relatórios" (%s/#/relatorios): os últimos %d dias simulados e, ao vivo, a primeira hora da
  demonstração, por período legal, em PDF, CSV ou JSON.
  Ctrl-C encerra.
`, url, demoHistoryDays)
}

// demoMailDir is where the demo's e-mails are written, inside its data dir.
const demoMailDir = "mensagens"

// demoNotify is the demo's plantão: the demo fiscal on duty all week in
// both municipalities, the admin as coordinator, e-mails written as .eml
// files (no SMTP server needed).
func demoNotify(dir, httpAddr string) *notify.Settings {
	all := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	s := &notify.Settings{
		Email:    notify.EmailSettings{Enabled: true, Transport: "dir", Dir: filepath.Join(dir, demoMailDir), From: "sossego@demo.invalid"},
		Contacts: []notify.Contact{{User: "fiscal", Email: "fiscal@demo.invalid"}, {User: "admin", Email: "admin@demo.invalid"}},
		// Like the alert lifecycle, the demo shortens the grouping: a
		// second level alert of a municipality waits 30 s, not 2 min.
		Grouping: notify.DefaultGrouping,
	}
	s.Grouping.Level.Interval = notify.Duration(30 * time.Second)
	if !strings.HasSuffix(httpAddr, ":0") {
		s.PublicURL = "http://" + httpAddr
	}
	for _, m := range []string{"conceicao-de-macabu", "lapa"} {
		s.Municipalities = append(s.Municipalities, notify.Municipality{ID: m, Coordinator: "admin", EscalateAfterMin: 15,
			Weekly: []notify.Shift{{Days: all, From: "00:00", To: "24:00", User: "fiscal"}}})
	}
	return s
}

// runDemoGateway runs one simulated gateway in-process over MQTT.
func runDemoGateway(ctx context.Context, d demoGateway, broker, dir string, log *slog.Logger) error {
	state := filepath.Join(dir, "gateways", d.ID)
	if err := os.MkdirAll(state, 0o700); err != nil {
		return err
	}
	box, err := gateway.OpenOutbox(filepath.Join(state, "outbox.db"), 86400)
	if err != nil {
		return err
	}
	defer box.Close()
	opts := demoSimOpts(d)
	if d.SimStart != "" {
		loc := tz.Brasilia()
		now := time.Now().In(loc)
		hms, err := time.ParseInLocation("15:04:05", d.SimStart, loc)
		if err != nil {
			return err
		}
		opts.Start = time.Date(now.Year(), now.Month(), now.Day(), hms.Hour(), hms.Minute(), hms.Second(), 0, loc)
	}
	dev, err := sim.New(opts)
	if err != nil {
		return err
	}
	var meter bridge.Meter = dev
	if d.SimStart != "" {
		meter = wallClock{dev}
	}
	env, err := newDemoEnv(d, time.Now)
	if err != nil {
		return err
	}
	l := log.With("gateway", d.ID)
	err = mqttconn.RunNode(ctx, mqttconn.NodeOptions{
		// One record per batch: the dashboard shows each 1-s record within
		// about a second (the hub's 250 ms tick on top).
		Gateway: gateway.Options{Municipality: d.Municipality, Gateway: d.ID, Sensor: d.Sensor, BatchRecords: 1,
			BatchMaxAge: time.Second, Version: "demo",
			// One env reading per batch: each appears on the sensor page
			// within seconds (the env sensor id is the meter's, the default).
			Env: gateway.EnvOptions{Interval: demoEnvInterval, BatchRecords: 1, BatchMaxAge: demoEnvInterval}},
		MQTT:  mqttconn.Options{Broker: broker, Username: d.ID, Password: loadgen.Password(loadgen.DefaultSeed, d.ID)},
		Meter: meter, Env: env, Sync: gateway.FixedSync(wire.Clock{Synced: true, OffsetMs: 0.5, Source: "ntp (simulado)"}),
		Outbox: box, Key: loadgen.Key(loadgen.DefaultSeed, d.ID), Log: l})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("gateway %s: %w", d.ID, err)
	}
	return nil
}

// demoSimOpts is the simulated meter of a demo gateway (its model and
// serial are what the gateway's signed batches report).
func demoSimOpts(d demoGateway) *sim.Opts {
	return &sim.Opts{Scenario: d.Scenario, Seed: int64(len(d.ID)), Grade: bridge.Grade(d.Grade)}
}

// wallClock stamps a simulated meter's samples with the real time: the
// scenario plays a chosen moment (the bar at 22:00) while every record the
// central receives is current, as a real meter's would be.
type wallClock struct{ *sim.Dev }

func (w wallClock) Sense(s *bridge.Sample) error {
	if err := w.Dev.Sense(s); err != nil {
		return err
	}
	s.At = time.Now()
	return nil
}
