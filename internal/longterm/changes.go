package longterm

import (
	"context"
	"fmt"
	"time"

	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/store"
)

// The tier's side of its InfluxDB mirror (influxstore.TierMirror): hour rows in
// the order they were last written, each with a change number that only
// grows (schema step 3), and the mirror's cursor kept in the tier's own
// cursors table.

var _ store.TierSource = (*Store)(nil)

// TierChangesAfter returns up to limit hour rows last written after change
// number after, in change order, with their minutes (levels and
// percentiles) and the hour's percentiles from its histogram.
func (s *Store) TierChangesAfter(ctx context.Context, after int64, limit int) ([]store.TierHour, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq, sensor, hour, dur_ms, energy, lafmax, lafmin, fast_ms, hist, minutes FROM hours
		WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("longterm: changes after %d: %w", after, err)
	}
	defer rows.Close()
	var out []store.TierHour
	var hist, mins []byte
	for rows.Next() {
		var h store.TierHour
		var hour int64
		var a stats.Agg
		if err := rows.Scan(&h.Seq, &h.Sensor, &hour, &a.DurMs, &a.Energy, &a.Max, &a.Min, &a.FastMs, &hist, &mins); err != nil {
			return nil, fmt.Errorf("longterm: changes after %d: %w", after, err)
		}
		h.Start = time.Unix(hour*3600, 0).UTC()
		if a.Hist, err = decodeHist(hist); err != nil {
			return nil, err
		}
		h.Hour = tierLevels(h.Start, &a)
		h.Hour.HasPct = a.Hist.Percentiles(stats.RowPercentiles[:], h.Hour.Pct[:])
		err = eachMinute(mins, h.Start, func(i int, m *minuteRec) {
			h.Minutes = append(h.Minutes, store.TierLevels{Start: h.Start.Add(time.Duration(i) * time.Minute), DurMs: m.DurMs,
				FastMs: m.FastMs, Energy: m.Energy, LAeq: m.laeq, Max: m.Max, Min: m.Min, Pct: m.pct, HasPct: m.hasPct})
		})
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("longterm: changes after %d: %w", after, err)
	}
	return out, nil
}

func tierLevels(start time.Time, a *stats.Agg) store.TierLevels {
	lv, _ := a.LAeq()
	return store.TierLevels{Start: start, DurMs: a.DurMs, FastMs: a.FastMs, Energy: a.Energy, LAeq: lv, Max: a.Max, Min: a.Min}
}

// MaxChange is the highest change number written (0 for an empty tier).
func (s *Store) MaxChange(ctx context.Context) (int64, error) {
	var v int64
	if err := s.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM hours`).Scan(&v); err != nil {
		return 0, fmt.Errorf("longterm: last change: %w", err)
	}
	return v, nil
}

// SetCursor sets a named position (the InfluxDB mirror's).
func (s *Store) SetCursor(ctx context.Context, name string, pos int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.w.ExecContext(ctx, `INSERT INTO cursors (name, position) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET position = excluded.position`, name, pos); err != nil {
		return fmt.Errorf("longterm: set cursor %s: %w", name, err)
	}
	return nil
}
