package alerts

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Meter grades as written on the wire and in the registry.
const (
	GradeClass1    = "class1"
	GradeClass2    = "class2"
	GradeScreening = "screening"
)

// Config holds the tunables of the alert lifecycle. The zero value is not
// valid; start from [DefaultConfig].
type Config struct {
	// Window is the length of the rolling LAeq window. Default 60 s.
	Window time.Duration
	// MinDuration is how long every window must exceed before a pending
	// alert fires. Default 120 s. Keep it longer than Window: otherwise one
	// loud second that holds a window above the limit for Window can fire.
	MinDuration time.Duration
	// HysteresisDB: a firing alert resolves only below limit − HysteresisDB.
	// Default 3 dB.
	HysteresisDB float64
	// ResolveTime is how long the level must stay below limit − HysteresisDB
	// before a firing alert resolves. Default 120 s.
	ResolveTime time.Duration
	// NoDataTimeout: a sensor from which nothing was received for this long
	// (measured on Tick against the receive time of its last record) gets a
	// no_data alert. Default 60 s (records come every second, batched).
	NoDataTimeout time.Duration
	// MarginDB is the uncertainty margin per meter grade: a window exceeds
	// only when LAeq − margin > limit. Defaults (IEC 61672-1:2013 acceptance
	// limits at 1 kHz for class 1 and class 2; screening modules are neither
	// calibrated nor type-tested): class1 1.1 dB, class2 1.4 dB,
	// screening 5 dB. A grade not in the map gets UnknownGradeMarginDB and
	// is flagged like a screening sensor.
	MarginDB map[string]float64
	// UnknownGradeMarginDB is the margin of a grade missing from MarginDB.
	// Default 5 dB.
	UnknownGradeMarginDB float64
	// TickEvery is how often Monitor.Run checks for silent sensors and
	// flushes state snapshots. Default 1 s.
	TickEvery time.Duration
	// SnapshotEvery bounds how often the window of a sensor without
	// transitions is saved (on a tick). A transition always saves at once.
	// After a crash at most this much window history is missing. Default 10 s.
	SnapshotEvery time.Duration
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Window:        60 * time.Second,
		MinDuration:   120 * time.Second,
		HysteresisDB:  3,
		ResolveTime:   120 * time.Second,
		NoDataTimeout: 60 * time.Second,
		MarginDB: map[string]float64{
			GradeClass1:    1.1,
			GradeClass2:    1.4,
			GradeScreening: 5,
		},
		UnknownGradeMarginDB: 5,
		TickEvery:            time.Second,
		SnapshotEvery:        10 * time.Second,
	}
}

// Validate reports every invalid field at once. It does no I/O.
func (c Config) Validate() error {
	var errs []error
	pos := func(name string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %v", name, d))
		}
	}
	pos("window", c.Window)
	pos("min duration", c.MinDuration)
	pos("resolve time", c.ResolveTime)
	pos("no-data timeout", c.NoDataTimeout)
	pos("tick interval", c.TickEvery)
	pos("snapshot interval", c.SnapshotEvery)
	finite := func(name string, v float64) bool {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 40 {
			errs = append(errs, fmt.Errorf("%s must be between 0 and 40 dB, got %v", name, v))
			return false
		}
		return true
	}
	finite("hysteresis", c.HysteresisDB)
	finite("unknown-grade margin", c.UnknownGradeMarginDB)
	for g, m := range c.MarginDB {
		finite("margin of grade "+g, m)
	}
	if len(errs) > 0 {
		return fmt.Errorf("alerts: invalid config: %w", errors.Join(errs...))
	}
	return nil
}

// margin returns the uncertainty margin of grade and whether the sensor must
// be flagged as screening (grade screening or unknown).
func (c *Config) margin(grade string) (db float64, screening bool) {
	m, ok := c.MarginDB[grade]
	if !ok {
		return c.UnknownGradeMarginDB, true
	}
	return m, grade == GradeScreening
}
