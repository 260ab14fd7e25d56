package slm

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
)

// closeCounter is a capture pipe that counts Close calls.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// fakeClock advances one second per reading.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

// TestSourceSense feeds 3.4 s of raw S32_LE audio (what `arecord -f S32_LE
// -r 48000 -t raw` writes) whose level changes every second, and reads it
// through the bridge.Meter interface like the gateway does.
func TestSourceSense(t *testing.T) {
	const fs = 48000
	var x []float64
	levels := []float64{-30, -20, -40}
	for _, db := range levels {
		x = append(x, sine(fs, 1000, ampFor(db), 1)...)
	}
	x = append(x, sine(fs, 1000, ampFor(-10), 0.4)...)
	pipe := &closeCounter{Reader: bytes.NewReader(encodePCM(t, S32LE, x))}
	st, err := NewStream(pipe, S32LE, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC)}
	src, err := NewSource(st, SourceOptions{
		Meter:  Options{SampleRate: fs, OffsetDB: 120},
		Device: bridge.Device{Serial: "hw:1,0"},
		Now:    clock.now,
	})
	if err != nil {
		t.Fatal(err)
	}
	var m bridge.Meter = src
	for i, db := range levels {
		var s bridge.Sample
		if err := m.Sense(&s); err != nil {
			t.Fatalf("Sense %d: %v", i, err)
		}
		want := db + 120
		if !near(s.Level, want, 0.1) || !s.HasMax || !s.HasMin || !s.HasPeakC {
			t.Errorf("Sense %d: %+v, want LAeq %.1f", i, s, want)
		}
		if s.Duration != time.Second || s.Weighting != bridge.WeightingA || s.TimeWeighting != bridge.Leq {
			t.Errorf("Sense %d: duration %v, %s%s", i, s.Duration, s.Weighting, s.TimeWeighting)
		}
		if !s.At.Equal(clock.t) {
			t.Errorf("Sense %d stamped %v, clock at %v", i, s.At, clock.t)
		}
		if s.Device.Grade != bridge.GradeScreening || s.Device.Serial != "hw:1,0" || s.Device.Model == "" {
			t.Errorf("device %+v", s.Device)
		}
		// The Fast detector and the C-weighted waveform carry some of the
		// previous second over: bounds, not equalities.
		prev := want
		if i > 0 {
			prev = max(want, levels[i-1]+120)
		}
		if s.PeakC < want+2.9 || s.PeakC > prev+3.5 || s.Max < s.Level-0.1 || s.Max > prev+0.1 || s.Min > s.Level+0.1 {
			t.Errorf("Sense %d: LCpeak %.2f, LAFmax %.2f, LAFmin %.2f", i, s.PeakC, s.Max, s.Min)
		}
		if src.Last().LAeq != s.Level {
			t.Errorf("Last() does not match the sample")
		}
	}
	// 0.4 s left: not a full record.
	var s bridge.Sample
	if err := m.Sense(&s); !errors.Is(err, io.EOF) {
		t.Errorf("Sense at the end: %v", err)
	}
	if err := m.Halt(); err != nil || pipe.closed != 1 {
		t.Errorf("Halt: %v, closed %d times", err, pipe.closed)
	}
	if err := m.Halt(); err != nil || pipe.closed != 1 {
		t.Errorf("second Halt: %v, closed %d times", err, pipe.closed)
	}
	if src.String() == "" {
		t.Error("empty String")
	}
}

func TestSourceHaltStopsSense(t *testing.T) {
	st, _ := NewStream(bytes.NewReader(make([]byte, 4*48000*3)), S32LE, 1, 0)
	src, err := NewSource(st, SourceOptions{Meter: Options{SampleRate: 48000}})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Halt(); err != nil {
		t.Fatal(err)
	}
	var s bridge.Sample
	if err := src.Sense(&s); err == nil {
		t.Error("Sense after Halt succeeded")
	}
}

func TestNewSourceRejects(t *testing.T) {
	st, _ := NewStream(bytes.NewReader(nil), S16LE, 1, 0)
	if _, err := NewSource(st, SourceOptions{Meter: Options{SampleRate: 22050}}); reasonOf(err) != ReasonRate {
		t.Errorf("22.05 kHz: %v", err)
	}
	if _, err := NewSource(st, SourceOptions{Meter: Options{SampleRate: 48000}, Device: bridge.Device{Grade: "gold"}}); err == nil {
		t.Error("invalid grade accepted")
	}
}

// TestSourceShortRecords: a gateway sampling at 8 Hz asks for 125 ms
// records: as long as the meter's warm-up, and not a multiple of the
// default 100 ms histogram tick.
func TestSourceShortRecords(t *testing.T) {
	const fs = 48000
	raw := encodePCM(t, S16LE, sine(fs, 1000, ampFor(-20), 1))
	st, _ := NewStream(bytes.NewReader(raw), S16LE, 1, 0)
	src, err := NewSource(st, SourceOptions{Meter: Options{SampleRate: fs, RecordInterval: 125 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		var s bridge.Sample
		if err := src.Sense(&s); err != nil {
			t.Fatalf("Sense %d: %v", i, err)
		}
		if s.Duration != 125*time.Millisecond || !near(s.Level, -20, 0.2) || src.Last().Start != int64(i*fs/8) {
			t.Errorf("Sense %d: %v over %v from sample %d", i, s.Level, s.Duration, src.Last().Start)
		}
	}
}
