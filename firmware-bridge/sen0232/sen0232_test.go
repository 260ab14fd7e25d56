package sen0232

import (
	"errors"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/internal/i2cfake"
	"periph.io/x/conn/v3/i2c/i2ctest"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/ads1x15"
)

var t0 = time.Date(2026, 3, 6, 14, 0, 0, 0, time.UTC)

func clock() time.Time { return t0 }

// probeOps is the probe at addr for input in: config written without the
// start bit, read back with OS = 1 (idle).
func probeOps(addr uint16, in int) []i2ctest.IO {
	hi := byte(0x43 + in<<4)
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x01, hi, 0x83}},
		{Addr: addr, W: []byte{0x01}, R: []byte{hi | 0x80, 0x83}},
	}
}

// readOps is one single-shot conversion returning raw.
func readOps(addr uint16, in int, raw int16) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x01, byte(0xC3 + in<<4), 0x83}},
		{Addr: addr, W: []byte{0x00}, R: []byte{byte(uint16(raw) >> 8), byte(raw)}},
	}
}

// wantDB is the datasheet conversion: ADS1115 LSB = 4.096 V / 32768 at
// ±4.096 V; SEN0232 dB(A) = 50 × V.
func wantDB(raw int16) float64 { return float64(raw) * 4.096 / 32768 * 50 }

func TestSense(t *testing.T) {
	tests := []struct {
		name  string
		raw   int16
		want  float64
		volts float64 // for out-of-range errors
	}{
		{name: "30 dB at 0.6 V", raw: 4800, want: 30},
		{name: "75 dB at 1.5 V", raw: 12000, want: 75},
		{name: "61.725 dB", raw: 9876, want: wantDB(9876)},
		{name: "130 dB at 2.6 V", raw: 20800, want: 130},
		{name: "below 0.6 V within slack", raw: 4760, want: 30},
		{name: "above 2.6 V within slack", raw: 20860, want: 130},
		{name: "unpowered", raw: 3, volts: 3 * 4.096 / 32768},
		{name: "just below", raw: 4712, volts: 0.589},
		{name: "3.3 V rail", raw: 26400, volts: 3.3},
		{name: "negative", raw: -256, volts: -0.032},
		{name: "full scale", raw: math.MaxInt16, volts: 4.096 * 32767 / 32768},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bus := &i2ctest.Playback{Ops: append(probeOps(0x48, 0), readOps(0x48, 0, tc.raw)...)}
			d, err := NewI2C(bus, &Opts{Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			var s bridge.Sample
			err = d.Sense(&s)
			if tc.volts != 0 {
				var re *RangeError
				if !errors.As(err, &re) || math.Abs(re.Volts-tc.volts) > 1e-3 || !strings.HasPrefix(err.Error(), "sen0232: ") {
					t.Fatalf("Sense = %v, want RangeError at %.3f V", err, tc.volts)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				want := bridge.Sample{At: t0, Weighting: bridge.WeightingA, TimeWeighting: bridge.Fast, Level: tc.want, Device: d.Device()}
				if math.Abs(s.Level-tc.want) > 1e-9 {
					t.Fatalf("level %v, want %v", s.Level, tc.want)
				}
				s.Level = tc.want
				if s != want {
					t.Fatalf("Sense = %+v, want %+v", s, want)
				}
			}
			if err := bus.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestInputsAndAddresses(t *testing.T) {
	for _, addr := range []uint16{0x48, 0x4B} {
		for in := 0; in < 4; in++ {
			bus := &i2ctest.Playback{Ops: append(probeOps(addr, in), readOps(addr, in, 12000)...)}
			d, err := NewI2C(bus, &Opts{Addr: addr, Input: in})
			if err != nil {
				t.Fatal(err)
			}
			var s bridge.Sample
			if err := d.Sense(&s); err != nil || s.Level != 75 {
				t.Fatalf("addr %#x A%d: %v, %v", addr, in, s.Level, err)
			}
			dev := d.Device()
			if dev.Grade != bridge.GradeScreening || dev.Model != "DFRobot SEN0232 (via ADS1115)" || !strings.HasSuffix(dev.Serial, "-A"+string(rune('0'+in))) {
				t.Fatalf("device %+v", dev)
			}
			if err := bus.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	bus := &i2ctest.Playback{Ops: probeOps(0x49, 2)}
	d, err := NewI2C(bus, &Opts{Addr: 0x49, Input: 2, Serial: "praca-central-1"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Device().Serial != "praca-central-1" || d.String() != "sen0232{playback(73)/A2}" {
		t.Fatalf("serial %q, String %q", d.Device().Serial, d.String())
	}
}

func TestNewI2CErrors(t *testing.T) {
	tests := []struct {
		name string
		opts *Opts
		ops  []i2ctest.IO
		nack bool
		want string
	}{
		{name: "nack", nack: true, want: "no ADS1115 answers at 0x48"},
		{name: "PCB Artists meter at 0x48", ops: []i2ctest.IO{
			probeOps(0x48, 0)[0],
			{Addr: 0x48, W: []byte{0x01}, R: []byte{0x1C, 0x7E}}, // its ID3/ID2
		}, want: "not an ADS1115 (config wrote 0x4383, read back 0x1c7e)"},
		{name: "read back fails", ops: probeOps(0x48, 0)[:1], want: "read back ADS1115 config"},
		{name: "address", opts: &Opts{Addr: 0x4C}, want: "address 0x4c not possible"},
		{name: "input", opts: &Opts{Input: 4}, want: "input A4 does not exist"},
		{name: "negative input", opts: &Opts{Input: -1}, want: "input A-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.nack {
				_, err = NewI2C(i2cfake.NackBus{Errno: syscall.EREMOTEIO}, tc.opts)
				if !errors.Is(err, syscall.EREMOTEIO) {
					t.Errorf("NACK errno lost: %v", err)
				}
			} else {
				_, err = NewI2C(&i2ctest.Playback{Ops: tc.ops, DontPanic: true}, tc.opts)
			}
			if err == nil || !strings.HasPrefix(err.Error(), "sen0232: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewI2C error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSenseBusErrorAndHalt(t *testing.T) {
	bus := &i2ctest.Playback{Ops: append(probeOps(0x48, 0), readOps(0x48, 0, 12000)[0]), DontPanic: true}
	d, err := NewI2C(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	var s bridge.Sample
	if err := d.Sense(&s); err == nil || !strings.HasPrefix(err.Error(), "sen0232: read ADS1115: ") {
		t.Fatalf("Sense = %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := d.Halt(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Sense(&s); !errors.Is(err, ErrHalted) {
		t.Fatalf("Sense after Halt = %v", err)
	}
}

func TestToDBEdges(t *testing.T) {
	tests := []struct {
		v    physic.ElectricPotential
		want float64
		err  bool
	}{
		{0, 0, true},
		{590 * physic.MilliVolt, 30, false},
		{600 * physic.MilliVolt, 30, false},
		{physic.Volt, 50, false},
		{2600 * physic.MilliVolt, 130, false},
		{2610 * physic.MilliVolt, 130, false},
		{2611 * physic.MilliVolt, 0, true},
		{-physic.Volt, 0, true},
	}
	for _, tc := range tests {
		got, err := toDB(tc.v)
		if (err != nil) != tc.err || (!tc.err && math.Abs(got-tc.want) > 1e-9) {
			t.Errorf("toDB(%v) = %v, %v; want %v (error %v)", tc.v, got, err, tc.want, tc.err)
		}
	}
}

// FuzzConversion sends arbitrary conversion registers through the ADS1115
// driver: every reading is either a level in 30–130 dB(A) or a RangeError.
func FuzzConversion(f *testing.F) {
	f.Add(byte(0x2E), byte(0xE0))
	f.Add(byte(0x80), byte(0x00))
	f.Add(byte(0x7F), byte(0xFF))
	f.Fuzz(func(t *testing.T, hi, lo byte) {
		ops := append(probeOps(0x48, 0), readOps(0x48, 0, 0)...)
		ops[3].R = []byte{hi, lo}
		d, err := NewI2C(&i2ctest.Playback{Ops: ops}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var s bridge.Sample
		if err := d.Sense(&s); err != nil {
			var re *RangeError
			if !errors.As(err, &re) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if s.Level < 30 || s.Level > 130 || math.Abs(s.Level-math.Min(math.Max(wantDB(int16(uint16(hi)<<8|uint16(lo))), 30), 130)) > 1e-9 {
			t.Fatalf("raw %02x%02x gave %v dB", hi, lo, s.Level)
		}
	})
}

// TestDatasheetKnownAnswers ties the conversion to the two datasheets
// rather than to the driver's own formula. There is no SEN0232 or ADS1115
// here: the bytes are what the datasheets say the ADC sends.
//
//   - TI ADS1115 (SBAS444): at the ±4.096 V full-scale range one LSB is
//     125 µV; codes are two's complement, big-endian, 7FFFh is +FS·(2¹⁵−1)/2¹⁵
//     and 8000h is −FS.
//   - DFRobot SEN0232 wiki and sample code: output 0.6–2.6 V for 30–130
//     dBA, dBA = 50 × V.
//
// So code 4800 (12C0h) is 4800 × 125 µV = 0.600 V → 30 dBA, 12000 (2EE0h)
// 1.500 V → 75 dBA, 20800 (5140h) 2.600 V → 130 dBA, and 9876 (2694h)
// 1.2345 V → 61.725 dBA (worked by hand: 9876 × 0.000125 = 1.2345;
// × 50 = 61.725).
func TestDatasheetKnownAnswers(t *testing.T) {
	tests := []struct {
		hi, lo byte
		volts  float64
		dBA    float64
	}{
		{0x12, 0xC0, 0.600, 30},
		{0x2E, 0xE0, 1.500, 75},
		{0x26, 0x94, 1.2345, 61.725},
		{0x51, 0x40, 2.600, 130},
	}
	for _, tc := range tests {
		ops := append(probeOps(0x48, 0), readOps(0x48, 0, 0)...)
		ops[3].R = []byte{tc.hi, tc.lo}
		bus := &i2ctest.Playback{Ops: ops}
		d, err := NewI2C(bus, &Opts{Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		var s bridge.Sample
		if err := d.Sense(&s); err != nil {
			t.Fatalf("%02X%02Xh: %v", tc.hi, tc.lo, err)
		}
		if math.Abs(s.Level-tc.dBA) > 1e-9 {
			t.Errorf("%02X%02Xh (%.4f V): %v dBA, want %v", tc.hi, tc.lo, tc.volts, s.Level, tc.dBA)
		}
		if err := bus.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The ADS1115 config word, from the datasheet's field table (OS [15],
	// MUX [14:12], PGA [11:9], MODE [8], DR [7:5], COMP_* [4:2], COMP_QUE
	// [1:0]): its documented reset value 8583h is OS 1, MUX 000, PGA 010
	// (±2.048 V), MODE 1, DR 100 (128 SPS), COMP_QUE 11. The driver's word
	// for A0 against ground differs in MUX (100) and PGA (001, ±4.096 V)
	// only: 4383h, C383h with the start bit.
	field := func(os, mux, pga, mode, dr, que uint16) uint16 {
		return os<<15 | mux<<12 | pga<<9 | mode<<8 | dr<<5 | que
	}
	if got := field(1, 0b000, 0b010, 1, 0b100, 0b11); got != 0x8583 {
		t.Fatalf("field layout gives %#04x for the datasheet's reset value 0x8583", got)
	}
	if got, want := configWord(ads1x15.Channel0), field(0, 0b100, 0b001, 1, 0b100, 0b11); got != want || got != 0x4383 {
		t.Errorf("configWord(A0) = %#04x, want %#04x", got, want)
	}
}
