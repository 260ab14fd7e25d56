package codes

import (
	"fmt"
	"time"
)

// Operating schedules: which lines fit a day and whether a minute of the
// service day is inside them.

// evalSchedule judges an operating schedule (docs/codes-conventions.md
// "Time" and "Schedules, licences and favour"): a day the schedule does not
// mention is not restricted; where several lines fit a day, the most
// favourable prevails (a holiday line displaces the weekday lines);
// minutes before calendar.service_day_start continue the previous day's
// operation ("HH:MM do dia seguinte").
func (c *Code) evalSchedule(r *Rule, o *Observation, ctx *evalCtx) (Tri, string) {
	extended, _ := factBool(o, "hours_extension_granted")
	day, m := ctx.date, ctx.minute
	start := mustHM(c.Calendar.ServiceDayStart)
	permitted := false
	why := ""
	if m < start {
		prevDay := day.AddDays(-1)
		prev := c.linesFor(r, prevDay)
		for _, e := range prev {
			if ok, _ := c.linePermits(e, m+1440, extended); ok {
				permitted = true
			}
		}
		cur := c.linesFor(r, day)
		for _, e := range cur {
			if ok, _ := c.linePermits(e, m, extended); ok && e.Open != "" {
				permitted = true
			}
		}
		switch {
		case permitted:
		case len(prev) > 0:
			_, w := c.linePermits(prev[0], m+1440, extended)
			why = fmt.Sprintf("às %s de %s, %s do dia de funcionamento de %s (%s)", fmtHM(m), day.PT(), w,
				ptWeekday(prevDay.Weekday()), prevDay.PT())
		case len(cur) == 0:
			return False, fmt.Sprintf("%s (%s): o artigo não restringe %s (%s) nem a madrugada que o antecede", r.Label, r.Article,
				ptWeekday(day.Weekday()), day.PT())
		default:
			_, w := c.linePermits(cur[0], m, extended)
			why = fmt.Sprintf("às %s de %s (%s), %s", fmtHM(m), ptWeekday(day.Weekday()), day.PT(), w)
		}
	} else {
		cur := c.linesFor(r, day)
		if len(cur) == 0 {
			return False, fmt.Sprintf("%s (%s): o artigo não restringe %s (%s)", r.Label, r.Article, ptWeekday(day.Weekday()), day.PT())
		}
		for _, e := range cur {
			if ok, _ := c.linePermits(e, m, extended); ok {
				permitted = true
			}
		}
		if !permitted {
			_, w := c.linePermits(cur[0], m, extended)
			why = fmt.Sprintf("às %s de %s (%s), %s", fmtHM(m), ptWeekday(day.Weekday()), day.PT(), w)
		}
	}
	if !permitted {
		return True, fmt.Sprintf("%s (%s): %s", r.Label, r.Article, why)
	}
	if r.PermissionFact != "" {
		if b, present := factBool(o, r.PermissionFact); present && !b {
			return Undetermined, fmt.Sprintf("%s (%s): dentro do horário, mas a permissão exige %s, informado como falso", r.Label, r.Article, r.PermissionFact)
		}
	}
	return False, fmt.Sprintf("%s (%s): dentro do horário de funcionamento", r.Label, r.Article)
}

// linesFor returns the schedule lines that fit day d: the holiday lines
// when d is a holiday and the schedule has any, else every line whose days
// and season fit.
func (c *Code) linesFor(r *Rule, d Date) []*ScheduleEntry {
	_, hol := c.Holiday(d)
	var lines, holi []*ScheduleEntry
	for i := range r.Schedule {
		e := &r.Schedule[i]
		if !e.inSeason(d) {
			continue
		}
		for _, tok := range e.Days {
			if c.dayMatches(tok, d) {
				if tok == "holiday" {
					holi = append(holi, e)
				} else {
					lines = append(lines, e)
				}
				break
			}
		}
	}
	if hol && len(holi) > 0 {
		return holi
	}
	return lines
}

// linePermits judges service-day minute m (≥ 1440 for the early hours of
// the next calendar day) against one line; a line without an opening time
// opens at the service-day start.
func (c *Code) linePermits(e *ScheduleEntry, m int, extended bool) (bool, string) {
	if e.Closed {
		return false, "dia em que o estabelecimento permanece fechado"
	}
	open := mustHM(c.Calendar.ServiceDayStart)
	if e.Open != "" {
		open = mustHM(e.Open)
	}
	closeM := e.closeMinutes(extended)
	closeTxt := e.Close
	if extended && e.CloseIfExtended != "" {
		closeTxt = e.CloseIfExtended + " (horário prorrogado)"
	}
	if e.CloseNextDay {
		closeTxt += " do dia seguinte"
	}
	switch {
	case m < open:
		return false, "antes da abertura (" + fmtHM(open) + ")"
	case m >= closeM:
		return false, "depois do encerramento (" + closeTxt + ")"
	}
	return true, ""
}

func ptWeekday(w time.Weekday) string {
	return DayLabel(weekdayNames[w])
}
