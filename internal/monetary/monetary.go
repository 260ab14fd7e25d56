// Package monetary keeps the value of each municipality's monetary units
// (Lapa's VRM, a VR, a UFM, a salário mínimo regional…) per period of
// validity: from, to (inclusive; open when empty), the value in R$ and the
// legal act that set it. The codes declare their units (codes.Unit, YAML
// monetary_units); this store holds what the municipal tax law says each
// is worth, and when, so a fine is computed on the value in force on the
// date of the act. The YAML value_brl stays a fallback for a unit with no
// stored value.
//
// This package holds the types, without a driver: Check, the rules a new
// period must meet, and ValueAt, the look-up, are pure. The store,
// internal/monetary/monetarydb, is its own SQLite file in the data directory
// with an append-only log of every change (who, when, what: Change); it is
// wired by internal/central and cmd/sossego.
//
// Overview of its parts: each municipality's monetary units' values per period
// of validity (from, to, R$, the act that set them) and their change log
// entries, as types and without a driver; pure `Check` (unknown code or unit,
// overlaps, values not positive → pt-BR) and `ValueAt`; the codes' YAML
// `value_brl` is only a fallback; what the consumers import.
package monetary

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
)

// Amount is a value in R$, in ten-thousandths of a real (unit values are
// often fixed with four decimals, e.g. a UFM of R$ 4,2719).
type Amount int64

// AmountScale is how many Amount units make one real.
const AmountScale = 10000

// Reais is the amount in R$ as a float.
func (a Amount) Reais() float64 { return float64(a) / AmountScale }

// FromReais rounds v (R$) to an Amount.
func FromReais(v float64) Amount { return Amount(math.Round(v * AmountScale)) }

// String is the amount in pt-BR: "R$ 1.234,56", with up to four decimals
// when the value has them ("R$ 4,2719").
func (a Amount) String() string {
	neg := a < 0
	if neg {
		a = -a
	}
	whole, frac := int64(a)/AmountScale, int64(a)%AmountScale
	fs := fmt.Sprintf("%04d", frac)
	fs = strings.TrimRight(fs, "0")
	for len(fs) < 2 {
		fs += "0"
	}
	s := "R$ " + groupThousands(whole) + "," + fs
	if neg {
		s = "-" + s
	}
	return s
}

func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MarshalJSON writes the amount as a number of reais.
func (a Amount) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(a.Reais(), 'f', -1, 64)), nil
}

// UnmarshalJSON reads a number of reais (at most four decimals).
func (a *Amount) UnmarshalJSON(b []byte) error {
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return errors.New("valor em R$ deve ser um número (ex.: 4938.24)")
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e12 {
		return errors.New("valor em R$ fora do intervalo")
	}
	*a = FromReais(v)
	return nil
}

var (
	reBR       = regexp.MustCompile(`^-?(\d{1,3}(\.\d{3})+|\d+)(,\d{1,4})?$`) // 4.938,24  4938,24  1.234.567
	rePlain    = regexp.MustCompile(`^-?\d+(\.\d{1,4})?$`)                    // 4938.24
	reDecimals = regexp.MustCompile(`^-?[\d.]+[.,]\d{5,}$`)
)

// ParseAmount reads a value in R$ as typed: "4938,24", "4.938,24",
// "R$ 4.938,24" or "4938.24"; at most four decimals.
func ParseAmount(s string) (Amount, error) {
	t := strings.TrimSpace(s)
	sign := ""
	if rest, ok := strings.CutPrefix(t, "-R$"); ok {
		sign, t = "-", rest
	}
	t = strings.TrimSpace(strings.TrimPrefix(t, "R$"))
	if t == "" {
		return 0, fmt.Errorf("valor %q: informe o valor em R$ (ex.: 4.938,24)", s)
	}
	switch {
	case reBR.MatchString(t):
		t = strings.ReplaceAll(t, ".", "")
		t = strings.Replace(t, ",", ".", 1)
	case rePlain.MatchString(t):
	case reDecimals.MatchString(t):
		return 0, fmt.Errorf("valor %q: use no máximo quatro casas decimais", s)
	default:
		return 0, fmt.Errorf("valor %q: use só dígitos, com vírgula decimal e ponto de milhar (ex.: 4.938,24)", s)
	}
	v, err := strconv.ParseFloat(sign+t, 64)
	if err != nil || math.Abs(v) > 1e12 {
		return 0, fmt.Errorf("valor %q: não é um número (ex.: 4.938,24)", s)
	}
	return FromReais(v), nil
}

// Period is the value of one unit of one code over a period of validity.
type Period struct {
	ID     int64  `json:"id"`
	CodeID string `json:"code"`
	Unit   string `json:"unit"`
	From   string `json:"from"`         // YYYY-MM-DD, first day in force
	To     string `json:"to,omitempty"` // YYYY-MM-DD, last day in force; "" = until further notice
	Value  Amount `json:"value_brl"`
	// Act is the legal basis: the law, decree or ordinance that set the
	// value (e.g. "Decreto nº 1.234/2025, art. 1º").
	Act   string    `json:"act"`
	SetBy string    `json:"set_by"`
	SetAt time.Time `json:"set_at"`
}

// openEnd stands for an open end in comparisons.
const openEnd = "9999-12-31"

func (p Period) end() string {
	if p.To == "" {
		return openEnd
	}
	return p.To
}

// Covers reports whether day (YYYY-MM-DD) is in the period.
func (p Period) Covers(day string) bool { return p.From <= day && day <= p.end() }

// Text is the period in pt-BR: "de 01/01/2026 a 31/12/2026", "a partir de 01/01/2026".
func (p Period) Text() string {
	if p.To == "" {
		return "a partir de " + DateBR(p.From)
	}
	return "de " + DateBR(p.From) + " a " + DateBR(p.To)
}

// DateBR writes YYYY-MM-DD as dd/mm/aaaa.
func DateBR(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return t.Format("02/01/2006")
}

// Change is one entry of the append-only log of the store of unit values.
type Change struct {
	Seq    int64     `json:"seq"`
	At     time.Time `json:"at"`
	By     string    `json:"by"`
	CodeID string    `json:"code"`
	Unit   string    `json:"unit"`
	// Action: "set" (a new period) or "closed" (an open period given an
	// end because a newer value starts).
	Action string `json:"action"`
	Period Period `json:"period"`
}

// ValueAt returns the period of code's unit that covers day (YYYY-MM-DD).
func ValueAt(ps []Period, codeID, unit, day string) (Period, bool) {
	for _, p := range ps {
		if p.CodeID == codeID && p.Unit == unit && p.Covers(day) {
			return p, true
		}
	}
	return Period{}, false
}

// ErrInvalid is wrapped by a ValidationError.
var ErrInvalid = errors.New("invalid monetary unit value")

// ValidationError lists every problem of a new period, in pt-BR.
type ValidationError struct{ Problems []string }

func (e *ValidationError) Error() string {
	return "monetary: " + ErrInvalid.Error() + ": " + strings.Join(e.Problems, "; ")
}

// Unwrap returns ErrInvalid.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// Codes finds the municipal codes (*codes.Set).
type Codes interface {
	Code(id string) (*codes.Code, bool)
	IDs() []string
}

// ParseDate reads a day as YYYY-MM-DD or dd/mm/aaaa and returns YYYY-MM-DD.
func ParseDate(s string) (string, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.DateOnly, "02/01/2006"} {
		if t, err := time.Parse(layout, s); err == nil && t.Year() >= 1900 && t.Year() <= 9998 {
			return t.Format(time.DateOnly), true
		}
	}
	return "", false
}

// maxAct bounds the legal basis text.
const maxAct = 300

// Check validates p (its dates already parsed to YYYY-MM-DD by the caller
// or not) against the code c and the periods stored for the same unit. It
// returns p normalised and, when p starts after an open-ended period of the
// same unit, that period's id with the day it must now end (the new value
// supersedes it); any other overlap is refused.
func Check(c *codes.Code, existing []Period, p Period) (Period, *Period, error) {
	e := &ValidationError{}
	p.Unit = strings.TrimSpace(p.Unit)
	p.Act = strings.Join(strings.Fields(p.Act), " ")
	if c == nil {
		e.Problems = append(e.Problems, fmt.Sprintf("código municipal %q desconhecido", p.CodeID))
	} else {
		p.CodeID = c.ID
		var ids []string
		found := false
		for _, u := range c.Units {
			ids = append(ids, u.ID)
			found = found || u.ID == p.Unit
		}
		if !found {
			e.Problems = append(e.Problems, fmt.Sprintf("a unidade %q não existe em %s: use %s", p.Unit, c.Title(), strings.Join(ids, ", ")))
		}
	}
	from, okFrom := ParseDate(p.From)
	if !okFrom {
		e.Problems = append(e.Problems, fmt.Sprintf("início da vigência %q inválido: use AAAA-MM-DD ou dd/mm/aaaa", p.From))
	}
	to, okTo := "", true
	if strings.TrimSpace(p.To) != "" {
		to, okTo = ParseDate(p.To)
		if !okTo {
			e.Problems = append(e.Problems, fmt.Sprintf("fim da vigência %q inválido: use AAAA-MM-DD ou dd/mm/aaaa, ou deixe em branco (vigência em aberto)", p.To))
		}
	}
	p.From, p.To = from, to
	if okFrom && okTo && to != "" && to < from {
		e.Problems = append(e.Problems, fmt.Sprintf("o fim da vigência (%s) é anterior ao início (%s)", DateBR(to), DateBR(from)))
	}
	switch {
	case p.Value < 0:
		e.Problems = append(e.Problems, fmt.Sprintf("valor negativo (%s): informe o valor da unidade em R$", p.Value))
	case p.Value == 0:
		e.Problems = append(e.Problems, "valor zero: informe o valor da unidade em R$ (ex.: 4.938,24)")
	}
	switch {
	case p.Act == "":
		e.Problems = append(e.Problems, "informe o ato legal que fixou o valor (ex.: Decreto nº 1.234/2025)")
	case len([]rune(p.Act)) > maxAct:
		e.Problems = append(e.Problems, fmt.Sprintf("ato legal: no máximo %d caracteres", maxAct))
	}
	if len(e.Problems) > 0 {
		return p, nil, e
	}
	var closes *Period
	for _, x := range existing {
		if x.CodeID != p.CodeID || x.Unit != p.Unit || !(x.From <= p.end() && p.From <= x.end()) {
			continue
		}
		if x.To == "" && x.From < p.From && closes == nil {
			prev, _ := time.Parse(time.DateOnly, p.From)
			c := x
			c.To = prev.AddDate(0, 0, -1).Format(time.DateOnly)
			closes = &c
			continue
		}
		e.Problems = append(e.Problems, fmt.Sprintf("a vigência %s coincide com a já cadastrada %s (%s, %s): ajuste as datas",
			p.Text(), x.Text(), x.Value, x.Act))
	}
	if len(e.Problems) > 0 {
		return p, nil, e
	}
	return p, closes, nil
}
