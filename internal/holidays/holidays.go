// Package holidays keeps each municipality's decreed days: the municipal
// holidays created by law after (or outside) its code of posturas, every
// year on a fixed day, and the days decreed once — a feriado or a ponto
// facultativo for one date. The codes' YAML calendars hold what the codes
// themselves name; this register holds what the operator adds without a
// new release, each entry with the act that set it.
//
// This package holds the types, without a driver; the register itself,
// internal/holidays/holidaysdb, is its own SQLite file in the data directory
// with an append-only log of every change (who, when, what: Change), wired
// by internal/central and cmd/sossego. Check, the rules a new entry must
// meet, and ParseDay, the reading of a typed date, are pure. Apply hands the
// entries to the codes engine as data (codes.Set.SetDecreed), so every
// consumer of the set — alert limits, reports, limit series, notice
// deadlines — reads the same calendar; Watch re-applies them when the
// register changes (the CLI writes while the service runs).
//
// Overview of its parts: each municipality's decreed days as types and without
// a driver: municipal holidays set by law (every year on a day, optionally
// from the law's date) and days decreed once (feriado or ponto facultativo),
// each with the act that set it, and the change log's entries (who, when,
// why); pure `Check` (unknown municipality, invalid dates, duplicates, a day
// the code already keeps → pt-BR) and `ParseDay`; `Apply`/`Watch` read a
// consumer-side `Register` and hand the days to `codes.Set.SetDecreed`, so
// alert limits, reports, limit series and notice deadlines read the same
// calendar (docs/holidays.md); what the consumers import.
package holidays

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
)

// Entry is one decreed day of one municipality.
type Entry struct {
	ID           int64  `json:"id"`
	Municipality string `json:"municipality"` // the code id, e.g. "lapa"
	// Exactly one of MonthDay ("MM-DD", every year) and Date
	// ("YYYY-MM-DD", once) is set.
	MonthDay string `json:"month_day,omitempty"`
	Date     string `json:"date,omitempty"`
	// Since ("YYYY-MM-DD") is the first day a yearly holiday is in force
	// (the law's date); "" = every year.
	Since string `json:"since,omitempty"`
	Name  string `json:"name"`
	// Act is the legal basis ("Lei Municipal nº 1.234/2019", "Decreto nº
	// 45/2026").
	Act   string    `json:"act"`
	Kind  string    `json:"kind"` // feriado | ponto_facultativo
	SetBy string    `json:"set_by,omitempty"`
	SetAt time.Time `json:"set_at,omitzero"`
}

// Decreed is the entry as the codes engine reads it.
func (e Entry) Decreed() codes.Decreed {
	return codes.Decreed{MonthDay: e.MonthDay, Date: e.Date, Since: e.Since, Name: e.Name, Act: e.Act, Kind: e.Kind}
}

// When is the entry's day in pt-BR: "todo ano em 19/03", "todo ano em
// 19/03, desde 02/05/2019", "07/12/2026".
func (e Entry) When() string {
	if e.Date != "" {
		return DateBR(e.Date)
	}
	s := "todo ano em " + e.MonthDay[3:] + "/" + e.MonthDay[:2]
	if e.Since != "" {
		s += ", desde " + DateBR(e.Since)
	}
	return s
}

// KindLabel is the kind in pt-BR.
func KindLabel(kind string) string {
	switch kind {
	case codes.DecreedHoliday:
		return "feriado"
	case codes.DecreedOptional:
		return "ponto facultativo"
	}
	return kind
}

// DateBR writes YYYY-MM-DD as dd/mm/aaaa.
func DateBR(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return t.Format("02/01/2006")
}

// ErrInvalid is wrapped by a ValidationError.
var ErrInvalid = errors.New("invalid municipal holiday")

// ValidationError lists every problem of a new entry, in pt-BR.
type ValidationError struct{ Problems []string }

func (e *ValidationError) Error() string {
	return "holidays: " + ErrInvalid.Error() + ": " + strings.Join(e.Problems, "; ")
}

// Unwrap returns ErrInvalid.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// ErrNotFound is returned when an entry to remove does not exist.
var ErrNotFound = errors.New("holidays: entry not found")

// IsNotFound reports whether err is ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// Change is one entry of the register's append-only log.
type Change struct {
	Seq    int64     `json:"seq"`
	At     time.Time `json:"at"`
	By     string    `json:"by"`
	Action string    `json:"action"` // "added" | "removed"
	Reason string    `json:"reason,omitempty"`
	Entry  Entry     `json:"entry"`
}

// Codes finds the municipal codes (*codes.Set).
type Codes interface {
	Code(id string) (*codes.Code, bool)
	IDs() []string
}

// resolver finds a code by the name a person types ("Lapa", "Conceição de
// Macabu"): *codes.Set.Resolve.
type resolver interface {
	Resolve(name string) (*codes.Code, error)
}

// Lookup finds the municipality's code by id or, when set can, by name.
func Lookup(set Codes, m string) (*codes.Code, bool) {
	m = strings.TrimSpace(m)
	if c, ok := set.Code(m); ok {
		return c, true
	}
	if r, ok := set.(resolver); ok && m != "" {
		if c, err := r.Resolve(m); err == nil {
			return c, true
		}
	}
	return nil, false
}

// ParseDay reads a day as typed: a single date ("2026-12-07" or
// "07/12/2026") or a day of every year ("12-07" or "07/12"). Exactly one of
// date and monthDay is returned non-empty.
func ParseDay(s string) (date, monthDay string, err error) {
	t := strings.TrimSpace(s)
	if d, ok := parseDate(t); ok {
		return d, "", nil
	}
	for _, layout := range []string{"01-02", "02/01"} {
		if len(t) != 5 {
			break
		}
		// Parsed in a leap year, so 29/02 is a valid day of the year.
		if p, err := time.Parse("2006-"+layout, "2024-"+t); err == nil {
			return "", p.Format("01-02"), nil
		}
	}
	return "", "", fmt.Errorf("dia %q inválido: use dd/mm/aaaa ou AAAA-MM-DD para uma data, dd/mm ou MM-DD para todo ano (ex.: 07/12/2026, 19/03)", s)
}

// parseDate reads YYYY-MM-DD or dd/mm/aaaa (years 1900–9998).
func parseDate(s string) (string, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.DateOnly, "02/01/2006"} {
		if len(s) != len(layout) {
			continue
		}
		if t, err := time.Parse(layout, s); err == nil && t.Year() >= 1900 && t.Year() <= 9998 {
			return t.Format(time.DateOnly), true
		}
	}
	return "", false
}

// Bounds of the texts.
const (
	maxName = 120
	maxAct  = 300
)

// NormalizeReason is why an entry was removed as the log keeps it: spaces
// collapsed, at most as long as an act.
func NormalizeReason(reason string) string {
	reason = strings.Join(strings.Fields(reason), " ")
	if len([]rune(reason)) > maxAct {
		reason = string([]rune(reason)[:maxAct])
	}
	return reason
}

// Check validates e against the municipality's code c (nil = unknown
// municipality) and the entries already registered for it, and returns e
// normalised: dates as YYYY-MM-DD, month-days as MM-DD, the kind defaulted
// to feriado, texts trimmed. Every problem is reported at once, in pt-BR,
// saying what to fix.
func Check(c *codes.Code, existing []Entry, e Entry) (Entry, error) {
	v := &ValidationError{}
	bad := func(f string, a ...any) { v.Problems = append(v.Problems, fmt.Sprintf(f, a...)) }
	e.Municipality = strings.TrimSpace(e.Municipality)
	e.Name = strings.Join(strings.Fields(e.Name), " ")
	e.Act = strings.Join(strings.Fields(e.Act), " ")
	e.Kind = strings.TrimSpace(e.Kind)
	if e.Kind == "" {
		e.Kind = codes.DecreedHoliday
	}
	if c == nil {
		bad("município %q desconhecido", e.Municipality)
	} else {
		e.Municipality = c.ID
	}
	e.Date, e.MonthDay, e.Since = strings.TrimSpace(e.Date), strings.TrimSpace(e.MonthDay), strings.TrimSpace(e.Since)
	switch {
	case e.Date == "" && e.MonthDay == "":
		bad("informe o dia: uma data (dd/mm/aaaa) ou um dia de todo ano (dd/mm)")
	case e.Date != "" && e.MonthDay != "":
		bad("informe uma data (dd/mm/aaaa) ou um dia de todo ano (dd/mm), não os dois")
	case e.Date != "":
		if d, ok := parseDate(e.Date); ok {
			e.Date = d
		} else {
			bad("data %q inválida: use dd/mm/aaaa ou AAAA-MM-DD (ex.: 07/12/2026)", e.Date)
		}
		if e.Since != "" {
			bad("\"desde\" só vale para um feriado de todo ano; uma data única já diz o dia")
		}
	default:
		if _, md, err := ParseDay(e.MonthDay); err == nil && md != "" {
			e.MonthDay = md
		} else {
			bad("dia do ano %q inválido: use dd/mm ou MM-DD (ex.: 19/03)", e.MonthDay)
		}
	}
	if e.Since != "" && e.Date == "" {
		if d, ok := parseDate(e.Since); ok {
			e.Since = d
		} else {
			bad("início da vigência %q inválido: use dd/mm/aaaa ou AAAA-MM-DD, ou deixe em branco", e.Since)
		}
	}
	switch e.Kind {
	case codes.DecreedHoliday, codes.DecreedOptional:
	default:
		bad("tipo %q desconhecido: use feriado ou ponto_facultativo", e.Kind)
	}
	switch {
	case e.Name == "":
		bad("informe o nome do dia (ex.: Dia do Padroeiro São José)")
	case len([]rune(e.Name)) > maxName:
		bad("nome: no máximo %d caracteres", maxName)
	}
	switch {
	case e.Act == "":
		bad("informe o ato que fixou o dia (ex.: Lei Municipal nº 1.234/2019, Decreto nº 45/2026)")
	case len([]rune(e.Act)) > maxAct:
		bad("ato: no máximo %d caracteres", maxAct)
	}
	if len(v.Problems) > 0 {
		return e, v
	}
	if msg := e.Decreed().Valid(); msg != "" { // the engine's own rule, as a last guard
		bad("%s", msg)
		return e, v
	}
	conflicts(c, existing, e, bad)
	if len(v.Problems) > 0 {
		return e, v
	}
	return e, nil
}

// conflicts reports e's clashes with the code's own calendar and with the
// entries already registered.
func conflicts(c *codes.Code, existing []Entry, e Entry, bad func(string, ...any)) {
	base, err := c.WithDecreed(nil) // the code's own calendar only
	if err != nil {
		base = c
	}
	if e.Date != "" {
		d := dateOf(e.Date)
		if name, ok := base.Holiday(d); ok {
			bad("%s já é feriado (%s) pelo calendário do código", DateBR(e.Date), name)
		}
	} else if name, ok := everyYear(base, e.MonthDay); ok {
		bad("%s/%s já é feriado todo ano (%s) pelo calendário do código", e.MonthDay[3:], e.MonthDay[:2], name)
	}
	for _, x := range existing {
		if x.Municipality != e.Municipality {
			continue
		}
		clash := false
		switch {
		case e.Date != "" && x.Date != "":
			clash = e.Date == x.Date
		case e.Date == "" && x.Date == "":
			clash = e.MonthDay == x.MonthDay
		case e.Date != "":
			clash = x.Decreed().On(dateOf(e.Date))
		default:
			clash = e.Decreed().On(dateOf(x.Date))
		}
		if clash {
			bad("já cadastrado: %s, %s (%s, %s, nº %d); remova-o antes ou escolha outro dia", x.When(), x.Name, KindLabel(x.Kind), x.Act, x.ID)
		}
	}
}

// everyYear reports a holiday the code keeps on month-day md in every one
// of a run of years (a fixed national or municipal holiday, not an
// Easter-based one that only falls there some years).
func everyYear(c *codes.Code, md string) (string, bool) {
	if md == "02-29" {
		return "", false
	}
	name := ""
	for y := 2025; y <= 2032; y++ {
		n, ok := c.Holiday(dateOf(fmt.Sprintf("%04d-%s", y, md)))
		if !ok {
			return "", false
		}
		name = n
	}
	return name, true
}

func dateOf(iso string) codes.Date {
	t, _ := time.Parse(time.DateOnly, iso)
	return codes.Date{Y: t.Year(), M: t.Month(), D: t.Day()}
}

// ByMunicipality groups entries as the codes engine takes them, leaving
// out (and returning) municipalities the set does not know.
func ByMunicipality(set Codes, entries []Entry) (map[string][]codes.Decreed, []string) {
	out := map[string][]codes.Decreed{}
	var unknown []string
	seen := map[string]bool{}
	for _, e := range entries {
		if _, ok := set.Code(e.Municipality); !ok {
			if !seen[e.Municipality] {
				unknown = append(unknown, e.Municipality)
				seen[e.Municipality] = true
			}
			continue
		}
		out[e.Municipality] = append(out[e.Municipality], e.Decreed())
	}
	return out, unknown
}
