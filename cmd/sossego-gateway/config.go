package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/internal/wire"
)

// Config is the YAML configuration of the gateway daemon (docs/gateway.md
// documents every field; docs/sossego-gateway.example.yaml is a complete
// example). Unknown keys are errors. Zero values take the defaults of
// defaultConfig.
type Config struct {
	Municipality string `yaml:"municipality"`
	Gateway      string `yaml:"gateway"`
	Sensor       string `yaml:"sensor"`
	StateDir     string `yaml:"state_dir"`
	LogLevel     string `yaml:"log_level"`    // debug | info | warn | error
	ClockSource  string `yaml:"clock_source"` // reported when synchronised: ntp | gps

	Meter  MeterConfig  `yaml:"meter"`
	Env    EnvConfig    `yaml:"env"`
	MQTT   MQTTConfig   `yaml:"mqtt"`
	Outbox OutboxConfig `yaml:"outbox"`
	Batch  BatchConfig  `yaml:"batch"`
	Replay ReplayConfig `yaml:"replay"`

	StatusInterval time.Duration `yaml:"status_interval"`
}

// MeterConfig selects and configures the meter driver.
type MeterConfig struct {
	Type         string  `yaml:"type"` // sim | pcbartists | sen0232 | nsrt | xl2 | pcm
	SampleRateHz float64 `yaml:"sample_rate_hz"`

	I2CBus   string `yaml:"i2c_bus"`   // pcbartists, sen0232: periph bus name, "" = first
	I2CAddr  uint16 `yaml:"i2c_addr"`  // 0 = driver default
	ADCInput int    `yaml:"adc_input"` // sen0232: ADS1115 input 0–3
	Serial   string `yaml:"serial"`    // sen0232: id in records (the module has none)

	SerialPort   string `yaml:"serial_port"`   // nsrt, xl2
	CalibratedAt string `yaml:"calibrated_at"` // xl2, nsrt: YYYY-MM-DD of the last calibration

	SimScenario string  `yaml:"sim_scenario"`
	SimSeed     int64   `yaml:"sim_seed"`
	SimSpeed    float64 `yaml:"sim_speed"`

	PCMInput      string  `yaml:"pcm_input"` // file path, or "-" for stdin (arecord … | sossego-gateway)
	PCMFormat     string  `yaml:"pcm_format"`
	PCMSampleRate int     `yaml:"pcm_sample_rate"`
	PCMChannels   int     `yaml:"pcm_channels"`
	PCMOffsetDB   float64 `yaml:"pcm_offset_db"`
}

// MQTTConfig is the broker connection.
type MQTTConfig struct {
	Broker               string        `yaml:"broker"`
	Username             string        `yaml:"username"`
	Password             string        `yaml:"password"`
	PasswordFile         string        `yaml:"password_file"`
	CAFile               string        `yaml:"ca_file"`
	CertFile             string        `yaml:"cert_file"`
	KeyFile              string        `yaml:"key_file"`
	ServerName           string        `yaml:"server_name"`
	KeepAlive            time.Duration `yaml:"keepalive"`
	MaxReconnectInterval time.Duration `yaml:"max_reconnect_interval"`
}

// OutboxConfig sizes the durable queue.
type OutboxConfig struct {
	CapacityRecords int    `yaml:"capacity_records"`
	CapacityBytes   int64  `yaml:"capacity_bytes"` // 0: bounded by the free disk space only
	ReserveBytes    int64  `yaml:"reserve_bytes"`  // ballast kept for acks on a full disk; 0: none
	MemoryRecords   int    `yaml:"memory_records"` // held in memory while the disk refuses writes
	FullPolicy      string `yaml:"full_policy"`    // drop-new | stop-sampling
}

// outboxOptions maps the configuration onto gateway.OutboxOptions.
func (c OutboxConfig) outboxOptions() gateway.OutboxOptions {
	reserve := c.ReserveBytes
	if reserve == 0 {
		reserve = -1 // none
	}
	return gateway.OutboxOptions{CapacityRecords: c.CapacityRecords, CapacityBytes: c.CapacityBytes, Reserve: reserve}
}

// BatchConfig says how records are grouped into messages.
type BatchConfig struct {
	Records int           `yaml:"records"`
	MaxAge  time.Duration `yaml:"max_age"`
}

// ReplayConfig bounds sending.
type ReplayConfig struct {
	RatePerSecond float64       `yaml:"rate_per_second"`
	Window        int           `yaml:"window"`
	InFlight      int           `yaml:"in_flight"`
	AckTimeout    time.Duration `yaml:"ack_timeout"`
}

func defaultConfig() Config {
	d := gateway.DefaultOptions()
	return Config{
		Sensor: "m1", StateDir: "/var/lib/sossego-gateway", LogLevel: "info", ClockSource: "ntp",
		Meter: MeterConfig{Type: "sim", SampleRateHz: 10, SimScenario: "quiet_night", SimSpeed: 1,
			PCMInput: "-", PCMFormat: "s32le", PCMSampleRate: 48000, PCMChannels: 1},
		Env:  defaultEnvConfig(),
		MQTT: MQTTConfig{Broker: "tcp://localhost:1883", KeepAlive: 30 * time.Second, MaxReconnectInterval: time.Minute},
		Outbox: OutboxConfig{CapacityRecords: 3 * 86400, ReserveBytes: gateway.DefaultReserve, MemoryRecords: d.MemoryRecords,
			FullPolicy: string(d.FullPolicy)},
		Batch:  BatchConfig{Records: d.BatchRecords, MaxAge: d.BatchMaxAge},
		Replay: ReplayConfig{RatePerSecond: d.ReplayRate, Window: d.Window, InFlight: d.InFlight, AckTimeout: d.AckTimeout},

		StatusInterval: d.StatusInterval,
	}
}

// parseConfig decodes YAML strictly over the defaults.
func parseConfig(r io.Reader) (Config, error) {
	c := defaultConfig()
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return c, fmt.Errorf("configuração: leitura: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return c, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("configuração: %w", err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return c, errors.New("configuração: mais de um documento YAML no arquivo")
	}
	return c, nil
}

var meterTypes = []string{"sim", "pcbartists", "sen0232", "nsrt", "xl2", "pcm"}

// validate checks the configuration without I/O; messages are for the
// operator (pt-BR).
func (c Config) validate() error {
	var p problems
	c.validateIdentity(&p)
	c.Meter.validate(&p)
	p = append(p, c.Env.validate()...)
	c.MQTT.validate(&p)
	c.validateQueues(&p)
	return errors.Join(p...)
}

// problems collects the configuration's errors, in the order found.
type problems []error

func (p *problems) add(f string, a ...any) { *p = append(*p, fmt.Errorf(f, a...)) }

// validateIdentity checks the ids, the state folder, the log level and the
// clock source.
func (c Config) validateIdentity(p *problems) {
	for _, id := range []struct{ k, v string }{{"municipality", c.Municipality}, {"gateway", c.Gateway}, {"sensor", c.Sensor}} {
		if !wire.ValidID(id.v) {
			p.add("%s %q inválido: use 1–64 caracteres [a-z0-9_-], começando por letra ou dígito", id.k, id.v)
		}
	}
	if c.StateDir == "" {
		p.add("state_dir vazio: informe a pasta de estado (chave e fila)")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		p.add("log_level %q inválido: use debug, info, warn ou error", c.LogLevel)
	}
	switch c.ClockSource {
	case "ntp", "gps":
	default:
		p.add("clock_source %q inválido: use ntp ou gps", c.ClockSource)
	}
}

// validate checks the meter's type, sampling rate, serial port and date of
// calibration.
func (m MeterConfig) validate(p *problems) {
	known := false
	for _, t := range meterTypes {
		known = known || t == m.Type
	}
	if !known {
		p.add("meter.type %q inválido: use %v", m.Type, meterTypes)
	}
	if m.SampleRateHz < 1 || m.SampleRateHz > 100 {
		p.add("meter.sample_rate_hz %v fora de 1–100", m.SampleRateHz)
	}
	if m.Type == "nsrt" || m.Type == "xl2" {
		if m.SerialPort == "" {
			p.add("meter.serial_port é obrigatório para o medidor %s (ex.: /dev/ttyACM0)", m.Type)
		}
	}
	if m.CalibratedAt != "" {
		if m.Type != "nsrt" && m.Type != "xl2" {
			p.add("meter.calibrated_at só se aplica aos medidores xl2 e nsrt (o medidor %s não registra calibração)", m.Type)
		}
		if _, err := parseDate(m.CalibratedAt); err != nil {
			p.add("meter.calibrated_at %q inválido: use a data AAAA-MM-DD do certificado de calibração", m.CalibratedAt)
		}
	}
}

// validate checks the broker, the client certificate pair and the password.
func (m MQTTConfig) validate(p *problems) {
	if m.Broker == "" {
		p.add("mqtt.broker vazio (ex.: tcp://central:1883 ou mqtts://central:8883)")
	}
	if (m.CertFile == "") != (m.KeyFile == "") {
		p.add("mqtt.cert_file e mqtt.key_file devem ser informados juntos")
	}
	if m.Password != "" && m.PasswordFile != "" {
		p.add("use mqtt.password ou mqtt.password_file, não os dois")
	}
}

// validateQueues checks the outbox, the batches, the replay and the status
// interval against one another.
func (c Config) validateQueues(p *problems) {
	if c.Outbox.CapacityRecords < c.Batch.Records || c.Outbox.CapacityRecords <= 0 {
		p.add("outbox.capacity_records %d precisa comportar ao menos um lote (%d registros)", c.Outbox.CapacityRecords, c.Batch.Records)
	}
	if c.Outbox.CapacityBytes < 0 {
		p.add("outbox.capacity_bytes %d negativo: use 0 (limitado só pelo espaço livre no disco) ou um tamanho em bytes", c.Outbox.CapacityBytes)
	}
	if c.Outbox.ReserveBytes < 0 || c.Outbox.ReserveBytes > 1<<30 {
		p.add("outbox.reserve_bytes %d fora de 0–1073741824 (0: sem reserva)", c.Outbox.ReserveBytes)
	}
	if c.Outbox.MemoryRecords < c.Batch.Records {
		p.add("outbox.memory_records %d precisa comportar ao menos um lote (%d registros)", c.Outbox.MemoryRecords, c.Batch.Records)
	}
	if !gateway.FullPolicy(c.Outbox.FullPolicy).Valid() {
		p.add("outbox.full_policy %q inválido: use drop-new ou stop-sampling", c.Outbox.FullPolicy)
	}
	if c.Batch.Records < 1 || c.Batch.Records > wire.MaxRecords {
		p.add("batch.records %d fora de 1–%d", c.Batch.Records, wire.MaxRecords)
	}
	if c.Batch.MaxAge < time.Second {
		p.add("batch.max_age %s menor que 1s", c.Batch.MaxAge)
	}
	if c.Batch.MaxAge > wire.MaxBatchSpan {
		p.add("batch.max_age %s maior que %s: o serviço central recusa lotes que cobrem mais de %s", c.Batch.MaxAge, wire.MaxBatchSpan, wire.MaxBatchSpan)
	}
	if c.Replay.RatePerSecond <= 0 || c.Replay.Window < 1 || c.Replay.AckTimeout < time.Second {
		p.add("replay: rate_per_second > 0, window ≥ 1 e ack_timeout ≥ 1s")
	}
	if c.Replay.InFlight < 1 || c.Replay.InFlight > c.Replay.Window {
		p.add("replay.in_flight %d fora de 1–window (%d)", c.Replay.InFlight, c.Replay.Window)
	}
	if c.StatusInterval < time.Second {
		p.add("status_interval %s menor que 1s", c.StatusInterval)
	}
}

// gatewayOptions maps the configuration onto gateway.Options.
func (c Config) gatewayOptions(version string) gateway.Options {
	return gateway.Options{
		Municipality: c.Municipality, Gateway: c.Gateway, Sensor: c.Sensor,
		SamplePeriod: time.Duration(float64(time.Second) / c.Meter.SampleRateHz),
		BatchRecords: c.Batch.Records, BatchMaxAge: c.Batch.MaxAge, FullPolicy: gateway.FullPolicy(c.Outbox.FullPolicy),
		ReplayRate: c.Replay.RatePerSecond, Window: c.Replay.Window, InFlight: c.Replay.InFlight, AckTimeout: c.Replay.AckTimeout,
		MemoryRecords: c.Outbox.MemoryRecords, StatusInterval: c.StatusInterval, Version: version,
		Env: c.Env.gatewayOptions(), CheckDir: filepath.Join(c.StateDir, gateway.CheckDir),
	}
}
