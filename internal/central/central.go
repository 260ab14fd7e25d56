// Package central wires the central service: the embedded MQTT broker
// (unless an external one is given), the registry (reloaded on change or
// SIGHUP), the durable SQLite store and optional InfluxDB mirror, the
// ingest pipeline, the alerts monitor with its case store, the watch on the
// data dir's free space, and the HTTP server (JSON API, Prometheus
// metrics). Run blocks until the context ends and shuts every part down.
package central

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/broker"
	"github.com/sossego/sossego/internal/casestore"
	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/longterm"
	inotify "github.com/sossego/sossego/internal/notify"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/retention"
	"github.com/sossego/sossego/internal/store"
)

// Defaults of the command-line flags.
const (
	DefaultDataDir    = "./var/sossego"
	DefaultHTTP       = "127.0.0.1:8080"
	DefaultMQTTListen = "127.0.0.1:1883"
	ServiceUser       = "sossego-central"
)

// Options configure Run. The zero value plus a Registry (or Demo) is a
// working single node: embedded broker, SQLite.
type Options struct {
	DataDir string // SQLite files (and the demonstration register); created if missing
	HTTP    string // HTTP listen address; "" disables HTTP

	// HTTPLimits bound the HTTP server's connections, requests and
	// timeouts (http.go); zero fields take the defaults.
	HTTPLimits HTTPLimits
	// TrustedProxies are reverse proxies (addresses or networks) whose
	// X-Forwarded-For names the client, for the login limiter; they are
	// also exempt from the per-source connection cap.
	TrustedProxies []string

	// MinFreeDisk is the free space (bytes) on the data dir's file system
	// below which the health report is "degradado": 0 → DefaultMinFreeDisk,
	// negative → no threshold (the free space is still exported).
	MinFreeDisk int64
	DiskSpace   DiskSpace     // nil → statfs(2)
	DiskPoll    time.Duration // how often the free space is measured; default 30s

	// Embedded broker (used when MQTTURL is empty).
	MQTTListen    string // default DefaultMQTTListen
	MQTTTLSListen string // optional TLS listener for gateways with client certificates
	TLSCert       string // server certificate (PEM) for MQTTTLSListen
	TLSKey        string // its key (PEM)
	TLSClientCA   string // CA (PEM) that signs gateway certificates

	// External broker.
	MQTTURL      string // e.g. tcp://127.0.0.1:1883; then nothing is embedded
	MQTTUser     string // default ServiceUser
	MQTTPassword string
	MQTTClientID string // default "sossego-central"

	// Registry is the register file. "" is allowed with Demo only: then
	// DataDir/registry.yaml, created from the demonstration register on
	// first start.
	Registry string
	// Demo accepts the demonstration register and any gateway whose key
	// derives from the public demonstration seed (sossego demo, tests).
	// Without it Run refuses them: anyone can sign batches with those keys.
	Demo         bool
	RegistryPoll time.Duration // default 2s
	Reload       <-chan struct{}

	Store        string // "sqlite" (default) or "influx"
	Sync         store.Sync
	InfluxURL    string
	InfluxBucket string // "db/rp" or "db" for InfluxDB 1.8
	InfluxToken  string // "user:password" or "" for InfluxDB 1.8
	InfluxOrg    string

	Skew, Stale time.Duration // record time checks; defaults from wire
	IngestQuota ingest.Quota  // per-gateway allowance (docs/wire.md, Limits); zero: ingest.DefaultQuota

	// Retain, when > 0, deletes readings (and dead letters) received longer
	// ago than this, keeping every alert's evidence and whatever InfluxDB
	// has not been sent yet (internal/retention). It must exceed Stale by a
	// day at least. 0 keeps everything.
	Retain      time.Duration
	RetainDelay time.Duration // before the first retention pass; default 1 min (then hourly)
	// EvidenceRetention is how long what a closed case (or an alert without
	// one) rests on outlives it; default retention.DefaultEvidenceRetention.
	EvidenceRetention time.Duration

	// CodesDir adds a municipality's own code files (YAML) to the embedded
	// ones; a file with the id of an embedded code replaces it.
	CodesDir string

	// Alerts: nil → alerts.DefaultConfig(); DisableAlerts turns the monitor off.
	AlertConfig   *alerts.Config
	DisableAlerts bool

	// NotifyConfig is the notifications' settings file (YAML,
	// docs/notifications.md); "" keeps them in DataDir/notify.db, edited
	// in the dashboard. NotifyDefaults are used while none are stored.
	NotifyConfig   string
	NotifyDefaults *notify.Settings

	// Observers get every stored reading in addition to the alerts monitor
	// and the dashboard hub.
	Observers []ingest.Observer

	// Origins the dashboard accepts besides its own host (reverse proxies);
	// SecureCookies marks session cookies Secure behind a TLS proxy.
	Origins       []string
	SecureCookies bool

	Log *slog.Logger
	// Ready, if set, is called once everything listens.
	Ready func(Addrs)
}

// Addrs are the actual listening addresses.
type Addrs struct {
	HTTP    string
	MQTT    string // broker URL the ingest uses
	MQTTTLS string
}

// Check validates o, reading the files it names (register, TLS
// certificates) but writing nothing: Run calls it before it creates
// anything, `sossego central` before it starts. The errors are pt-BR and
// name the flag to fix.
func (o *Options) Check() error {
	switch o.Store {
	case "", "sqlite", "influx":
	default:
		return fmt.Errorf("--store %q inválido: use sqlite ou influx", o.Store)
	}
	if o.Store == "influx" && (o.InfluxURL == "" || o.InfluxBucket == "") {
		return errors.New("--store influx precisa de --influx-url e --influx-bucket")
	}
	switch o.Sync {
	case "", store.SyncFull, store.SyncNormal:
	default:
		return fmt.Errorf("--sync %q inválido: use full ou normal", o.Sync)
	}
	if err := CheckRetain(o.Retain, o.Stale, o.DisableAlerts); err != nil {
		return fmt.Errorf("--retain-days: %w", err)
	}
	for _, v := range o.Origins {
		if _, err := dashboard.NewOrigins(v); err != nil {
			return fmt.Errorf("--origin %q inválida: use https://host[:porta], como o navegador mostra o endereço do painel", v)
		}
	}
	for _, v := range o.TrustedProxies {
		if _, err := dashboard.NewProxies(v); err != nil {
			return fmt.Errorf("--trusted-proxy %q inválido: use o endereço do proxy (10.0.0.5) ou a rede dele (10.0.0.0/24)", v)
		}
	}
	if o.MQTTTLSListen != "" && o.MQTTURL == "" {
		if _, err := serverTLS(o.TLSCert, o.TLSKey, o.TLSClientCA); err != nil {
			return err
		}
	}
	if o.Registry == "" {
		if !o.Demo {
			return errors.New("informe o cadastro com --registry ARQUIVO (gateways com suas chaves públicas, sensores, " +
				"estabelecimentos; modelo comentado em docs/registry.example.yaml). O cadastro de demonstração usa chaves " +
				"que qualquer um pode derivar e só é aceito por sossego demo")
		}
		return nil
	}
	data, err := os.ReadFile(o.Registry)
	if err != nil {
		return fmt.Errorf("--registry: %w", err)
	}
	reg, err := registry.Parse(data)
	if err != nil {
		return fmt.Errorf("--registry %s: %w", o.Registry, err)
	}
	if !o.Demo {
		if err := refuseDemoKeys(reg); err != nil {
			return fmt.Errorf("--registry %s: %w", o.Registry, err)
		}
	}
	return nil
}

// refuseDemoKeys is the registry.Check of every service but the demo: at
// start and on every reload (file change, SIGHUP, PUT /api/v1/registry) a
// register with a demonstration key is refused and the one in force kept.
func refuseDemoKeys(reg *registry.Registry) error {
	ids := demoKeyGateways(reg)
	if len(ids) == 0 {
		return nil
	}
	who := "o gateway " + ids[0] + " usa a chave"
	if len(ids) > 1 {
		who = fmt.Sprintf("os gateways %s e mais %d usam chaves", ids[0], len(ids)-1)
	}
	return fmt.Errorf("%s de demonstração, que qualquer um pode derivar da semente pública %q: "+
		"gere a chave de cada gateway com sossego-gateway key e ponha a chave pública dele em public_key",
		who, loadgen.DefaultSeed)
}

// demoKeyGateways lists the gateways whose public key derives from the
// public demonstration seed.
func demoKeyGateways(reg *registry.Registry) []string {
	var ids []string
	for _, g := range reg.Gateways() {
		key, err := base64.StdEncoding.DecodeString(g.PublicKey)
		if err != nil || len(key) != ed25519.PublicKeySize {
			continue
		}
		if demo := loadgen.Key(loadgen.DefaultSeed, g.ID).Public().(ed25519.PublicKey); demo.Equal(ed25519.PublicKey(key)) {
			ids = append(ids, g.ID)
		}
	}
	return ids
}

// Run starts the service and blocks until ctx ends or a part fails.
func Run(ctx context.Context, o Options) error {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := o.Check(); err != nil {
		return err
	}
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir
	}
	if err := os.MkdirAll(o.DataDir, 0o750); err != nil {
		return fmt.Errorf("central: data dir: %w", err)
	}
	if o.Store == "" {
		o.Store = "sqlite"
	}

	// Registry.
	regPath := o.Registry
	if regPath == "" {
		regPath = filepath.Join(o.DataDir, "registry.yaml")
		if _, err := os.Stat(regPath); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(regPath, registry.DemoYAML(), 0o640); err != nil {
				return fmt.Errorf("central: write demo registry: %w", err)
			}
			log.Warn("cadastro de demonstração criado; substitua as chaves antes de uso real", "arquivo", regPath)
		}
	}
	var checks []registry.Check
	if !o.Demo {
		checks = append(checks, refuseDemoKeys)
	}
	reg, err := registry.Open(regPath, log, checks...)
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}

	// Stores.
	st, err := store.OpenSQLite(filepath.Join(o.DataDir, "readings.db"), store.SQLiteOptions{Sync: o.Sync, Log: log})
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	defer st.Close()
	var readings store.Readings = st
	var mirror *store.Influx
	if o.Store == "influx" {
		mirror = store.NewInflux(st, store.InfluxOptions{URL: o.InfluxURL, Bucket: o.InfluxBucket, Token: o.InfluxToken,
			Org: o.InfluxOrg, Log: log.With("componente", "influx")})
		defer mirror.Close()
		readings = store.Fallback{Primary: mirror, Local: st, Down: mirror.Failing, Log: log.With("componente", "influx")}
	}

	// The long-term tier: its follower floors the readings' ids above its
	// cursor before ingest stores anything.
	tier, err := longterm.Open(filepath.Join(o.DataDir, longterm.FileName))
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	defer tier.Close()
	follower := longterm.NewFollower(st, tier, longterm.FollowerOptions{Log: log.With("componente", "longo-prazo")})
	if err := follower.Prepare(ctx); err != nil {
		return fmt.Errorf("central: %w", err)
	}
	// With InfluxDB, the tier is mirrored too (sossego_minute and
	// sossego_hour, in a retention policy of infinite duration).
	var tierMirror *store.TierMirror
	if o.Store == "influx" {
		tierMirror = store.NewTierMirror(tier, store.TierMirrorOptions{InfluxOptions: store.InfluxOptions{URL: o.InfluxURL,
			Bucket: o.InfluxBucket, Token: o.InfluxToken, Org: o.InfluxOrg, Log: log.With("componente", "influx-longo-prazo")}})
		defer tierMirror.Close()
	}

	promReg := prometheus.NewRegistry()
	promReg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := ingest.NewMetrics(promReg)
	dataDir := o.DataDir
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	disk := newDiskWatch(dataDir, o.MinFreeDisk, o.DiskSpace, o.DiskPoll, log.With("componente", "disco"))
	disk.check()
	promReg.MustRegister(disk)
	promReg.MustRegister(tierBacklog(follower))
	if mirror != nil {
		promReg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sossego_influx_backlog_records",
			Help: "Level and environmental records stored locally but not yet written to InfluxDB."}, func() float64 { return float64(mirror.Backlog()) }))
		promReg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sossego_influx_up",
			Help: "1 while InfluxDB accepts the mirror's writes, 0 from the first failed write until one succeeds (alert on it)."},
			func() float64 {
				if mirror.Failing() {
					return 0
				}
				return 1
			}))
	}

	// The calibration register: certificates, field checks, the meters the
	// signed batches report (docs/metrology.md).
	cal, err := openCalibration(ctx, o.DataDir, reg, promReg, log)
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	defer cal.Close()

	// Users, sessions and the live hub.
	wb, err := openWeb(ctx, o, log)
	if err != nil {
		return err
	}
	defer wb.close()

	// Alerts.
	observers := append([]ingest.Observer(nil), o.Observers...)
	var monitor *alerts.Monitor
	var notifier *inotify.Service
	var cases *casestore.Store
	var limits alerts.Limits
	codeSet, err := codes.LoadDir(o.CodesDir)
	if err != nil {
		return fmt.Errorf("central: codes: %w", err)
	}
	limits = alerts.CodeLimits{Set: codeSet}
	observers = append(observers, hubFeed{hub: wb.hub, limits: limits}, cal.Observer())
	if !o.DisableAlerts {
		cfg := alerts.DefaultConfig()
		if o.AlertConfig != nil {
			cfg = *o.AlertConfig
		}
		cases, err = casestore.Open(ctx, filepath.Join(o.DataDir, "cases.db"))
		if err != nil {
			return fmt.Errorf("central: %w", err)
		}
		defer cases.Close()
		if notifier, err = openNotify(ctx, o, wb, cases, reg, promReg, log); err != nil {
			return fmt.Errorf("central: %w", err)
		}
		defer notifier.Close()
		// The hub and the notifications only queue: the monitor never waits.
		toHub := alerts.NotifierFunc(func(ctx context.Context, e alerts.Event) error {
			wb.hub.PublishAlert(e)
			return notifier.Notify(ctx, e)
		})
		monitor, err = alerts.NewMonitor(cfg, limits, alerts.Options{Store: cases, Notifier: toHub, Logger: log.With("componente", "alertas")})
		if err != nil {
			return fmt.Errorf("central: %w", err)
		}
		if err := monitor.Restore(ctx); err != nil {
			return fmt.Errorf("central: restore alerts: %w", err)
		}
		now := time.Now()
		for _, s := range reg.Current().Sensors() {
			monitor.Expect(sensorInfo(s, s.Meter.Grade), now)
		}
		observers = append(observers, alertObserver{m: monitor, log: log})
		if err := wb.workflow(ctx, o, cases, reg, st, codeSet, log); err != nil {
			return err
		}
		wb.svc.Calibrations = calibrations{cal}
		wb.svc.Evidence.Meters = meters{r: cal, reg: reg}
		notifyAcks(wb, notifier)
		promReg.MustRegister(alertGauge{cases: cases})
	}

	// Broker.
	var brk *broker.Broker
	mqttURL, mqttUser, mqttPass := o.MQTTURL, o.MQTTUser, o.MQTTPassword
	if mqttUser == "" {
		mqttUser = ServiceUser
	}
	if mqttURL == "" {
		// The service reaches the embedded broker in process (ingest.Inline);
		// the broker's service account gets a random password that nobody
		// knows, so no network client can log in as the service.
		mqttPass = randomSecret()
		bo := broker.Options{Listen: o.MQTTListen, Directory: directory{reg}, ServiceUser: mqttUser,
			ServicePassword: mqttPass, Log: log}
		if bo.Listen == "" {
			bo.Listen = DefaultMQTTListen
		}
		if o.MQTTTLSListen != "" {
			tc, err := serverTLS(o.TLSCert, o.TLSKey, o.TLSClientCA)
			if err != nil {
				return err
			}
			bo.TLSListen, bo.TLS = o.MQTTTLSListen, tc
		}
		brk, err = broker.New(bo)
		if err != nil {
			return fmt.Errorf("central: %w", err)
		}
		mqttURL = brk.URL()
	}

	in := ingest.New(ingest.Options{Store: st, Registry: reg, Observers: observers, Log: log.With("componente", "ingestão"),
		Metrics: metrics, Skew: o.Skew, Stale: o.Stale, Quota: o.IngestQuota})
	// The ingest's link to the broker: in process with the embedded one,
	// an MQTT subscriber (QoS 1, persistent session) with an external one.
	// Acks go out the same way.
	var sub interface {
		Run(context.Context) error
		Connected() bool
		ingest.Acker
	}
	if brk != nil {
		if sub, err = ingest.NewInline(in, brk); err != nil {
			return fmt.Errorf("central: %w", err)
		}
	} else {
		sub = ingest.NewSubscriber(in, ingest.SubscriberOptions{URL: mqttURL, ClientID: o.MQTTClientID, Username: mqttUser,
			Password: mqttPass, Log: log})
	}
	in.SetAcker(sub)

	// HTTP.
	var ln net.Listener
	var srv *http.Server
	if o.HTTP != "" {
		ln, err = net.Listen("tcp", o.HTTP)
		if err != nil {
			return fmt.Errorf("central: listen %s: %w", o.HTTP, err)
		}
		proxies, _ := dashboard.NewProxies(o.TrustedProxies...) // validated by Check
		ln = capConns(ln, o.HTTPLimits, proxies, promReg, log.With("componente", "http"))
		mux := http.NewServeMux()
		apiOpts := dashboard.APIOptions{Registry: reg, Store: st, Readings: readings, Env: st, Log: log,
			Limits: limitFunc(limits),
			Health: func(context.Context) dashboard.HealthReport {
				h := dashboard.HealthReport{Components: map[string]string{"mqtt": "conectado", "cadastro": "ok", "armazenamento": o.Store}}
				if !sub.Connected() {
					h.Components["mqtt"] = "desconectado"
					h.Down = errors.New("ingestão sem conexão MQTT: os gateways guardam as leituras até ela voltar")
				}
				if err := reg.Err(); err != nil {
					h.Components["cadastro"] = err.Error()
					h.Problems = append(h.Problems, "o último recarregamento do cadastro falhou e o cadastro anterior continua em uso: "+
						"corrija o arquivo conforme components.cadastro e salve de novo")
				}
				if mirror != nil && mirror.Failing() {
					n := mirror.Backlog()
					h.Components["influxdb"] = fmt.Sprintf("indisponível; %d registros aguardando", n)
					h.Problems = append(h.Problems, fmt.Sprintf("InfluxDB indisponível: %d registros aguardando, guardados no SQLite "+
						"local; as consultas usam o SQLite até ele voltar. Verifique o serviço e o endereço do InfluxDB (--influx-url); "+
						"o envio recomeça sozinho", n))
				}
				disk.report(&h)
				return h
			}}
		if cases != nil {
			apiOpts.Alerts = alertLister{cases}
		}
		wb.reports = dashboard.NewReports(dashboard.ReportsOptions{Registry: reg, Tier: tier, Records: readings, Codes: codeSet,
			Log: log.With("componente", "relatorios")})
		apiOpts.LimitSeries, apiOpts.Window = wb.reports.LimitSeries, wb.reports.Window
		api := dashboard.NewAPI(apiOpts)
		wb.register(mux, api, reg, codeSet, log)
		if notifier != nil {
			registerNotify(mux, notifier, wb, reg, log)
		}
		registerCalibration(mux, cal, wb, reg, log)
		// Outside monitors probe the health without a login (the verdict
		// only; a session also gets the details).
		mux.Handle("GET /api/v1/health", wb.auth.Protect(api.HealthProbe()))
		mux.Handle("/metrics", promhttp.HandlerFor(promReg, promhttp.HandlerOpts{}))
		srv = newHTTPServer(mux, o.HTTPLimits, log.With("componente", "http"))
	}

	var pruner *retention.Pruner
	if o.Retain > 0 {
		deleted := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sossego_retention_deleted_total",
			Help: "Rows deleted by the retention (--retain-days), by kind: batches, levels, env, dead_letters."}, []string{"kind"})
		promReg.MustRegister(deleted)
		legal := o.EvidenceRetention
		if legal <= 0 {
			legal = retention.DefaultEvidenceRetention
		}
		ro := retention.Options{Store: st, Spans: caseSpans(cases, wb.cases, legal), Retain: o.Retain, Delay: o.RetainDelay, Deleted: deleted,
			Log: log.With("componente", "retencao")}
		if mirror != nil {
			ro.Mirror = mirrorCursors(st)
		}
		ro.Followers = append(ro.Followers, follower.Cursor)
		pruner = retention.New(ro)
		log.Info(fmt.Sprintf("retenção: leituras de 1 s e lotes assinados guardados por %s; o que um alerta, caso ou constatação usa "+
			"fica guardado enquanto o caso estiver aberto e por mais %s depois de encerrado; agregados de 1 min e 1 h (relatórios) "+
			"guardados para sempre em %s", retentionText(o.Retain), retentionText(legal), longterm.FileName))
	} else {
		log.Info("retenção desligada: leituras de 1 s e lotes assinados guardados para sempre (cerca de 22 MB por sensor por dia); " +
			"agregados de 1 min e 1 h guardados para sempre em " + longterm.FileName)
	}

	g, gctx := errgroup.WithContext(ctx)
	if pruner != nil {
		g.Go(func() error {
			// Retention keeps what the tier has not folded in: wait for its
			// first catch-up rather than pass over everything for nothing.
			select {
			case <-follower.CaughtUp():
			case <-gctx.Done():
				return nil
			}
			return pruner.Run(gctx)
		})
	}
	if brk != nil {
		g.Go(func() error { return brk.Run(gctx) })
	}
	g.Go(func() error { return reg.Run(gctx, o.RegistryPoll, o.Reload) })
	g.Go(func() error { return wb.hub.Run(gctx) })
	g.Go(func() error { return disk.Run(gctx) })
	g.Go(func() error { return in.Run(gctx) })
	g.Go(func() error { return follower.Run(gctx) })
	g.Go(func() error { return sub.Run(gctx) })
	if mirror != nil {
		g.Go(func() error { return mirror.Run(gctx) })
	}
	if tierMirror != nil {
		g.Go(func() error { return tierMirror.Run(gctx) })
	}
	if monitor != nil {
		g.Go(func() error { return monitor.Run(gctx) })
	}
	if notifier != nil {
		g.Go(func() error { return notifier.Run(gctx) })
	}
	if srv != nil {
		g.Go(func() error {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("central: http: %w", err)
			}
			return nil
		})
		g.Go(func() error {
			<-gctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srv.Shutdown(sctx)
		})
	}
	addrs := Addrs{MQTT: mqttURL}
	if ln != nil {
		addrs.HTTP = ln.Addr().String()
	}
	if brk != nil && brk.TLSAddr() != nil {
		addrs.MQTTTLS = "ssl://" + brk.TLSAddr().String()
	}
	log.Info("serviço central iniciado", "http", addrs.HTTP, "mqtt", addrs.MQTT, "armazenamento", o.Store,
		"cadastro", regPath, "dados", o.DataDir)
	if o.Ready != nil {
		o.Ready(addrs)
	}
	return g.Wait()
}

func randomSecret() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

func serverTLS(cert, key, clientCA string) (*tls.Config, error) {
	if cert == "" || key == "" || clientCA == "" {
		return nil, errors.New("--mqtt-tls-listen precisa de --tls-cert, --tls-key e --tls-client-ca")
	}
	kp, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: não foi possível carregar o par certificado e chave (PEM): %w", err)
	}
	pem, err := os.ReadFile(clientCA)
	if err != nil {
		return nil, fmt.Errorf("--tls-client-ca: não foi possível ler %s: %w", clientCA, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--tls-client-ca: nenhum certificado PEM em %s", clientCA)
	}
	return &tls.Config{Certificates: []tls.Certificate{kp}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
		MinVersion: tls.VersionTLS12}, nil
}

// directory adapts the live registry to the broker.
type directory struct{ reg *registry.Live }

func (d directory) Gateway(id string) (broker.Gateway, bool) {
	g, ok := d.reg.Current().Gateway(id)
	if !ok {
		return broker.Gateway{}, false
	}
	var h []byte
	if g.MQTTPasswordHash != "" {
		h = []byte(g.MQTTPasswordHash)
	}
	return broker.Gateway{ID: g.ID, Municipality: g.Municipality, PasswordHash: h}, true
}
