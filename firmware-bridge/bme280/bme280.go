package bme280

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/bmxx80"
)

// DefaultAddr is the address with SDO tied to ground.
const DefaultAddr uint16 = 0x76

// Opts configures the sensor. The zero value means address 0x76, bmxx80's
// default oversampling (4×) and time.Now.
type Opts struct {
	// Addr is 0x76 or 0x77; zero means DefaultAddr.
	Addr uint16
	// Sensor tunes oversampling and filtering; nil means bmxx80.DefaultOpts.
	Sensor *bmxx80.Opts
	// Serial names the sensor in records; empty means "<chip>-<addr>".
	Serial string
	// Now stamps readings; nil means time.Now.
	Now func() time.Time
}

// Dev is a BME280 (or BMP280/BMP180) on an I²C bus. It is safe for
// concurrent use.
type Dev struct {
	d        *bmxx80.Dev
	humidity bool
	pressure bool
	now      func() time.Time
	device   bridge.Device

	mu     sync.Mutex
	halted bool
}

// NewI2C identifies and configures the sensor (nil opts means the defaults).
func NewI2C(b i2c.Bus, opts *Opts) (*Dev, error) {
	var o Opts
	if opts != nil {
		o = *opts
	}
	if o.Addr == 0 {
		o.Addr = DefaultAddr
	}
	if o.Addr != 0x76 && o.Addr != 0x77 {
		return nil, fmt.Errorf("bme280: address %#x not possible (0x76 or 0x77)", o.Addr)
	}
	so := bmxx80.DefaultOpts
	if o.Sensor != nil {
		so = *o.Sensor
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	d, err := bmxx80.NewI2C(b, o.Addr, &so)
	if err != nil {
		return nil, fmt.Errorf("bme280: no sensor at %#x: %w", o.Addr, err)
	}
	chip, _, _ := strings.Cut(d.String(), "{")
	if o.Serial == "" {
		o.Serial = fmt.Sprintf("%s-%#x", strings.ToLower(chip), o.Addr)
	}
	return &Dev{
		d:        d,
		humidity: chip == "BME280" && so.Humidity != bmxx80.Off,
		pressure: so.Pressure != bmxx80.Off,
		now:      o.Now,
		device:   bridge.Device{Model: "Bosch " + chip, Serial: o.Serial},
	}, nil
}

// SenseEnv measures once and fills e.
func (d *Dev) SenseEnv(e *bridge.Env) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return ErrHalted
	}
	var pe physic.Env
	if err := d.d.Sense(&pe); err != nil {
		return fmt.Errorf("bme280: measure: %w", err)
	}
	env := bridge.Env{
		At:             d.now(),
		TemperatureC:   float64(pe.Temperature-physic.ZeroCelsius) / float64(physic.Celsius),
		HasTemperature: true,
		PressureHPa:    float64(pe.Pressure) / float64(100*physic.Pascal),
		HasPressure:    d.pressure,
		Device:         d.device,
	}
	if d.humidity {
		env.HumidityPct = float64(pe.Humidity) / float64(physic.PercentRH)
		env.HasHumidity = true
	}
	if err := check(&env); err != nil {
		return err
	}
	*e = env
	return nil
}

// check rejects readings outside the sensor's operating range.
func check(e *bridge.Env) error {
	switch {
	case e.TemperatureC < -40 || e.TemperatureC > 85:
		return &RangeError{Quantity: "temperature", Value: e.TemperatureC, Unit: "°C"}
	case e.HasPressure && (e.PressureHPa < 300 || e.PressureHPa > 1100):
		return &RangeError{Quantity: "pressure", Value: e.PressureHPa, Unit: "hPa"}
	case e.HasHumidity && (e.HumidityPct < 0 || e.HumidityPct > 100):
		return &RangeError{Quantity: "humidity", Value: e.HumidityPct, Unit: "%RH"}
	}
	return nil
}

// Device returns the metadata reported in every reading.
func (d *Dev) Device() bridge.Device { return d.device }

// Halt stops the sensor. Forced mode already returns it to sleep after each
// measurement. It is idempotent; SenseEnv returns ErrHalted afterwards.
func (d *Dev) Halt() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return nil
	}
	d.halted = true
	if err := d.d.Halt(); err != nil {
		return fmt.Errorf("bme280: halt: %w", err)
	}
	return nil
}

// String implements bridge.EnvSensor.
func (d *Dev) String() string { return "bme280{" + d.d.String() + "}" }

// ErrHalted is returned by SenseEnv after Halt.
var ErrHalted = errors.New("bme280: sensor halted")

// RangeError is a reading outside the sensor's operating range.
type RangeError struct {
	Quantity string
	Value    float64
	Unit     string
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("bme280: %s %.2f %s outside the sensor's range (disconnected or damaged sensor?)", e.Quantity, e.Value, e.Unit)
}

var _ bridge.EnvSensor = (*Dev)(nil)
