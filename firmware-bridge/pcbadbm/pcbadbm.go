package pcbadbm

import (
	"errors"
	"fmt"
	"sync"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"periph.io/x/conn/v3/i2c"
)

// DefaultAddr is the factory I²C address.
const DefaultAddr uint16 = 0x48

// Registers (programming manual).
const (
	regVersion = 0x00
	regID3     = 0x01 // ID3..ID0 at 0x01..0x04, MSB first
	regScratch = 0x05
	regControl = 0x06
	regTavgH   = 0x07
	regTavgL   = 0x08
	regReset   = 0x09
	regDecibel = 0x0A // then MIN 0x0B, MAX 0x0C

	ctrlPowerDown = 0x01
	resetMinMax   = 0x02
	resetHistory  = 0x04
	resetSystem   = 0x08 // soft reset to power-up defaults; the only way out of power-down

	scratchPattern = 0xA5

	// maxPlausible is the highest DECIBEL value accepted; the MEMS
	// microphone saturates near 120 dB.
	maxPlausible = 140
)

// Opts configures the meter. The zero value means address 0x48,
// A-weighting, Fast (TAVG 125 ms) and time.Now.
type Opts struct {
	// Addr is the 7-bit I²C address (0x08–0x77); zero means DefaultAddr.
	Addr uint16
	// Weighting is A, C or Z; empty means A.
	Weighting bridge.Weighting
	// TimeWeighting is bridge.Fast (TAVG 125 ms) or bridge.Slow (TAVG
	// 1000 ms); empty means Fast.
	TimeWeighting bridge.TimeWeighting
	// Now stamps samples; nil means time.Now.
	Now func() time.Time
}

// Dev is a PCB Artists decibel meter on an I²C bus. It is safe for
// concurrent use.
type Dev struct {
	c      i2c.Dev
	opts   Opts
	ctrl   byte
	device bridge.Device

	mu     sync.Mutex
	halted bool
}

// doSleep waits for the module after a reset and for the weighting filter
// to settle; tests replace it.
var doSleep = time.Sleep

// Timing from the programming manual: the module answers on I²C within
// 5 ms of power-up or reset, and MIN/MAX and history should be cleared
// about 50 ms after it (power-on "pop").
const (
	resetReady  = 5 * time.Millisecond
	resetSettle = 50 * time.Millisecond
)

// NewI2C probes the meter at opts.Addr (nil opts means the defaults),
// wakes it with a soft reset (a module left powered down by Halt, by an
// earlier process or before a crash, leaves power-down only that way),
// configures weighting and averaging, and clears MIN/MAX and history.
func NewI2C(b i2c.Bus, opts *Opts) (*Dev, error) {
	o, filter, tavg, err := resolveOpts(opts)
	if err != nil {
		return nil, err
	}
	d := &Dev{c: i2c.Dev{Bus: b, Addr: o.Addr}, opts: o, ctrl: filter << 1}
	version, model, err := d.identify()
	if err != nil {
		return nil, err
	}
	// Only now that VERSION says it is the PCB Artists module: the reset
	// writes a register another chip at 0x48 (an ADS1115) would misread.
	serial, err := d.resetAndCheck()
	if err != nil {
		return nil, err
	}
	if err := d.configure(tavg); err != nil {
		return nil, err
	}
	d.device = bridge.Device{
		Model:    model,
		Serial:   fmt.Sprintf("%08X", serial),
		Firmware: fmt.Sprintf("hw%d fw%d", version>>4, version&0x0F),
		Grade:    bridge.GradeScreening,
	}
	return d, nil
}

// resolveOpts applies the defaults to opts and checks them, returning the
// CONTROL register's filter bits and the averaging time (TAVG).
func resolveOpts(opts *Opts) (Opts, byte, time.Duration, error) {
	var o Opts
	if opts != nil {
		o = *opts
	}
	if o.Addr == 0 {
		o.Addr = DefaultAddr
	}
	if o.Addr < 0x08 || o.Addr > 0x77 {
		return o, 0, 0, fmt.Errorf("pcbadbm: address %#x is not a 7-bit I²C device address (0x08–0x77)", o.Addr)
	}
	var filter byte
	switch o.Weighting {
	case "", bridge.WeightingA:
		o.Weighting, filter = bridge.WeightingA, 0b01
	case bridge.WeightingC:
		filter = 0b10
	case bridge.WeightingZ:
		filter = 0b00
	default:
		return o, 0, 0, fmt.Errorf("pcbadbm: weighting %q not supported (A, C or Z)", o.Weighting)
	}
	var tavg time.Duration
	switch o.TimeWeighting {
	case "", bridge.Fast:
		o.TimeWeighting, tavg = bridge.Fast, 125*time.Millisecond
	case bridge.Slow:
		tavg = time.Second
	default:
		return o, 0, 0, fmt.Errorf("pcbadbm: time weighting %q not supported (F or S)", o.TimeWeighting)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, filter, tavg, nil
}

// identify reads VERSION and names the model; a value that is not a PCB
// Artists hardware and firmware revision is a VersionError.
func (d *Dev) identify() (byte, string, error) {
	var v [1]byte
	if err := d.c.Tx([]byte{regVersion}, v[:]); err != nil {
		return 0, "", fmt.Errorf("pcbadbm: no answer at %#x reading VERSION: %w", d.c.Addr, err)
	}
	model, ok := models[v[0]]
	if !ok {
		hw, fw := v[0]>>4, v[0]&0x0F
		if (hw != 0x3 && hw != 0x8) || fw == 0 {
			return 0, "", &VersionError{Addr: d.c.Addr, Got: v[0]}
		}
		model = "PCB Artists I2C decibel meter"
	}
	return v[0], model, nil
}

// resetAndCheck soft-resets the module, reads its serial number (ID3..ID0)
// and checks that SCRATCH keeps what is written to it.
func (d *Dev) resetAndCheck() (uint32, error) {
	if err := d.c.Tx([]byte{regReset, resetSystem}, nil); err != nil {
		return 0, fmt.Errorf("pcbadbm: soft reset (wake from power-down): %w", err)
	}
	doSleep(resetReady)
	var id [4]byte
	if err := d.c.Tx([]byte{regID3}, id[:]); err != nil {
		return 0, fmt.Errorf("pcbadbm: read ID: %w", err)
	}
	serial := uint32(id[0])<<24 | uint32(id[1])<<16 | uint32(id[2])<<8 | uint32(id[3])
	if serial == 0 || serial == 0xFFFFFFFF {
		return 0, &IDError{ID: serial}
	}
	if err := d.c.Tx([]byte{regScratch, scratchPattern}, nil); err != nil {
		return 0, fmt.Errorf("pcbadbm: write SCRATCH: %w", err)
	}
	var s [1]byte
	if err := d.c.Tx([]byte{regScratch}, s[:]); err != nil {
		return 0, fmt.Errorf("pcbadbm: read SCRATCH: %w", err)
	}
	if s[0] != scratchPattern {
		return 0, &ScratchError{Wrote: scratchPattern, Read: s[0]}
	}
	return serial, nil
}

// configure writes the weighting and averaging time, waits for them to
// settle and clears MIN/MAX and history.
func (d *Dev) configure(tavg time.Duration) error {
	ms := uint16(tavg / time.Millisecond)
	for _, w := range [][]byte{
		{regControl, d.ctrl},
		{regTavgH, byte(ms >> 8)}, // high byte first: the low byte commits
		{regTavgL, byte(ms)},
	} {
		if err := d.c.Tx(w, nil); err != nil {
			return fmt.Errorf("pcbadbm: configure register %#02x: %w", w[0], err)
		}
	}
	doSleep(max(tavg, resetSettle)) // a new weighting needs one TAVG to settle; the reset's pop 50 ms
	if err := d.c.Tx([]byte{regReset, resetHistory | resetMinMax}, nil); err != nil {
		return fmt.Errorf("pcbadbm: clear MIN/MAX and history: %w", err)
	}
	return nil
}

// models maps the documented VERSION values to a model name.
var models = map[byte]string{
	0x31: "PCB Artists PCBA-DBM-r3 (MEMS)",
	0x32: "PCB Artists PCBA-DBM-r3 (MEMS, spectrum)",
	0x81: "PCB Artists PCBA-DBM-r3 (external microphone)",
}

// Sense reads the latest level and the MIN/MAX since the previous Sense,
// then clears MIN/MAX. It returns ErrNotReady while the module is warming
// up.
func (d *Dev) Sense(s *bridge.Sample) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return ErrHalted
	}
	var r [3]byte
	if err := d.c.Tx([]byte{regDecibel}, r[:]); err != nil {
		return fmt.Errorf("pcbadbm: read DECIBEL/MIN/MAX: %w", err)
	}
	at := d.opts.Now()
	lvl, lmin, lmax, err := decode(r)
	if err != nil {
		return err
	}
	if err := d.c.Tx([]byte{regReset, resetMinMax}, nil); err != nil {
		return fmt.Errorf("pcbadbm: clear MIN/MAX: %w", err)
	}
	*s = bridge.Sample{
		At:            at,
		Weighting:     d.opts.Weighting,
		TimeWeighting: d.opts.TimeWeighting,
		Level:         lvl,
		Device:        d.device,
	}
	if lmax >= 0 {
		s.Max, s.HasMax = lmax, true
	}
	if lmin >= 0 {
		s.Min, s.HasMin = lmin, true
	}
	return nil
}

// decode turns the DECIBEL, MIN, MAX registers into levels. MIN or MAX are
// −1 when the module has none (0 or implausible, e.g. right after a
// clear); they are widened to include the current level, which is itself a
// value of the interval.
func decode(r [3]byte) (lvl, lmin, lmax float64, err error) {
	switch {
	case r[0] == 0:
		return 0, 0, 0, ErrNotReady
	case r[0] > maxPlausible:
		return 0, 0, 0, &RangeError{Level: r[0]}
	}
	lvl, lmin, lmax = float64(r[0]), -1, -1
	if r[1] != 0 && r[1] <= maxPlausible {
		lmin = min(float64(r[1]), lvl)
	}
	if r[2] != 0 && r[2] <= maxPlausible {
		lmax = max(float64(r[2]), lvl)
	}
	return lvl, lmin, lmax, nil
}

// Device returns the metadata read at NewI2C.
func (d *Dev) Device() bridge.Device { return d.device }

// Halt powers the module down (CONTROL bit 0; 100 µA instead of 5 mA). It
// is idempotent; Sense returns ErrHalted afterwards. The module stays down
// until a soft reset: the next NewI2C, in this process or after a restart,
// issues one.
func (d *Dev) Halt() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return nil
	}
	d.halted = true
	if err := d.c.Tx([]byte{regControl, d.ctrl | ctrlPowerDown}, nil); err != nil {
		return fmt.Errorf("pcbadbm: power down: %w", err)
	}
	return nil
}

// String implements bridge.Meter.
func (d *Dev) String() string { return "pcbadbm{" + d.c.String() + "}" }

// ErrNotReady means DECIBEL reads 0: the module has no valid reading yet
// (about the first second after power-up). Try again later.
var ErrNotReady = errors.New("pcbadbm: reading not valid yet (DECIBEL = 0)")

// ErrHalted is returned by Sense after Halt.
var ErrHalted = errors.New("pcbadbm: meter halted")

// VersionError means the VERSION register holds a value no PCB Artists
// decibel meter reports: another chip answers at the address.
type VersionError struct {
	Addr uint16
	Got  byte
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("pcbadbm: VERSION at %#x is %#02x, not a PCB Artists decibel meter (0x31, 0x32 or 0x81); check the address (an ADS1115 also defaults to 0x48)", e.Addr, e.Got)
}

// IDError means the 32-bit device ID is all zeros or all ones, a sign of a
// stuck bus rather than a real module.
type IDError struct{ ID uint32 }

func (e *IDError) Error() string {
	return fmt.Sprintf("pcbadbm: implausible device ID %#08x (bus stuck or wrong device)", e.ID)
}

// ScratchError means the SCRATCH register did not read back what was
// written: the bus corrupts data.
type ScratchError struct{ Wrote, Read byte }

func (e *ScratchError) Error() string {
	return fmt.Sprintf("pcbadbm: SCRATCH self-test wrote %#02x, read back %#02x (check wiring and pull-ups)", e.Wrote, e.Read)
}

// RangeError means DECIBEL holds a level the module cannot measure.
type RangeError struct{ Level byte }

func (e *RangeError) Error() string {
	return fmt.Sprintf("pcbadbm: implausible level %d dB (the module reads 35–120 dB)", e.Level)
}

var _ bridge.Meter = (*Dev)(nil)
