package nsrtmk4

import (
	"errors"
	"math"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/internal/clocktest"
	"github.com/sossego/sossego/firmware-bridge/internal/serialport/serialtest"
)

func FuzzParseString(f *testing.F) {
	f.Add([]byte("NSRT_mk4_Dev\x00"))
	f.Add([]byte{0xFF, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseString(b, "x")
		if err != nil {
			if !errors.As(err, new(*ReplyError)) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if s == "" || len(s) > len(b) {
			t.Fatalf("parseString(%q) = %q", b, s)
		}
		for _, c := range []byte(s) {
			if c < 0x20 || c > 0x7E {
				t.Fatalf("non-printable %q accepted", s)
			}
		}
	})
}

func FuzzParseFloat(f *testing.F) {
	f.Add([]byte{0, 0, 0xBC, 0x42})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseFloat(b, "x", -20, 200)
		if err == nil && (math.IsNaN(v) || v < -20 || v > 200) {
			t.Fatalf("parseFloat(%x) = %v", b, v)
		}
	})
}

func FuzzParseDate(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x80, 0x51, 0x01, 0xE8, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseDate(b)
		if err == nil && !d.IsZero() && (d.Year() < 1989 || d.Year() > 2200) {
			t.Fatalf("parseDate(%x) = %v", b, d)
		}
	})
}

// FuzzReplies replaces the instrument's reply to one command with
// arbitrary bytes: New and Sense must fail with a typed error or succeed
// with sane values, never panic or hang.
func FuzzReplies(f *testing.F) {
	f.Add(uint8(0), []byte("NSRT\x00"))
	f.Add(uint8(4), []byte{9})
	f.Add(uint8(6), []byte{0, 0, 0x80, 0x7F})
	f.Add(uint8(7), []byte{0x06, 0x06})
	cmds := []uint32{cmdReadModel, cmdReadSN, cmdReadFW, cmdReadDOC, cmdReadWeighting, cmdReadTau, cmdReadLEQ, cmdWriteWeight}
	f.Fuzz(func(t *testing.T, which uint8, reply []byte) {
		inst := newInstrument()
		inst.weighting = 0 // so that Write_Weighting is exercised
		inst.reply = map[uint32][]byte{cmds[int(which)%len(cmds)]: reply}
		clk := clocktest.New(time.Unix(1_772_845_200, 0))
		d, err := New(&serialtest.Port{Feed: inst.feed}, &Opts{Now: clk.Now})
		if err != nil {
			if !errors.As(err, new(*ReplyError)) && !errors.As(err, new(*TimeoutError)) && !errors.As(err, new(*IDError)) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if d.Device().Model == "" || d.Device().Serial == "" {
			t.Fatalf("device %+v", d.Device())
		}
		for i := 0; i < 3; i++ {
			clk.Advance(time.Second)
			var s bridge.Sample
			if err := d.Sense(&s); err == nil && (math.IsNaN(s.Level) || s.Level < -20 || s.Level > 200 || s.Duration <= 0) {
				t.Fatalf("sample %+v", s)
			}
		}
	})
}
