package codes

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Kinds of a decreed day.
const (
	// DecreedHoliday is a municipal holiday (feriado): a "holiday" for the
	// code's day rules and not a business day.
	DecreedHoliday = "feriado"
	// DecreedOptional is a ponto facultativo: the administration does not
	// open, so it is not a business day, but it is not a holiday for the
	// code's day rules (the law says "feriados", not "pontos facultativos").
	DecreedOptional = "ponto_facultativo"
)

// Decreed is a day a municipality set by an act outside its code of
// posturas: a municipal holiday created by law (every year on MonthDay) or
// a day decreed once (Date). It is data the caller passes in (the register
// of municipal holidays keeps it); the engine reads it like the code's own
// calendar.
type Decreed struct {
	// Exactly one of MonthDay ("MM-DD", every year) and Date
	// ("YYYY-MM-DD", once) is set.
	MonthDay string
	Date     string
	// Since ("YYYY-MM-DD", optional) is the first day a yearly entry is in
	// force: a holiday created in 2019 is not one in 2018.
	Since string
	Name  string
	Act   string // the legal basis, e.g. "Lei Municipal nº 1.234/2019"
	Kind  string // DecreedHoliday or DecreedOptional
}

// Valid reports what is wrong with d as a pt-BR sentence, or "".
func (d Decreed) Valid() string {
	switch {
	case (d.MonthDay == "") == (d.Date == ""):
		return "informe a data (AAAA-MM-DD, uma vez) ou o dia do ano (MM-DD, todo ano), e só um deles"
	case d.MonthDay != "" && !validMonthDay(d.MonthDay):
		return fmt.Sprintf("dia do ano %q inválido: use MM-DD (ex.: 06-13)", d.MonthDay)
	case d.Date != "" && !validDate(d.Date):
		return fmt.Sprintf("data %q inválida: use AAAA-MM-DD (ex.: 2026-12-07)", d.Date)
	case d.Since != "" && !validDate(d.Since):
		return fmt.Sprintf("início da vigência %q inválido: use AAAA-MM-DD", d.Since)
	case d.Since != "" && d.Date != "":
		return "início da vigência só vale para um feriado de todo ano (MM-DD)"
	case d.Kind != DecreedHoliday && d.Kind != DecreedOptional:
		return fmt.Sprintf("tipo %q desconhecido: use %s ou %s", d.Kind, DecreedHoliday, DecreedOptional)
	case strings.TrimSpace(d.Name) == "":
		return "informe o nome do feriado"
	}
	return ""
}

func validMonthDay(s string) bool {
	if len(s) != 5 || s[2] != '-' {
		return false
	}
	// 2024 is a leap year: 02-29 is a valid yearly day (it falls only in
	// leap years).
	_, err := time.Parse(time.DateOnly, "2024-"+s)
	return err == nil
}

func validDate(s string) bool {
	t, err := time.Parse(time.DateOnly, s)
	return err == nil && len(s) == 10 && t.Year() >= 1900
}

// On reports whether d falls on day.
func (d Decreed) On(day Date) bool {
	if d.Date != "" {
		return d.Date == day.String()
	}
	if len(d.MonthDay) != 5 || monthDay(d.MonthDay) != int(day.M)*100+day.D {
		return false
	}
	return d.Since == "" || d.Since <= day.String()
}

// decreedOn returns the decreed day on day, holidays before pontos
// facultativos.
func (c *Code) decreedOn(day Date) (Decreed, bool) {
	var found *Decreed
	for i := range c.Calendar.Decreed {
		x := &c.Calendar.Decreed[i]
		if !x.On(day) {
			continue
		}
		if x.Kind == DecreedHoliday {
			return *x, true
		}
		if found == nil {
			found = x
		}
	}
	if found == nil {
		return Decreed{}, false
	}
	return *found, true
}

// WithDecreed returns a copy of c whose calendar also holds days (replacing
// any decreed days c held); c is unchanged. An invalid entry is an error
// naming it.
func (c *Code) WithDecreed(days []Decreed) (*Code, error) {
	for _, d := range days {
		if msg := d.Valid(); msg != "" {
			return nil, fmt.Errorf("codes: %s: dia decretado %q: %s", c.ID, d.Name, msg)
		}
	}
	cp := *c
	cp.Calendar.Decreed = append([]Decreed(nil), days...)
	sort.SliceStable(cp.Calendar.Decreed, func(i, j int) bool {
		return cp.Calendar.Decreed[i].key() < cp.Calendar.Decreed[j].key()
	})
	return &cp, nil
}

func (d Decreed) key() string {
	if d.Date != "" {
		return d.Date[5:] + d.Date
	}
	return d.MonthDay
}

// SetDecreed replaces the decreed days of the set's codes (by code id; a
// code absent from byCode has none): from then on Code and Resolve return
// the codes with them, so every consumer holding the set reads the same
// calendar. An unknown code id or an invalid entry is an error and nothing
// changes.
func (s *Set) SetDecreed(byCode map[string][]Decreed) error {
	merged := make(map[string]*Code, len(byCode))
	for id, days := range byCode {
		c, ok := s.byID[id]
		if !ok {
			return fmt.Errorf("codes: código municipal %q desconhecido; códigos carregados: %s", id, strings.Join(s.IDs(), ", "))
		}
		if len(days) == 0 {
			continue
		}
		m, err := c.WithDecreed(days)
		if err != nil {
			return err
		}
		merged[id] = m
	}
	s.decreed.Store(&merged)
	return nil
}

// code returns the code with id as consumers see it: with its decreed days.
func (s *Set) code(id string) (*Code, bool) {
	if m := s.decreed.Load(); m != nil {
		if c, ok := (*m)[id]; ok {
			return c, true
		}
	}
	c, ok := s.byID[id]
	return c, ok
}
