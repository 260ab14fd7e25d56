package stats

import (
	"time"

	"github.com/sossego/sossego/codes"
)

// LimitFunc is the limit in force for one sensor at an instant: a sensor's
// zone, establishment and mechanism bound to codes.Code.ActiveLimitFor, so
// holidays, service days and the code's periods are whatever the codes
// engine says they are. ok is false where the code sets no numeric limit.
type LimitFunc func(t time.Time) (codes.Limit, bool)

// Part is a part of the day of ISO 1996-1 / the EU Environmental Noise
// Directive (2002/49/EC, Annex I): day 07–19, evening 19–23, night 23–07,
// local time.
type Part int

// The parts of the day.
const (
	Day Part = iota
	Evening
	Night
)

func (p Part) String() string {
	switch p {
	case Day:
		return "dia"
	case Evening:
		return "entardecer"
	}
	return "noite"
}

// PartOf is the part of the day of a local clock hour.
func PartOf(hour int) Part {
	switch {
	case hour >= 7 && hour < 19:
		return Day
	case hour >= 19 && hour < 23:
		return Evening
	}
	return Night
}

// Segment is a stretch of a range within which nothing a report groups by
// changes: one limit (or none), one part of the day, one local date.
type Segment struct {
	Start, End time.Time
	Limit      codes.Limit
	HasLimit   bool
	Part       Part
	Date       string // local date, YYYY-MM-DD
}

// Segments splits [from, to) at every change of the limit in force (the
// occurrences limit returns: each one's End), at 07:00, 19:00 and 23:00 and
// at midnight local time. Where no numeric limit is in force the range is
// probed minute by minute (codes' windows are whole minutes) until one is.
// A limit without an occurrence (an integral limit) is asked again at the
// next local midnight. limit may be nil (no limits).
func Segments(from, to time.Time, limit LimitFunc, loc *time.Location) []Segment {
	var out []Segment
	t := from
	for t.Before(to) {
		lt := t.In(loc)
		y, mo, d := lt.Date()
		midnight := time.Date(y, mo, d+1, 0, 0, 0, 0, loc)
		end := minTime(to, midnight, nextPartBoundary(lt, loc))
		seg := Segment{Start: t, Part: PartOf(lt.Hour()), Date: lt.Format(time.DateOnly)}
		if limit != nil {
			seg.Limit, seg.HasLimit = limit(t)
		}
		switch {
		case seg.HasLimit && !seg.Limit.End.IsZero() && seg.Limit.End.After(t):
			end = minTime(end, seg.Limit.End)
		case seg.HasLimit:
			// integral: holds to the next midnight at most
		case limit != nil:
			// No limit: find the next minute that has one.
			m := t.Truncate(time.Minute).Add(time.Minute)
			for m.Before(end) {
				if _, ok := limit(m); ok {
					end = m
					break
				}
				m = m.Add(time.Minute)
			}
		}
		seg.End = end
		if n := len(out); n > 0 && out[n-1].End.Equal(seg.Start) && sameSlot(out[n-1], seg) {
			out[n-1].End = seg.End
		} else {
			out = append(out, seg)
		}
		t = end
	}
	return out
}

// sameSlot: two adjacent segments that nothing distinguishes (e.g. the
// same occurrence asked twice) are one.
func sameSlot(a, b Segment) bool {
	return a.Part == b.Part && a.Date == b.Date && a.HasLimit == b.HasLimit && sameLimit(a.Limit, b.Limit)
}

func sameLimit(a, b codes.Limit) bool {
	return a.RuleID == b.RuleID && a.DBA == b.DBA && a.Start.Equal(b.Start) && a.End.Equal(b.End) &&
		a.Period == b.Period && a.PeriodLabel == b.PeriodLabel
}

func nextPartBoundary(lt time.Time, loc *time.Location) time.Time {
	y, mo, d := lt.Date()
	for _, h := range []int{7, 19, 23, 31} { // 31: 07:00 the next day
		b := time.Date(y, mo, d, h, 0, 0, 0, loc)
		if b.After(lt) {
			return b
		}
	}
	return time.Date(y, mo, d+1, 7, 0, 0, 0, loc)
}

func minTime(ts ...time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.Before(m) {
			m = t
		}
	}
	return m
}

// LimitStep is one stretch of a limit series: the limit in force (or none)
// over [Start, End).
type LimitStep struct {
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	LimitDBA    *float64  `json:"limit_dba"` // null: no numeric limit
	Period      string    `json:"period,omitempty"`
	PeriodLabel string    `json:"period_label,omitempty"`
	Article     string    `json:"article,omitempty"`
	RuleID      string    `json:"rule_id,omitempty"`
}

// LimitSeries is the limit in force over [from, to) as steps: the
// segments of Segments merged where the limit does not change.
func LimitSeries(from, to time.Time, limit LimitFunc, loc *time.Location) []LimitStep {
	var out []LimitStep
	for _, s := range Segments(from, to, limit, loc) {
		st := LimitStep{Start: s.Start, End: s.End}
		if s.HasLimit {
			v := s.Limit.DBA
			st.LimitDBA, st.Period, st.PeriodLabel, st.Article, st.RuleID = &v, s.Limit.Period, s.Limit.PeriodLabel, s.Limit.Article, s.Limit.RuleID
		}
		if n := len(out); n > 0 && sameStep(out[n-1], st) {
			out[n-1].End = st.End
			continue
		}
		out = append(out, st)
	}
	return out
}

func sameStep(a, b LimitStep) bool {
	if !a.End.Equal(b.Start) || (a.LimitDBA == nil) != (b.LimitDBA == nil) {
		return false
	}
	if a.LimitDBA == nil {
		return true
	}
	return *a.LimitDBA == *b.LimitDBA && a.RuleID == b.RuleID && a.PeriodLabel == b.PeriodLabel
}
