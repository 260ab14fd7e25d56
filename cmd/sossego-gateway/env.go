package main

import (
	"fmt"
	"time"

	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/host/v3"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/bme280"
	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/internal/wire"
)

// EnvConfig is the optional environmental sensor (none by default). Its
// readings go out on sossego/v1/{municipality}/{gateway}/{sensor}/env
// through the same outbox, seq space and ack as the levels.
type EnvConfig struct {
	Type         string        `yaml:"type"`          // "" (none) | bme280
	I2CBus       string        `yaml:"i2c_bus"`       // periph bus name, "" = first
	Address      uint16        `yaml:"address"`       // 0x76 (SDO to GND) or 0x77
	Interval     time.Duration `yaml:"interval"`      // between readings
	Sensor       string        `yaml:"sensor"`        // sensor id in the env topic; "" = the top-level sensor
	BatchRecords int           `yaml:"batch_records"` // readings per message
	BatchMaxAge  time.Duration `yaml:"batch_max_age"` // longest a reading waits for its message
}

func defaultEnvConfig() EnvConfig {
	d := gateway.DefaultEnvOptions()
	return EnvConfig{Address: bme280.DefaultAddr, Interval: d.Interval, BatchRecords: d.BatchRecords, BatchMaxAge: d.BatchMaxAge}
}

// validate checks the env section without I/O (pt-BR messages).
func (e EnvConfig) validate() []error {
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
	switch e.Type {
	case "":
		return nil // no environmental sensor: the other keys do not matter
	case "bme280":
	default:
		bad("env.type %q inválido: use bme280 ou deixe vazio (sem sensor ambiental)", e.Type)
	}
	if e.Address != 0x76 && e.Address != 0x77 {
		bad("env.address %#x inválido: o BME280 responde em 0x76 (SDO no GND) ou 0x77 (SDO no 3,3 V)", e.Address)
	}
	if e.Interval < time.Second || e.Interval > time.Hour {
		bad("env.interval %s fora de 1s–1h", e.Interval)
	}
	if e.Sensor != "" && !wire.ValidID(e.Sensor) {
		bad("env.sensor %q inválido: use 1–64 caracteres [a-z0-9_-], começando por letra ou dígito", e.Sensor)
	}
	if e.BatchRecords < 1 || e.BatchRecords > wire.MaxRecords {
		bad("env.batch_records %d fora de 1–%d", e.BatchRecords, wire.MaxRecords)
	}
	if e.BatchMaxAge < time.Second {
		bad("env.batch_max_age %s menor que 1s", e.BatchMaxAge)
	}
	// A batch spans at most its age limit, or its readings' count times the
	// interval; the central refuses batches spanning more than an hour.
	if span := min(e.BatchMaxAge, time.Duration(max(e.BatchRecords-1, 0))*e.Interval); span > wire.MaxBatchSpan {
		bad("env: um lote cobriria até %s (env.batch_max_age %s; %d leituras a cada %s), e o serviço central recusa lotes de mais de %s; reduza env.batch_max_age ou env.batch_records",
			span, e.BatchMaxAge, e.BatchRecords, e.Interval, wire.MaxBatchSpan)
	}
	return errs
}

// gatewayOptions maps the section onto gateway.EnvOptions (zero when no
// sensor is configured).
func (e EnvConfig) gatewayOptions() gateway.EnvOptions {
	if e.Type == "" {
		return gateway.EnvOptions{}
	}
	return gateway.EnvOptions{Sensor: e.Sensor, Interval: e.Interval, BatchRecords: e.BatchRecords, BatchMaxAge: e.BatchMaxAge}
}

// openEnv opens the configured environmental sensor. The returned closer
// releases the bus (after Halt).
func openEnv(c EnvConfig) (bridge.EnvSensor, func(), error) {
	noop := func() {}
	switch c.Type {
	case "bme280":
		if _, err := host.Init(); err != nil {
			return nil, noop, fmt.Errorf("periph host: %w", err)
		}
		bus, err := i2creg.Open(c.I2CBus)
		if err != nil {
			return nil, noop, fmt.Errorf("barramento I²C %q: %w", c.I2CBus, err)
		}
		d, err := bme280.NewI2C(bus, &bme280.Opts{Addr: c.Address})
		if err != nil {
			_ = bus.Close()
			return nil, noop, err
		}
		return d, func() { _ = bus.Close() }, nil
	}
	return nil, noop, fmt.Errorf("sensor ambiental %q desconhecido", c.Type)
}
