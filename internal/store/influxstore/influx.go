// Package influxstore is the InfluxDB side of the readings: Mirror drains
// the readings store's level and environmental records into InfluxDB by
// record-id cursor and answers window queries with Flux; TierMirror writes
// the long-term tier's minute and hour aggregates into a retention policy
// of their own. Both retry with backoff and move their cursor only after a
// write succeeded, so an outage of any length loses nothing.
//
// Overview of its parts: the InfluxDB mirror (levels and env by record-id
// cursor from a consumer-side `Source`, Flux window queries) and the long-term
// tier's (`tier_influx.go`: `sossego_minute`/`sossego_hour` in an infinite
// retention policy it creates, following the tier's change numbers); wired by
// `internal/central` only.
package influxstore

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api"
	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/sossego/sossego/internal/store"
)

// MirrorOptions configures the InfluxDB mirror and queries. For InfluxDB
// 1.8 (Flux enabled): Token "user:password" or "", Org "", Bucket "db/rp"
// or "db".
type MirrorOptions struct {
	URL    string
	Token  string
	Org    string
	Bucket string
	// Batch is the number of records per write; default 5000.
	Batch int
	// MaxBackoff caps the retry interval after a failed write; default 30s.
	MaxBackoff time.Duration
	Log        *slog.Logger
}

// Mirror mirrors the local level and environmental records into InfluxDB
// and answers level window queries with Flux.
type Mirror struct {
	o       MirrorOptions
	src     Source
	client  influxdb2.Client
	writer  api.WriteAPIBlocking
	query   api.QueryAPI
	backlog atomic.Int64
	failing atomic.Bool
}

// Source is what the mirror reads and keeps in the authoritative store
// (the SQLite readings store): records by id after a cursor, the newest
// ids, its own cursors, and a signal after each commit of level records.
type Source interface {
	LevelsAfter(ctx context.Context, after int64, limit int) ([]store.Record, error)
	EnvAfter(ctx context.Context, after int64, limit int) ([]store.EnvRecord, error)
	MaxLevelID(ctx context.Context) (int64, error)
	MaxEnvID(ctx context.Context) (int64, error)
	Cursor(ctx context.Context, name string) (int64, error)
	SetCursor(ctx context.Context, name string, pos int64) error
	Stored() <-chan struct{}
}

// NewMirror connects (lazily) to InfluxDB; src is the authoritative store
// the mirror drains.
func NewMirror(src Source, o MirrorOptions) *Mirror {
	if o.Batch <= 0 {
		o.Batch = 5000
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	c := influxdb2.NewClientWithOptions(o.URL, o.Token,
		influxdb2.DefaultOptions().SetPrecision(time.Millisecond).SetHTTPRequestTimeout(30))
	return &Mirror{o: o, src: src, client: c, writer: c.WriteAPIBlocking(o.Org, o.Bucket), query: c.QueryAPI(o.Org)}
}

// Close releases the client.
func (m *Mirror) Close() { m.client.Close() }

// Backlog is the number of local records (levels and env) not yet in
// InfluxDB, read from the local store now (during an outage the mirror
// waits between attempts, and the figure must not wait with it); the last
// figure read if the local store cannot answer.
func (m *Mirror) Backlog() int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var n int64
	for _, c := range []struct {
		cursor string
		maxID  func(context.Context) (int64, error)
	}{{store.CursorInflux, m.src.MaxLevelID}, {store.CursorInfluxEnv, m.src.MaxEnvID}} {
		maxID, err := c.maxID(ctx)
		if err != nil {
			return m.backlog.Load()
		}
		at, err := m.src.Cursor(ctx, c.cursor)
		if err != nil {
			return m.backlog.Load()
		}
		n += maxID - at
	}
	m.backlog.Store(n)
	return n
}

// Failing reports whether the last write failed.
func (m *Mirror) Failing() bool { return m.failing.Load() }

// stream is one table the mirror drains, with its own persisted cursor.
type stream struct {
	cursor string
	// next returns the points of up to limit rows after the id after, and
	// the id of the last one.
	next func(ctx context.Context, after int64, limit int) ([]*write.Point, int64, error)
	at   int64 // cursor position
}

// drain makes a stream's next from a table's reader, its id and its point.
func drain[T any](after func(context.Context, int64, int) ([]T, error), id func(T) int64, point func(T) *write.Point) func(context.Context, int64, int) ([]*write.Point, int64, error) {
	return func(ctx context.Context, from int64, limit int) ([]*write.Point, int64, error) {
		rows, err := after(ctx, from, limit)
		if err != nil || len(rows) == 0 {
			return nil, from, err
		}
		pts := make([]*write.Point, len(rows))
		for i, r := range rows {
			pts[i] = point(r)
		}
		return pts, id(rows[len(rows)-1]), nil
	}
}

// Run drains the local store into InfluxDB until ctx ends: level records
// (measurement "levels") and environmental records ("env"), each with its
// own persisted cursor. For each: read the records after the cursor, write
// them (blocking), and only then move the cursor. A failed write is retried
// with exponential backoff, forever: nothing is lost however long InfluxDB
// is down, and a record written twice (crash between write and cursor
// update) overwrites itself (same measurement, tags and timestamp).
func (m *Mirror) Run(ctx context.Context) error {
	streams := []*stream{
		{cursor: store.CursorInflux, next: drain(m.src.LevelsAfter, func(r store.Record) int64 { return r.ID }, point)},
		{cursor: store.CursorInfluxEnv, next: drain(m.src.EnvAfter, func(r store.EnvRecord) int64 { return r.ID }, envPoint)},
	}
	for _, st := range streams {
		at, err := m.src.Cursor(ctx, st.cursor)
		if err != nil {
			return err
		}
		st.at = at
	}
	backoff := 500 * time.Millisecond
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	for {
		wrote, failed := false, false
		for _, st := range streams {
			pts, last, err := st.next(ctx, st.at, m.o.Batch)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			if len(pts) == 0 {
				continue
			}
			if err := m.writer.WritePoint(ctx, pts...); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if !m.failing.Swap(true) {
					m.o.Log.Error("InfluxDB indisponível; registros continuam gravados localmente e serão enviados depois",
						"erro", err, "pendentes", m.Backlog())
				}
				failed = true
				break
			}
			if m.failing.Swap(false) {
				m.o.Log.Info("InfluxDB voltou; enviando o acumulado", "pendentes", m.Backlog())
			}
			backoff = 500 * time.Millisecond
			if err := m.src.SetCursor(ctx, st.cursor, last); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			st.at, wrote = last, true
		}
		switch {
		case failed:
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, m.o.MaxBackoff)
		case !wrote:
			select {
			case <-ctx.Done():
				return nil
			case <-m.src.Stored():
			case <-poll.C:
			}
		}
	}
}

// envPoint is an environmental record as an InfluxDB point (measurement
// "env"; a quantity the sensor did not give is left out).
func envPoint(r store.EnvRecord) *write.Point {
	fields := map[string]any{"seq": int64(r.Seq)}
	for name, v := range map[string]*float64{"temperature_c": r.TemperatureC, "humidity_pct": r.HumidityPct, "pressure_hpa": r.PressureHPa} {
		if v != nil {
			fields[name] = *v
		}
	}
	return influxdb2.NewPoint("env", map[string]string{"sensor": r.Sensor, "gateway": r.Gateway}, fields, r.T)
}

func point(r store.Record) *write.Point {
	fields := map[string]any{
		"laeq": r.LAeq, "lafmax": r.LAFmax, "lafmin": r.LAFmin, "dur_ms": r.DurMs,
		"energy": float64(r.DurMs) * pow10(r.LAeq/10), "seq": int64(r.Seq), "synced": r.Synced,
	}
	if r.LCpeak != nil {
		fields["lcpeak"] = *r.LCpeak
	}
	return influxdb2.NewPoint("levels", map[string]string{"sensor": r.Sensor, "gateway": r.Gateway, "grade": r.Grade},
		fields, r.T)
}

func fluxString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func (m *Mirror) base(sensor string, from, to time.Time) string {
	return fmt.Sprintf(`from(bucket: %s)
  |> range(start: %s, stop: %s)
  |> filter(fn: (r) => r._measurement == "levels" and r.sensor == %s)`,
		fluxString(m.o.Bucket), from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano), fluxString(sensor))
}

// Records returns a sensor's records in [from, to) from InfluxDB.
func (m *Mirror) Records(ctx context.Context, sensor string, from, to time.Time, limit int) ([]store.Record, error) {
	q := m.base(sensor, from, to) + `
  |> filter(fn: (r) => r._field == "laeq" or r._field == "lafmax" or r._field == "lafmin" or r._field == "dur_ms" or r._field == "lcpeak" or r._field == "seq" or r._field == "synced")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> sort(columns: ["_time"])`
	if limit > 0 {
		q += fmt.Sprintf("\n  |> limit(n: %d)", limit)
	}
	res, err := m.query.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("store: influx records: %w", err)
	}
	defer res.Close()
	var out []store.Record
	for res.Next() {
		v := res.Record().Values()
		r := store.Record{Sensor: sensor, T: res.Record().Time().UTC()}
		r.LAeq, _ = v["laeq"].(float64)
		r.LAFmax, _ = v["lafmax"].(float64)
		r.LAFmin, _ = v["lafmin"].(float64)
		if d, ok := v["dur_ms"].(int64); ok {
			r.DurMs = d
		}
		if s, ok := v["seq"].(int64); ok {
			r.Seq = uint64(s)
		}
		if p, ok := v["lcpeak"].(float64); ok {
			r.LCpeak = &p
		}
		r.Synced, _ = v["synced"].(bool)
		r.Gateway, _ = v["gateway"].(string)
		r.Grade, _ = v["grade"].(string)
		out = append(out, r)
	}
	if res.Err() != nil {
		return nil, fmt.Errorf("store: influx records: %w", res.Err())
	}
	return out, nil
}

// Buckets aggregates in InfluxDB: Σ energy and Σ duration per window give
// the energy-correct LAeq; max of LAFmax and min of LAFmin. Windows are
// aligned to multiples of step since the epoch, as Aggregate does.
func (m *Mirror) Buckets(ctx context.Context, sensor string, from, to time.Time, step time.Duration) ([]store.Bucket, error) {
	every := fmt.Sprintf("%ds", int64(step/time.Second))
	base := m.base(sensor, from, to)
	q := fmt.Sprintf(`data = %s
sums = data |> filter(fn: (r) => r._field == "energy" or r._field == "dur_ms")
  |> aggregateWindow(every: %s, fn: sum, createEmpty: false, timeSrc: "_start")
  |> toFloat()
maxs = data |> filter(fn: (r) => r._field == "lafmax")
  |> aggregateWindow(every: %s, fn: max, createEmpty: false, timeSrc: "_start")
mins = data |> filter(fn: (r) => r._field == "lafmin")
  |> aggregateWindow(every: %s, fn: min, createEmpty: false, timeSrc: "_start")
counts = data |> filter(fn: (r) => r._field == "laeq")
  |> aggregateWindow(every: %s, fn: count, createEmpty: false, timeSrc: "_start")
  |> toFloat()
  |> map(fn: (r) => ({r with _field: "count"}))
union(tables: [sums, maxs, mins, counts])
  |> group()
  |> sort(columns: ["_time"])`, base, every, every, every, every)
	res, err := m.query.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("store: influx buckets: %w", err)
	}
	defer res.Close()
	type acc struct {
		e, dur float64
		max    float64
		min    float64
		n      int
		hasMax bool
		hasMin bool
	}
	byT := map[int64]*acc{}
	var order []int64
	for res.Next() {
		rec := res.Record()
		k := rec.Time().UnixMilli()
		a := byT[k]
		if a == nil {
			a = &acc{}
			byT[k] = a
			order = append(order, k)
		}
		f := toFloat(rec.Value())
		switch rec.Field() {
		case "energy":
			a.e = f
		case "dur_ms":
			a.dur = f
		case "lafmax":
			a.max, a.hasMax = f, true
		case "lafmin":
			a.min, a.hasMin = f, true
		case "count":
			a.n = int(f)
		}
	}
	if res.Err() != nil {
		return nil, fmt.Errorf("store: influx buckets: %w", res.Err())
	}
	out := make([]store.Bucket, 0, len(order))
	for _, k := range order {
		a := byT[k]
		if a.dur <= 0 {
			continue
		}
		out = append(out, store.Bucket{Start: time.UnixMilli(k).UTC(), DurMs: int64(a.dur), Count: a.n,
			LAeq: 10 * log10(a.e/a.dur), LAFmax: a.max, LAFmin: a.min})
	}
	return out, nil
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return 0
}

var _ store.Readings = (*Mirror)(nil)

func pow10(x float64) float64 { return math.Pow(10, x) }
func log10(x float64) float64 { return math.Log10(x) }
