package xl2

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/internal/clocktest"
	"github.com/sossego/sossego/firmware-bridge/internal/serialport/serialtest"
)

func newClock() *clocktest.Clock { return clocktest.New(time.Date(2026, 3, 6, 22, 0, 0, 0, time.UTC)) }

var certDate = time.Date(2025, 8, 14, 0, 0, 0, 0, time.UTC)

func TestNew(t *testing.T) {
	for _, chunk := range []int{0, 1, 7} {
		m := newMeter()
		port := &serialtest.Port{Feed: m.feed, Chunk: chunk}
		d, err := New(port, &Opts{CalibratedAt: certDate})
		if err != nil {
			t.Fatal(err)
		}
		want := bridge.Device{Model: "NTi Audio XL2", Serial: "A2A-10242-E0", Firmware: "V4.21", Grade: bridge.GradeClass1, CalibratedAt: certDate}
		if d.Device() != want {
			t.Errorf("Device() = %+v, want %+v", d.Device(), want)
		}
		if want := []string{"*IDN?", "*RST", "INIT START", "MEAS:INIT", "SYST:ERR?"}; !slices.Equal(m.commands, want) {
			t.Errorf("commands %q, want %q", m.commands, want)
		}
		if !m.started || port.Timeouts()[0] != 2*time.Second {
			t.Errorf("started %v, timeouts %v", m.started, port.Timeouts())
		}
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(*meter)
		opts   Opts
		want   string
		target any
	}{
		{name: "a Rion answers", setup: func(m *meter) { m.idn = "RION,NL-43,00123456,1.7" }, want: `"RION,NL-43,00123456,1.7" does not identify`, target: new(*IDError)},
		{name: "three fields", setup: func(m *meter) { m.idn = "NTiAudio,XL2,A2A-1" }, want: "does not identify", target: new(*IDError)},
		{name: "garbage", setup: func(m *meter) { m.idn = "NTiAudio,XL2,\x01\x02,V4" }, want: "does not identify", target: new(*IDError)},
		{name: "silent", setup: func(m *meter) { m.silent = map[string]bool{"*IDN?": true} }, want: `no reply to "*IDN?" within 2s (0 of 1 lines`, target: new(*TimeoutError)},
		{name: "no end of line", setup: func(m *meter) { m.replace = map[string]string{"*IDN?": strings.Repeat("X", 300)} }, want: "no end of line", target: new(*ReplyError)},
		{name: "error queue", setup: func(m *meter) { m.replace = map[string]string{"SYST:ERR?": "-113,5\r\n"} }, want: "device error -113: invalid command", target: new(*DeviceError)},
		{name: "error queue garbage", setup: func(m *meter) { m.replace = map[string]string{"SYST:ERR?": "??\r\n"} }, want: "no error code", target: new(*ReplyError)},
		{name: "weighting", opts: Opts{Weighting: "B"}, want: `weighting "B"`},
		{name: "grade", opts: Opts{Grade: "class0"}, want: `grade "class0"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newMeter()
			if tc.setup != nil {
				tc.setup(m)
			}
			d, err := New(&serialtest.Port{Feed: m.feed}, &tc.opts)
			if err == nil || d != nil {
				t.Fatalf("New = %v, %v", d, err)
			}
			if !strings.HasPrefix(err.Error(), "xl2: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			if tc.target != nil && !errors.As(err, tc.target) {
				t.Errorf("error %T, want %T", err, tc.target)
			}
			if tc.target != nil && errors.As(err, new(*IDError)) && slices.Contains(m.commands, "*RST") {
				t.Error("reset a device that is not an XL2")
			}
		})
	}
}

func TestSense(t *testing.T) {
	for _, w := range []string{"A", "C", "Z"} {
		t.Run(w, func(t *testing.T) {
			clk := newClock()
			m := newMeter()
			m.snaps = []map[string]string{snap(w, 61.4, 68.9, 55.2, 84.0), snap(w, 72.1, 80.0, 70.1, 95.5)}
			d, err := New(&serialtest.Port{Feed: m.feed}, &Opts{Weighting: bridge.Weighting(w), Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			// New's MEAS:INIT consumed the first snapshot's slot: the first
			// Sense closes it and reads the second.
			for _, step := range []time.Duration{time.Second, 1200 * time.Millisecond} {
				clk.Advance(step)
				var s bridge.Sample
				if err := d.Sense(&s); err != nil {
					t.Fatal(err)
				}
				want := bridge.Sample{
					At: clk.Now(), Duration: step, Weighting: bridge.Weighting(w), TimeWeighting: bridge.Leq,
					Level: 72.1, Max: 80, Min: 70.1, HasMax: true, HasMin: true, PeakC: 95.5, HasPeakC: true, Device: d.Device(),
				}
				if s != want {
					t.Errorf("Sense = %+v, want %+v", s, want)
				}
			}
			last := m.commands[len(m.commands)-1]
			if want := "MEAS:SLM:123:dt? L" + w + "EQ L" + w + "FMAX L" + w + "FMIN LCPKMAX"; last != want {
				t.Errorf("query %q, want %q", last, want)
			}
		})
	}
}

func TestSenseErrors(t *testing.T) {
	tests := []struct {
		name   string
		fault  func(*meter)
		want   string
		target any
	}{
		{name: "settling", fault: func(m *meter) { m.snaps = []map[string]string{snap("A", -999, -999, -999, -999)} }, target: &ErrNotReady},
		{name: "overload", fault: func(m *meter) { m.snaps[0]["LAFMAX"] = "131.2 dB, OVR" }, want: "overload", target: new(*ReplyError)},
		{name: "unknown status", fault: func(m *meter) { m.snaps[0]["LAEQ"] = "50.0 dB, XYZ" }, want: `unknown status "XYZ"`, target: new(*ReplyError)},
		{name: "no unit", fault: func(m *meter) { m.snaps[0]["LAEQ"] = "50.0" }, want: `no "dB" unit`, target: new(*ReplyError)},
		{name: "garbage bytes", fault: func(m *meter) { m.prefix = "\xff\xfe" }, want: "not a number", target: new(*ReplyError)},
		{name: "missing line", fault: func(m *meter) { delete(m.snaps[0], "LCPKMAX") }, want: "(3 of 4 lines", target: new(*TimeoutError)},
		{name: "silent", fault: func(m *meter) { m.silent = map[string]bool{"MEAS:SLM:123:DT?": true} }, want: "(0 of 4 lines", target: new(*TimeoutError)},
		{name: "impossible", fault: func(m *meter) { m.snaps[0]["LAEQ"] = "250.0 dB" }, want: "impossible level", target: new(*ReplyError)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			m := newMeter()
			d, err := New(&serialtest.Port{Feed: m.feed}, &Opts{Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			m.mu.Lock()
			m.snaps = []map[string]string{snap("A", 48.2, 55.0, 44.1, 70.3)}
			tc.fault(m)
			m.mu.Unlock()
			clk.Advance(time.Second)
			var s bridge.Sample
			err = d.Sense(&s)
			if p, ok := tc.target.(*error); ok {
				if !errors.Is(err, *p) {
					t.Fatalf("Sense = %v, want %v", err, *p)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, tc.target) {
				t.Fatalf("Sense = %v, want %T %q", err, tc.target, tc.want)
			}
			// Recovery: the next period is measured from the failed
			// Sense's MEAS:INIT.
			m.mu.Lock()
			m.snaps, m.silent, m.prefix = []map[string]string{snap("A", 50.5, 58, 47, 75)}, nil, ""
			m.mu.Unlock()
			clk.Advance(time.Second)
			if err := d.Sense(&s); err != nil || s.Level != 50.5 || s.Duration != time.Second {
				t.Fatalf("Sense after error = %+v, %v", s, err)
			}
		})
	}
}

// TestLostMEASINIT: when MEAS:INIT cannot be sent, the next Sense starts a
// new period and reports ErrNotReady rather than a wrong duration.
func TestLostMEASINIT(t *testing.T) {
	clk := newClock()
	port := &serialtest.Port{Feed: newMeter().feed}
	d, err := New(port, &Opts{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	port.FailWrites = 1
	var s bridge.Sample
	clk.Advance(time.Second)
	if err := d.Sense(&s); err == nil || !strings.Contains(err.Error(), `send "MEAS:INIT"`) {
		t.Fatalf("Sense = %v", err)
	}
	clk.Advance(time.Second)
	if err := d.Sense(&s); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Sense = %v, want ErrNotReady", err)
	}
	clk.Advance(time.Second)
	if err := d.Sense(&s); err != nil || s.Duration != time.Second {
		t.Fatalf("Sense = %+v, %v", s, err)
	}
}

func TestHalt(t *testing.T) {
	m := newMeter()
	port := &serialtest.Port{Feed: m.feed}
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
	if port.Closed() != 1 || m.started || m.commands[len(m.commands)-1] != "INIT STOP" {
		t.Fatalf("closed %d, started %v, commands %q", port.Closed(), m.started, m.commands)
	}
	var s bridge.Sample
	if err := d.Sense(&s); !errors.Is(err, ErrHalted) {
		t.Fatalf("Sense after Halt = %v", err)
	}
	if d.String() != "xl2{/dev/fake}" {
		t.Fatalf("String() = %q", d.String())
	}
}

func TestOpenMissingPort(t *testing.T) {
	if _, err := Open("/dev/nonexistent-xl2", nil); err == nil || !strings.HasPrefix(err.Error(), "xl2: open /dev/nonexistent-xl2: ") {
		t.Fatalf("Open = %v", err)
	}
}

func TestParseLevel(t *testing.T) {
	tests := []struct {
		line string
		want float64
		err  string
	}{
		{"53.8 dB", 53.8, ""},
		{"53.8 dB, OK", 53.8, ""},
		{" 53.8dB,OK\t", 53.8, ""},
		{"-12.5 dB", -12.5, ""},
		{"120 dB, ok", 120, ""},
		{"-999.0 dB", 0, "no valid value"},
		{"131.2 dB, OVR", 0, "overload"},
		{"20.0 dB, UND", 0, "under range"},
		{"53.8 dB OK", 0, "unexpected text"},
		{"dB", 0, "not a number"},
		{"NaN dB", 0, "impossible level"},
		{"", 0, `no "dB"`},
	}
	for _, tc := range tests {
		got, err := parseLevel(tc.line, "LAEQ")
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("parseLevel(%q) = %v, %v; want %v", tc.line, got, err, tc.want)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("parseLevel(%q) = %v, %v; want error %q", tc.line, got, err, tc.err)
		}
	}
}

// TestManualExamples: the reply formats the remote measurement manual shows
// (*IDN? → "NTiAudio,XL2,<serial>,<firmware>"; a level query → "<value>
// dB", with ", OK" or a range flag) decode to the values they state. There
// is no XL2 here: the lines are the manual's formats, typed in by hand.
func TestManualExamples(t *testing.T) {
	id, err := parseIDN("NTiAudio,XL2,A2A-10242-E0,V4.21")
	if err != nil || id.maker != "NTiAudio" || id.unit != "XL2" || id.serial != "A2A-10242-E0" || id.firmware != "V4.21" {
		t.Errorf("parseIDN = %+v, %v", id, err)
	}
	for line, want := range map[string]float64{"53.8 dB": 53.8, "53.8 dB, OK": 53.8, "94.0 dB, OK": 94} {
		if got, err := parseLevel(line, "LAEQ"); err != nil || got != want {
			t.Errorf("parseLevel(%q) = %v, %v; want %v", line, got, err, want)
		}
	}
}
