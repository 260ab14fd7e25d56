package codes

import (
	"fmt"
	"time"
)

// parseHM parses "HH:MM" into minutes since midnight; "24:00" is 1440.
func parseHM(s string) (int, error) {
	digit := func(b byte) (int, bool) { return int(b - '0'), b >= '0' && b <= '9' }
	if len(s) != 5 || s[2] != ':' {
		return 0, fmt.Errorf("horário %q deve ser HH:MM", s)
	}
	h1, ok1 := digit(s[0])
	h2, ok2 := digit(s[1])
	m1, ok3 := digit(s[3])
	m2, ok4 := digit(s[4])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return 0, fmt.Errorf("horário %q deve ser HH:MM", s)
	}
	h, m := h1*10+h2, m1*10+m2
	if m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("horário %q fora de 00:00–24:00", s)
	}
	return h*60 + m, nil
}

func mustHM(s string) int {
	m, err := parseHM(s)
	if err != nil {
		panic(err) // validated at load
	}
	return m
}

func fmtHM(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

func (w *Window) validate() error {
	f, err := parseHM(w.From)
	if err != nil {
		return err
	}
	t, err := parseHM(w.To)
	if err != nil {
		return err
	}
	if f == 1440 {
		return fmt.Errorf("from não pode ser 24:00")
	}
	if f == t && !w.FromExclusive && !w.ToInclusive {
		return fmt.Errorf("janela vazia %s–%s", w.From, w.To)
	}
	if w.ToInclusive && t == 1440 {
		return fmt.Errorf("to_inclusive com 24:00: use to 24:00 sem to_inclusive")
	}
	for _, d := range w.Days {
		if !knownDays[d] {
			return fmt.Errorf("dia %q desconhecido", d)
		}
	}
	return nil
}

// bounds returns the window's first minute and its exclusive end.
func (w *Window) bounds() (f, t int) {
	f, t = mustHM(w.From), mustHM(w.To)
	if w.ToInclusive {
		t++
	}
	return f, t
}

// containsMinute reports whether minute-of-day m is inside the window,
// ignoring days. Crossing midnight when To ≤ From.
func (w *Window) containsMinute(m int) bool {
	f, t := w.bounds()
	after := m >= f
	if w.FromExclusive {
		after = m > f
	}
	if f < t {
		return after && m < t
	}
	return after || m < t
}

// startDay returns the calendar date the window occurrence containing
// minute m started on: the previous day for the early part of a window that
// crosses midnight.
func (w *Window) startsPreviousDay(m int) bool {
	f, t := w.bounds()
	return f >= t && m < t
}

func (e *ScheduleEntry) validate() error {
	if len(e.Days) == 0 {
		return fmt.Errorf("linha sem days")
	}
	for _, d := range e.Days {
		if !knownDays[d] {
			return fmt.Errorf("dia %q desconhecido", d)
		}
	}
	if (e.FromDate == "") != (e.ToDate == "") {
		return fmt.Errorf("from_date e to_date vêm juntos (MM-DD)")
	}
	for _, d := range []string{e.FromDate, e.ToDate} {
		if d == "" {
			continue
		}
		if _, err := time.Parse("01-02", d); err != nil {
			return fmt.Errorf("data %q deve ser MM-DD", d)
		}
	}
	if e.Closed {
		if e.Open != "" || e.Close != "" || e.CloseIfExtended != "" {
			return fmt.Errorf("linha closed não leva open nem close")
		}
		return nil
	}
	if e.CloseIfExtended != "" {
		if _, err := parseHM(e.CloseIfExtended); err != nil {
			return err
		}
	}
	if e.Open != "" {
		if _, err := parseHM(e.Open); err != nil {
			return err
		}
	}
	if e.Close == "" {
		return fmt.Errorf("linha sem close")
	}
	c, err := parseHM(e.Close)
	if err != nil {
		return err
	}
	if e.Open != "" && !e.CloseNextDay && c <= mustHM(e.Open) {
		return fmt.Errorf("close %s não é depois de open %s; use close_next_day para fechamento no dia seguinte", e.Close, e.Open)
	}
	return nil
}

// closeMinutes returns the closing time in service-day minutes; extended
// picks CloseIfExtended when the line has one.
func (e *ScheduleEntry) closeMinutes(extended bool) int {
	s := e.Close
	if extended && e.CloseIfExtended != "" {
		s = e.CloseIfExtended
	}
	c := mustHM(s)
	if e.CloseNextDay {
		c += 1440
	}
	return c
}

// inSeason reports whether d falls in the line's FromDate–ToDate season
// (inclusive, wrapping the year when FromDate > ToDate); a line without a
// season is always in season.
func (e *ScheduleEntry) inSeason(d Date) bool {
	if e.FromDate == "" {
		return true
	}
	md, from, to := int(d.M)*100+d.D, monthDay(e.FromDate), monthDay(e.ToDate)
	if from <= to {
		return md >= from && md <= to
	}
	return md >= from || md <= to
}

var weekdayNames = [...]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Date is a calendar date in the code's time zone.
type Date struct {
	Y int
	M time.Month
	D int
}

func dateOf(t time.Time) Date { return Date{t.Year(), t.Month(), t.Day()} }

func (d Date) time() time.Time { return time.Date(d.Y, d.M, d.D, 12, 0, 0, 0, time.UTC) }

// AddDays returns d shifted by n days.
func (d Date) AddDays(n int) Date { return dateOf(d.time().AddDate(0, 0, n)) }

// Weekday of d.
func (d Date) Weekday() time.Weekday { return d.time().Weekday() }

func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Y, d.M, d.D) }

// PT is the date as a Brazilian reader writes it: 13/06/2026.
func (d Date) PT() string { return fmt.Sprintf("%02d/%02d/%04d", d.D, d.M, d.Y) }

// monthDay turns a validated "MM-DD" into MM*100+DD.
func monthDay(s string) int {
	return (int(s[0]-'0')*10+int(s[1]-'0'))*100 + int(s[3]-'0')*10 + int(s[4]-'0')
}

// Easter returns Easter Sunday of year y (Gregorian, anonymous algorithm).
func Easter(y int) Date {
	a := y % 19
	b := y / 100
	c := y % 100
	d := b / 4
	e := b % 4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i := c / 4
	k := c % 4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return Date{y, time.Month(month), day}
}

// nationalHoliday reports the Brazilian national holiday on d, if any
// (Lei 662/1949, Lei 6.802/1980, Lei 10.607/2002, Lei 14.759/2023).
func nationalHoliday(d Date) (string, bool) {
	switch {
	case d.M == time.January && d.D == 1:
		return "Confraternização Universal", true
	case d.M == time.April && d.D == 21:
		return "Tiradentes", true
	case d.M == time.May && d.D == 1:
		return "Dia do Trabalho", true
	case d.M == time.September && d.D == 7:
		return "Independência do Brasil", true
	case d.M == time.October && d.D == 12:
		return "Nossa Senhora Aparecida", true
	case d.M == time.November && d.D == 2:
		return "Finados", true
	case d.M == time.November && d.D == 15:
		return "Proclamação da República", true
	case d.M == time.November && d.D == 20 && d.Y >= 2024:
		return "Dia Nacional de Zumbi e da Consciência Negra", true
	case d.M == time.December && d.D == 25:
		return "Natal", true
	}
	return "", false
}

// GoodFriday returns Sexta-feira Santa (da Paixão) of year y: two days
// before Easter Sunday.
func GoodFriday(y int) Date {
	e := Easter(y) // 22 March at the earliest: the Friday is in March or April
	if e.D > 2 {
		return Date{y, e.M, e.D - 2}
	}
	return Date{y, time.March, 31 + e.D - 2}
}

// Carnival returns the Monday and Tuesday of Carnival of year y (48 and 47
// days before Easter Sunday).
func Carnival(y int) (mon, tue Date) {
	e := Easter(y)
	return e.AddDays(-48), e.AddDays(-47)
}

// CorpusChristi returns Corpus Christi of year y: the Thursday 60 days
// after Easter Sunday.
func CorpusChristi(y int) Date { return Easter(y).AddDays(60) }

// movableHoliday reports the Easter-based day that is a holiday in every
// municipality: Good Friday. Carnival and Corpus Christi are pontos
// facultativos by default and count only when the municipality's register of
// decreed days makes them holidays (docs/codes-conventions.md "Time").
func movableHoliday(d Date) (string, bool) {
	if (d.M == time.March || d.M == time.April) && d == GoodFriday(d.Y) {
		return "Sexta-feira Santa", true
	}
	return "", false
}

// Holiday reports whether d is a holiday under this code: national, Good
// Friday, the municipal holidays it names, or a holiday the municipality
// decreed (Calendar.Decreed, kind feriado: a Carnival or Corpus Christi the
// municipality made a holiday is one of these).
func (c *Code) Holiday(d Date) (string, bool) {
	if n, ok := nationalHoliday(d); ok {
		return n, true
	}
	if n, ok := movableHoliday(d); ok {
		return n, true
	}
	for _, h := range c.Calendar.Holidays {
		if len(h.MonthDay) == 5 && monthDay(h.MonthDay) == int(d.M)*100+d.D {
			return h.Name, true
		}
	}
	if x, ok := c.decreedOn(d); ok && x.Kind == DecreedHoliday {
		return x.Name, true
	}
	return "", false
}

// Optional reports the ponto facultativo decreed on d, if any (and d is not
// a holiday): not a business day, not a holiday for the day rules.
func (c *Code) Optional(d Date) (string, bool) {
	if _, h := c.Holiday(d); h {
		return "", false
	}
	x, ok := c.decreedOn(d)
	return x.Name, ok && x.Kind == DecreedOptional
}

// HolidayEve reports whether the day after d is a holiday.
func (c *Code) HolidayEve(d Date) bool {
	_, ok := c.Holiday(d.AddDays(1))
	return ok
}

// BusinessDay reports whether d is a "dia útil" under this code's wording:
// one of its business weekdays, not a holiday and not a decreed ponto
// facultativo.
func (c *Code) BusinessDay(d Date) bool {
	if _, h := c.Holiday(d); h {
		return false
	}
	if _, o := c.Optional(d); o {
		return false
	}
	wd := weekdayNames[d.Weekday()]
	for _, b := range c.Calendar.BusinessDays {
		if b == wd {
			return true
		}
	}
	return false
}

// AddBusinessDays returns the date n business days after d.
func (c *Code) AddBusinessDays(d Date, n int) Date {
	for n > 0 {
		d = d.AddDays(1)
		if c.BusinessDay(d) {
			n--
		}
	}
	return d
}

// dayMatches reports whether a day token applies to d.
func (c *Code) dayMatches(tok string, d Date) bool {
	switch tok {
	case "all":
		return true
	case "holiday":
		_, h := c.Holiday(d)
		return h
	case "holiday_eve":
		return c.HolidayEve(d)
	case "business_day":
		return c.BusinessDay(d)
	}
	return weekdayNames[d.Weekday()] == tok
}

func (c *Code) anyDay(toks []string, d Date) bool {
	if len(toks) == 0 {
		return true
	}
	for _, t := range toks {
		if c.dayMatches(t, d) {
			return true
		}
	}
	return false
}

// dateTime is the law's date at noon in its time zone (a valid instant for
// smoke evaluations).
func (l Law) dateTime() time.Time {
	t, err := time.Parse(time.DateOnly, l.Date)
	if err != nil {
		return time.Time{}
	}
	return t.Add(12 * time.Hour)
}
