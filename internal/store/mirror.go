package store

import (
	"context"
	"time"
)

// Names of the InfluxDB mirror's persisted cursors, kept in the readings
// store's cursors table.
const (
	CursorInflux    = "influx:levels"
	CursorInfluxEnv = "influx:env"
)

// The long-term tier's InfluxDB mirror follows the tier's change numbers
// (internal/longterm); these are the figures it reads.

// CursorTierInflux is the tier mirror's cursor (a tier change number),
// kept in the tier's own cursors table.
const CursorTierInflux = "influx:tier"

// TierLevels are the figures of one minute or hour of the tier.
type TierLevels struct {
	Start         time.Time
	DurMs, FastMs int64
	Energy        float64 // Σ dur_ms · 10^(LAeq/10)
	LAeq          float64
	Max, Min      float64 // LAFmax, LAFmin
	Pct           [4]float64
	HasPct        bool // Pct holds L10, L50, L90, L95
}

// TierHour is one hour row of the tier as last written.
type TierHour struct {
	Seq     int64 // change number: grows with every write of any row
	Sensor  string
	Start   time.Time
	Hour    TierLevels
	Minutes []TierLevels // the present minutes, in time order
}

// TierSource is what the mirror reads of the long-term tier
// (internal/longterm.Store).
type TierSource interface {
	// TierChangesAfter returns up to limit hour rows whose change number
	// is above after, in change order.
	TierChangesAfter(ctx context.Context, after int64, limit int) ([]TierHour, error)
	MaxChange(ctx context.Context) (int64, error)
	Cursor(ctx context.Context, name string) (int64, error)
	SetCursor(ctx context.Context, name string, pos int64) error
}
