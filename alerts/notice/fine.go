package notice

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
)

// UnitValue is the value of a code's monetary unit over a period of
// validity, as the municipal tax law set it (internal/monetary keeps them;
// the shell hands them over as this table).
type UnitValue struct {
	CodeID   string  `json:"code"`
	Unit     string  `json:"unit"`
	From     string  `json:"from"`         // YYYY-MM-DD, first day in force
	To       string  `json:"to,omitempty"` // YYYY-MM-DD, last day; "" = open
	ValueBRL float64 `json:"value_brl"`
	Act      string  `json:"act"` // the law or decree that set it
}

// Fine is the fine in R$ of a document: the penalty's percentage of the
// unit, valued on the date of the act.
type Fine struct {
	PenaltyID string `json:"penalty_id"`
	Article   string `json:"article"`
	Date      string `json:"date"` // YYYY-MM-DD (Brasília) the unit is valued on
	// Percent of the unit (after any doubling), or PercentMin..PercentMax
	// for a provision that sets a range.
	Percent    *float64 `json:"percent,omitempty"`
	PercentMin *float64 `json:"percent_min,omitempty"`
	PercentMax *float64 `json:"percent_max,omitempty"`
	// AmountBRL (or AmountMinBRL..AmountMaxBRL) is the fine in R$, rounded
	// to the centavo; nil when the unit has no value on Date.
	AmountBRL    *float64 `json:"amount_brl,omitempty"`
	AmountMinBRL *float64 `json:"amount_min_brl,omitempty"`
	AmountMaxBRL *float64 `json:"amount_max_brl,omitempty"`
	// Amount is AmountBRL in pt-BR: "R$ 1.234,56" (or "R$ 987,65 a R$ 2.469,12").
	Amount   string `json:"amount_text,omitempty"`
	Unit     string `json:"unit"`
	UnitName string `json:"unit_name,omitempty"`
	// UnitValueBRL is the unit's value on Date; Law is the act that set
	// it and ValidFrom..ValidTo (YYYY-MM-DD, "" = open) its validity.
	UnitValueBRL *float64 `json:"unit_value_brl,omitempty"`
	Law          string   `json:"law,omitempty"`
	ValidFrom    string   `json:"valid_from,omitempty"`
	ValidTo      string   `json:"valid_to,omitempty"`
	// Source: "tabela" (a stored value), "codigo" (the code file's
	// value_brl fallback) or "" (none).
	Source string `json:"source,omitempty"`
	// Text is the sentence the document prints.
	Text string `json:"text"`
	// Warning (pt-BR) says what is missing and where to set it.
	Warning string `json:"warning,omitempty"`
}

// ComputeFine values the penalty outcome o of code c on the day of at
// (Brasília), with the unit values table. It is nil when o is no fine (a
// preliminary notice, judicial measures). A unit with no value on that day
// gives a Fine with a Warning and no amount; the code file's value_brl is
// used only when the table has no period for the unit at all.
func ComputeFine(c *codes.Code, o codes.PenaltyOutcome, values []UnitValue, at time.Time) *Fine {
	if o.Percent == nil && o.PercentMin == nil && o.Type != "unmapped" {
		return nil
	}
	day := at.In(saoPaulo).Format(time.DateOnly)
	f := &Fine{PenaltyID: o.PenaltyID, Article: o.Article, Date: day, Percent: o.Percent, PercentMin: o.PercentMin,
		PercentMax: o.PercentMax, Unit: o.Unit, UnitName: o.UnitName}
	if o.Type == "unmapped" {
		f.Text = "multa em valores literais do código (" + strings.Join(o.Amounts, " / ") + ")"
		f.Warning = fmt.Sprintf("a multa do %s é fixada em valores literais que o sistema não converte em R$: o fiscal indica o valor no auto, conforme a correção que o código manda aplicar", o.Article)
		return f
	}
	var unit *codes.Unit
	for i := range c.Units {
		if c.Units[i].ID == o.Unit {
			unit = &c.Units[i]
		}
	}
	has := false
	for _, v := range values {
		if v.CodeID != c.ID || v.Unit != o.Unit {
			continue
		}
		has = true
		if v.From <= day && (v.To == "" || day <= v.To) && v.ValueBRL > 0 {
			val := v.ValueBRL
			f.UnitValueBRL, f.Law, f.ValidFrom, f.ValidTo, f.Source = &val, v.Act, v.From, v.To, "tabela"
			break
		}
	}
	if f.UnitValueBRL == nil && !has && unit != nil && unit.ValueBRL != nil && *unit.ValueBRL > 0 {
		val := *unit.ValueBRL
		f.UnitValueBRL, f.Source = &val, "codigo"
		f.Law = "valor padrão do arquivo do código (monetary_units.value_brl)"
		f.Warning = fmt.Sprintf("o valor do %s vem do arquivo do código, sem vigência nem ato legal: cadastre-o em Administração → Unidades monetárias (ou sossego units set --code %s --unit %s), com a vigência e o ato que o fixou", o.Unit, c.ID, o.Unit)
	}
	pct := func(p float64) string { return strings.Replace(strconv.FormatFloat(p, 'f', -1, 64), ".", ",", 1) + "%" }
	what := ""
	if f.Percent != nil {
		what = "multa de " + pct(*f.Percent) + " do " + o.Unit
	} else {
		what = "multa de " + pct(*f.PercentMin) + " a " + pct(*f.PercentMax) + " do " + o.Unit
	}
	if f.UnitValueBRL == nil {
		f.Text = what + " (valor em R$ a calcular: falta o valor do " + o.Unit + " vigente em " + dateBR(day) + ")"
		f.Warning = fmt.Sprintf("multa sem valor em R$: não há valor do %s vigente em %s para %s. Um administrador deve cadastrá-lo em Administração → Unidades monetárias (ou: sossego units set --code %s --unit %s --from AAAA-MM-DD --value VALOR --act \"ato legal\"), com a vigência e o ato que o fixou",
			o.Unit, dateBR(day), c.Title(), c.ID, o.Unit)
		if unit != nil && unit.Indexation != "" {
			f.Warning += " (" + unit.Indexation + ")"
		}
		return f
	}
	v := *f.UnitValueBRL
	if f.Percent != nil {
		a := cents(*f.Percent / 100 * v)
		f.AmountBRL, f.Amount = &a, BRL(a)
	} else {
		lo, hi := cents(*f.PercentMin/100*v), cents(*f.PercentMax/100*v)
		f.AmountMinBRL, f.AmountMaxBRL, f.Amount = &lo, &hi, BRL(lo)+" a "+BRL(hi)
	}
	basis := fmt.Sprintf("%s de %s", o.Unit, BRL4(v))
	if f.Source == "tabela" {
		basis += " " + validity(f.ValidFrom, f.ValidTo) + ", " + f.Law
	} else {
		basis += ", " + f.Law
	}
	f.Text = fmt.Sprintf("%s = %s (%s; valor na data do ato, %s)", what, f.Amount, basis, dateBR(day))
	return f
}

func validity(from, to string) string {
	if to == "" {
		return "vigente desde " + dateBR(from)
	}
	return "vigente de " + dateBR(from) + " a " + dateBR(to)
}

// cents rounds v (R$) to the centavo, halves away from zero.
func cents(v float64) float64 { return math.Round(v*100) / 100 }

// BRL writes v in pt-BR currency: "R$ 1.234,56".
func BRL(v float64) string { return brl(v, 2) }

// BRL4 is BRL keeping up to four decimals (a unit value such as "R$ 4,2719").
func BRL4(v float64) string {
	s := brl(v, 4)
	i := strings.IndexByte(s, ',')
	for len(s) > i+3 && strings.HasSuffix(s, "0") {
		s = s[:len(s)-1]
	}
	return s
}

func brl(v float64, dec int) string {
	neg := v < 0
	s := strconv.FormatFloat(math.Abs(v), 'f', dec, 64)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	out := "R$ " + b.String() + "," + frac
	if neg {
		out = "-" + out
	}
	return out
}

// ApplyFine computes the document's fine on the day of at and puts it in
// d.Fine: for a preliminary notice, the fine it announces if the party does
// not regularise (OnNonCompliance); otherwise the penalty of the act. The
// penalty field's text then carries the amount, the unit's value, its
// validity and the act; a missing value becomes a note on the draft that
// says what to set and where. On a draft already valued it is RevalueFine.
func ApplyFine(d *Draft, c *codes.Code, values []UnitValue, at time.Time) {
	RevalueFine(d, c, values, at)
}

// RevalueFine values the fine of d again on the day of at — the date of
// the act: a draft is valued when prepared and again when issued — and
// puts the new valuation wherever the previous one was (d.Fine, the amount
// clause of the penalty field, the warning note). It returns the fine it
// replaced and whether the value changed (the amount, or the unit's value
// it rests on, or whether there is one at all), which the audit trail
// records. A penalty field the fiscal rewrote is left as written.
func RevalueFine(d *Draft, c *codes.Code, values []UnitValue, at time.Time) (before *Fine, changed bool) {
	o := d.Penalty
	if d.Kind.IsNotice() && d.OnNonCompliance != nil {
		o = *d.OnNonCompliance
	}
	before = d.Fine
	after := ComputeFine(c, o, values, at)
	if before != nil && before.Warning != "" {
		d.Notes = slices.DeleteFunc(d.Notes, func(n string) bool { return n == "atenção: "+before.Warning })
	}
	d.Fine = after
	if after == nil {
		return before, before != nil
	}
	old := o.Text
	if before != nil {
		old = withAmount(o.Text, before)
	}
	for i := range d.Fields {
		fd := &d.Fields[i]
		if (fd.ID == "penalidade" || fd.ID == "dispositivo") && fd.Value != "" && old != "" && strings.Contains(fd.Value, old) {
			fd.Value = strings.Replace(fd.Value, old, withAmount(o.Text, after), 1)
		}
	}
	if after.Warning != "" {
		d.Notes = append(d.Notes, "atenção: "+after.Warning)
	}
	return before, !sameValue(before, after)
}

// sameValue tells whether two valuations of a fine come to the same sum on
// the same unit value; no valuation at all has no value, like one whose
// unit has none.
func sameValue(a, b *Fine) bool {
	if a == nil {
		a = &Fine{}
	}
	eq := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.AmountBRL, b.AmountBRL) && eq(a.AmountMinBRL, b.AmountMinBRL) && eq(a.AmountMaxBRL, b.AmountMaxBRL) &&
		eq(a.UnitValueBRL, b.UnitValueBRL)
}

// withAmount replaces the amount clause codes.PenaltyForHistory wrote (" =
// R$ …" from value_brl, or "(valor em R$ não calculado …)") with the fine's.
func withAmount(text string, f *Fine) string {
	if f.Percent == nil && f.PercentMin == nil {
		return text
	}
	clause := " (valor em R$ a calcular: falta o valor do " + f.Unit + " vigente em " + dateBR(f.Date) + ")"
	if f.Amount != "" {
		clause = f.Text[strings.Index(f.Text, " = "):]
	}
	if i := strings.Index(text, " (valor em R$ não calculado"); i >= 0 {
		end := strings.IndexByte(text[i:], ')')
		return text[:i] + clause + text[i+end+1:]
	}
	if i := strings.Index(text, " = R$ "); i >= 0 {
		end := strings.IndexByte(text[i:], ';')
		if end < 0 {
			return text[:i] + clause
		}
		return text[:i] + clause + text[i+end:]
	}
	if i := strings.Index(text, "; "); i >= 0 { // before the accessory sanctions
		return text[:i] + clause + text[i:]
	}
	return text + clause
}
