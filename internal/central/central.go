// Package central wires the central service: the embedded MQTT broker
// (unless an external one is given), the registry (reloaded on change or
// SIGHUP), the durable SQLite store and optional InfluxDB mirror, the
// ingest pipeline, the alerts monitor with its case store, the watch on the
// data dir's free space, and the HTTP server (JSON API, Prometheus
// metrics). Run blocks until the context ends and shuts every part down.
//
// Overview of its parts: `Run(ctx, Options)`: wires everything of the central
// service — `service.go` opens the parts one step each (registry, stores,
// metrics, calibration, web, alerts, broker, ingest, HTTP, retention; each
// adds what closes it) and `run` starts the long-running ones in one errgroup;
// adapters between packages in `adapters.go`, `web.go`, `cases.go`,
// `calibration.go` (`EvidenceMeters`: the calibration register as the evidence
// export reads it, also used by `sossego evidence export`), `notify.go` (it
// serves no handler of its own: every `/api/v1` route is `dashboard`'s).
package central

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/broker"
	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store/sqlitestore"
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
	Sync         sqlitestore.Sync
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
	case "", sqlitestore.SyncFull, sqlitestore.SyncNormal:
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
