// Package stats is the pure statistics engine behind reports: from 1-s
// records or the long-term tier's minute and hour aggregates it computes,
// for any range, the LAeq of each legal period of the municipal code (as
// codes.Code.ActiveLimit returns them: holidays, service days and the
// code's own periods), Ld, Le, Ln and Lden (ISO 1996-1 / EU END: day 07–19,
// evening 19–23 with +5 dB, night 23–07 with +10 dB), L10/L50/L90/L95 from
// the merged 0.1 dB histograms, LAFmax and LAFmin, the minutes and the
// episodes above the limit in force, and the coverage (the share of the
// range's time that records cover). Days and occurrences carry what the
// code's calendar says of their date (CodeCalendar: holidays, their eves,
// business days). No I/O and no clock.
//
// Blocks (minutes or hours) are added in time order. Each lands in the
// segment (Segments) holding its start: a minute always lies within one,
// because the codes' windows, the parts of the day and midnight all fall
// on whole minutes; an hour only where Whole says it does, otherwise its
// minutes are added instead.
//
// A minute is above the limit when its LAeq is strictly greater than the
// limit in force at its start (the codes' rule: a level exceeds a limit
// only when greater). An episode is a run of consecutive minutes above the
// limit; a minute not above it, or a minute without records, ends it. It
// is counted in the occurrence, period and day where it starts.
//
// Overview of its parts: pure report engine: LAeq per legal period (walking
// the occurrences `codes.ActiveLimit` returns), Ld/Le/Ln/Lden, L10–L95 from
// merged histograms, minutes and episodes above the limit, coverage; the limit
// series of a range.
package stats

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/tz"
)

// Options configure an Engine.
type Options struct {
	From, To time.Time
	Limit    LimitFunc      // nil: no limits (no minutes above)
	Loc      *time.Location // parts of the day and dates; default Brasília time
	// Calendar says which local dates are holidays, holiday eves and
	// business days (CodeCalendar: the sensor's code, as its engine reads
	// them); nil: days and occurrences carry no calendar.
	Calendar CalendarFunc
}

// DayInfo is what a municipal code's calendar says of a local date.
type DayInfo struct {
	Holiday    string `json:"holiday,omitempty"`     // the holiday's name (national, the code's own, Easter-based)
	HolidayEve bool   `json:"holiday_eve,omitempty"` // the next day is a holiday
	// Optional is the name of a ponto facultativo the municipality decreed
	// for the day: not a holiday for the code's rules, not a business day.
	Optional    string `json:"optional,omitempty"`
	BusinessDay *bool  `json:"business_day,omitempty"`
}

// CalendarFunc reads a code's calendar for a local date.
type CalendarFunc func(y int, m time.Month, d int) DayInfo

// CodeCalendar is the calendar of a municipal code: its national,
// municipal and Easter-based holidays, the days the municipality decreed
// (codes.Calendar.Decreed: holidays and pontos facultativos), their eves and
// its business days (codes.Code.Holiday, Optional, HolidayEve, BusinessDay),
// the days its engine reads its day-dependent rules by.
func CodeCalendar(c *codes.Code) CalendarFunc {
	return func(y int, m time.Month, d int) DayInfo {
		dt := codes.Date{Y: y, M: m, D: d}
		name, _ := c.Holiday(dt)
		opt, _ := c.Optional(dt)
		b := c.BusinessDay(dt)
		return DayInfo{Holiday: name, HolidayEve: c.HolidayEve(dt), Optional: opt, BusinessDay: &b}
	}
}

// ErrSplit is returned for an hour that does not lie within one segment:
// add its minutes instead.
var ErrSplit = errors.New("stats: hour spans a change of period; add its minutes")

// ErrOrder is returned for a block that starts before the end of the
// previous one.
var ErrOrder = errors.New("stats: blocks out of time order")

type slot struct {
	agg      Agg
	span     time.Duration
	minutes  int // minutes with records
	above    int
	episodes int
}

type occurrence struct {
	start, end time.Time
	limit      codes.Limit
	hasLimit   bool
	slot
}

type day struct {
	date  string
	parts [3]slot
	slot
}

type period struct {
	limit    codes.Limit
	hasLimit bool
	slot
}

// Engine folds blocks into a Report.
type Engine struct {
	o       Options
	segs    []Segment
	segOcc  []int
	segDay  []int
	segPer  []int
	cur     int
	total   slot
	parts   [3]slot
	periods []*period
	occs    []*occurrence
	days    []*day
	lastEnd time.Time
	// aboveUntil is the end of the last minute found above the limit:
	// the next minute continues the episode only if it starts there.
	aboveUntil time.Time
}

// New returns an engine for [o.From, o.To).
func New(o Options) *Engine {
	if o.Loc == nil {
		o.Loc = tz.Brasilia()
	}
	e := &Engine{o: o, lastEnd: o.From}
	e.segs = Segments(o.From, o.To, o.Limit, o.Loc)
	perKey := map[string]int{}
	for i, s := range e.segs {
		span := s.End.Sub(s.Start)
		if n := len(e.occs); n == 0 || e.occs[n-1].hasLimit != s.HasLimit || !sameLimit(e.occs[n-1].limit, s.Limit) {
			e.occs = append(e.occs, &occurrence{start: s.Start, limit: s.Limit, hasLimit: s.HasLimit})
		}
		oc := e.occs[len(e.occs)-1]
		oc.end = s.End
		if n := len(e.days); n == 0 || e.days[n-1].date != s.Date {
			e.days = append(e.days, &day{date: s.Date})
		}
		key := ""
		if s.HasLimit {
			key = s.Limit.Period + "\x00" + s.Limit.PeriodLabel + "\x00" + s.Limit.RuleID + "\x00" + strconv.FormatFloat(s.Limit.DBA, 'g', -1, 64)
		}
		pi, ok := perKey[key]
		if !ok {
			pi = len(e.periods)
			perKey[key] = pi
			e.periods = append(e.periods, &period{limit: s.Limit, hasLimit: s.HasLimit})
		}
		e.segOcc = append(e.segOcc, len(e.occs)-1)
		e.segDay = append(e.segDay, len(e.days)-1)
		e.segPer = append(e.segPer, pi)
		for _, sl := range e.slots(i) {
			sl.span += span
		}
	}
	return e
}

// Segments are the engine's segments of its range.
func (e *Engine) Segments() []Segment { return e.segs }

func (e *Engine) slots(i int) [6]*slot {
	s := e.segs[i]
	d := e.days[e.segDay[i]]
	return [6]*slot{&e.total, &e.parts[s.Part], &e.periods[e.segPer[i]].slot, &e.occs[e.segOcc[i]].slot, &d.slot, &d.parts[s.Part]}
}

// find returns the index of the segment holding t (t in range, not before
// the previous call's t), or -1.
func (e *Engine) find(t time.Time) int {
	if t.Before(e.o.From) || !t.Before(e.o.To) {
		return -1
	}
	for e.cur < len(e.segs) && !t.Before(e.segs[e.cur].End) {
		e.cur++
	}
	if e.cur >= len(e.segs) || t.Before(e.segs[e.cur].Start) {
		return -1
	}
	return e.cur
}

// Whole reports whether [start, start+d) lies within the range and within
// one segment, so that a block over it may be added whole.
func (e *Engine) Whole(start time.Time, d time.Duration) bool {
	if start.Before(e.o.From) || start.Add(d).After(e.o.To) {
		return false
	}
	lo, hi := 0, len(e.segs)
	for lo < hi { // first segment ending after start
		m := (lo + hi) / 2
		if e.segs[m].End.After(start) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo < len(e.segs) && !start.Before(e.segs[lo].Start) && !start.Add(d).After(e.segs[lo].End)
}

func (e *Engine) order(start, end time.Time) error {
	if start.Before(e.lastEnd) {
		return fmt.Errorf("%w: %s before %s", ErrOrder, start.UTC().Format(time.RFC3339), e.lastEnd.UTC().Format(time.RFC3339))
	}
	e.lastEnd = end
	return nil
}

// AddMinute adds one minute's aggregate. Minutes outside the range are
// ignored.
func (e *Engine) AddMinute(m Minute) error {
	if m.Start.Before(e.o.From) || !m.Start.Before(e.o.To) {
		return nil
	}
	if err := e.order(m.Start, m.Start.Add(time.Minute)); err != nil {
		return err
	}
	i := e.find(m.Start)
	if i < 0 {
		return nil
	}
	sl := e.slots(i)
	for _, s := range sl {
		s.agg.Merge(&m.Agg)
	}
	e.minute(i, sl, MinuteLevel{Start: m.Start, DurMs: m.DurMs, Energy: m.Energy})
	return nil
}

// AddHour adds one hour whole; it must lie within one segment (Whole),
// otherwise ErrSplit.
func (e *Engine) AddHour(h Hour) error {
	if !e.Whole(h.Start, time.Hour) {
		return ErrSplit
	}
	if err := e.order(h.Start, h.Start.Add(time.Hour)); err != nil {
		return err
	}
	i := e.find(h.Start)
	sl := e.slots(i)
	for _, s := range sl {
		s.agg.Merge(&h.Agg)
	}
	for _, m := range h.Minutes {
		e.minute(i, sl, m)
	}
	return nil
}

func (e *Engine) minute(i int, sl [6]*slot, m MinuteLevel) {
	if m.DurMs <= 0 {
		return
	}
	for _, s := range sl {
		s.minutes++
	}
	seg := e.segs[i]
	lv, ok := m.LAeq()
	if !seg.HasLimit || !ok || lv <= seg.Limit.DBA {
		e.aboveUntil = time.Time{}
		return
	}
	newEpisode := !e.aboveUntil.Equal(m.Start)
	for _, s := range sl {
		s.above++
		if newEpisode {
			s.episodes++
		}
	}
	e.aboveUntil = m.Start.Add(time.Minute)
}

// Figures are the statistics of one stretch of a report. Levels are nil
// when no record falls in it.
type Figures struct {
	LAeq   *float64 `json:"laeq_db"`
	L10    *float64 `json:"l10_db"`
	L50    *float64 `json:"l50_db"`
	L90    *float64 `json:"l90_db"`
	L95    *float64 `json:"l95_db"`
	LAFmax *float64 `json:"lafmax_db"`
	LAFmin *float64 `json:"lafmin_db"`
	// SecondsPresent is the time records cover; SecondsInRange the
	// stretch's length; Coverage their ratio (0–1).
	SecondsPresent float64 `json:"seconds_present"`
	SecondsInRange float64 `json:"seconds_in_range"`
	Coverage       float64 `json:"coverage"`
	MinutesPresent int     `json:"minutes_present"`
	MinutesAbove   int     `json:"minutes_above"`
	EpisodesAbove  int     `json:"episodes_above"`
	// PercentileBasis says what the percentiles were read from: "laf"
	// (the records' LAF histograms), "laeq_1s" (records without one: their
	// 1-s LAeq), "misto" (both), "" (no data).
	PercentileBasis string `json:"percentile_basis"`
}

func (s *slot) figures() Figures {
	f := Figures{SecondsPresent: float64(s.agg.DurMs) / 1000, SecondsInRange: s.span.Seconds(),
		MinutesPresent: s.minutes, MinutesAbove: s.above, EpisodesAbove: s.episodes}
	if f.SecondsInRange > 0 {
		f.Coverage = f.SecondsPresent / f.SecondsInRange
	}
	lv, ok := s.agg.LAeq()
	if !ok {
		return f
	}
	f.LAeq = ptr(lv)
	f.LAFmax, f.LAFmin = ptr(s.agg.Max), ptr(s.agg.Min)
	for _, p := range []struct {
		n   float64
		dst **float64
	}{{10, &f.L10}, {50, &f.L50}, {90, &f.L90}, {95, &f.L95}} {
		if v, ok := s.agg.Hist.Percentile(p.n); ok {
			*p.dst = ptr(v)
		}
	}
	switch {
	case s.agg.FastMs >= s.agg.DurMs:
		f.PercentileBasis = "laf"
	case s.agg.FastMs == 0:
		f.PercentileBasis = "laeq_1s"
	default:
		f.PercentileBasis = "misto"
	}
	return f
}

func ptr(v float64) *float64 { return &v }

// Lden is 10·lg((12·10^(Ld/10) + 4·10^((Le+5)/10) + 8·10^((Ln+10)/10)) / 24).
func Lden(ld, le, ln float64) float64 {
	return 10 * math.Log10((12*math.Pow(10, ld/10)+4*math.Pow(10, (le+5)/10)+8*math.Pow(10, (ln+10)/10))/24)
}

// DEN is Ld, Le, Ln and Lden; a part without records leaves its level and
// Lden nil.
type DEN struct {
	Ld   *float64 `json:"ld_db"`
	Le   *float64 `json:"le_db"`
	Ln   *float64 `json:"ln_db"`
	Lden *float64 `json:"lden_db"`
}

func den(parts *[3]slot) DEN {
	var d DEN
	for i, dst := range []**float64{&d.Ld, &d.Le, &d.Ln} {
		if v, ok := parts[i].agg.LAeq(); ok {
			*dst = ptr(v)
		}
	}
	if d.Ld != nil && d.Le != nil && d.Ln != nil {
		d.Lden = ptr(Lden(*d.Ld, *d.Le, *d.Ln))
	}
	return d
}

// Report is what an engine computed.
type Report struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	Figures
	DEN
	// Periods are the legal periods met in the range (one entry per limit
	// rule and value; one for the time with no numeric limit), in the
	// order first met.
	Periods []PeriodFigures `json:"periods"`
	// Occurrences are each occurrence of a legal period (e.g. one night),
	// clipped to the range.
	Occurrences []PeriodFigures `json:"occurrences"`
	// Days are the local calendar days (00:00–24:00) of the range, clipped.
	Days []DayFigures `json:"days"`
}

// PeriodFigures are the figures of a legal period (or one occurrence).
type PeriodFigures struct {
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// ServiceDate (occurrences) is the local date the occurrence began on,
	// unclipped: a night from 22:00 belongs to the day it began; Holiday
	// and HolidayEve are what the calendar says of that date.
	ServiceDate string   `json:"service_date,omitempty"`
	Holiday     string   `json:"holiday,omitempty"`
	HolidayEve  bool     `json:"holiday_eve,omitempty"`
	Period      string   `json:"period"`       // diurno | noturno | integral | "" (no numeric limit)
	PeriodLabel string   `json:"period_label"` // the code's label
	LimitDBA    *float64 `json:"limit_dba"`
	Article     string   `json:"article,omitempty"`
	RuleID      string   `json:"rule_id,omitempty"`
	Figures
}

// DayFigures are a local day's figures with its Ld, Le, Ln and Lden.
type DayFigures struct {
	Date string `json:"date"`
	DayInfo
	Figures
	DEN
}

func periodFigures(l codes.Limit, has bool, s *slot) PeriodFigures {
	p := PeriodFigures{Figures: s.figures()}
	if has {
		p.Period, p.PeriodLabel, p.LimitDBA, p.Article, p.RuleID = l.Period, l.PeriodLabel, ptr(l.DBA), l.Article, l.RuleID
	} else {
		p.PeriodLabel = "sem limite numérico"
	}
	return p
}

// Result returns the report of everything added so far.
func (e *Engine) Result() Report {
	r := Report{From: e.o.From, To: e.o.To, Figures: e.total.figures(), DEN: den(&e.parts)}
	for _, p := range e.periods {
		r.Periods = append(r.Periods, periodFigures(p.limit, p.hasLimit, &p.slot))
	}
	for _, o := range e.occs {
		pf := periodFigures(o.limit, o.hasLimit, &o.slot)
		pf.Start, pf.End = o.start, o.end
		began := o.start
		if o.hasLimit && !o.limit.Start.IsZero() {
			began = o.limit.Start
		}
		lt := began.In(e.o.Loc)
		pf.ServiceDate = lt.Format(time.DateOnly)
		if e.o.Calendar != nil {
			y, m, d := lt.Date()
			di := e.o.Calendar(y, m, d)
			pf.Holiday, pf.HolidayEve = di.Holiday, di.HolidayEve
		}
		r.Occurrences = append(r.Occurrences, pf)
	}
	for _, d := range e.days {
		df := DayFigures{Date: d.date, Figures: d.slot.figures(), DEN: den(&d.parts)}
		if e.o.Calendar != nil {
			if t, err := time.ParseInLocation(time.DateOnly, d.date, e.o.Loc); err == nil {
				y, m, dd := t.Date()
				df.DayInfo = e.o.Calendar(y, m, dd)
			}
		}
		r.Days = append(r.Days, df)
	}
	return r
}
