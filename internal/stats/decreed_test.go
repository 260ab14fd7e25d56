package stats

import (
	"testing"
	"time"

	"github.com/sossego/sossego/codes"
)

// TestDecreedDays: days the municipality decreed (codes.Set.SetDecreed)
// reach the report as the engine reads them: the holiday, its eve, a ponto
// facultativo that is no business day, and a limit that follows the code's
// "holiday" day rule on the decreed date.
func TestDecreedDays(t *testing.T) {
	set, err := codes.LoadDir("")
	if err != nil {
		t.Fatal(err)
	}
	if err := set.SetDecreed(map[string][]codes.Decreed{"lapa": {
		{MonthDay: "03-19", Since: "2019-05-02", Name: "São José", Act: "Lei Municipal nº 1.234/2019", Kind: codes.DecreedHoliday},
		{Date: "2026-03-20", Name: "Emenda de feriado", Act: "Decreto nº 45/2026", Kind: codes.DecreedOptional},
	}}); err != nil {
		t.Fatal(err)
	}
	c, _ := set.Code("lapa")
	base := lapaBar(c)
	// A limit with a "domingos e feriados" day rule: 55 dB all day on a
	// holiday, the code's own limit otherwise (cut at midnight before one).
	holidayRule := func(t time.Time) (codes.Limit, bool) {
		y, mo, d := t.In(brt).Date()
		if name, ok := c.Holiday(codes.Date{Y: y, M: mo, D: d}); ok {
			return codes.Limit{DBA: 55, Period: "noturno", PeriodLabel: "feriado (" + name + ")", RuleID: "feriado",
				Start: time.Date(y, mo, d, 0, 0, 0, 0, brt), End: time.Date(y, mo, d+1, 0, 0, 0, 0, brt)}, true
		}
		l, ok := base(t)
		if h := time.Date(y, mo, d+1, 0, 0, 0, 0, brt); ok && l.End.After(h) {
			if _, hol := c.Holiday(codes.Date{Y: y, M: mo, D: d + 1}); hol {
				l.End = h
			}
		}
		return l, ok
	}
	from, to := at("2026-03-18 00:00"), at("2026-03-21 00:00")
	e := New(Options{From: from, To: to, Limit: holidayRule, Calendar: CodeCalendar(c)})
	fill(t, e, from, to, func(time.Time) (float64, bool) { return 58, true })
	r := e.Result()
	type day struct {
		date, holiday, optional string
		eve, business           bool
	}
	want := []day{
		{"2026-03-18", "", "", true, true},
		{"2026-03-19", "São José", "", false, false},
		{"2026-03-20", "", "Emenda de feriado", false, false},
	}
	if len(r.Days) != len(want) {
		t.Fatalf("%d days", len(r.Days))
	}
	for i, w := range want {
		d := r.Days[i]
		if d.Date != w.date || d.Holiday != w.holiday || d.Optional != w.optional || d.HolidayEve != w.eve || d.BusinessDay == nil || *d.BusinessDay != w.business {
			t.Errorf("day %s: %+v, want %+v", d.Date, d.DayInfo, w)
		}
	}
	// 58 dB is above 55 on the decreed holiday only (a ponto facultativo is
	// no holiday for the rule): 1440 minutes, one episode.
	var hol *PeriodFigures
	for i, o := range r.Occurrences {
		if o.RuleID == "feriado" {
			hol = &r.Occurrences[i]
		}
	}
	if hol == nil || hol.PeriodLabel != "feriado (São José)" || !hol.Start.Equal(at("2026-03-19 00:00")) || hol.Holiday != "São José" {
		t.Fatalf("holiday occurrence %+v", hol)
	}
	if hol.MinutesAbove != 1440 || r.MinutesAbove != 1440 {
		t.Errorf("minutes above: holiday %d, total %d; want 1440, 1440", hol.MinutesAbove, r.MinutesAbove)
	}
	// The same code without the decreed days: an ordinary Thursday.
	if err := set.SetDecreed(nil); err != nil {
		t.Fatal(err)
	}
	c, _ = set.Code("lapa")
	e = New(Options{From: from, To: to, Limit: holidayRule, Calendar: CodeCalendar(c)})
	fill(t, e, from, to, func(time.Time) (float64, bool) { return 58, true })
	if r := e.Result(); r.MinutesAbove != 0 || r.Days[1].Holiday != "" {
		t.Errorf("without the decreed days: %d minutes above, 19/03 %q", r.MinutesAbove, r.Days[1].Holiday)
	}
}
