package nsrtmk4

import (
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/internal/clocktest"
	"github.com/sossego/sossego/firmware-bridge/internal/serialport/serialtest"
)

// slept records what the driver waited for; TestMain makes waits instant.
var (
	sleptMu sync.Mutex
	slept   []time.Duration
)

func TestMain(m *testing.M) {
	doSleep = func(d time.Duration) {
		sleptMu.Lock()
		defer sleptMu.Unlock()
		slept = append(slept, d)
	}
	os.Exit(m.Run())
}

func takeSlept() []time.Duration {
	sleptMu.Lock()
	defer sleptMu.Unlock()
	s := slept
	slept = nil
	return s
}

func newClock() *clocktest.Clock { return clocktest.New(time.Date(2026, 3, 6, 22, 0, 0, 0, time.UTC)) }

func TestNew(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(*instrument)
		opts       Opts
		wantWrites []uint32
		wantSleep  []time.Duration
		wantTW     bridge.TimeWeighting
		check      func(*testing.T, *instrument)
	}{
		{name: "already A, keep tau", wantTW: bridge.Leq},
		{
			name:       "C to A writes weighting once",
			setup:      func(m *instrument) { m.weighting = 0 },
			wantWrites: []uint32{cmdWriteWeight},
			wantSleep:  []time.Duration{1250 * time.Millisecond}, // max(1 s, 10 × 0.125 s)
			wantTW:     bridge.Leq,
			check: func(t *testing.T, m *instrument) {
				if m.weighting != 1 {
					t.Errorf("instrument weighting %d, want 1 (A)", m.weighting)
				}
			},
		},
		{
			name:       "slow tau waits 10 tau",
			opts:       Opts{Tau: time.Second, Weighting: bridge.WeightingZ},
			wantWrites: []uint32{cmdWriteWeight, cmdWriteTau},
			wantSleep:  []time.Duration{10 * time.Second},
			wantTW:     bridge.Leq,
			check: func(t *testing.T, m *instrument) {
				if m.tau != 1 || m.weighting != 2 {
					t.Errorf("instrument tau %v weighting %d", m.tau, m.weighting)
				}
			},
		},
		{name: "level mode fast", opts: Opts{Mode: ModeLevel}, wantTW: bridge.Fast},
		{
			name: "level mode slow", opts: Opts{Mode: ModeLevel, Tau: time.Second, Weighting: bridge.WeightingC},
			setup:      func(m *instrument) { m.weighting = 0 },
			wantWrites: []uint32{cmdWriteTau}, wantSleep: []time.Duration{10 * time.Second}, wantTW: bridge.Slow,
		},
		{name: "padded strings", setup: func(m *instrument) { m.pad = true }, wantTW: bridge.Leq},
		{name: "one byte per read", setup: func(m *instrument) {}, opts: Opts{Timeout: 2 * time.Second}, wantTW: bridge.Leq},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			takeSlept()
			inst := newInstrument()
			if tc.setup != nil {
				tc.setup(inst)
			}
			port := &serialtest.Port{Feed: inst.feed}
			if tc.name == "one byte per read" {
				port.Chunk = 1
			}
			d, err := New(port, &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := bridge.Device{
				Model: "NSRT_mk4_Dev", Serial: "CI-NSRT4-20931", Firmware: "1.4", Grade: bridge.GradeClass2,
				CalibratedAt: time.Date(2025, 11, 3, 14, 0, 0, 0, time.UTC),
			}
			if got := d.Device(); got != want {
				t.Errorf("Device() = %+v, want %+v", got, want)
			}
			if !slices.Equal(inst.writes, tc.wantWrites) {
				t.Errorf("flash writes %#x, want %#x", inst.writes, tc.wantWrites)
			}
			if got := takeSlept(); !slices.Equal(got, tc.wantSleep) {
				t.Errorf("settling waits %v, want %v", got, tc.wantSleep)
			}
			if d.tw != tc.wantTW {
				t.Errorf("time weighting %q, want %q", d.tw, tc.wantTW)
			}
			if last := inst.commands[len(inst.commands)-1]; last != cmdReadLEQ {
				t.Errorf("New did not end with Read_LEQ: %#x", last)
			}
			if port.Timeouts()[0] != max(tc.opts.Timeout, time.Second) {
				t.Errorf("read timeout %v", port.Timeouts())
			}
			if tc.check != nil {
				tc.check(t, inst)
			}
		})
	}
}

func TestOptsOverrides(t *testing.T) {
	cal := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	inst := newInstrument()
	inst.doc = 0 // never calibrated on the instrument
	d, err := New(&serialtest.Port{Feed: inst.feed}, &Opts{Grade: bridge.GradeClass1, CalibratedAt: cal})
	if err != nil {
		t.Fatal(err)
	}
	if dev := d.Device(); dev.Grade != bridge.GradeClass1 || !dev.CalibratedAt.Equal(cal) {
		t.Fatalf("device %+v", dev)
	}
	inst = newInstrument()
	inst.doc = 0
	d, err = New(&serialtest.Port{Feed: inst.feed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Device().CalibratedAt.IsZero() {
		t.Fatalf("DOC 0 should mean unknown, got %v", d.Device().CalibratedAt)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(*instrument)
		opts   Opts
		want   string
		target any
	}{
		{name: "wrong model", setup: func(m *instrument) { m.model = "XL2" }, want: `model "XL2" is not`, target: new(*IDError)},
		{name: "silent", setup: func(m *instrument) { m.silent = map[uint32]bool{cmdReadModel: true} }, want: "no reply to model within 1s", target: new(*TimeoutError)},
		{name: "unterminated model", setup: func(m *instrument) { m.reply = map[uint32][]byte{cmdReadModel: []byte("NSRT")} }, want: "short reply to model: 4 of 32", target: new(*TimeoutError)},
		{name: "garbage model", setup: func(m *instrument) { m.reply = map[uint32][]byte{cmdReadModel: {0xFE, 'N', 0x01, 0}} }, want: "non-printable byte 0xfe", target: new(*ReplyError)},
		{name: "empty serial", setup: func(m *instrument) { m.serial = "" }, want: "bad serial number reply: empty", target: new(*ReplyError)},
		{name: "short date", setup: func(m *instrument) { m.short = map[uint32]int{cmdReadDOC: 3} }, want: "short reply to calibration date: 3 of 8", target: new(*TimeoutError)},
		{name: "implausible date", setup: func(m *instrument) { m.doc = 1 << 40 }, want: "not a plausible date", target: new(*ReplyError)},
		{name: "weighting code", setup: func(m *instrument) { m.weighting = 7 }, want: "unknown weighting code 7", target: new(*ReplyError)},
		{name: "tau NaN", setup: func(m *instrument) { m.tau = float32(math.NaN()) }, want: "bad tau reply", target: new(*ReplyError)},
		{name: "nak", setup: func(m *instrument) { m.weighting = 0; m.ackVal = 0x15 }, want: "bad weighting ack reply: got 0x15", target: new(*ReplyError)},
		{name: "no ack", setup: func(m *instrument) { m.weighting = 0; m.silent = map[uint32]bool{cmdWriteWeight: true} }, want: "no reply to weighting ack", target: new(*TimeoutError)},
		{name: "first LEQ lost", setup: func(m *instrument) { m.silent = map[uint32]bool{cmdReadLEQ: true} }, want: "no reply to LEQ", target: new(*TimeoutError)},
		{name: "level mode odd tau", setup: func(m *instrument) { m.tau = 0.5 }, opts: Opts{Mode: ModeLevel}, want: "level mode needs tau"},
		{name: "bad weighting option", opts: Opts{Weighting: "B"}, want: `weighting "B"`},
		{name: "bad mode", opts: Opts{Mode: 9}, want: "unknown mode 9"},
		{name: "bad tau option", opts: Opts{Tau: -time.Second}, want: "tau -1s"},
		{name: "bad grade", opts: Opts{Grade: "type1"}, want: `grade "type1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst := newInstrument()
			if tc.setup != nil {
				tc.setup(inst)
			}
			d, err := New(&serialtest.Port{Feed: inst.feed}, &tc.opts)
			if err == nil || d != nil {
				t.Fatalf("New = %v, %v; want error", d, err)
			}
			if !strings.HasPrefix(err.Error(), "nsrtmk4: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			if tc.target != nil && !errors.As(err, tc.target) {
				t.Errorf("error %T, want %T", err, tc.target)
			}
		})
	}
}

func TestSenseLeq(t *testing.T) {
	clk := newClock()
	inst := newInstrument()
	inst.leqs = []float32{99, 45.3, 62.15, 71.9} // 99: the discarded warm-up integration
	d, err := New(&serialtest.Port{Feed: inst.feed}, &Opts{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	steps := []time.Duration{time.Second, time.Second, 1500 * time.Millisecond}
	want := []float64{45.3, 62.15, 71.9}
	for i, step := range steps {
		clk.Advance(step)
		var s bridge.Sample
		if err := d.Sense(&s); err != nil {
			t.Fatal(err)
		}
		if s.Level != want[i] || s.Duration != step || !s.At.Equal(clk.Now()) ||
			s.TimeWeighting != bridge.Leq || s.Weighting != bridge.WeightingA || s.HasMax || s.Device != d.Device() {
			t.Errorf("sample %d = %+v, want %v dB over %v", i, s, want[i], step)
		}
	}
	if inst.leqReads != 4 {
		t.Errorf("%d Read_LEQ, want 4", inst.leqReads)
	}
}

// TestSenseErrorsResync: after a failed exchange the next Sense restarts the
// integration and reports ErrNotReady; the one after reports a level over
// the time since the restart.
func TestSenseErrorsResync(t *testing.T) {
	tests := []struct {
		name   string
		fault  func(*instrument)
		want   string
		target any
	}{
		{"timeout", func(m *instrument) { m.silent = map[uint32]bool{cmdReadLEQ: true} }, "no reply to LEQ", new(*TimeoutError)},
		{"short frame", func(m *instrument) { m.short = map[uint32]int{cmdReadLEQ: 2} }, "short reply to LEQ: 2 of 4", new(*TimeoutError)},
		{"garbage prefix", func(m *instrument) { m.prefix = []byte{0xFF, 0xFF, 0xFF, 0xFF} }, "bad LEQ reply: value NaN", new(*ReplyError)},
		{"impossible level", func(m *instrument) { m.reply = map[uint32][]byte{cmdReadLEQ: f32(-300)} }, "value -300 outside", new(*ReplyError)},
		{"infinite level", func(m *instrument) { m.reply = map[uint32][]byte{cmdReadLEQ: f32(float32(math.Inf(1)))} }, "value +Inf outside", new(*ReplyError)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			inst := newInstrument()
			port := &serialtest.Port{Feed: inst.feed}
			d, err := New(port, &Opts{Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			inst.mu.Lock()
			tc.fault(inst)
			inst.mu.Unlock()
			clk.Advance(time.Second)
			var s bridge.Sample
			err = d.Sense(&s)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, tc.target) {
				t.Fatalf("Sense = %v, want %T %q", err, tc.target, tc.want)
			}
			inst.mu.Lock()
			inst.silent, inst.short, inst.reply = nil, nil, nil
			inst.mu.Unlock()
			clk.Advance(time.Second)
			if err := d.Sense(&s); !errors.Is(err, ErrNotReady) {
				t.Fatalf("Sense after error = %v, want ErrNotReady", err)
			}
			clk.Advance(time.Second)
			if err := d.Sense(&s); err != nil || s.Duration != time.Second || s.Level != 48.7 {
				t.Fatalf("Sense after resync = %+v, %v", s, err)
			}
		})
	}
}

func TestSenseLevelMode(t *testing.T) {
	clk := newClock()
	inst := newInstrument()
	inst.levels = []float32{51.2, 88.4}
	d, err := New(&serialtest.Port{Feed: inst.feed}, &Opts{Mode: ModeLevel, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []float64{51.2, 88.4} {
		clk.Advance(100 * time.Millisecond)
		var s bridge.Sample
		if err := d.Sense(&s); err != nil {
			t.Fatal(err)
		}
		if s.Level != want || s.TimeWeighting != bridge.Fast || s.Duration != 0 {
			t.Fatalf("sample %+v, want %v dB LAF", s, want)
		}
	}
	// A failed read in level mode needs no resync.
	inst.mu.Lock()
	inst.silent = map[uint32]bool{cmdReadLevel: true}
	inst.mu.Unlock()
	var s bridge.Sample
	if err := d.Sense(&s); !errors.As(err, new(*TimeoutError)) {
		t.Fatalf("Sense = %v", err)
	}
	inst.mu.Lock()
	inst.silent = nil
	inst.mu.Unlock()
	if err := d.Sense(&s); err != nil {
		t.Fatalf("Sense after timeout = %v", err)
	}
}

func TestHalt(t *testing.T) {
	port := &serialtest.Port{Feed: newInstrument().feed}
	d, err := New(port, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.closer, d.name = port, "/dev/fake"
	for i := 0; i < 3; i++ {
		if err := d.Halt(); err != nil {
			t.Fatal(err)
		}
	}
	if port.Closed() != 1 {
		t.Fatalf("port closed %d times", port.Closed())
	}
	var s bridge.Sample
	if err := d.Sense(&s); !errors.Is(err, ErrHalted) {
		t.Fatalf("Sense after Halt = %v", err)
	}
	if d.String() != "nsrtmk4{/dev/fake}" {
		t.Fatalf("String() = %q", d.String())
	}
}

func TestOpenMissingPort(t *testing.T) {
	_, err := Open("/dev/nonexistent-nsrt", nil)
	if err == nil || !strings.HasPrefix(err.Error(), "nsrtmk4: open /dev/nonexistent-nsrt: ") {
		t.Fatalf("Open = %v", err)
	}
}

func TestParseEdges(t *testing.T) {
	if s, err := parseString([]byte("  NSRT_mk4_Dev \x00junk"), "m"); err != nil || s != "NSRT_mk4_Dev" {
		t.Errorf("parseString = %q, %v", s, err)
	}
	full := []byte(strings.Repeat("A", 32))
	if s, err := parseString(full, "m"); err != nil || s != string(full) {
		t.Errorf("32 bytes without NUL: %q, %v", s, err)
	}
	if _, err := parseString([]byte("ABC"), "m"); err == nil {
		t.Error("unterminated short string accepted")
	}
	if v, err := parseFloat(f32(94), "x", 0, 200); err != nil || v != 94 {
		t.Errorf("parseFloat(94) = %v, %v", v, err)
	}
	if v, err := parseFloat(f32(45.3), "x", 0, 200); err != nil || v != 45.3 {
		t.Errorf("parseFloat(45.3) = %v, %v (float32 noise not removed)", v, err)
	}
	if _, err := parseFloat([]byte{1, 2, 3}, "x", 0, 200); err == nil {
		t.Error("3-byte float accepted")
	}
	day := time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)
	b := make([]byte, 8)
	s := uint64(day.Sub(epoch1904) / time.Second)
	for i := range b {
		b[i] = byte(s >> (8 * i))
	}
	if got, err := parseDate(b); err != nil || !got.Equal(day) {
		t.Errorf("parseDate = %v, %v; want %v", got, err, day)
	}
	late := time.Date(2199, 12, 31, 0, 0, 0, 0, time.UTC) // beyond time.Duration's 292 years from 1904
	s = uint64(late.Unix() - epoch1904.Unix())
	for i := range b {
		b[i] = byte(s >> (8 * i))
	}
	if got, err := parseDate(b); err != nil || !got.Equal(late) {
		t.Errorf("parseDate = %v, %v; want %v", got, err, late)
	}
	if _, err := parseDate(b[:7]); err == nil {
		t.Error("7-byte date accepted")
	}
}

// TestProtocolKnownAnswers pins the byte layouts of the vendor's "NSRT_mk4_Dev
// Com Protocol" document. It gives the layouts (command packet = U32
// command | U32 address | U32 count, little-endian, bit 31 of the command
// set for reads; floats are IEEE-754 float32 little-endian; dates U64
// seconds since 1904-01-01 UTC) but no worked examples, so these were worked
// out by hand from them, and there is no instrument here to record from:
//
//   - Read_LEQ (0x80000011) of 4 bytes: 11 00 00 80 | 00 00 00 00 | 04 00 00 00.
//   - 94.0 dB as float32: 94 = 1.46875 × 2⁶, exponent 127+6 = 0x85,
//     fraction 0.46875 = 0x3C0000 → 0x42BC0000 → bytes 00 00 BC 42.
//   - 2026-01-01T00:00:00Z is 1 767 225 600 s after 1970, and 1970 is
//     2 082 844 800 s after 1904 (66 years with 17 leap days), so the
//     instrument sends 3 850 070 400 = 0xE57B6980 → 80 69 7B E5 00 00 00 00.
func TestProtocolKnownAnswers(t *testing.T) {
	if got, want := command(cmdReadLEQ, 4), []byte{0x11, 0, 0, 0x80, 0, 0, 0, 0, 4, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("Read_LEQ packet % x, want % x", got, want)
	}
	if got, want := command(cmdReadModel, 32), []byte{0x31, 0, 0, 0x80, 0, 0, 0, 0, 32, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("Read_Model packet % x, want % x", got, want)
	}
	if v, err := parseFloat([]byte{0x00, 0x00, 0xBC, 0x42}, "LEQ", 0, 200); err != nil || v != 94 {
		t.Errorf("00 00 BC 42 = %v, %v; want 94 dB", v, err)
	}
	if v, err := parseFloat([]byte{0xCD, 0xCC, 0x42, 0x42}, "LEQ", 0, 200); err != nil || v != 48.7 {
		t.Errorf("CD CC 42 42 = %v, %v; want 48.7 dB (float32 48.70000076, rounded)", v, err)
	}
	if d, err := parseDate([]byte{0x80, 0x69, 0x7B, 0xE5, 0, 0, 0, 0}); err != nil || !d.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date = %v, %v; want 2026-01-01", d, err)
	}
	if off := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).Sub(epoch1904) / time.Second; off != 2082844800 {
		t.Errorf("1904→1970 = %d s", off)
	}
}
