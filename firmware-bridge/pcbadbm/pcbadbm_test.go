package pcbadbm

import (
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/internal/i2cfake"
	"periph.io/x/conn/v3/i2c/i2ctest"
	"periph.io/x/conn/v3/physic"
)

func TestMain(m *testing.M) {
	doSleep = func(time.Duration) {}
	os.Exit(m.Run())
}

var t0 = time.Date(2026, 3, 6, 22, 0, 1, 0, time.UTC)

func clock() time.Time { return t0 }

// probe is NewI2C's traffic at addr: VERSION, RESET (soft reset: wake),
// ID, SCRATCH self-test, CONTROL, TAVG_H, TAVG_L, RESET (clear history and
// MIN/MAX). There is no module here to record it from: the op list is
// built from the programming manual's register map, and module (below) is a
// register-level fake of the same map.
func probe(addr uint16, version byte, id [4]byte, control, tavgH, tavgL byte) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x00}, R: []byte{version}},
		{Addr: addr, W: []byte{0x09, 0x08}},
		{Addr: addr, W: []byte{0x01}, R: id[:]},
		{Addr: addr, W: []byte{0x05, 0xA5}},
		{Addr: addr, W: []byte{0x05}, R: []byte{0xA5}},
		{Addr: addr, W: []byte{0x06, control}},
		{Addr: addr, W: []byte{0x07, tavgH}},
		{Addr: addr, W: []byte{0x08, tavgL}},
		{Addr: addr, W: []byte{0x09, 0x06}},
	}
}

var id = [4]byte{0x1C, 0x7E, 0x02, 0x9B}

func TestNewI2C(t *testing.T) {
	tests := []struct {
		name         string
		opts         *Opts
		addr         uint16
		version      byte
		control      byte
		tavgH, tavgL byte
		model, fw    string
		tw           bridge.TimeWeighting
	}{
		{"defaults", nil, 0x48, 0x31, 0x02, 0x00, 0x7D, "PCB Artists PCBA-DBM-r3 (MEMS)", "hw3 fw1", bridge.Fast},
		{"A slow", &Opts{Weighting: bridge.WeightingA, TimeWeighting: bridge.Slow}, 0x48, 0x31, 0x02, 0x03, 0xE8, "PCB Artists PCBA-DBM-r3 (MEMS)", "hw3 fw1", bridge.Slow},
		{"C fast custom address", &Opts{Addr: 0x2A, Weighting: bridge.WeightingC}, 0x2A, 0x32, 0x04, 0x00, 0x7D, "PCB Artists PCBA-DBM-r3 (MEMS, spectrum)", "hw3 fw2", bridge.Fast},
		{"Z external mic", &Opts{Weighting: bridge.WeightingZ, TimeWeighting: bridge.Fast}, 0x48, 0x81, 0x00, 0x00, 0x7D, "PCB Artists PCBA-DBM-r3 (external microphone)", "hw8 fw1", bridge.Fast},
		{"newer firmware", nil, 0x48, 0x34, 0x02, 0x00, 0x7D, "PCB Artists I2C decibel meter", "hw3 fw4", bridge.Fast},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bus := &i2ctest.Playback{Ops: probe(tc.addr, tc.version, id, tc.control, tc.tavgH, tc.tavgL)}
			d, err := NewI2C(bus, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := bridge.Device{Model: tc.model, Serial: "1C7E029B", Firmware: tc.fw, Grade: bridge.GradeScreening}
			if got := d.Device(); got != want {
				t.Errorf("Device() = %+v, want %+v", got, want)
			}
			if d.opts.TimeWeighting != tc.tw {
				t.Errorf("time weighting %q, want %q", d.opts.TimeWeighting, tc.tw)
			}
			if err := bus.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNewI2CErrors(t *testing.T) {
	full := probe(0x48, 0x31, id, 0x02, 0x00, 0x7D)
	tests := []struct {
		name   string
		opts   *Opts
		ops    []i2ctest.IO
		nack   bool
		want   string
		target any
	}{
		{name: "nack", nack: true, want: "no answer at 0x48 reading VERSION"},
		{name: "other chip answering", ops: []i2ctest.IO{{Addr: 0x48, W: []byte{0x00}, R: []byte{0x60}}}, want: "VERSION at 0x48 is 0x60", target: new(*VersionError)},
		{name: "VERSION zero", ops: []i2ctest.IO{{Addr: 0x48, W: []byte{0x00}, R: []byte{0x00}}}, want: "is 0x00", target: new(*VersionError)},
		{name: "VERSION floating", ops: []i2ctest.IO{{Addr: 0x48, W: []byte{0x00}, R: []byte{0xFF}}}, want: "is 0xff", target: new(*VersionError)},
		{name: "VERSION firmware 0", ops: []i2ctest.IO{{Addr: 0x48, W: []byte{0x00}, R: []byte{0x30}}}, want: "is 0x30", target: new(*VersionError)},
		{name: "ID zero", ops: []i2ctest.IO{full[0], full[1], {Addr: 0x48, W: []byte{0x01}, R: []byte{0, 0, 0, 0}}}, want: "implausible device ID 0x00000000", target: new(*IDError)},
		{name: "ID ones", ops: []i2ctest.IO{full[0], full[1], {Addr: 0x48, W: []byte{0x01}, R: []byte{0xFF, 0xFF, 0xFF, 0xFF}}}, want: "0xffffffff", target: new(*IDError)},
		{name: "scratch corrupt", ops: []i2ctest.IO{full[0], full[1], full[2], full[3], {Addr: 0x48, W: []byte{0x05}, R: []byte{0xA4}}}, want: "wrote 0xa5, read back 0xa4", target: new(*ScratchError)},
		{name: "bus error in the wake reset", ops: full[:1], want: "soft reset (wake from power-down)"},
		{name: "bus error reading ID", ops: full[:2], want: "read ID"},
		{name: "bus error in CONTROL", ops: full[:5], want: "configure register 0x06"},
		{name: "bus error in TAVG_L", ops: full[:7], want: "configure register 0x08"},
		{name: "bus error clearing", ops: full[:8], want: "clear MIN/MAX and history"},
		{name: "address too high", opts: &Opts{Addr: 0x78}, want: "address 0x78"},
		{name: "address reserved", opts: &Opts{Addr: 0x03}, want: "address 0x3"},
		{name: "weighting", opts: &Opts{Weighting: "B"}, want: `weighting "B"`},
		{name: "time weighting", opts: &Opts{TimeWeighting: bridge.Impulse}, want: `time weighting "I"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d *Dev
			var err error
			if tc.nack {
				d, err = NewI2C(i2cfake.NackBus{Errno: syscall.ENXIO}, tc.opts)
				if !errors.Is(err, syscall.ENXIO) {
					t.Errorf("errors.Is(%v, ENXIO) = false", err)
				}
			} else {
				d, err = NewI2C(&i2ctest.Playback{Ops: tc.ops, DontPanic: true}, tc.opts)
			}
			if err == nil || d != nil {
				t.Fatalf("NewI2C = %v, %v; want error", d, err)
			}
			if !strings.HasPrefix(err.Error(), "pcbadbm: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if tc.target != nil && !errors.As(err, tc.target) {
				t.Errorf("error %T is not %T", err, tc.target)
			}
		})
	}
}

func TestSense(t *testing.T) {
	clear := i2ctest.IO{Addr: 0x48, W: []byte{0x09, 0x02}}
	read := func(b ...byte) i2ctest.IO { return i2ctest.IO{Addr: 0x48, W: []byte{0x0A}, R: b} }
	tests := []struct {
		name    string
		ops     []i2ctest.IO
		want    bridge.Sample
		wantErr error
		errText string
	}{
		{
			name: "level min max",
			ops:  []i2ctest.IO{read(62, 41, 88), clear},
			want: bridge.Sample{Level: 62, Min: 41, Max: 88, HasMin: true, HasMax: true},
		},
		{
			name: "min max cleared, not updated yet",
			ops:  []i2ctest.IO{read(55, 0, 0), clear},
			want: bridge.Sample{Level: 55},
		},
		{
			name: "min max stale, widened to the level",
			ops:  []i2ctest.IO{read(70, 75, 66), clear},
			want: bridge.Sample{Level: 70, Min: 70, Max: 70, HasMin: true, HasMax: true},
		},
		{
			name: "implausible min max ignored",
			ops:  []i2ctest.IO{read(50, 0xFF, 0xFF), clear},
			want: bridge.Sample{Level: 50},
		},
		{name: "not ready", ops: []i2ctest.IO{read(0, 0, 0)}, wantErr: ErrNotReady},
		{name: "garbage level", ops: []i2ctest.IO{read(200, 41, 88)}, errText: "implausible level 200 dB"},
		{name: "bus error reading", ops: nil, errText: "pcbadbm: read DECIBEL/MIN/MAX: "},
		{name: "bus error clearing", ops: []i2ctest.IO{read(62, 41, 88)}, errText: "pcbadbm: clear MIN/MAX: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bus := &i2ctest.Playback{Ops: append(probe(0x48, 0x31, id, 0x02, 0x00, 0x7D), tc.ops...), DontPanic: true}
			d, err := NewI2C(bus, &Opts{Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			var s bridge.Sample
			err = d.Sense(&s)
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Sense = %v, want %v", err, tc.wantErr)
				}
				return
			case tc.errText != "":
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("Sense = %v, want %q", err, tc.errText)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			want := tc.want
			want.At, want.Weighting, want.TimeWeighting, want.Device = t0, bridge.WeightingA, bridge.Fast, d.Device()
			if s != want {
				t.Errorf("Sense =\n%+v, want\n%+v", s, want)
			}
			if err := bus.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSenseSequence replays warm-up, two readings and Halt, as a gateway
// would see them (op list from the programming manual).
func TestSenseSequence(t *testing.T) {
	ops := append(probe(0x48, 0x31, id, 0x04, 0x03, 0xE8),
		i2ctest.IO{Addr: 0x48, W: []byte{0x0A}, R: []byte{0, 0, 0}},    // warming up
		i2ctest.IO{Addr: 0x48, W: []byte{0x0A}, R: []byte{47, 45, 52}}, // valid
		i2ctest.IO{Addr: 0x48, W: []byte{0x09, 0x02}},
		i2ctest.IO{Addr: 0x48, W: []byte{0x0A}, R: []byte{49, 46, 50}},
		i2ctest.IO{Addr: 0x48, W: []byte{0x09, 0x02}},
		i2ctest.IO{Addr: 0x48, W: []byte{0x06, 0x05}}, // power down, C filter kept
	)
	bus := &i2ctest.Playback{Ops: ops}
	d, err := NewI2C(bus, &Opts{Weighting: bridge.WeightingC, TimeWeighting: bridge.Slow, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	var s bridge.Sample
	if err := d.Sense(&s); !errors.Is(err, ErrNotReady) {
		t.Fatalf("first Sense = %v, want ErrNotReady", err)
	}
	var levels []float64
	for i := 0; i < 2; i++ {
		if err := d.Sense(&s); err != nil {
			t.Fatal(err)
		}
		if s.Weighting != bridge.WeightingC || s.TimeWeighting != bridge.Slow || s.Duration != 0 {
			t.Fatalf("sample %+v", s)
		}
		levels = append(levels, s.Level, s.Min, s.Max)
	}
	if want := []float64{47, 45, 52, 49, 46, 50}; !equal(levels, want) {
		t.Errorf("levels %v, want %v", levels, want)
	}
	for i := 0; i < 3; i++ {
		if err := d.Halt(); err != nil {
			t.Fatalf("Halt #%d: %v", i+1, err)
		}
	}
	if err := d.Sense(&s); !errors.Is(err, ErrHalted) {
		t.Fatalf("Sense after Halt = %v", err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	if got := d.String(); got != "pcbadbm{playback(72)}" {
		t.Errorf("String() = %q", got)
	}
}

func TestHaltBusError(t *testing.T) {
	bus := &i2ctest.Playback{Ops: probe(0x48, 0x31, id, 0x02, 0x00, 0x7D), DontPanic: true}
	d, err := NewI2C(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Halt(); err == nil || !strings.HasPrefix(err.Error(), "pcbadbm: power down: ") {
		t.Fatalf("Halt = %v", err)
	}
	if err := d.Halt(); err != nil {
		t.Fatalf("second Halt = %v", err)
	}
}

func TestDecodeEdges(t *testing.T) {
	tests := []struct {
		in               [3]byte
		lvl, lmin, lmax  float64
		notReady, tooBig bool
	}{
		{in: [3]byte{0, 50, 60}, notReady: true},
		{in: [3]byte{1, 1, 1}, lvl: 1, lmin: 1, lmax: 1},
		{in: [3]byte{140, 140, 140}, lvl: 140, lmin: 140, lmax: 140},
		{in: [3]byte{141, 0, 0}, tooBig: true},
		{in: [3]byte{255, 255, 255}, tooBig: true},
		{in: [3]byte{94, 0, 141}, lvl: 94, lmin: -1, lmax: -1},
	}
	for _, tc := range tests {
		lvl, lmin, lmax, err := decode(tc.in)
		var re *RangeError
		switch {
		case tc.notReady:
			if !errors.Is(err, ErrNotReady) {
				t.Errorf("decode(%v) err = %v", tc.in, err)
			}
		case tc.tooBig:
			if !errors.As(err, &re) || re.Level != tc.in[0] {
				t.Errorf("decode(%v) err = %v", tc.in, err)
			}
		case err != nil || lvl != tc.lvl || lmin != tc.lmin || lmax != tc.lmax:
			t.Errorf("decode(%v) = %v %v %v %v", tc.in, lvl, lmin, lmax, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(byte(62), byte(41), byte(88))
	f.Add(byte(0), byte(0), byte(0))
	f.Add(byte(255), byte(1), byte(0))
	f.Fuzz(func(t *testing.T, a, b, c byte) {
		lvl, lmin, lmax, err := decode([3]byte{a, b, c})
		if err != nil {
			return
		}
		if lvl < 1 || lvl > maxPlausible {
			t.Fatalf("level %v accepted", lvl)
		}
		if lmin != -1 && (lmin > lvl || lmin < 1) || lmax != -1 && (lmax < lvl || lmax > maxPlausible) {
			t.Fatalf("min %v level %v max %v", lmin, lvl, lmax)
		}
	})
}

// FuzzNewI2C feeds arbitrary VERSION, ID and SCRATCH bytes to the probe: it
// must either succeed with metadata built from them or fail with a typed
// error, never panic.
func FuzzNewI2C(f *testing.F) {
	f.Add(byte(0x31), []byte{1, 2, 3, 4}, byte(0xA5))
	f.Add(byte(0x00), []byte{0, 0, 0, 0}, byte(0x00))
	f.Add(byte(0x81), []byte{0xFF, 0xFF, 0xFF, 0xFF}, byte(0xA5))
	f.Fuzz(func(t *testing.T, version byte, idb []byte, scratch byte) {
		if len(idb) != 4 {
			return
		}
		ops := probe(0x48, version, [4]byte(idb), 0x02, 0x00, 0x7D)
		ops[4].R = []byte{scratch}
		d, err := NewI2C(&i2ctest.Playback{Ops: ops, DontPanic: true}, nil)
		if err != nil {
			var ve *VersionError
			var ie *IDError
			var se *ScratchError
			if !errors.As(err, &ve) && !errors.As(err, &ie) && !errors.As(err, &se) {
				t.Fatalf("untyped probe error %v", err)
			}
			return
		}
		if d.Device().Serial == "" || d.Device().Grade != bridge.GradeScreening {
			t.Fatalf("device %+v", d.Device())
		}
	})
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// module is a register-level fake of the PCB Artists module, built from
// the programming manual (no module here to compare with): VERSION 0x31,
// a 32-bit ID, SCRATCH, CONTROL (bit 0 powers down; "writing a 0 does
// nothing"), TAVG, RESET (bit 3 soft reset to the defaults — "must be set
// to wake up the device from sleep mode"; bits 1 and 2 clear MIN/MAX and
// history) and DECIBEL/MIN/MAX with auto-increment. While powered down it
// still answers on the bus (the wake command needs that) but measures
// nothing: DECIBEL reads 0, as right after power-up. That last point is
// this fake's assumption; the manual only says the sensor powers down.
type module struct {
	mu     sync.Mutex
	regs   [256]byte
	asleep bool
	level  byte // what DECIBEL shows while awake
}

func newModule(level byte) *module {
	m := &module{level: level}
	m.reset()
	m.regs[0x00] = 0x31
	copy(m.regs[0x01:], id[:])
	return m
}

// reset restores the power-up defaults the manual lists.
func (m *module) reset() {
	m.asleep = false
	m.regs[0x05], m.regs[0x06], m.regs[0x07], m.regs[0x08] = 0xAA, 0x02, 0x03, 0xE8
	m.regs[0x0B], m.regs[0x0C] = 0, 0
}

func (m *module) String() string                  { return "module" }
func (m *module) SetSpeed(physic.Frequency) error { return nil }

func (m *module) Tx(addr uint16, w, r []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if addr != 0x48 || len(w) == 0 {
		return &os.SyscallError{Syscall: "ioctl", Err: syscall.ENXIO}
	}
	reg := w[0]
	for i, b := range w[1:] {
		m.write(reg+byte(i), b)
	}
	for i := range r {
		r[i] = m.read(reg + byte(i))
	}
	return nil
}

func (m *module) write(reg, b byte) {
	if m.asleep {
		if reg == 0x09 && b&0x08 != 0 {
			m.reset()
		}
		return // powered down: only the soft reset does anything
	}
	switch reg {
	case 0x06:
		m.regs[reg] = b &^ 0x01
		if b&0x01 != 0 {
			m.asleep = true
		}
	case 0x09:
		if b&0x08 != 0 {
			m.reset()
		}
		if b&0x02 != 0 {
			m.regs[0x0B], m.regs[0x0C] = 0, 0
		}
	case 0x05, 0x07, 0x08, 0x0D, 0x0E:
		m.regs[reg] = b
	}
}

func (m *module) read(reg byte) byte {
	switch {
	case reg == 0x0A:
		if m.asleep {
			return 0
		}
		return m.level
	case (reg == 0x0B || reg == 0x0C) && m.asleep:
		return 0
	}
	return m.regs[reg]
}

// TestHaltedModuleWakesOnOpen: a gateway stops (Halt powers the module
// down) and starts again; the new Dev must read levels, not DECIBEL 0
// forever. The fake holds the manual's rule, so writing CONTROL alone (what
// NewI2C did before it issued the reset) does not wake it.
func TestHaltedModuleWakesOnOpen(t *testing.T) {
	m := newModule(57)
	d, err := NewI2C(m, &Opts{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	var s bridge.Sample
	if err := d.Sense(&s); err != nil || s.Level != 57 {
		t.Fatalf("first run: %+v, %v", s, err)
	}
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	if !m.asleep {
		t.Fatal("Halt did not power the module down")
	}
	// The rule the fake enforces: CONTROL with bit 0 clear is ignored.
	if err := m.Tx(0x48, []byte{0x06, 0x02}, nil); err != nil || !m.asleep {
		t.Fatalf("CONTROL woke the module (err %v)", err)
	}
	// A restart: a new Dev on the same bus.
	d2, err := NewI2C(m, &Opts{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if m.asleep {
		t.Fatal("NewI2C left the module powered down")
	}
	if err := d2.Sense(&s); err != nil || s.Level != 57 {
		t.Fatalf("after the restart: %+v, %v (ErrNotReady forever means the module still sleeps)", s, err)
	}
	if m.regs[0x06] != 0x02 || m.regs[0x07] != 0x00 || m.regs[0x08] != 0x7D {
		t.Errorf("registers after the reset and configuration: CONTROL %#02x TAVG %#02x%02x", m.regs[0x06], m.regs[0x07], m.regs[0x08])
	}
}

// TestManualRegisterValues checks the register values the programming
// manual documents against what the driver writes and decodes: TAVG
// 1000 ms = 0x03E8 (the power-up default, "slow") and 125 ms = 0x007D
// ("fast"), high byte first; CONTROL filter bits [2:1] 01 = A (the default
// 0x02), 10 = C, 00 = Z; RESET 0x08 system reset, 0x06 clear MIN/MAX and
// history; VERSION 0x31 = hardware 3, firmware 1; the ID ID3 first.
func TestManualRegisterValues(t *testing.T) {
	tests := []struct {
		opts         Opts
		control      byte
		tavgH, tavgL byte
	}{
		{Opts{Weighting: bridge.WeightingA, TimeWeighting: bridge.Slow}, 0x02, 0x03, 0xE8},
		{Opts{Weighting: bridge.WeightingA, TimeWeighting: bridge.Fast}, 0x02, 0x00, 0x7D},
		{Opts{Weighting: bridge.WeightingC, TimeWeighting: bridge.Fast}, 0x04, 0x00, 0x7D},
		{Opts{Weighting: bridge.WeightingZ, TimeWeighting: bridge.Slow}, 0x00, 0x03, 0xE8},
	}
	for _, tc := range tests {
		m := newModule(60)
		d, err := NewI2C(m, &tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if m.regs[0x06] != tc.control || m.regs[0x07] != tc.tavgH || m.regs[0x08] != tc.tavgL {
			t.Errorf("%+v: CONTROL %#02x TAVG %#02x %#02x; manual: %#02x %#02x %#02x",
				tc.opts, m.regs[0x06], m.regs[0x07], m.regs[0x08], tc.control, tc.tavgH, tc.tavgL)
		}
		if dv := d.Device(); dv.Firmware != "hw3 fw1" || dv.Serial != "1C7E029B" {
			t.Errorf("device %+v", dv)
		}
	}
}
