package pdf

import (
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
)

// TimeTick is one tick of a chart's time axis: a round instant in Brasília
// time, labelled with that time (major ticks) or unlabelled (minor ticks).
type TimeTick struct {
	T     time.Time
	Label string // "" for a minor tick
}

// tickStep is a candidate spacing of the major ticks and of the minor ones
// between them.
type tickStep struct {
	major, minor time.Duration
}

// tickSteps are the round spacings, smallest first.
var tickSteps = []tickStep{
	{10 * time.Second, 2 * time.Second},
	{15 * time.Second, 5 * time.Second},
	{30 * time.Second, 10 * time.Second},
	{time.Minute, 15 * time.Second},
	{2 * time.Minute, 30 * time.Second},
	{5 * time.Minute, time.Minute},
	{10 * time.Minute, 2 * time.Minute},
	{15 * time.Minute, 5 * time.Minute},
	{30 * time.Minute, 10 * time.Minute},
	{time.Hour, 15 * time.Minute},
	{2 * time.Hour, 30 * time.Minute},
	{3 * time.Hour, time.Hour},
	{6 * time.Hour, time.Hour},
	{12 * time.Hour, 3 * time.Hour},
	{24 * time.Hour, 6 * time.Hour},
	{2 * 24 * time.Hour, 24 * time.Hour},
	{7 * 24 * time.Hour, 24 * time.Hour},
	{14 * 24 * time.Hour, 7 * 24 * time.Hour},
}

// maxMajorTicks bounds the labelled ticks so that labels never crowd an
// 18 cm axis;
// maxMajorTicksDated is the bound when labels carry the day too.
const (
	maxMajorTicks      = 8
	maxMajorTicksDated = 6
)

// TimeTicks chooses the ticks of a time axis over [from, to]: the smallest
// round spacing (10/15/30 s, 1/2/5/10/15/30 min, 1/2/3/6/12 h, 1/2/7/14
// days) that gives at most maxMajorTicks labelled ticks (maxMajorTicksDated
// when the labels must carry the day), placed where the
// Brasília wall clock is a multiple of that spacing since midnight (spacings
// of days: at midnight, counted from the first midnight in range). Labels
// are "15:04" ("15:04:05" under a minute's spacing); when the range spans
// more than one day, ticks at daily spacings read "02/01" and the others
// "02/01 15:04". Minor ticks subdivide the spacing and carry no label.
func TimeTicks(from, to time.Time) []TimeTick {
	if !to.After(from) {
		return nil
	}
	span := to.Sub(from)
	lf, lt := from.In(saoPaulo), to.In(saoPaulo)
	multiDay := lf.YearDay() != lt.YearDay() || lf.Year() != lt.Year()
	st := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		limit := time.Duration(maxMajorTicks)
		if multiDay && s.major < 24*time.Hour {
			limit = maxMajorTicksDated
		}
		if span/s.major+1 <= limit {
			st = s
			break
		}
	}
	format := "15:04"
	switch {
	case st.major >= 24*time.Hour:
		format = "02/01"
	case multiDay && st.major < time.Minute:
		format = "02/01 15:04:05"
	case multiDay:
		format = "02/01 15:04"
	case st.major < time.Minute:
		format = "15:04:05"
	}
	var out []TimeTick
	for _, t := range roundTimes(lf, lt, st.minor) {
		tk := TimeTick{T: t}
		if onStep(t, lf, st.major) {
			tk.Label = t.Format(format)
		}
		out = append(out, tk)
	}
	return out
}

// roundTimes lists the instants in [from, to] where the wall clock of
// from's location is a multiple of step (steps of a day or more: every
// step-th midnight from the first one in range).
func roundTimes(from, to time.Time, step time.Duration) []time.Time {
	loc := from.Location()
	y, m, d := from.Date()
	var out []time.Time
	if step >= 24*time.Hour {
		days := int(step / (24 * time.Hour))
		k := 0
		if t := time.Date(y, m, d, 0, 0, 0, 0, loc); t.Before(from) {
			k = 1
		}
		for ; ; k += days {
			t := time.Date(y, m, d+k, 0, 0, 0, 0, loc)
			if t.After(to) {
				return out
			}
			out = append(out, t)
		}
	}
	sec := int(step / time.Second)
	ofDay := from.Hour()*3600 + from.Minute()*60 + from.Second()
	k := ofDay / sec
	if k*sec < ofDay || from.Nanosecond() > 0 {
		k++
	}
	for ; ; k++ {
		t := time.Date(y, m, d, 0, 0, k*sec, 0, loc)
		if t.After(to) {
			return out
		}
		out = append(out, t)
	}
}

// onStep reports whether t falls on a major tick of spacing step, by the
// same rule roundTimes places them (from is the range's start, in the
// axis's location).
func onStep(t, from time.Time, step time.Duration) bool {
	if step >= 24*time.Hour {
		if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 {
			return false
		}
		first := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, from.Location())
		if first.Before(from) {
			first = first.AddDate(0, 0, 1)
		}
		days := int(step / (24 * time.Hour))
		n := int(t.Sub(first).Round(time.Hour) / (24 * time.Hour)) // whole days, whatever the clock did
		return n%days == 0
	}
	sec := int(step / time.Second)
	return (t.Hour()*3600+t.Minute()*60+t.Second())%sec == 0
}

// timeTicker is the gonum ticker of a time axis whose values are Unix
// seconds.
type timeTicker struct{}

// Ticks implements plot.Ticker.
func (timeTicker) Ticks(lo, hi float64) []plot.Tick {
	from, to := unixTime(lo), unixTime(hi)
	var out []plot.Tick
	for _, t := range TimeTicks(from, to) {
		out = append(out, plot.Tick{Value: float64(t.T.UnixMilli()) / 1000, Label: t.Label})
	}
	return out
}

func unixTime(sec float64) time.Time {
	return time.UnixMilli(int64(sec*1000 + 0.5)).In(saoPaulo)
}

// levelTicker labels a dB axis with whole decibels every 5 dB (10 dB over
// ranges wider than 40 dB), minor ticks every 1 (2) dB: no decimals, so
// nothing to read as a point or a comma.
type levelTicker struct{}

// Ticks implements plot.Ticker.
func (levelTicker) Ticks(lo, hi float64) []plot.Tick {
	major, minor := 5, 1
	if hi-lo > 40 {
		major, minor = 10, 2
	}
	var out []plot.Tick
	for v := int(math.Ceil(lo)); float64(v) <= hi; v++ {
		switch {
		case v%major == 0:
			out = append(out, plot.Tick{Value: float64(v), Label: strconv.Itoa(v)})
		case v%minor == 0:
			out = append(out, plot.Tick{Value: float64(v)})
		}
	}
	return out
}
