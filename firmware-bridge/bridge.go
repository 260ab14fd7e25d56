// Package bridge is the boundary between sound-level-meter firmware and the
// gateway daemon. It defines the Sample a meter produces and the small Meter
// interface every driver in the sub-packages satisfies, in periph.io's driver
// shape: a constructor that probes the device (NewI2C, New…), a synchronous
// Sense, Halt and String. Drivers start no goroutines; the gateway owns the
// sampling loop, its ticker and its context.
//
// The folder is called firmware-bridge; the package is bridge.
//
// Overview of its parts: `Meter`/`Sample`; one sub-package per device
// (`pcbadbm`, `sen0232`, `nsrtmk4`, `xl2`, `bme280`), `sim` (simulated meter),
// `slm` (software sound-level meter); `internal/serialport` (shared serial
// plumbing), `ptytest`, `internal/{i2cfake,clocktest}` (test support).
package bridge

import (
	"fmt"
	"time"
)

// Grade is the metrological class of an instrument. Screening sensors are
// flagged as such in every record, alert and evidence package.
type Grade string

// Grades, as written on the wire.
const (
	GradeClass1    Grade = "class1"
	GradeClass2    Grade = "class2"
	GradeScreening Grade = "screening"
)

// Valid reports whether g is one of the known grades.
func (g Grade) Valid() bool {
	switch g {
	case GradeClass1, GradeClass2, GradeScreening:
		return true
	}
	return false
}

// Weighting is the frequency weighting of a level (IEC 61672-1).
type Weighting string

// Frequency weightings.
const (
	WeightingA Weighting = "A"
	WeightingC Weighting = "C"
	WeightingZ Weighting = "Z"
)

// TimeWeighting is the exponential time weighting, or Leq for an
// energy-equivalent (integrating) level.
type TimeWeighting string

// Time weightings.
const (
	Fast    TimeWeighting = "F"   // 125 ms
	Slow    TimeWeighting = "S"   // 1 s
	Impulse TimeWeighting = "I"   // 35 ms rise
	Leq     TimeWeighting = "Leq" // integrating over the sample duration
)

// Device describes the instrument that produced a sample.
type Device struct {
	Model        string    // e.g. "PCB Artists PCBA-DBM-r3"
	Serial       string    // serial number or bus ID; never empty for a real meter
	Firmware     string    // firmware or protocol version read from the device
	Grade        Grade     // class1, class2 or screening
	CalibratedAt time.Time // zero when unknown
}

// Sample is one reading from a meter. Levels are in dB re 20 µPa; a field a
// meter does not measure is NaN-free and flagged absent through its Has…
// companion, so that a zero level is never mistaken for a missing one.
type Sample struct {
	At       time.Time     // when the measurement interval ended (gateway clock)
	Duration time.Duration // the interval the levels cover (0 = instantaneous)

	Weighting     Weighting
	TimeWeighting TimeWeighting

	// Level is the main level: LAeq over Duration when TimeWeighting is Leq,
	// otherwise the time-weighted level at At.
	Level float64
	// Max and Min are the maximum and minimum time-weighted levels over
	// Duration, when the meter reports them.
	Max, Min       float64
	HasMax, HasMin bool
	// PeakC is the C-weighted peak (LCpeak) over Duration, when known.
	PeakC    float64
	HasPeakC bool

	Device Device
}

// String renders the main level for logs.
func (s Sample) String() string {
	return fmt.Sprintf("L%s%s=%.1f dB", s.Weighting, s.TimeWeighting, s.Level)
}

// Meter is what the gateway needs from a sound-level-meter driver. Sense
// performs one synchronous measurement and fills s; Halt puts the device in
// an inert state and is idempotent.
type Meter interface {
	Sense(s *Sample) error
	Halt() error
	String() string
}

// Env is one environmental reading (BME280 and similar). Fields the sensor
// does not measure are flagged absent.
type Env struct {
	At             time.Time
	TemperatureC   float64
	HumidityPct    float64
	PressureHPa    float64
	HasHumidity    bool
	HasPressure    bool
	HasTemperature bool
	Device         Device
}

// EnvSensor is what the gateway needs from an environmental sensor driver.
type EnvSensor interface {
	SenseEnv(e *Env) error
	Halt() error
	String() string
}
