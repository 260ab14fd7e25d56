package codes

import (
	"testing"
)

// TestMovableDays: Easter and the days computed from it, for the years the
// register and the reports cover.
func TestMovableDays(t *testing.T) {
	for _, tc := range []struct {
		y                          int
		easter, friday, cMon, cTue Date
		corpus                     Date
	}{
		{2025, Date{2025, 4, 20}, Date{2025, 4, 18}, Date{2025, 3, 3}, Date{2025, 3, 4}, Date{2025, 6, 19}},
		{2026, Date{2026, 4, 5}, Date{2026, 4, 3}, Date{2026, 2, 16}, Date{2026, 2, 17}, Date{2026, 6, 4}},
		{2027, Date{2027, 3, 28}, Date{2027, 3, 26}, Date{2027, 2, 8}, Date{2027, 2, 9}, Date{2027, 5, 27}},
		{2035, Date{2035, 3, 25}, Date{2035, 3, 23}, Date{2035, 2, 5}, Date{2035, 2, 6}, Date{2035, 5, 24}},
		{2008, Date{2008, 3, 23}, Date{2008, 3, 21}, Date{2008, 2, 4}, Date{2008, 2, 5}, Date{2008, 5, 22}},
	} {
		mon, tue := Carnival(tc.y)
		if got := Easter(tc.y); got != tc.easter {
			t.Errorf("Easter(%d) = %s, want %s", tc.y, got, tc.easter)
		}
		if got := GoodFriday(tc.y); got != tc.friday || got.Weekday() != 5 {
			t.Errorf("GoodFriday(%d) = %s (%s), want %s", tc.y, got, got.Weekday(), tc.friday)
		}
		if mon != tc.cMon || tue != tc.cTue || mon.Weekday() != 1 {
			t.Errorf("Carnival(%d) = %s, %s, want %s, %s", tc.y, mon, tue, tc.cMon, tc.cTue)
		}
		if got := CorpusChristi(tc.y); got != tc.corpus || got.Weekday() != 4 {
			t.Errorf("CorpusChristi(%d) = %s, want %s", tc.y, got, tc.corpus)
		}
	}
}

// TestMovableHolidays: Good Friday is a holiday under every code, and its
// eve (Maundy Thursday) a holiday eve; Carnival and Corpus Christi are not,
// until the municipality's register of decreed days makes them holidays.
func TestMovableHolidays(t *testing.T) {
	s := builtinSet(t)
	for _, id := range s.IDs() {
		c, _ := s.Code(id)
		for _, y := range []int{2025, 2026, 2027} {
			gf := GoodFriday(y)
			if name, ok := c.Holiday(gf); !ok || name != "Sexta-feira Santa" {
				t.Errorf("%s: Good Friday %s holiday = %v %q", id, gf, ok, name)
			}
			if !c.HolidayEve(gf.AddDays(-1)) || c.BusinessDay(gf) {
				t.Errorf("%s: Maundy Thursday %s not a holiday eve, or Good Friday a business day", id, gf.AddDays(-1))
			}
			mon, tue := Carnival(y)
			for _, d := range []Date{mon, tue, CorpusChristi(y), Easter(y).AddDays(-1)} {
				// Lapa's Cerco da Lapa (09 February, Art. 294) falls on Carnival Tuesday in 2027.
				if name, ok := c.Holiday(d); ok && (id != "lapa" || name != "Aniversário do Cerco da Lapa") {
					t.Errorf("%s: %s is a holiday without the register", id, d)
				}
			}
		}
	}
	mon, tue := Carnival(2026)
	if err := s.SetDecreed(map[string][]Decreed{"lapa": {
		{Date: mon.String(), Name: "Carnaval", Act: "Decreto nº 10/2026", Kind: DecreedHoliday},
		{Date: tue.String(), Name: "Carnaval", Act: "Decreto nº 10/2026", Kind: DecreedHoliday},
		{Date: CorpusChristi(2026).String(), Name: "Corpus Christi", Act: "Decreto nº 11/2026", Kind: DecreedOptional},
	}}); err != nil {
		t.Fatal(err)
	}
	lapa, _ := s.Code("lapa")
	ca, _ := s.Code("campos-altos")
	if _, ok := lapa.Holiday(mon); !ok || !lapa.HolidayEve(mon.AddDays(-1)) {
		t.Errorf("Carnival decreed a holiday in Lapa is not one (or its eve not an eve)")
	}
	if _, ok := lapa.Holiday(CorpusChristi(2026)); ok || lapa.BusinessDay(CorpusChristi(2026)) {
		t.Errorf("Corpus Christi decreed ponto facultativo: holiday or business day in Lapa")
	}
	if _, ok := ca.Holiday(tue); ok {
		t.Errorf("Lapa's decreed Carnival leaked into Campos Altos")
	}
}

// TestMovableHolidayVerdicts: the eve of Good Friday extends the closing
// hours the codes give "dias que antecedem os feriados".
func TestMovableHolidayVerdicts(t *testing.T) {
	rest := map[string]any{"establishment_type": "restaurant", "acoustics_proven": true}
	club := map[string]any{"establishment_type": "club", "acoustics_proven": true}
	barOpen := map[string]any{"establishment_type": "bar", "operating": true}
	runCases(t, []evalCase{
		// Lapa Art. 295, XIII: "De segunda a quinta-feira: Encerramento : 22:00 horas. - Sextas, sábados e dias que
		// antecedem os feriados: Encerramento : 02:00 horas do dia seguinte."
		{name: "2026 Maundy Thursday 23:30: show until 02:00", code: "lapa", at: "2026-04-02T23:30:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: rest, want: "false"},
		{name: "2026 Maundy Thursday: 01:59 still inside", code: "lapa", at: "2026-04-03T01:59:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: rest, want: "false"},
		{name: "2026 Maundy Thursday: 02:00 is past the closing", code: "lapa", at: "2026-04-03T02:00:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: rest, want: "true", article: "Art. 295, XIII"},
		{name: "2026 the Wednesday before: 22:00 is past the closing", code: "lapa", at: "2026-04-01T22:00:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: rest, want: "true", article: "Art. 295, XIII"},
		{name: "2025 Maundy Thursday 23:00", code: "lapa", at: "2025-04-17T23:00:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: rest, want: "false"},
		{name: "2027 Maundy Thursday 01:30", code: "lapa", at: "2027-03-26T01:30:00-03:00", zone: "other", source: "karaoke", laeq: f(55), facts: rest, want: "false"},
		{name: "2027 Thursday a week later 22:30", code: "lapa", at: "2027-04-01T22:30:00-03:00", zone: "other", source: "karaoke", laeq: f(55), facts: rest, want: "true", article: "Art. 295, XIII"},
		// Lapa Art. 295, XV: "Sextas, sábados e dias que antecedem os feriados: Encerramento : 05:00 horas do dia
		// seguinte." Monday to Thursday are not mentioned; the Thursday before Good Friday is an eve.
		{name: "2026 club dance on Maundy Thursday: 04:59 inside", code: "lapa", at: "2026-04-03T04:59:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: club, want: "false"},
		{name: "2026 club dance on Maundy Thursday: 05:00 past", code: "lapa", at: "2026-04-03T05:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: club, want: "true", article: "Art. 295, XV"},
		// Campina Grande do Sul Art. 87, § 2º: "fica proibido o funcionamento a partir das 23:00 horas até às 7:00
		// horas da manhã [...] Nas sextas feiras, sábados e vésperas de feriados o funcionamento poderá ser até as
		// 24:00 horas."
		{name: "CGS 2026 Maundy Thursday 23:30 bar open", code: "campina-grande-do-sul", at: "2026-04-02T23:30:00-03:00", zone: "other", source: "generic", assume: true, facts: barOpen, want: "false"},
		{name: "CGS 2026 Maundy Thursday 23:59 bar open", code: "campina-grande-do-sul", at: "2026-04-02T23:59:00-03:00", zone: "other", source: "generic", assume: true, facts: barOpen, want: "false"},
		{name: "CGS 2026 Maundy Thursday: 00:00 past", code: "campina-grande-do-sul", at: "2026-04-03T00:00:00-03:00", zone: "other", source: "generic", assume: true, facts: barOpen, want: "true", article: "Art. 87, § 2º"},
		{name: "CGS 2025 the Wednesday before: 23:00 past", code: "campina-grande-do-sul", at: "2025-04-16T23:00:00-03:00", zone: "other", source: "generic", assume: true, facts: barOpen, want: "true", article: "Art. 87, § 2º"},
		{name: "CGS 2025 the Wednesday before: 22:59 inside", code: "campina-grande-do-sul", at: "2025-04-16T22:59:00-03:00", zone: "other", source: "generic", assume: true, facts: barOpen, want: "false"},
		{name: "CGS 2027 Maundy Thursday 23:30", code: "campina-grande-do-sul", at: "2027-03-25T23:30:00-03:00", zone: "other", source: "generic", assume: true, facts: barOpen, want: "false"},
		// Carnival is no holiday without the register: the Sunday before it is no eve.
		{name: "Carnival Monday 2026 23:30: an ordinary Monday for Art. 295, XIII", code: "lapa", at: "2026-02-16T23:30:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: rest, want: "true", article: "Art. 295, XIII"},
		// In 2027 Carnival Tuesday is 09 February, Lapa's own holiday (Art. 294): the Monday is its eve.
		{name: "Carnival Monday 2027 22:30: eve of Cerco da Lapa", code: "lapa", at: "2027-02-08T22:30:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: rest, want: "false"},
		{name: "Carnival Monday 2025 22:00: an ordinary Monday", code: "lapa", at: "2025-03-03T22:00:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: rest, want: "true", article: "Art. 295, XIII"},
	})
}
