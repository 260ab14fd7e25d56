package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sossego/sossego/internal/central"
	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

func init() {
	register("central", "serviço central: broker MQTT, ingestão, alertas, API HTTP", runCentral)
}

func runCentral(ctx context.Context, args []string, io stdio) int {
	o, code, ok := centralOptions(args, io)
	if !ok {
		return code
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	reload := make(chan struct{})
	go func() {
		for range hup {
			select {
			case reload <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	o.Reload = reload
	if err := central.Run(ctx, o); err != nil {
		fmt.Fprintf(io.err, "sossego central: %s\n", describe(err))
		return 1
	}
	return 0
}

const centralUsage = `uso: sossego central --registry ARQUIVO [opções]

Serviço central: broker MQTT embutido (ou um externo com --mqtt-url), ingestão,
alertas, painel e API HTTP. --registry é obrigatório: o cadastro dos gateways
(com suas chaves públicas), sensores e estabelecimentos; modelo comentado em
docs/registry.example.yaml. Para experimentar sem cadastro, use sossego demo.`

// centralFlags holds the flags that need more than a flag.Value to become
// the service's options; the rest go straight into central.Options.
type centralFlags struct {
	sync, logLevel, minFreeDisk   string
	mqttPassFile, influxTokenFile string
	retainDays, evidenceYears     int
	quota                         ingest.Quota
	quotaBytes, quotaByteBurst    string
}

// centralOptions turns the flags into the service's options, checking every
// value before anything is created or written; !ok means exit with code.
func centralOptions(args []string, io stdio) (o central.Options, code int, ok bool) {
	fs := newFlags("central", centralUsage, io)
	f := centralFlags{quota: ingest.DefaultQuota}
	f.serviceFlags(fs, &o)
	f.mqttFlags(fs, &o)
	f.influxFlags(fs, &o)
	f.retentionFlags(fs, &o)
	httpFlags(fs, &o)
	f.quotaFlags(fs)
	if code, ok := fs.parse(args); !ok {
		return o, code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "sossego central: argumento inesperado %q\n", fs.Arg(0))
		return o, 2, false
	}
	if !f.quotaOptions(&o, io) {
		return o, 2, false
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(f.logLevel)); err != nil {
		fmt.Fprintf(io.err, "sossego central: --log %q inválido; use debug, info, warn ou error\n", f.logLevel)
		return o, 2, false
	}
	n, err := central.ParseSize(f.minFreeDisk)
	if err != nil {
		fmt.Fprintf(io.err, "sossego central: --min-free-disk: %v\n", err)
		return o, 2, false
	}
	o.MinFreeDisk = n
	if n == 0 {
		o.MinFreeDisk = -1 // no threshold
	}
	if !f.retentionOptions(&o, io) {
		return o, 2, false
	}
	if o.HTTPLimits.MaxConns < 1 || o.HTTPLimits.MaxConnsPerIP < 1 {
		fmt.Fprintln(io.err, "sossego central: --http-max-conns e --http-max-conns-per-ip precisam ser pelo menos 1")
		return o, 2, false
	}
	o.Sync = sqlitestore.Sync(f.sync)
	// Every value is checked before anything is created or written.
	if err := checkAddresses(&o); err != nil {
		fmt.Fprintf(io.err, "sossego central: %v\n", err)
		return o, 2, false
	}
	if err := o.Check(); err != nil {
		fmt.Fprintf(io.err, "sossego central: %s\n", describe(err))
		return o, 2, false
	}
	o.Log = slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{Level: lvl}))
	if !f.secrets(&o, io) {
		return o, 1, false
	}
	return o, 0, true
}

// serviceFlags: the data folder, the HTTP address, the register, codes and
// notification settings, logging and durability.
func (f *centralFlags) serviceFlags(fs *flagSet, o *central.Options) {
	fs.StringVar(&o.DataDir, "data-dir", central.DefaultDataDir, "pasta dos bancos SQLite (leituras, casos) e do cadastro padrão")
	fs.StringVar(&o.HTTP, "http", central.DefaultHTTP, "endereço HTTP da API (/api/v1) e das métricas (/metrics)")
	fs.StringVar(&o.Registry, "registry", "", "arquivo YAML do cadastro (obrigatório; recarregado ao mudar ou com SIGHUP)")
	fs.StringVar(&f.minFreeDisk, "min-free-disk", "1GiB", "espaço livre mínimo no disco de --data-dir; abaixo dele a saúde (/api/v1/health) fica degradada "+
		"(ex.: 500MB, 2GiB; 0 desliga o aviso)")
	fs.StringVar(&f.sync, "sync", "full", "durabilidade do SQLite: full (sobrevive a queda de energia) ou normal")
	fs.StringVar(&f.logLevel, "log", "info", "nível de log: debug, info, warn, error")
	fs.StringVar(&o.NotifyConfig, "notify-config", "", "arquivo YAML das notificações (e-mail, webhooks, push, plantão; docs/notifications.md); "+
		"vazio: configuradas no painel")
	fs.StringVar(&o.CodesDir, "codes-dir", "", "pasta com códigos de posturas adicionais (YAML; veja sossego codes validate)")
}

// mqttFlags: the embedded broker's listeners and TLS, or an external broker.
func (f *centralFlags) mqttFlags(fs *flagSet, o *central.Options) {
	fs.StringVar(&o.MQTTListen, "mqtt-listen", central.DefaultMQTTListen, "endereço do broker MQTT embutido (ignorado com --mqtt-url)")
	fs.StringVar(&o.MQTTTLSListen, "mqtt-tls-listen", "", "endereço TLS do broker embutido para gateways com certificado (ex.: :8883)")
	fs.StringVar(&o.TLSCert, "tls-cert", "", "certificado PEM do broker para --mqtt-tls-listen")
	fs.StringVar(&o.TLSKey, "tls-key", "", "chave PEM do certificado do broker")
	fs.StringVar(&o.TLSClientCA, "tls-client-ca", "", "CA PEM que assina os certificados dos gateways (CN = id do gateway)")
	fs.StringVar(&o.MQTTURL, "mqtt-url", "", "broker MQTT externo (ex.: tcp://127.0.0.1:1883); nada é embutido")
	fs.StringVar(&o.MQTTUser, "mqtt-user", central.ServiceUser, "usuário do serviço central no broker externo")
	fs.StringVar(&f.mqttPassFile, "mqtt-password-file", "", "arquivo com a senha do serviço no broker externo (ou variável SOSSEGO_MQTT_PASSWORD)")
	fs.StringVar(&o.MQTTClientID, "mqtt-client-id", "sossego-central", "client id estável (a sessão persistente do broker fica nele)")
}

// influxFlags: where readings are queried from, and the InfluxDB mirror.
func (f *centralFlags) influxFlags(fs *flagSet, o *central.Options) {
	fs.StringVar(&o.Store, "store", "sqlite", "consultas de leituras: sqlite ou influx (SQLite local sempre guarda tudo)")
	fs.StringVar(&o.InfluxURL, "influx-url", "", "URL do InfluxDB (ex.: http://127.0.0.1:8086)")
	fs.StringVar(&o.InfluxBucket, "influx-bucket", "sossego/autogen", "bucket (InfluxDB 1.8: banco/política)")
	fs.StringVar(&o.InfluxToken, "influx-token", "", "token (InfluxDB 1.8: usuário:senha ou vazio); prefira SOSSEGO_INFLUX_TOKEN")
	fs.StringVar(&f.influxTokenFile, "influx-token-file", "", "arquivo com o token do InfluxDB")
	fs.StringVar(&o.InfluxOrg, "influx-org", "", "organização (vazia no InfluxDB 1.8)")
}

// retentionFlags: how far from the receive time a record may be, and how
// long readings are kept.
func (f *centralFlags) retentionFlags(fs *flagSet, o *central.Options) {
	fs.DurationVar(&o.Skew, "max-future", wire.DefaultSkew, "quanto um registro pode estar no futuro em relação ao recebimento")
	fs.DurationVar(&o.Stale, "max-age", wire.DefaultStale, "quanto um registro pode ser antigo (reenvio após falha longa)")
	fs.IntVar(&f.retainDays, "retain-days", 90, "apaga leituras de 1 s, lotes assinados e cartas mortas recebidos há mais de N dias, mantendo "+
		"os de todo alerta, caso ou constatação (com um dia de margem; veja --evidence-years), os ainda não enviados ao InfluxDB e os ainda "+
		"não agregados no longo prazo; precisa ser maior que --max-age mais 1 dia; 0 guarda tudo")
	fs.IntVar(&f.evidenceYears, "evidence-years", 5, "por quantos anos, depois de encerrado o caso (ou o alerta sem caso), ficam as leituras em que ele se apoia")
}

// httpFlags: the dashboard's origins, cookies, proxies and connection limits.
func httpFlags(fs *flagSet, o *central.Options) {
	fs.Func("origin", "origem adicional aceita pelo painel (ex.: https://ruido.prefeitura.gov.br atrás de um proxy); repetível", func(v string) error {
		o.Origins = append(o.Origins, v)
		return nil
	})
	fs.BoolVar(&o.SecureCookies, "secure-cookies", false, "marca o cookie de sessão como Secure (TLS terminado num proxy)")
	fs.Func("trusted-proxy", "proxy reverso (endereço ou rede, ex.: 10.0.0.5 ou 10.0.0.0/24) cujo X-Forwarded-For identifica o cliente "+
		"no limite de tentativas de login; isento do limite de conexões por origem; repetível", func(v string) error {
		o.TrustedProxies = append(o.TrustedProxies, v)
		return nil
	})
	fs.IntVar(&o.HTTPLimits.MaxConns, "http-max-conns", central.DefaultHTTPMaxConns, "conexões HTTP abertas ao mesmo tempo; além disso, 503 na hora")
	fs.IntVar(&o.HTTPLimits.MaxConnsPerIP, "http-max-conns-per-ip", central.DefaultHTTPMaxConnsPerIP,
		"conexões HTTP abertas de um mesmo endereço (IPv6: mesma /64); proxies de --trusted-proxy não contam")
}

// quotaFlags: each gateway's message and byte quota.
func (f *centralFlags) quotaFlags(fs *flagSet) {
	fs.Float64Var(&f.quota.MessagesPerSecond, "gateway-msgs-per-s", f.quota.MessagesPerSecond,
		"mensagens por segundo que cada gateway pode enviar em regime (cota; docs/wire.md, Limites)")
	fs.Float64Var(&f.quota.MessageBurst, "gateway-msgs-burst", f.quota.MessageBurst,
		"mensagens que um gateway pode enviar de uma vez acima do regime (a fila de 3 dias cabe)")
	fs.StringVar(&f.quotaBytes, "gateway-bytes-per-s", "128KiB", "bytes por segundo que cada gateway pode enviar em regime")
	fs.StringVar(&f.quotaByteBurst, "gateway-bytes-burst", "64MiB", "bytes que um gateway pode enviar de uma vez acima do regime")
}

// quotaOptions checks the quota flags and sets o.IngestQuota; false means
// the problem was printed (exit status 2).
func (f *centralFlags) quotaOptions(o *central.Options, io stdio) bool {
	quota := f.quota
	if quota.MessagesPerSecond <= 0 || quota.MessageBurst < 1 {
		fmt.Fprintln(io.err, "sossego central: --gateway-msgs-per-s precisa ser maior que 0 e --gateway-msgs-burst pelo menos 1")
		return false
	}
	rate, err := central.ParseSize(f.quotaBytes)
	if err == nil && rate == 0 {
		err = fmt.Errorf("use mais que 0 (ex.: 128KiB)")
	}
	if err != nil {
		fmt.Fprintf(io.err, "sossego central: --gateway-bytes-per-s: %v\n", err)
		return false
	}
	burst, err := central.ParseSize(f.quotaByteBurst)
	if err != nil {
		fmt.Fprintf(io.err, "sossego central: --gateway-bytes-burst: %v\n", err)
		return false
	}
	if burst < wire.MaxPayload {
		fmt.Fprintf(io.err, "sossego central: --gateway-bytes-burst %s é pouco: cabe nele menos que uma mensagem do maior tamanho aceito (%d bytes)\n",
			f.quotaByteBurst, wire.MaxPayload)
		return false
	}
	quota.BytesPerSecond, quota.ByteBurst = float64(rate), float64(burst)
	o.IngestQuota = quota
	return true
}

// retentionOptions checks the retention flags and sets o.Retain and
// o.EvidenceRetention; false means the problem was printed (exit status 2).
func (f *centralFlags) retentionOptions(o *central.Options, io stdio) bool {
	o.Retain = time.Duration(f.retainDays) * 24 * time.Hour
	if f.evidenceYears < 1 {
		fmt.Fprintf(io.err, "sossego central: --evidence-years %d inválido; use pelo menos 1 ano\n", f.evidenceYears)
		return false
	}
	o.EvidenceRetention = time.Duration(f.evidenceYears) * 365 * 24 * time.Hour
	if f.retainDays < 0 {
		fmt.Fprintf(io.err, "sossego central: --retain-days %d inválido; use um número de dias (0 guarda tudo)\n", f.retainDays)
		return false
	}
	if err := central.CheckRetain(o.Retain, o.Stale, o.DisableAlerts); err != nil {
		fmt.Fprintf(io.err, "sossego central: --retain-days %d é curto demais: precisa ser pelo menos --max-age (%s) mais 1 dia, "+
			"senão um lote apagado poderia ser reenviado pelo gateway e gravado de novo\n", f.retainDays, days(o.Stale))
		return false
	}
	return true
}

// secrets reads the MQTT password and the InfluxDB token from their files
// or variables; false means a file could not be read (exit status 1).
func (f *centralFlags) secrets(o *central.Options, io stdio) bool {
	o.MQTTPassword = os.Getenv("SOSSEGO_MQTT_PASSWORD")
	if f.mqttPassFile != "" {
		b, err := os.ReadFile(f.mqttPassFile)
		if err != nil {
			fmt.Fprintf(io.err, "sossego central: senha MQTT (--mqtt-password-file): %s\n", describe(err))
			return false
		}
		o.MQTTPassword = strings.TrimSpace(string(b))
	}
	if o.InfluxToken == "" {
		o.InfluxToken = os.Getenv("SOSSEGO_INFLUX_TOKEN")
	}
	if f.influxTokenFile != "" {
		b, err := os.ReadFile(f.influxTokenFile)
		if err != nil {
			fmt.Fprintf(io.err, "sossego central: token InfluxDB (--influx-token-file): %s\n", describe(err))
			return false
		}
		o.InfluxToken = strings.TrimSpace(string(b))
	}
	return true
}

// days writes a duration in days when it is a whole number of them.
func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d dias", d/(24*time.Hour))
	}
	return d.String()
}

// checkAddresses checks the listen addresses and the URLs of the external
// broker and InfluxDB, so that a typo stops the service before its data
// folder is made, in Portuguese.
func checkAddresses(o *central.Options) error {
	listen := []struct{ flag, v string }{{"--http", o.HTTP}, {"--mqtt-listen", o.MQTTListen}, {"--mqtt-tls-listen", o.MQTTTLSListen}}
	for _, a := range listen {
		if a.v == "" {
			continue
		}
		if err := checkListen(a.v); err != nil {
			return fmt.Errorf("%s %q inválido: %s; use host:porta, como 127.0.0.1:8080 ou :8080", a.flag, a.v, err)
		}
	}
	urls := []struct{ flag, v, example string }{{"--mqtt-url", o.MQTTURL, "tcp://127.0.0.1:1883"}, {"--influx-url", o.InfluxURL, "http://127.0.0.1:8086"}}
	schemes := map[string][]string{"--mqtt-url": {"tcp", "ssl", "tls", "mqtt", "mqtts", "ws", "wss"}, "--influx-url": {"http", "https"}}
	for _, u := range urls {
		if u.v == "" {
			continue
		}
		pu, err := url.Parse(u.v)
		if err != nil || pu.Host == "" || !slices.Contains(schemes[u.flag], pu.Scheme) {
			return fmt.Errorf("%s %q inválida: use esquema://host:porta, com esquema %s (ex.: %s)", u.flag, u.v,
				strings.Join(schemes[u.flag], ", "), u.example)
		}
	}
	return nil
}

// checkListen says, in Portuguese, what is wrong with a listen address.
func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	switch {
	case err != nil && !strings.Contains(addr, ":"):
		return errors.New("falta a porta")
	case err != nil:
		return errors.New("não é host:porta")
	case strings.ContainsAny(host, " /"):
		return fmt.Errorf("host %q inválido", host)
	}
	if n, err := strconv.Atoi(port); err == nil {
		if n < 0 || n > 65535 {
			return fmt.Errorf("porta %d fora de 0–65535", n)
		}
		return nil
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("porta %q inválida", port)
	}
	return nil
}
