package central

import (
	"context"
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
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/broker"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/longterm"
	inotify "github.com/sossego/sossego/internal/notify"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/retention"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/influxstore"
	"github.com/sossego/sossego/internal/store/sqlitestore"
)

// service is the central service while Run assembles it: each open step
// adds its parts (and what closes them); run starts the long-running ones.
type service struct {
	o   Options
	log *slog.Logger

	regPath string
	reg     *registry.Live

	st         *sqlitestore.Store
	readings   store.Readings      // st, or InfluxDB with SQLite as the fallback
	mirror     *influxstore.Mirror // nil without InfluxDB
	tier       *longterm.Store
	follower   *longterm.Follower
	tierMirror *influxstore.TierMirror // nil without InfluxDB

	promReg *prometheus.Registry
	metrics *ingest.Metrics
	disk    *diskWatch
	cal     *calibrationdb.Register
	wb      *web

	codeSet   *codes.Set
	limits    alerts.Limits
	observers []ingest.Observer
	monitor   *alerts.Monitor   // nil with alerts off
	notifier  *inotify.Service  // nil with alerts off
	cases     *alertstore.Store // nil with alerts off
	pruner    *retention.Pruner // nil with retention off
	brk       *broker.Broker    // nil with an external broker
	mqttURL   string
	in        *ingest.Ingester
	sub       brokerLink
	ln        net.Listener // nil without --http
	srv       *http.Server

	closers []func() // in opening order; close runs them backwards
}

// brokerLink is the ingest's link to the broker: in process with the
// embedded one, an MQTT subscriber with an external one. Acks go out the
// same way.
type brokerLink interface {
	Run(context.Context) error
	Connected() bool
	ingest.Acker
}

// Run starts the central service and blocks until ctx ends or a part
// fails; every part is shut down before it returns.
func Run(ctx context.Context, o Options) error {
	s, err := newService(o)
	if err != nil {
		return err
	}
	defer s.close()
	for _, open := range []func(context.Context) error{
		s.openRegistry, s.openStores, s.openMetrics, s.openCalibration, s.openWeb,
		s.openAlerts, s.openBroker, s.openIngest, s.openHTTP, s.openRetention,
	} {
		if err := open(ctx); err != nil {
			return err
		}
	}
	return s.run(ctx)
}

func newService(o Options) (*service, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir
	}
	if err := os.MkdirAll(o.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("central: data dir: %w", err)
	}
	if o.Store == "" {
		o.Store = "sqlite"
	}
	return &service{o: o, log: log}, nil
}

func (s *service) onClose(f func()) { s.closers = append(s.closers, f) }

func (s *service) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// openRegistry loads the register of gateways, sensors and establishments;
// without --registry, the demo register in the data folder (refused
// outside the demo by refuseDemoKeys).
func (s *service) openRegistry(context.Context) error {
	s.regPath = s.o.Registry
	if s.regPath == "" {
		s.regPath = filepath.Join(s.o.DataDir, "registry.yaml")
		if _, err := os.Stat(s.regPath); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(s.regPath, registry.DemoYAML(), 0o640); err != nil {
				return fmt.Errorf("central: write demo registry: %w", err)
			}
			s.log.Warn("cadastro de demonstração criado; substitua as chaves antes de uso real", "arquivo", s.regPath)
		}
	}
	var checks []registry.Check
	if !s.o.Demo {
		checks = append(checks, refuseDemoKeys)
	}
	reg, err := registry.Open(s.regPath, s.log, checks...)
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	s.reg = reg
	return nil
}

// openStores opens the readings store, the InfluxDB mirror when asked, and
// the long-term tier, whose follower floors the readings' ids above its
// cursor before ingest stores anything.
func (s *service) openStores(ctx context.Context) error {
	o, log := s.o, s.log
	st, err := sqlitestore.Open(filepath.Join(o.DataDir, "readings.db"), sqlitestore.Options{Sync: o.Sync, Log: log})
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	s.onClose(func() { st.Close() })
	s.st, s.readings = st, st
	influx := influxstore.MirrorOptions{URL: o.InfluxURL, Bucket: o.InfluxBucket, Token: o.InfluxToken, Org: o.InfluxOrg}
	if o.Store == "influx" {
		mo := influx
		mo.Log = log.With("componente", "influx")
		s.mirror = influxstore.NewMirror(st, mo)
		s.onClose(func() { s.mirror.Close() })
		s.readings = store.Fallback{Primary: s.mirror, Local: st, Down: s.mirror.Failing, Log: mo.Log}
	}
	tier, err := longterm.Open(filepath.Join(o.DataDir, longterm.FileName))
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	s.onClose(func() { tier.Close() })
	s.tier = tier
	s.follower = longterm.NewFollower(st, tier, longterm.FollowerOptions{Log: log.With("componente", "longo-prazo")})
	if err := s.follower.Prepare(ctx); err != nil {
		return fmt.Errorf("central: %w", err)
	}
	// With InfluxDB, the tier is mirrored too (sossego_minute and
	// sossego_hour, in a retention policy of infinite duration).
	if o.Store == "influx" {
		to := influx
		to.Log = log.With("componente", "influx-longo-prazo")
		s.tierMirror = influxstore.NewTierMirror(tier, influxstore.TierMirrorOptions{MirrorOptions: to})
		s.onClose(func() { s.tierMirror.Close() })
	}
	return nil
}

// openMetrics sets up /metrics and the data folder's free-space watch.
func (s *service) openMetrics(context.Context) error {
	s.promReg = prometheus.NewRegistry()
	s.promReg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.metrics = ingest.NewMetrics(s.promReg)
	dataDir := s.o.DataDir
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	s.disk = newDiskWatch(dataDir, s.o.MinFreeDisk, s.o.DiskSpace, s.o.DiskPoll, s.log.With("componente", "disco"))
	s.disk.check()
	s.promReg.MustRegister(s.disk)
	s.promReg.MustRegister(tierBacklog(s.follower))
	if m := s.mirror; m != nil {
		s.promReg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sossego_influx_backlog_records",
			Help: "Level and environmental records stored locally but not yet written to InfluxDB."}, func() float64 { return float64(m.Backlog()) }))
		s.promReg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sossego_influx_up",
			Help: "1 while InfluxDB accepts the mirror's writes, 0 from the first failed write until one succeeds (alert on it)."},
			func() float64 {
				if m.Failing() {
					return 0
				}
				return 1
			}))
	}
	return nil
}

// openCalibration opens the calibration register: certificates, field
// checks, the meters the signed batches report (docs/metrology.md). Before
// ingest starts, the register catches up with the field checks and the
// meters of the levels batches the readings store holds that it never
// observed (a stop between the two); a failure is logged and retried at the
// next start, the batches being safe in the readings store.
func (s *service) openCalibration(ctx context.Context) error {
	cal, err := openCalibration(ctx, s.o.DataDir, s.reg, s.promReg, s.log)
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	s.onClose(func() { cal.Close() })
	s.cal = cal
	if _, err := cal.CatchUp(ctx, s.st); err != nil {
		s.log.Error("registro de calibração: não foi possível conferir as verificações de campo e os medidores dos lotes do banco de leituras; nova tentativa na próxima partida",
			"erro", err)
	}
	return nil
}

// openWeb opens users, sessions and the live hub, and loads the codes.
func (s *service) openWeb(ctx context.Context) error {
	wb, err := openWeb(ctx, s.o, s.log)
	if err != nil {
		return err
	}
	s.onClose(wb.close)
	s.wb = wb
	if s.codeSet, err = codes.LoadDir(s.o.CodesDir); err != nil {
		return fmt.Errorf("central: codes: %w", err)
	}
	if err := wb.decreedDays(ctx, s.codeSet, s.log); err != nil {
		return err
	}
	s.limits = alerts.CodeLimits{Set: s.codeSet}
	s.observers = append(append([]ingest.Observer(nil), s.o.Observers...), hubFeed{hub: wb.hub, limits: s.limits}, s.cal.Observer())
	return nil
}

// openAlerts opens the case store, the notifications and the alert
// monitor (restored, expecting every registered sensor), and the notice
// workflow; nothing with --disable-alerts.
func (s *service) openAlerts(ctx context.Context) error {
	if s.o.DisableAlerts {
		return nil
	}
	o, log, wb := s.o, s.log, s.wb
	cfg := alerts.DefaultConfig()
	if o.AlertConfig != nil {
		cfg = *o.AlertConfig
	}
	cases, err := alertstore.Open(ctx, filepath.Join(o.DataDir, "cases.db"))
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	s.onClose(func() { cases.Close() })
	s.cases = cases
	notifier, err := openNotify(ctx, o, wb, cases, s.reg, s.promReg, log)
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	s.onClose(func() { notifier.Close() })
	s.notifier = notifier
	// The hub and the notifications only queue: the monitor never waits.
	toHub := alerts.NotifierFunc(func(ctx context.Context, e alerts.Event) error {
		wb.hub.PublishAlert(e)
		return notifier.Notify(ctx, e)
	})
	s.monitor, err = alerts.NewMonitor(cfg, s.limits, alerts.Options{Store: cases, Notifier: toHub, Logger: log.With("componente", "alertas")})
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	if err := s.monitor.Restore(ctx); err != nil {
		return fmt.Errorf("central: restore alerts: %w", err)
	}
	now := time.Now()
	for _, sn := range s.reg.Current().Sensors() {
		s.monitor.Expect(sensorInfo(sn, sn.Meter.Grade), now)
	}
	s.observers = append(s.observers, alertObserver{m: s.monitor, log: log})
	if err := wb.workflow(ctx, o, cases, s.reg, s.st, s.codeSet, s.cal, log); err != nil {
		return err
	}
	notifyAcks(wb, notifier)
	s.promReg.MustRegister(alertGauge{cases: cases})
	return nil
}

// openBroker starts the embedded broker unless an external one is given.
// The service reaches the embedded broker in process (ingest.Inline); the
// broker's service account gets a random password that nobody knows, so
// no network client can log in as the service.
func (s *service) openBroker(context.Context) error {
	if s.o.MQTTURL != "" {
		s.mqttURL = s.o.MQTTURL
		return nil
	}
	o := s.o
	bo := broker.Options{Listen: o.MQTTListen, Directory: directory{s.reg}, ServiceUser: s.mqttUser(),
		ServicePassword: randomSecret(), Log: s.log}
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
	brk, err := broker.New(bo)
	if err != nil {
		return fmt.Errorf("central: %w", err)
	}
	s.brk, s.mqttURL = brk, brk.URL()
	return nil
}

func (s *service) mqttUser() string {
	if s.o.MQTTUser == "" {
		return ServiceUser
	}
	return s.o.MQTTUser
}

// openIngest builds the ingest pipeline and its link to the broker.
func (s *service) openIngest(context.Context) error {
	o := s.o
	s.in = ingest.New(ingest.Options{Store: s.st, Registry: s.reg, Observers: s.observers, Log: s.log.With("componente", "ingestão"),
		Metrics: s.metrics, Skew: o.Skew, Stale: o.Stale, Quota: o.IngestQuota})
	if s.brk != nil {
		sub, err := ingest.NewInline(s.in, s.brk)
		if err != nil {
			return fmt.Errorf("central: %w", err)
		}
		s.sub = sub
	} else {
		s.sub = ingest.NewSubscriber(s.in, ingest.SubscriberOptions{URL: s.mqttURL, ClientID: o.MQTTClientID, Username: s.mqttUser(),
			Password: o.MQTTPassword, Log: s.log})
	}
	s.in.SetAcker(s.sub)
	return nil
}

// openHTTP listens for the dashboard, the JSON API and /metrics
// (nothing without --http).
func (s *service) openHTTP(context.Context) error {
	o, log, wb := s.o, s.log, s.wb
	if o.HTTP == "" {
		return nil
	}
	ln, err := net.Listen("tcp", o.HTTP)
	if err != nil {
		return fmt.Errorf("central: listen %s: %w", o.HTTP, err)
	}
	proxies, _ := dashboard.NewProxies(o.TrustedProxies...) // validated by Check
	s.ln = capConns(ln, o.HTTPLimits, proxies, s.promReg, log.With("componente", "http"))
	mux := http.NewServeMux()
	apiOpts := dashboard.APIOptions{Registry: s.reg, Store: s.st, Readings: s.readings, Env: s.st, Log: log,
		Limits: limitFunc(s.limits), Health: s.health}
	if s.cases != nil {
		apiOpts.Alerts = alertLister{s.cases}
	}
	wb.reports = dashboard.NewReports(dashboard.ReportsOptions{Registry: s.reg, Tier: s.tier, Records: s.readings, Codes: s.codeSet,
		Log: log.With("componente", "relatorios")})
	apiOpts.LimitSeries, apiOpts.Window = wb.reports.LimitSeries, wb.reports.Window
	api := dashboard.NewAPI(apiOpts)
	deps := dashboard.Deps{Calibration: calibrationAPI(s.cal, s.reg, log)}
	if s.notifier != nil {
		deps.Notify = notifyAPI(s.notifier, wb, s.reg, log)
	}
	// Every /api/v1 route, mounted once (dashboard/routes.go lists them).
	dashboard.Mount(mux, wb.auth, dashboard.Routes(wb.routes(deps, api, s.reg, s.codeSet, log)))
	wb.ui.RegisterUI(mux)
	mux.Handle("/metrics", promhttp.HandlerFor(s.promReg, promhttp.HandlerOpts{}))
	s.srv = newHTTPServer(mux, o.HTTPLimits, log.With("componente", "http"))
	return nil
}

// health is what /api/v1/health reports: the MQTT link, the register's
// last reload, InfluxDB, the disk.
func (s *service) health(context.Context) dashboard.HealthReport {
	h := dashboard.HealthReport{Components: map[string]string{"mqtt": "conectado", "cadastro": "ok", "armazenamento": s.o.Store}}
	if !s.sub.Connected() {
		h.Components["mqtt"] = "desconectado"
		h.Down = errors.New("ingestão sem conexão MQTT: os gateways guardam as leituras até ela voltar")
	}
	if err := s.reg.Err(); err != nil {
		h.Components["cadastro"] = err.Error()
		h.Problems = append(h.Problems, "o último recarregamento do cadastro falhou e o cadastro anterior continua em uso: "+
			"corrija o arquivo conforme components.cadastro e salve de novo")
	}
	if s.mirror != nil && s.mirror.Failing() {
		n := s.mirror.Backlog()
		h.Components["influxdb"] = fmt.Sprintf("indisponível; %d registros aguardando", n)
		h.Problems = append(h.Problems, fmt.Sprintf("InfluxDB indisponível: %d registros aguardando, guardados no SQLite "+
			"local; as consultas usam o SQLite até ele voltar. Verifique o serviço e o endereço do InfluxDB (--influx-url); "+
			"o envio recomeça sozinho", n))
	}
	s.disk.report(&h)
	return h
}

// openRetention sets up the retention of 1-s readings (--retain-days) and
// says in the log what is kept for how long.
func (s *service) openRetention(context.Context) error {
	o := s.o
	if o.Retain <= 0 {
		s.log.Info("retenção desligada: leituras de 1 s e lotes assinados guardados para sempre (cerca de 22 MB por sensor por dia); " +
			"agregados de 1 min e 1 h guardados para sempre em " + longterm.FileName)
		return nil
	}
	deleted := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sossego_retention_deleted_total",
		Help: "Rows deleted by the retention (--retain-days), by kind: batches, levels, env, dead_letters."}, []string{"kind"})
	s.promReg.MustRegister(deleted)
	legal := o.EvidenceRetention
	if legal <= 0 {
		legal = retention.DefaultEvidenceRetention
	}
	ro := retention.Options{Store: s.st, Spans: caseSpans(s.cases, s.wb.cases, legal), Retain: o.Retain, Delay: o.RetainDelay,
		Deleted: deleted, Log: s.log.With("componente", "retencao")}
	if s.mirror != nil {
		ro.Mirror = mirrorCursors(s.st)
	}
	ro.Followers = append(ro.Followers, s.follower.Cursor)
	s.pruner = retention.New(ro)
	s.log.Info(fmt.Sprintf("retenção: leituras de 1 s e lotes assinados guardados por %s; o que um alerta, caso ou constatação usa "+
		"fica guardado enquanto o caso estiver aberto e por mais %s depois de encerrado; agregados de 1 min e 1 h (relatórios) "+
		"guardados para sempre em %s", retentionText(o.Retain), retentionText(legal), longterm.FileName))
	return nil
}

// run starts every long-running part and waits for them.
func (s *service) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	if s.pruner != nil {
		g.Go(func() error {
			// Retention keeps what the tier has not folded in: wait for its
			// first catch-up rather than pass over everything for nothing.
			select {
			case <-s.follower.CaughtUp():
			case <-gctx.Done():
				return nil
			}
			return s.pruner.Run(gctx)
		})
	}
	parts := []func(context.Context) error{
		func(ctx context.Context) error { return s.reg.Run(ctx, s.o.RegistryPoll, s.o.Reload) },
		s.wb.hub.Run, s.wb.holWatch.Run, s.disk.Run, s.in.Run, s.follower.Run, s.sub.Run,
	}
	if s.brk != nil {
		parts = append(parts, s.brk.Run)
	}
	if s.mirror != nil {
		parts = append(parts, s.mirror.Run)
	}
	if s.tierMirror != nil {
		parts = append(parts, s.tierMirror.Run)
	}
	if s.monitor != nil {
		parts = append(parts, s.monitor.Run)
	}
	if s.notifier != nil {
		parts = append(parts, s.notifier.Run)
	}
	for _, p := range parts {
		g.Go(func() error { return p(gctx) })
	}
	if s.srv != nil {
		g.Go(func() error {
			if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("central: http: %w", err)
			}
			return nil
		})
		g.Go(func() error {
			<-gctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return s.srv.Shutdown(sctx)
		})
	}
	addrs := Addrs{MQTT: s.mqttURL}
	if s.ln != nil {
		addrs.HTTP = s.ln.Addr().String()
	}
	if s.brk != nil && s.brk.TLSAddr() != nil {
		addrs.MQTTTLS = "ssl://" + s.brk.TLSAddr().String()
	}
	s.log.Info("serviço central iniciado", "http", addrs.HTTP, "mqtt", addrs.MQTT, "armazenamento", s.o.Store,
		"cadastro", s.regPath, "dados", s.o.DataDir)
	if s.o.Ready != nil {
		s.o.Ready(addrs)
	}
	return g.Wait()
}
