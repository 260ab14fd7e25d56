package sen0232

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/ads1x15"
)

// Conversion constants from the SEN0232 datasheet.
const (
	dBPerVolt = 50
	minVolts  = 0.6
	maxVolts  = 2.6
	slack     = 0.010 // V
)

// ADC settings: ±4.096 V full scale, 128 samples/s.
const (
	fullScale = 4096 * physic.MilliVolt
	rate      = 128 * physic.Hertz
)

// Opts configures the meter. The zero value means an ADS1115 at 0x48 with
// the meter on input A0.
type Opts struct {
	// Addr is the ADS1115 address, 0x48–0x4B; zero means 0x48.
	Addr uint16
	// Input is the ADS1115 input the meter is wired to, 0–3 (A0–A3).
	Input int
	// Serial identifies this meter in records (the SEN0232 has no serial
	// number); empty means "ads1115-<addr>-A<input>".
	Serial string
	// Now stamps samples; nil means time.Now.
	Now func() time.Time
}

// Dev is a SEN0232 read through an ADS1115. It is safe for concurrent use.
type Dev struct {
	pin    ads1x15.PinADC
	name   string
	now    func() time.Time
	device bridge.Device

	mu     sync.Mutex
	halted bool
}

// NewI2C checks that an ADS1115 answers at opts.Addr (nil opts means the
// defaults) and prepares single-shot reads of the meter's input.
func NewI2C(b i2c.Bus, opts *Opts) (*Dev, error) {
	var o Opts
	if opts != nil {
		o = *opts
	}
	if o.Addr == 0 {
		o.Addr = ads1x15.I2CAddr
	}
	if o.Addr < 0x48 || o.Addr > 0x4B {
		return nil, fmt.Errorf("sen0232: ADS1115 address %#x not possible (0x48–0x4B)", o.Addr)
	}
	if o.Input < 0 || o.Input > 3 {
		return nil, fmt.Errorf("sen0232: input A%d does not exist (A0–A3)", o.Input)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	ch := ads1x15.Channel0 + ads1x15.Channel(o.Input)
	if err := probe(&i2c.Dev{Bus: b, Addr: o.Addr}, ch); err != nil {
		return nil, err
	}
	adc, err := ads1x15.NewADS1115(b, &ads1x15.Opts{I2cAddress: o.Addr})
	if err != nil {
		return nil, fmt.Errorf("sen0232: %w", err)
	}
	pin, err := adc.PinForChannel(ch, fullScale, rate, ads1x15.BestQuality)
	if err != nil {
		return nil, fmt.Errorf("sen0232: configure ADS1115: %w", err)
	}
	if o.Serial == "" {
		o.Serial = fmt.Sprintf("ads1115-%#x-A%d", o.Addr, o.Input)
	}
	return &Dev{
		pin:  pin,
		name: fmt.Sprintf("sen0232{%s/A%d}", (&i2c.Dev{Bus: b, Addr: o.Addr}).String(), o.Input),
		now:  o.Now,
		device: bridge.Device{
			Model:  "DFRobot SEN0232 (via ADS1115)",
			Serial: o.Serial,
			Grade:  bridge.GradeScreening,
		},
	}, nil
}

// configWord is the ADS1115 config for a single-shot read of ch at ±4.096 V
// and 128 samples/s with the comparator off, without the start bit: the
// same word ads1x15 writes (with the start bit) for every read.
func configWord(ch ads1x15.Channel) uint16 {
	const (
		muxShift    = 12
		gain4096    = 0x0200
		singleShot  = 0x0100
		rate128     = 0x0080
		compDisable = 0x0003
	)
	return uint16(ch)<<muxShift | gain4096 | singleShot | rate128 | compDisable
}

// probe writes the config register (pointer 1) without starting a
// conversion and reads it back; only the OS bit (15) may differ.
func probe(c *i2c.Dev, ch ads1x15.Channel) error {
	want := configWord(ch)
	w := []byte{0x01, 0, 0}
	binary.BigEndian.PutUint16(w[1:], want)
	if err := c.Tx(w, nil); err != nil {
		return fmt.Errorf("sen0232: no ADS1115 answers at %#x: %w", c.Addr, err)
	}
	var r [2]byte
	if err := c.Tx([]byte{0x01}, r[:]); err != nil {
		return fmt.Errorf("sen0232: read back ADS1115 config: %w", err)
	}
	if got := binary.BigEndian.Uint16(r[:]); got&0x7FFF != want {
		return &ProbeError{Addr: c.Addr, Wrote: want, Read: got}
	}
	return nil
}

// Sense converts the meter's output once and fills s.
func (d *Dev) Sense(s *bridge.Sample) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return ErrHalted
	}
	v, err := d.pin.Read()
	if err != nil {
		return fmt.Errorf("sen0232: read ADS1115: %w", err)
	}
	db, err := toDB(v.V)
	if err != nil {
		return err
	}
	*s = bridge.Sample{
		At:            d.now(),
		Weighting:     bridge.WeightingA,
		TimeWeighting: bridge.Fast,
		Level:         db,
		Device:        d.device,
	}
	return nil
}

// toDB converts the meter's output voltage to dB(A).
func toDB(v physic.ElectricPotential) (float64, error) {
	volts := float64(v) / float64(physic.Volt)
	if volts < minVolts-slack || volts > maxVolts+slack {
		return 0, &RangeError{Volts: volts}
	}
	return min(max(volts*dBPerVolt, minVolts*dBPerVolt), maxVolts*dBPerVolt), nil
}

// Device returns the metadata reported in every sample.
func (d *Dev) Device() bridge.Device { return d.device }

// Halt stops the meter; the ADS1115 already powers down after each
// single-shot conversion. It is idempotent; Sense returns ErrHalted
// afterwards.
func (d *Dev) Halt() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return nil
	}
	d.halted = true
	if err := d.pin.Halt(); err != nil {
		return fmt.Errorf("sen0232: halt: %w", err)
	}
	return nil
}

// String implements bridge.Meter.
func (d *Dev) String() string { return d.name }

// ErrHalted is returned by Sense after Halt.
var ErrHalted = errors.New("sen0232: meter halted")

// RangeError is a voltage the meter cannot output (0.6–2.6 V).
type RangeError struct{ Volts float64 }

func (e *RangeError) Error() string {
	return fmt.Sprintf("sen0232: %.3f V is outside the meter's 0.6–2.6 V output (is it powered and wired to the right input?)", e.Volts)
}

// ProbeError means the device at the address did not read back the ADS1115
// config written to it: it is not an ADS1115.
type ProbeError struct {
	Addr        uint16
	Wrote, Read uint16
}

func (e *ProbeError) Error() string {
	return fmt.Sprintf("sen0232: device at %#x is not an ADS1115 (config wrote %#04x, read back %#04x)", e.Addr, e.Wrote, e.Read)
}

var _ bridge.Meter = (*Dev)(nil)
