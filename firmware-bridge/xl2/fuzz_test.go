package xl2

import (
	"errors"
	"math"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/internal/serialport/serialtest"
)

func FuzzParseLevel(f *testing.F) {
	for _, s := range []string{"53.8 dB", "53.8 dB, OK", "-999 dB", "1e308 dB", "131 dB, OVR", "0x1p-2 dB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		v, err := parseLevel(line, "LAEQ")
		if err != nil {
			if !errors.Is(err, ErrNotReady) && !errors.As(err, new(*ReplyError)) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if math.IsNaN(v) || v < invalidBelow || v > 200 {
			t.Fatalf("parseLevel(%q) = %v", line, v)
		}
	})
}

func FuzzParseIDN(f *testing.F) {
	f.Add("NTiAudio,XL2,A2A-10242-E0,V4.21")
	f.Add("NTi,XL2,,")
	f.Fuzz(func(t *testing.T, line string) {
		id, err := parseIDN(line)
		if err != nil {
			if !errors.As(err, new(*IDError)) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if id.serial == "" || id.firmware == "" || !printable(id.serial+id.firmware) {
			t.Fatalf("parseIDN(%q) = %+v", line, id)
		}
	})
}

func FuzzParseErrorQueue(f *testing.F) {
	f.Add("0")
	f.Add(`0,"No error"`)
	f.Add("-113,5")
	f.Fuzz(func(t *testing.T, line string) {
		err := parseErrorQueue(line)
		if err != nil && !errors.As(err, new(*DeviceError)) && !errors.As(err, new(*ReplyError)) {
			t.Fatalf("untyped error %v", err)
		}
	})
}

// FuzzReplies replaces the reply to one command with arbitrary bytes: New
// and Sense fail with a typed error or succeed with sane values.
func FuzzReplies(f *testing.F) {
	f.Add(uint8(0), "NTiAudio,XL2,X,Y\r\n")
	f.Add(uint8(1), "0\r\n")
	f.Add(uint8(2), "1 dB\r\n2 dB\r\n3 dB\r\n4 dB\r\n")
	f.Add(uint8(2), "\r\n\n\n\n")
	cmds := []string{"*IDN?", "SYST:ERR?", "MEAS:SLM:123:DT?"}
	f.Fuzz(func(t *testing.T, which uint8, reply string) {
		m := newMeter()
		m.replace = map[string]string{cmds[int(which)%len(cmds)]: reply}
		clk := newClock()
		d, err := New(&serialtest.Port{Feed: m.feed}, &Opts{Now: clk.Now, Timeout: time.Second})
		if err != nil {
			if !errors.As(err, new(*ReplyError)) && !errors.As(err, new(*TimeoutError)) &&
				!errors.As(err, new(*IDError)) && !errors.As(err, new(*DeviceError)) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for i := 0; i < 2; i++ {
			clk.Advance(time.Second)
			var s bridge.Sample
			if err := d.Sense(&s); err == nil {
				for _, v := range []float64{s.Level, s.Max, s.Min, s.PeakC} {
					if math.IsNaN(v) || v < invalidBelow || v > 200 {
						t.Fatalf("sample %+v", s)
					}
				}
			}
		}
	})
}
