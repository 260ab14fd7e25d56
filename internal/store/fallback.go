package store

import (
	"context"
	"log/slog"
	"time"
)

// Fallback answers window queries from Primary (InfluxDB with --store
// influx) and, while Primary is down or when a query fails, from Local, the
// SQLite store that holds every record: an InfluxDB outage does not blank
// the dashboard's charts.
type Fallback struct {
	Primary, Local Readings
	// Down, if set, reports that Primary is known to be failing (skip it
	// instead of waiting for an error).
	Down func() bool
	Log  *slog.Logger
}

// Records implements Readings.
func (f Fallback) Records(ctx context.Context, sensor string, from, to time.Time, limit int) ([]Record, error) {
	if f.Down == nil || !f.Down() {
		recs, err := f.Primary.Records(ctx, sensor, from, to, limit)
		if err == nil {
			return recs, nil
		}
		f.warn(ctx, err)
	}
	return f.Local.Records(ctx, sensor, from, to, limit)
}

// Buckets implements Readings.
func (f Fallback) Buckets(ctx context.Context, sensor string, from, to time.Time, step time.Duration) ([]Bucket, error) {
	if f.Down == nil || !f.Down() {
		bs, err := f.Primary.Buckets(ctx, sensor, from, to, step)
		if err == nil {
			return bs, nil
		}
		f.warn(ctx, err)
	}
	return f.Local.Buckets(ctx, sensor, from, to, step)
}

func (f Fallback) warn(ctx context.Context, err error) {
	if f.Log != nil && ctx.Err() == nil {
		f.Log.Warn("consulta ao InfluxDB falhou; respondendo com o armazenamento local", "erro", err)
	}
}
