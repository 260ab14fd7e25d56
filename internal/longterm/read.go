package longterm

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/sossego/sossego/internal/stats"
)

func hourRange(from, to time.Time) (int64, int64) {
	return hourOf(from), hourOf(to.Add(-time.Nanosecond)) + 1
}

// Fold adds a sensor's aggregates in [from, to) to e, in time order: an
// hour whole where e.Whole allows it, its minutes otherwise (minutes
// outside e's range are ignored by e).
func (s *Store) Fold(ctx context.Context, sensor string, e *stats.Engine, from, to time.Time) error {
	h0, h1 := hourRange(from, to)
	rows, err := s.r.QueryContext(ctx, `SELECT rowid, hour, dur_ms, energy, lafmax, lafmin, fast_ms, hist, minutes FROM hours
		WHERE sensor = ? AND hour >= ? AND hour < ? ORDER BY hour`, sensor, h0, h1)
	if err != nil {
		return fmt.Errorf("longterm: read %s: %w", sensor, err)
	}
	defer rows.Close()
	var dec decoder
	for rows.Next() {
		var id, hour int64
		var hr stats.Hour
		var hist, mins []byte
		if err := rows.Scan(&id, &hour, &hr.DurMs, &hr.Energy, &hr.Max, &hr.Min, &hr.FastMs, &hist, &mins); err != nil {
			return fmt.Errorf("longterm: read %s: %w", sensor, err)
		}
		hr.Start = time.Unix(hour*3600, 0).UTC()
		if e.Whole(hr.Start, time.Hour) {
			if hr.Hist, err = decodeHist(hist); err != nil {
				return err
			}
			err = eachMinute(mins, hr.Start, func(i int, m *minuteRec) {
				hr.Minutes = append(hr.Minutes, stats.MinuteLevel{Start: hr.Start.Add(time.Duration(i) * time.Minute), DurMs: m.DurMs, Energy: m.Energy})
			})
			if err != nil {
				return err
			}
			if err := e.AddHour(hr); err != nil {
				return err
			}
			continue
		}
		var mhists []byte
		if err := s.r.QueryRowContext(ctx, `SELECT data FROM mhists WHERE id = ?`, id).Scan(&mhists); err != nil {
			return fmt.Errorf("longterm: read %s minutes: %w", sensor, err)
		}
		d, err := dec.hour(hr.Start, mins, mhists)
		if err != nil {
			return err
		}
		for i, m := range d.mins {
			if m == nil {
				continue
			}
			if err := e.AddMinute(stats.Minute{Start: hr.Start.Add(time.Duration(i) * time.Minute), Agg: *m}); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("longterm: read %s: %w", sensor, err)
	}
	return nil
}

// EachMinute calls f for each of a sensor's minutes starting in [from, to),
// in time order, with its histogram; one hour is decoded at a time. The
// minute's histogram is reused after f returns: f must copy what it keeps.
func (s *Store) EachMinute(ctx context.Context, sensor string, from, to time.Time, f func(stats.Minute) error) error {
	h0, h1 := hourRange(from, to)
	rows, err := s.r.QueryContext(ctx, `SELECT h.hour, h.minutes, m.data FROM hours h JOIN mhists m ON m.id = h.rowid
		WHERE h.sensor = ? AND h.hour >= ? AND h.hour < ? ORDER BY h.hour`, sensor, h0, h1)
	if err != nil {
		return fmt.Errorf("longterm: read %s: %w", sensor, err)
	}
	defer rows.Close()
	var mins, mhists []byte
	var dec decoder
	for rows.Next() {
		var hour int64
		if err := rows.Scan(&hour, &mins, &mhists); err != nil {
			return fmt.Errorf("longterm: read %s: %w", sensor, err)
		}
		start := time.Unix(hour*3600, 0).UTC()
		d, err := dec.hour(start, mins, mhists)
		if err != nil {
			return err
		}
		for i, m := range d.mins {
			t := start.Add(time.Duration(i) * time.Minute)
			if m == nil || t.Before(from) || !t.Before(to) {
				continue
			}
			if err := f(stats.Minute{Start: t, Agg: *m}); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("longterm: read %s: %w", sensor, err)
	}
	return nil
}

// EachHour calls f for each of a sensor's hours starting in [from, to), in
// time order, with the hour's histogram (Minutes left empty).
func (s *Store) EachHour(ctx context.Context, sensor string, from, to time.Time, f func(stats.Hour) error) error {
	h0, h1 := hourRange(from, to)
	rows, err := s.r.QueryContext(ctx, `SELECT hour, dur_ms, energy, lafmax, lafmin, fast_ms, hist FROM hours
		WHERE sensor = ? AND hour >= ? AND hour < ? ORDER BY hour`, sensor, h0, h1)
	if err != nil {
		return fmt.Errorf("longterm: read %s: %w", sensor, err)
	}
	defer rows.Close()
	for rows.Next() {
		var hour int64
		var hr stats.Hour
		var hist []byte
		if err := rows.Scan(&hour, &hr.DurMs, &hr.Energy, &hr.Max, &hr.Min, &hr.FastMs, &hist); err != nil {
			return fmt.Errorf("longterm: read %s: %w", sensor, err)
		}
		hr.Start = time.Unix(hour*3600, 0).UTC()
		if hr.Start.Before(from.Truncate(time.Hour)) || !hr.Start.Before(to) {
			continue
		}
		if hr.Hist, err = decodeHist(hist); err != nil {
			return err
		}
		if err := f(hr); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("longterm: read %s: %w", sensor, err)
	}
	return nil
}

// Span returns the first and last hour a sensor has in the tier (ok false
// when it has none).
func (s *Store) Span(ctx context.Context, sensor string) (first, last time.Time, ok bool, err error) {
	var lo, hi sql.NullInt64
	if err := s.r.QueryRowContext(ctx, `SELECT MIN(hour), MAX(hour) FROM hours WHERE sensor = ?`, sensor).Scan(&lo, &hi); err != nil {
		return time.Time{}, time.Time{}, false, fmt.Errorf("longterm: span of %s: %w", sensor, err)
	}
	if !lo.Valid {
		return time.Time{}, time.Time{}, false, nil
	}
	return time.Unix(lo.Int64*3600, 0).UTC(), time.Unix(hi.Int64*3600, 0).UTC(), true, nil
}

// EachMinuteRow calls f for each of a sensor's minutes starting in [from,
// to), in time order, with its levels and percentiles as the hour rows
// hold them: no histogram is read (exports). The row is reused after f
// returns.
func (s *Store) EachMinuteRow(ctx context.Context, sensor string, from, to time.Time, f func(*stats.MinuteRow) error) error {
	h0, h1 := hourRange(from, to)
	rows, err := s.r.QueryContext(ctx, `SELECT hour, minutes FROM hours WHERE sensor = ? AND hour >= ? AND hour < ? ORDER BY hour`,
		sensor, h0, h1)
	if err != nil {
		return fmt.Errorf("longterm: read %s: %w", sensor, err)
	}
	defer rows.Close()
	var mins []byte
	var row stats.MinuteRow
	var ferr error
	for rows.Next() {
		var hour int64
		if err := rows.Scan(&hour, &mins); err != nil {
			return fmt.Errorf("longterm: read %s: %w", sensor, err)
		}
		if len(mins) > 0 && mins[0] != minutesFormat {
			return fmt.Errorf("%w: minutes format %d of %s (schema step 2 not applied?)", errFormat, mins[0], sensor)
		}
		start := time.Unix(hour*3600, 0).UTC()
		err := decodeMinutes(mins, start, false, func(i int, m *minuteRec) {
			t := start.Add(time.Duration(i) * time.Minute)
			if ferr != nil || t.Before(from) || !t.Before(to) {
				return
			}
			row = stats.MinuteRow{Start: t, DurMs: m.DurMs, FastMs: m.FastMs, LAeq: m.laeq, Max: m.Max, Min: m.Min,
				Pct: m.pct, HasPct: m.hasPct}
			ferr = f(&row)
		})
		if err != nil {
			return err
		}
		if ferr != nil {
			return ferr
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("longterm: read %s: %w", sensor, err)
	}
	return nil
}
