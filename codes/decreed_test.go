package codes

import (
	"strings"
	"testing"
	"time"
)

func TestDecreedValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Decreed
		want string // substring of the problem; "" = valid
	}{
		{"yearly", Decreed{MonthDay: "03-19", Name: "São José", Kind: DecreedHoliday}, ""},
		{"yearly since", Decreed{MonthDay: "03-19", Since: "2019-05-02", Name: "São José", Kind: DecreedHoliday}, ""},
		{"leap day yearly", Decreed{MonthDay: "02-29", Name: "x", Kind: DecreedHoliday}, ""},
		{"once", Decreed{Date: "2026-12-07", Name: "Ponto facultativo", Kind: DecreedOptional}, ""},
		{"neither", Decreed{Name: "x", Kind: DecreedHoliday}, "só um deles"},
		{"both", Decreed{MonthDay: "12-07", Date: "2026-12-07", Name: "x", Kind: DecreedHoliday}, "só um deles"},
		{"month 13", Decreed{MonthDay: "13-01", Name: "x", Kind: DecreedHoliday}, "MM-DD"},
		{"31 April", Decreed{MonthDay: "04-31", Name: "x", Kind: DecreedHoliday}, "MM-DD"},
		{"date 30 Feb", Decreed{Date: "2026-02-30", Name: "x", Kind: DecreedHoliday}, "AAAA-MM-DD"},
		{"date dd/mm", Decreed{Date: "07/12/2026", Name: "x", Kind: DecreedHoliday}, "AAAA-MM-DD"},
		{"since on a single date", Decreed{Date: "2026-12-07", Since: "2026-01-01", Name: "x", Kind: DecreedHoliday}, "todo ano"},
		{"unknown kind", Decreed{Date: "2026-12-07", Name: "x", Kind: "recesso"}, "tipo"},
		{"no name", Decreed{Date: "2026-12-07", Name: " ", Kind: DecreedHoliday}, "nome"},
	} {
		got := tc.d.Valid()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: Valid() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestDecreedDays: the days a municipality decrees are holidays (or only
// non-business days) wherever the engine reads the calendar, for the code
// the set returns, and only for that municipality.
func TestDecreedDays(t *testing.T) {
	s := builtinSet(t)
	if err := s.SetDecreed(map[string][]Decreed{
		"lapa": {
			{MonthDay: "03-19", Since: "2019-05-02", Name: "São José", Act: "Lei Municipal nº 1.234/2019", Kind: DecreedHoliday},
			{Date: "2026-03-11", Name: "Ponto facultativo", Act: "Decreto nº 45/2026", Kind: DecreedOptional},
		},
	}); err != nil {
		t.Fatal(err)
	}
	lapa, _ := s.Code("lapa")
	ca, _ := s.Code(ca)
	for _, tc := range []struct {
		d        Date
		holiday  string
		eve      bool
		business bool
	}{
		{Date{2026, 3, 19}, "São José", false, false}, // a Thursday
		{Date{2026, 3, 18}, "", true, true},
		{Date{2018, 3, 19}, "", false, true},  // before the law: a Monday like any other
		{Date{2026, 3, 11}, "", false, false}, // ponto facultativo: not a holiday, not a business day
		{Date{2026, 3, 10}, "", false, true},
	} {
		name, _ := lapa.Holiday(tc.d)
		if name != tc.holiday || lapa.HolidayEve(tc.d) != tc.eve || lapa.BusinessDay(tc.d) != tc.business {
			t.Errorf("lapa %s: holiday %q eve %v business %v, want %+v", tc.d, name, lapa.HolidayEve(tc.d), lapa.BusinessDay(tc.d), tc)
		}
	}
	if _, h := ca.Holiday(Date{2026, 3, 19}); h || !ca.BusinessDay(Date{2026, 3, 11}) {
		t.Error("Lapa's decreed days leaked into Campos Altos")
	}
	// Deadlines in business days skip both the holiday and the ponto
	// facultativo: Tue 10 Mar + 3 = Mon 16 Mar (11th skipped), Wed 18 + 2 = Mon 23 (19th skipped).
	if got := lapa.AddBusinessDays(Date{2026, 3, 10}, 3); got != (Date{2026, 3, 16}) {
		t.Errorf("10/03 + 3 business days = %s", got)
	}
	if got := lapa.AddBusinessDays(Date{2026, 3, 18}, 2); got != (Date{2026, 3, 23}) {
		t.Errorf("18/03 + 2 business days = %s", got)
	}
	// Replacing the decreed days drops the old ones.
	if err := s.SetDecreed(nil); err != nil {
		t.Fatal(err)
	}
	lapa2, _ := s.Code("lapa")
	if _, h := lapa2.Holiday(Date{2026, 3, 19}); h {
		t.Error("19/03 still a holiday after the decreed days were cleared")
	}
	if _, h := lapa.Holiday(Date{2026, 3, 19}); !h {
		t.Error("a code handed out before keeps the calendar it was handed out with")
	}
	if err := s.SetDecreed(map[string][]Decreed{"curitiba": {{Date: "2026-03-11", Name: "x", Kind: DecreedHoliday}}}); err == nil || !strings.Contains(err.Error(), "desconhecido") {
		t.Errorf("unknown code: %v", err)
	}
	if err := s.SetDecreed(map[string][]Decreed{"lapa": {{Date: "2026-13-11", Name: "x", Kind: DecreedHoliday}}}); err == nil {
		t.Error("an invalid date was accepted")
	}
}

// TestDecreedHolidayVerdict: a decreed holiday changes the verdict as the
// code's "holiday" day rule says (Lapa Art. 294, I: industry closed on
// Sundays and holidays), through the set's evaluation path.
func TestDecreedHolidayVerdict(t *testing.T) {
	s := builtinSet(t)
	at := time.Date(2026, 3, 19, 10, 0, 0, 0, time.FixedZone("BRT", -3*3600))
	eval := func() Verdict {
		c, err := s.Resolve("Lapa")
		if err != nil {
			t.Fatal(err)
		}
		return Evaluate(c, Observation{At: at, Zone: "industrial", Source: "generic", Facts: map[string]any{"establishment_type": "industry", "operating": true}})
	}
	if v := eval(); v.Violation != False {
		t.Fatalf("an ordinary Thursday: %v (%s)", v.Violation, v.Reason)
	}
	if err := s.SetDecreed(map[string][]Decreed{"lapa": {{MonthDay: "03-19", Name: "São José", Act: "Lei Municipal nº 1.234/2019", Kind: DecreedHoliday}}}); err != nil {
		t.Fatal(err)
	}
	v := eval()
	if v.Violation != True || !strings.HasPrefix(v.Article, "Art. 294") {
		t.Fatalf("decreed holiday: %v %s (%s)", v.Violation, v.Article, v.Reason)
	}
	if err := s.SetDecreed(map[string][]Decreed{"lapa": {{MonthDay: "03-19", Name: "São José", Act: "Decreto nº 1/2026", Kind: DecreedOptional}}}); err != nil {
		t.Fatal(err)
	}
	if v := eval(); v.Violation != False {
		t.Fatalf("a ponto facultativo is not a holiday for the day rules: %v (%s)", v.Violation, v.Reason)
	}
}
