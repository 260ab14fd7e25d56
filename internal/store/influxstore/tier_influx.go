package influxstore

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api"
	"github.com/influxdata/influxdb-client-go/v2/api/write"

	"github.com/sossego/sossego/internal/store"
)

// The long-term tier's InfluxDB mirror (docs/api.md, "InfluxDB"): the
// tier's 1-min and 1-h aggregates as the measurements sossego_minute and
// sossego_hour (tag sensor), in a retention policy of their own with
// infinite duration (TierRetentionPolicy), created at start. It follows
// the tier's change numbers with a cursor kept in the tier, as the
// readings mirror follows record ids: read the hour rows changed after the
// cursor, write their points (blocking), only then move the cursor. A
// failed write is retried with backoff, forever; a point written again
// (a crash between the write and the cursor, an hour changed by late
// records) overwrites itself: same measurement, tag and timestamp.

// TierRetentionPolicy is the default retention policy of the tier's
// measurements: DURATION INF, REPLICATION 1.
const TierRetentionPolicy = "sossego_longo_prazo"

// TierMirrorOptions configure a TierMirror. URL, Token and Org are as for
// the readings mirror; the database is Bucket's (the part before a "/").
type TierMirrorOptions struct {
	MirrorOptions
	RetentionPolicy string        // default TierRetentionPolicy
	Rows            int           // hour rows per write; default 200
	Poll            time.Duration // between looks when caught up; default 10 s
}

// TierMirror writes the long-term tier into InfluxDB.
type TierMirror struct {
	o       TierMirrorOptions
	src     store.TierSource
	db      string
	client  influxdb2.Client
	writer  api.WriteAPIBlocking
	failing atomic.Bool
	// sent holds, per sensor, the minutes of the last hour written, so a
	// changed hour sends only the minutes that changed (the live hour
	// changes every second; its closed minutes do not).
	sent map[string]*sentHour
}

type sentHour struct {
	start time.Time
	mins  [60]store.TierLevels
	has   [60]bool
}

// NewTierMirror returns the mirror of src (connecting lazily).
func NewTierMirror(src store.TierSource, o TierMirrorOptions) *TierMirror {
	if o.RetentionPolicy == "" {
		o.RetentionPolicy = TierRetentionPolicy
	}
	if o.Rows <= 0 {
		o.Rows = 200
	}
	if o.Poll <= 0 {
		o.Poll = 10 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	db, _, _ := strings.Cut(o.Bucket, "/")
	c := influxdb2.NewClientWithOptions(o.URL, o.Token,
		influxdb2.DefaultOptions().SetPrecision(time.Millisecond).SetHTTPRequestTimeout(30))
	return &TierMirror{o: o, src: src, db: db, client: c, writer: c.WriteAPIBlocking(o.Org, db+"/"+o.RetentionPolicy),
		sent: map[string]*sentHour{}}
}

// Close releases the client.
func (m *TierMirror) Close() { m.client.Close() }

// Failing reports whether the last attempt (creating the retention policy
// or a write) failed.
func (m *TierMirror) Failing() bool { return m.failing.Load() }

// Backlog is how many tier changes are not yet in InfluxDB (change
// numbers after the cursor; an hour changed twice counts twice).
func (m *TierMirror) Backlog(ctx context.Context) (int64, error) {
	last, err := m.src.MaxChange(ctx)
	if err != nil {
		return 0, err
	}
	at, err := m.src.Cursor(ctx, store.CursorTierInflux)
	if err != nil {
		return 0, err
	}
	return max(last-at, 0), nil
}

// EnsureRetentionPolicy creates the tier's retention policy (infinite
// duration, replication 1) unless it exists with that definition.
func (m *TierMirror) EnsureRetentionPolicy(ctx context.Context) error {
	q := fmt.Sprintf("CREATE RETENTION POLICY %s ON %s DURATION INF REPLICATION 1", influxQLIdent(m.o.RetentionPolicy), influxQLIdent(m.db))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(m.o.URL, "/")+"/query",
		strings.NewReader(url.Values{"q": {q}}.Encode()))
	if err != nil {
		return fmt.Errorf("influx: retention policy: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if m.o.Token != "" {
		req.Header.Set("Authorization", "Token "+m.o.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("influx: retention policy %s: %w", m.o.RetentionPolicy, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("influx: retention policy %s: HTTP %d: %s", m.o.RetentionPolicy, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var out struct {
		Results []struct {
			Error string `json:"error"`
		} `json:"results"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("influx: retention policy %s: %w", m.o.RetentionPolicy, err)
	}
	if out.Error != "" {
		return fmt.Errorf("influx: retention policy %s: %s", m.o.RetentionPolicy, out.Error)
	}
	for _, r := range out.Results {
		if r.Error != "" {
			return fmt.Errorf("influx: retention policy %s: %s", m.o.RetentionPolicy, r.Error)
		}
	}
	return nil
}

// influxQLIdent quotes an identifier for InfluxQL.
func influxQLIdent(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Run creates the retention policy, then writes the tier's changes until
// ctx ends. Failures are logged once per outage and retried with a
// growing pause; nothing is lost: the tier keeps everything and the cursor
// moves only after InfluxDB took the points.
func (m *TierMirror) Run(ctx context.Context) error {
	at, err := m.src.Cursor(ctx, store.CursorTierInflux)
	if err != nil {
		return err
	}
	backoff := 500 * time.Millisecond
	fail := func(what string, err error) bool {
		if !m.failing.Swap(true) {
			n, _ := m.Backlog(ctx)
			m.o.Log.Error("InfluxDB indisponível para os agregados de longo prazo; continuam no longterm.db e serão enviados depois",
				"etapa", what, "erro", err, "alteracoes_pendentes", n)
		}
		if !sleepCtx(ctx, backoff) {
			return false
		}
		backoff = min(backoff*2, m.o.MaxBackoff)
		return true
	}
	ok := func() {
		if m.failing.Swap(false) {
			m.o.Log.Info("InfluxDB voltou; enviando os agregados de longo prazo acumulados")
		}
		backoff = 500 * time.Millisecond
	}
	for {
		err := m.EnsureRetentionPolicy(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			ok()
			break
		}
		if !fail("política de retenção", err) {
			return nil
		}
	}
	for {
		hours, err := m.src.TierChangesAfter(ctx, at, m.o.Rows)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if len(hours) == 0 {
			if !sleepCtx(ctx, m.o.Poll) {
				return nil
			}
			continue
		}
		pts, sent := m.points(hours)
		if len(pts) > 0 {
			if err := m.writer.WritePoint(ctx, pts...); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if !fail("gravação", err) {
					return nil
				}
				continue
			}
		}
		ok()
		last := hours[len(hours)-1].Seq
		if err := m.src.SetCursor(ctx, store.CursorTierInflux, last); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		at = last
		for s, h := range sent {
			m.sent[s] = h
		}
	}
}

// points are the hours' points and, per sensor, its latest hour's minutes
// as they will stand once written (m.sent is updated only after a
// successful write).
func (m *TierMirror) points(hours []store.TierHour) ([]*write.Point, map[string]*sentHour) {
	next := map[string]*sentHour{}
	var pts []*write.Point
	for _, h := range hours {
		prev := next[h.Sensor]
		if prev == nil {
			prev = m.sent[h.Sensor]
		}
		cur := &sentHour{start: h.Start}
		same := prev != nil && prev.start.Equal(h.Start)
		pts = append(pts, tierPoint("sossego_hour", h.Sensor, h.Hour))
		for _, mn := range h.Minutes {
			i := int(mn.Start.Sub(h.Start) / time.Minute)
			if i < 0 || i >= 60 {
				continue
			}
			cur.mins[i], cur.has[i] = mn, true
			if same && prev.has[i] && prev.mins[i] == mn {
				continue
			}
			pts = append(pts, tierPoint("sossego_minute", h.Sensor, mn))
		}
		if prev == nil || !h.Start.Before(prev.start) {
			next[h.Sensor] = cur
		}
	}
	return pts, next
}

func tierPoint(measurement, sensor string, l store.TierLevels) *write.Point {
	fields := map[string]any{"laeq": l.LAeq, "lafmax": l.Max, "lafmin": l.Min, "dur_ms": l.DurMs, "fast_ms": l.FastMs,
		"energy": l.Energy}
	if l.HasPct {
		for i, k := range [...]string{"l10", "l50", "l90", "l95"} {
			fields[k] = l.Pct[i]
		}
	}
	return influxdb2.NewPoint(measurement, map[string]string{"sensor": sensor}, fields, l.Start)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
