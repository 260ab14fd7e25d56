package bme280

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/internal/i2cfake"
	"periph.io/x/conn/v3/i2c/i2ctest"
	"periph.io/x/devices/v3/bmxx80"
)

var t0 = time.Date(2026, 3, 6, 14, 0, 0, 0, time.UTC)

func clock() time.Time { return t0 }

// cal is the trimming data of one chip (datasheet §4.2.2).
type cal struct {
	T1             uint16
	T2, T3         int16
	P1             uint16
	P2, P3, P4, P5 int16
	P6, P7, P8, P9 int16
	H1             uint8
	H2             int16
	H3             uint8
	H4, H5         int16
	H6             int8
}

// The temperature and pressure words are the BMP280 datasheet's worked
// example (§3.12: adc_T 519888 → 25.08 °C, adc_P 415148 → 100653.27 Pa);
// the humidity words are typical BME280 values.
var chip = cal{
	T1: 27504, T2: 26435, T3: -1000,
	P1: 36477, P2: -10685, P3: 3024, P4: 2855, P5: 140, P6: -7, P7: 15500, P8: -14600, P9: 6000,
	H1: 75, H2: 362, H3: 0, H4: 323, H5: 50, H6: 30,
}

// tph is the register block 0x88–0xA1 as the chip sends it.
func (c cal) tph() []byte {
	b := make([]byte, 26)
	for i, v := range []uint16{c.T1, uint16(c.T2), uint16(c.T3), c.P1, uint16(c.P2), uint16(c.P3), uint16(c.P4),
		uint16(c.P5), uint16(c.P6), uint16(c.P7), uint16(c.P8), uint16(c.P9)} {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	b[25] = c.H1
	return b
}

// h is the register block 0xE1–0xE7.
func (c cal) h() []byte {
	b := make([]byte, 7)
	binary.LittleEndian.PutUint16(b, uint16(c.H2))
	b[2] = c.H3
	b[3] = byte(c.H4 >> 4)
	b[4] = byte(c.H5&0xF)<<4 | byte(c.H4&0xF)
	b[5] = byte(c.H5 >> 4)
	b[6] = byte(c.H6)
	return b
}

// meas is the burst 0xF7–0xFE: pressure and temperature as 20-bit values
// left-aligned in three bytes, humidity as 16 bits, all big-endian.
func meas(p, t, h uint32) []byte {
	return []byte{byte(p >> 12), byte(p >> 4), byte(p << 4), byte(t >> 12), byte(t >> 4), byte(t << 4), byte(h >> 8), byte(h)}
}

// The datasheet's floating-point compensation (BME280 §8.1), an
// implementation independent of bmxx80's integer one.
func (c cal) compensate(adcP, adcT, adcH uint32) (tC, pPa, rh float64) {
	T, P, H := float64(adcT), float64(adcP), float64(adcH)
	v1 := (T/16384 - float64(c.T1)/1024) * float64(c.T2)
	v2 := (T/131072 - float64(c.T1)/8192) * (T/131072 - float64(c.T1)/8192) * float64(c.T3)
	tFine := v1 + v2
	tC = tFine / 5120

	v1 = tFine/2 - 64000
	v2 = v1 * v1 * float64(c.P6) / 32768
	v2 += v1 * float64(c.P5) * 2
	v2 = v2/4 + float64(c.P4)*65536
	v1 = (float64(c.P3)*v1*v1/524288 + float64(c.P2)*v1) / 524288
	v1 = (1 + v1/32768) * float64(c.P1)
	p := 1048576 - P
	p = (p - v2/4096) * 6250 / v1
	v1 = float64(c.P9) * p * p / 2147483648
	v2 = p * float64(c.P8) / 32768
	pPa = p + (v1+v2+float64(c.P7))/16

	h := tFine - 76800
	h = (H - (float64(c.H4)*64 + float64(c.H5)/16384*h)) *
		(float64(c.H2) / 65536 * (1 + float64(c.H6)/67108864*h*(1+float64(c.H3)/67108864*h)))
	h *= 1 - float64(c.H1)*h/524288
	rh = math.Min(math.Max(h, 0), 100)
	return tC, pPa, rh
}

// probe is NewI2C's traffic with bmxx80.DefaultOpts (4× oversampling):
// chip ID, calibration, then ctrl_meas (sleep), ctrl_hum, config, ctrl_meas.
// There is no sensor here to record it from: the op list follows the
// datasheet's register map (§5) and what periph's bmxx80 writes.
func probe(addr uint16) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0xD0}, R: []byte{0x60}},
		{Addr: addr, W: []byte{0x88}, R: chip.tph()},
		{Addr: addr, W: []byte{0xE1}, R: chip.h()},
		{Addr: addr, W: []byte{0xF4, 0x6C, 0xF2, 0x03, 0xF5, 0xA0, 0xF4, 0x6C}},
	}
}

// measure is one forced-mode measurement: start, status busy then idle,
// burst read.
func measure(addr uint16, p, t, h uint32) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0xF4, 0x6D}},
		{Addr: addr, W: []byte{0xF3}, R: []byte{0x08}},
		{Addr: addr, W: []byte{0xF3}, R: []byte{0x00}},
		{Addr: addr, W: []byte{0xF7}, R: meas(p, t, h)},
	}
}

func TestSenseEnv(t *testing.T) {
	tests := []struct {
		name             string
		adcP, adcT, adcH uint32
	}{
		{"datasheet example", 415148, 519888, 30000},
		{"cool humid morning", 405000, 480000, 36000},
		{"hot dry afternoon", 420000, 560000, 22000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bus := &i2ctest.Playback{Ops: append(probe(0x76), measure(0x76, tc.adcP, tc.adcT, tc.adcH)...)}
			d, err := NewI2C(bus, &Opts{Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			var e bridge.Env
			if err := d.SenseEnv(&e); err != nil {
				t.Fatal(err)
			}
			wantT, wantP, wantH := chip.compensate(tc.adcP, tc.adcT, tc.adcH)
			if math.Abs(e.TemperatureC-wantT) > 0.01 || math.Abs(e.PressureHPa-wantP/100) > 0.02 || math.Abs(e.HumidityPct-wantH) > 0.05 {
				t.Errorf("got %.3f °C %.3f hPa %.3f %%RH, want %.3f °C %.3f hPa %.3f %%RH",
					e.TemperatureC, e.PressureHPa, e.HumidityPct, wantT, wantP/100, wantH)
			}
			if !e.HasTemperature || !e.HasPressure || !e.HasHumidity || !e.At.Equal(t0) {
				t.Errorf("flags/time: %+v", e)
			}
			if e.Device != (bridge.Device{Model: "Bosch BME280", Serial: "bme280-0x76"}) {
				t.Errorf("device %+v", e.Device)
			}
			if err := bus.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDatasheetExample checks the worked example's published results
// (BMP280 datasheet §3.12, the same compensation as the BME280's): adc_T
// 519888 → 25.08 °C (t_fine 128422), adc_P 415148 → 100653.27 Pa. The
// BME280 datasheet has no worked example for humidity; the expected value
// was computed by hand from its integer formula (§4.2.3,
// bme280_compensate_H_int32) with the trimming words of chip and adc_H
// 30000: v = t_fine − 76800 = 51622, which the formula takes to 52671 in
// Q22.10, i.e. 52671 / 1024 = 51.44 %RH (its floating-point version, §8.1,
// gives 51.439).
func TestDatasheetExample(t *testing.T) {
	bus := &i2ctest.Playback{Ops: append(probe(0x76), measure(0x76, 415148, 519888, 30000)...)}
	d, err := NewI2C(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	var e bridge.Env
	if err := d.SenseEnv(&e); err != nil {
		t.Fatal(err)
	}
	if math.Abs(e.TemperatureC-25.08) > 0.005 || math.Abs(e.PressureHPa-1006.5327) > 0.01 {
		t.Fatalf("%.3f °C %.4f hPa, datasheet 25.08 °C 1006.5327 hPa", e.TemperatureC, e.PressureHPa)
	}
	if math.Abs(e.HumidityPct-51.44) > 0.01 {
		t.Fatalf("%.3f %%RH, worked by hand from the datasheet's formula: 51.44 %%RH", e.HumidityPct)
	}
}

func TestBMP280HasNoHumidity(t *testing.T) {
	ops := []i2ctest.IO{
		{Addr: 0x77, W: []byte{0xD0}, R: []byte{0x58}},
		{Addr: 0x77, W: []byte{0x88}, R: chip.tph()},
		{Addr: 0x77, W: []byte{0xF4, 0x6C, 0xF5, 0xA0, 0xF4, 0x6C}},
		{Addr: 0x77, W: []byte{0xF4, 0x6D}},
		{Addr: 0x77, W: []byte{0xF3}, R: []byte{0x00}},
		{Addr: 0x77, W: []byte{0xF7}, R: meas(415148, 519888, 0)[:6]},
	}
	bus := &i2ctest.Playback{Ops: ops}
	d, err := NewI2C(bus, &Opts{Addr: 0x77, Serial: "caixa-3"})
	if err != nil {
		t.Fatal(err)
	}
	var e bridge.Env
	if err := d.SenseEnv(&e); err != nil {
		t.Fatal(err)
	}
	if e.HasHumidity || !e.HasPressure || e.Device.Model != "Bosch BMP280" || e.Device.Serial != "caixa-3" {
		t.Fatalf("%+v", e)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
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
		{name: "nack", nack: true, want: "bme280: no sensor at 0x76: "},
		{name: "wrong chip id", ops: []i2ctest.IO{{Addr: 0x76, W: []byte{0xD0}, R: []byte{0x61}}}, want: "unexpected chip id 61"},
		{name: "calibration read fails", ops: probe(0x76)[:1], want: "no sensor at 0x76"},
		{name: "config write fails", ops: probe(0x76)[:3], want: "no sensor at 0x76"},
		{name: "address", opts: &Opts{Addr: 0x48}, want: "address 0x48 not possible"},
		{name: "temperature off", opts: &Opts{Sensor: &bmxx80.Opts{Pressure: bmxx80.O1x}}, ops: probe(0x76)[:3], want: "temperature measurement is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.nack {
				_, err = NewI2C(i2cfake.NackBus{Errno: syscall.ENXIO}, tc.opts)
			} else {
				_, err = NewI2C(&i2ctest.Playback{Ops: tc.ops, DontPanic: true}, tc.opts)
			}
			if err == nil || !strings.HasPrefix(err.Error(), "bme280: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewI2C error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSenseEnvErrors(t *testing.T) {
	tests := []struct {
		name     string
		ops      []i2ctest.IO
		quantity string
		want     string
	}{
		{name: "bus fails mid-measurement", ops: measure(0x76, 415148, 519888, 30000)[:2], want: "bme280: measure: "},
		{name: "all ones", ops: append(measure(0x76, 0, 0, 0)[:3], i2ctest.IO{Addr: 0x76, W: []byte{0xF7}, R: []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}), quantity: "temperature"},
		{name: "all zeros", ops: measure(0x76, 0, 0, 0), quantity: "temperature"},
		{name: "pressure out of range", ops: measure(0x76, 100000, 519888, 30000), quantity: "pressure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bus := &i2ctest.Playback{Ops: append(probe(0x76), tc.ops...), DontPanic: true}
			d, err := NewI2C(bus, nil)
			if err != nil {
				t.Fatal(err)
			}
			e := bridge.Env{TemperatureC: -1}
			err = d.SenseEnv(&e)
			if tc.quantity != "" {
				var re *RangeError
				if !errors.As(err, &re) || re.Quantity != tc.quantity {
					t.Fatalf("SenseEnv = %v, want RangeError on %s", err, tc.quantity)
				}
			} else if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("SenseEnv = %v, want %q", err, tc.want)
			}
			if e.TemperatureC != -1 {
				t.Fatalf("a failed SenseEnv changed the caller's Env: %+v", e)
			}
		})
	}
}

func TestHalt(t *testing.T) {
	bus := &i2ctest.Playback{Ops: probe(0x76)}
	d, err := NewI2C(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := d.Halt(); err != nil {
			t.Fatal(err)
		}
	}
	var e bridge.Env
	if err := d.SenseEnv(&e); !errors.Is(err, ErrHalted) {
		t.Fatalf("SenseEnv after Halt = %v", err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	if d.String() != "bme280{BME280{playback(118)}}" {
		t.Fatalf("String() = %q", d.String())
	}
}

// FuzzSenseEnv feeds arbitrary measurement bytes through bmxx80's
// compensation and our range checks: a reading is either in range or a
// RangeError, never a panic or NaN.
func FuzzSenseEnv(f *testing.F) {
	f.Add(meas(415148, 519888, 30000))
	f.Add(make([]byte, 8))
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 8 {
			return
		}
		ops := append(probe(0x76), measure(0x76, 0, 0, 0)...)
		ops[len(ops)-1].R = b
		d, err := NewI2C(&i2ctest.Playback{Ops: ops}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var e bridge.Env
		if err := d.SenseEnv(&e); err != nil {
			var re *RangeError
			if !errors.As(err, &re) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if e.TemperatureC < -40 || e.TemperatureC > 85 || e.PressureHPa < 300 || e.PressureHPa > 1100 ||
			e.HumidityPct < 0 || e.HumidityPct > 100 || math.IsNaN(e.TemperatureC+e.PressureHPa+e.HumidityPct) {
			t.Fatalf("accepted %+v", e)
		}
	})
}
