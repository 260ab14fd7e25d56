package gateway

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/wire"
)

// EnvSensor is what the gateway needs from an environmental sensor
// (temperature, humidity, pressure). bridge.EnvSensor — firmware-bridge/bme280
// among others — satisfies it; halting the sensor is the caller's job.
type EnvSensor interface {
	SenseEnv(e *bridge.Env) error
	String() string
}

var _ EnvSensor = bridge.EnvSensor(nil)

// EnvOptions configure environmental sampling. Zero values take the
// defaults of DefaultEnvOptions; Sensor defaults to Options.Sensor.
type EnvOptions struct {
	// Sensor is the sensor id in the env topic
	// sossego/v1/{municipality}/{gateway}/{sensor}/env. The central service
	// must know it; the default (the meter's sensor id) files the readings
	// under the monitoring point they were taken at.
	Sensor string
	// Interval between readings (default 60 s). The environmental sensor
	// has its own loop: it never runs at the meter's rate.
	Interval time.Duration
	// BatchRecords is the number of readings per env batch (default 10).
	BatchRecords int
	// BatchMaxAge is the longest a reading waits in an open batch, and the
	// longest record-time span of a batch (default 10 min).
	BatchMaxAge time.Duration
}

// DefaultEnvOptions returns the documented defaults (Sensor stays empty:
// it follows Options.Sensor).
func DefaultEnvOptions() EnvOptions {
	return EnvOptions{Interval: time.Minute, BatchRecords: 10, BatchMaxAge: 10 * time.Minute}
}

func (o *EnvOptions) fill(sensor string) {
	d := DefaultEnvOptions()
	if o.Sensor == "" {
		o.Sensor = sensor
	}
	if o.Interval <= 0 {
		o.Interval = d.Interval
	}
	if o.BatchRecords <= 0 {
		o.BatchRecords = d.BatchRecords
	}
	if o.BatchMaxAge <= 0 {
		o.BatchMaxAge = d.BatchMaxAge
	}
}

// Validate checks the options without I/O.
func (o EnvOptions) Validate() error {
	if o.Sensor != "" && !wire.ValidID(o.Sensor) {
		return fmt.Errorf("gateway: env sensor id %q must match [a-z0-9][a-z0-9_-]{0,63}", o.Sensor)
	}
	if o.BatchRecords > wire.MaxRecords {
		return fmt.Errorf("gateway: env batch of %d readings exceeds the wire limit of %d", o.BatchRecords, wire.MaxRecords)
	}
	return nil
}

// SetEnvSensor adds an environmental sensor to the gateway. Call it before
// Run. Its readings are sampled every Options.Env.Interval, batched and
// published on the env topic through the same outbox as the levels: one seq
// space, one ack, one replay order (docs/wire.md).
func (g *Gateway) SetEnvSensor(s EnvSensor) {
	g.env = s
}

// EnvTopic is where the gateway publishes environmental readings.
func (g *Gateway) EnvTopic() string { return g.envTopic }

// EnvErrors is the number of environmental readings that failed or were
// refused (sensor error, value outside the wire contract's range).
func (g *Gateway) EnvErrors() uint64 { return g.envErrors.Load() }

// envState is the part of Gateway that environmental sampling adds.
type envState struct {
	env       EnvSensor
	envTopic  string
	envErrors atomic.Uint64
}

// sampleEnv reads the environmental sensor at its own interval (the first
// reading at once) and stores full or due env batches in the outbox. On the
// way out the open batch is stored too.
func (g *Gateway) sampleEnv(ctx context.Context) error {
	if g.env == nil {
		return nil
	}
	dbctx := context.WithoutCancel(ctx) // a cut batch must reach the outbox
	o := g.opts.Env
	bat := &EnvBatcher{MaxRecords: o.BatchRecords, MaxAge: o.BatchMaxAge}
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	due := time.NewTimer(o.BatchMaxAge)
	due.Stop()
	defer due.Stop()

	read := func() {
		now := g.now()
		if g.opts.FullPolicy == StopSampling && g.noRoom() {
			if p, ok := bat.Flush(); ok {
				g.enqueueEnv(dbctx, p)
			}
			_ = g.box.Drop(dbctx, 1) // one reading not taken
			return
		}
		var e bridge.Env
		err := g.env.SenseEnv(&e)
		var rec wire.EnvRecord
		if err == nil {
			rec, err = EnvRecordOf(e, now)
		}
		if err == nil && (e.Device.Model == "" || e.Device.Serial == "") {
			err = errors.New("gateway: env sensor reports no model or serial")
		}
		if err != nil {
			if n := g.envErrors.Add(1); n == 1 || n%60 == 0 {
				g.log.Warn("leitura do sensor ambiental falhou", "sensor", g.env.String(), "erro", err, "failures", n)
			}
			return
		}
		clk := g.readClock(now)
		for _, p := range bat.Add(rec, envDevice(e.Device), clk, now) {
			g.enqueueEnv(dbctx, p)
		}
		if bat.Len() == 1 { // a new batch opened: it is due MaxAge from now
			due.Reset(o.BatchMaxAge)
		}
	}
	read()
	for {
		select {
		case <-ctx.Done():
			if p, ok := bat.Flush(); ok {
				g.enqueueEnv(dbctx, p)
			}
			return nil
		case <-due.C:
			if p, ok := bat.Due(g.now()); ok {
				g.enqueueEnv(dbctx, p)
			}
		case <-tick.C:
			read()
		}
	}
}

// enqueueEnv numbers, seals and stores an env batch (see store).
func (g *Gateway) enqueueEnv(ctx context.Context, p PendingEnv) {
	g.store(ctx, held{kind: wire.KindEnv, topic: g.envTopic, n: len(p.Env), build: func(seq uint64, now time.Time) wire.Batch {
		return wire.Batch{
			V: wire.Version, Kind: wire.KindEnv, Municipality: g.opts.Municipality, Gateway: g.opts.Gateway,
			Sensor: g.opts.Env.Sensor, Seq: seq, SentAt: now.Truncate(time.Millisecond), Device: p.Device,
			Clock: p.Clock, Env: p.Env,
		}
	}})
}

// envDevice returns d with the grade an environmental sensor is given when
// its driver names none: screening, since a BME280 and its kind are not
// certified instruments (the wire contract requires a grade on every batch).
func envDevice(d bridge.Device) bridge.Device {
	if d.Grade == "" {
		d.Grade = bridge.GradeScreening
	}
	return d
}

// Environmental ranges of the wire contract (internal/wire Validate).
const (
	minTempC, maxTempC       = -60, 90
	minHumidity, maxHumidity = 0, 100
	minPressure, maxPressure = 300, 1100
)

// EnvRecordOf converts a sensor reading into a wire record: t is the
// reading's time (now when the driver left it zero) in UTC to the
// millisecond, and each quantity the sensor measured is rounded to two
// decimals. A reading with no quantity, or with a value that is not finite
// or outside the wire contract's range, is refused: the central service
// would reject the whole batch it travels in.
func EnvRecordOf(e bridge.Env, now time.Time) (wire.EnvRecord, error) {
	at := e.At
	if at.IsZero() {
		at = now
	}
	r := wire.EnvRecord{T: at.UTC().Truncate(time.Millisecond)}
	for _, q := range []struct {
		has    bool
		v      float64
		lo, hi float64
		name   string
		unit   string
		dst    **float64
	}{
		{e.HasTemperature, e.TemperatureC, minTempC, maxTempC, "temperature", "°C", &r.TemperatureC},
		{e.HasHumidity, e.HumidityPct, minHumidity, maxHumidity, "humidity", "%RH", &r.HumidityPct},
		{e.HasPressure, e.PressureHPa, minPressure, maxPressure, "pressure", "hPa", &r.PressureHPa},
	} {
		if !q.has {
			continue
		}
		if math.IsNaN(q.v) || math.IsInf(q.v, 0) || q.v < q.lo || q.v > q.hi {
			return wire.EnvRecord{}, fmt.Errorf("gateway: env reading: %s %v %s outside %v..%v", q.name, q.v, q.unit, q.lo, q.hi)
		}
		v := round2(q.v)
		*q.dst = &v
	}
	if r.TemperatureC == nil && r.HumidityPct == nil && r.PressureHPa == nil {
		return wire.EnvRecord{}, errors.New("gateway: env reading without any quantity")
	}
	return r, nil
}

// EnvBatcher groups environmental readings into batches of at most
// MaxRecords readings spanning at most MaxAge of reading time and waiting
// at most MaxAge of wall time (passed in). Like Batcher, it cuts a batch when
// the device or the clock's synced flag or source changes and before a
// reading not later than the previous one; a reading not later than the
// latest one seen (a backward clock step) is marked with StepClock. It is
// pure.
type EnvBatcher struct {
	MaxRecords int
	MaxAge     time.Duration

	recs   []wire.EnvRecord
	opened time.Time
	dev    bridge.Device
	clock  wire.Clock
	high   time.Time // latest reading time
}

// PendingEnv is an env batch ready to be numbered and sealed.
type PendingEnv struct {
	Device wire.Device
	Clock  wire.Clock
	Env    []wire.EnvRecord
}

// Add appends r, read from dev with clock state clk and arrived at wall
// time now, and returns the batches it completed (zero, one or two).
func (b *EnvBatcher) Add(r wire.EnvRecord, dev bridge.Device, clk wire.Clock, now time.Time) []PendingEnv {
	var out []PendingEnv
	// A reading not after the latest one: the clock stepped back.
	if !b.high.IsZero() && !r.T.After(b.high) {
		clk = StepClock(clk, b.high.Sub(r.T))
	}
	if r.T.After(b.high) {
		b.high = r.T
	}
	if len(b.recs) > 0 && (dev != b.dev || clk.Synced != b.clock.Synced || clk.Source != b.clock.Source ||
		!r.T.After(b.recs[len(b.recs)-1].T) ||
		(b.MaxAge > 0 && r.T.Sub(b.recs[0].T) >= b.MaxAge)) {
		out = append(out, b.cut())
	}
	if len(b.recs) == 0 {
		b.dev, b.clock, b.opened = dev, clk, now
	}
	if clk.OffsetMs > b.clock.OffsetMs {
		b.clock.OffsetMs = clk.OffsetMs
	}
	b.recs = append(b.recs, r)
	if len(b.recs) >= max(1, min(b.MaxRecords, wire.MaxRecords)) {
		out = append(out, b.cut())
	}
	return out
}

// Due returns the open batch if it was opened at least MaxAge before now.
func (b *EnvBatcher) Due(now time.Time) (PendingEnv, bool) {
	if len(b.recs) == 0 || b.MaxAge <= 0 || now.Sub(b.opened) < b.MaxAge {
		return PendingEnv{}, false
	}
	return b.cut(), true
}

// Flush returns the open batch, if any.
func (b *EnvBatcher) Flush() (PendingEnv, bool) {
	if len(b.recs) == 0 {
		return PendingEnv{}, false
	}
	return b.cut(), true
}

// Len is the number of readings waiting in the open batch.
func (b *EnvBatcher) Len() int { return len(b.recs) }

func (b *EnvBatcher) cut() PendingEnv {
	p := PendingEnv{Device: wireDevice(b.dev), Clock: b.clock, Env: b.recs}
	b.recs = nil
	return p
}
