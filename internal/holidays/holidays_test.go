package holidays

import (
	"errors"
	"strings"
	"testing"

	"github.com/sossego/sossego/codes"
)

func builtin(t testing.TB) *codes.Set {
	t.Helper()
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestParseDay(t *testing.T) {
	for _, tc := range []struct {
		in, date, md, err string
	}{
		{"2026-12-07", "2026-12-07", "", ""},
		{" 07/12/2026 ", "2026-12-07", "", ""},
		{"19/03", "", "03-19", ""},
		{"03-19", "", "03-19", ""},
		{"29/02", "", "02-29", ""},
		{"31/04", "", "", "inválido"},
		{"2026-02-29", "", "", "inválido"},
		{"7/12/2026", "", "", "inválido"},
		{"1899-12-31", "", "", "inválido"},
		{"19-03", "", "", "inválido"}, // MM-DD: there is no month 19
		{"", "", "", "inválido"},
		{"amanhã", "", "", "dd/mm/aaaa"},
	} {
		d, md, err := ParseDay(tc.in)
		if tc.err == "" && (err != nil || d != tc.date || md != tc.md) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseDay(%q) = %q, %q, %v; want %q, %q, %q", tc.in, d, md, err, tc.date, tc.md, tc.err)
		}
	}
}

func FuzzParseDay(f *testing.F) {
	for _, s := range []string{"2026-12-07", "07/12/2026", "19/03", "03-19", "29/02", "", "00/00", "9999-12-31"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, md, err := ParseDay(s)
		if err != nil {
			if d != "" || md != "" {
				t.Fatalf("error with a result: %q %q", d, md)
			}
			return
		}
		if (d == "") == (md == "") {
			t.Fatalf("ParseDay(%q) = %q, %q: want exactly one", s, d, md)
		}
		kind := codes.DecreedHoliday
		if msg := (codes.Decreed{Date: d, MonthDay: md, Name: "x", Kind: kind}).Valid(); msg != "" {
			t.Fatalf("ParseDay(%q) = %q, %q, which the engine refuses: %s", s, d, md, msg)
		}
		// What it returns reads back to itself.
		again := d
		if md != "" {
			again = md
		}
		if d2, md2, err := ParseDay(again); err != nil || d2 != d || md2 != md {
			t.Fatalf("ParseDay(%q) not stable: %q %q %v", again, d2, md2, err)
		}
	})
}

func TestCheck(t *testing.T) {
	set := builtin(t)
	lapa, _ := set.Code("lapa")
	existing := []Entry{
		{ID: 1, Municipality: "lapa", MonthDay: "03-19", Name: "São José", Act: "Lei Municipal nº 1.234/2019", Kind: "feriado"},
		{ID: 2, Municipality: "lapa", Date: "2026-12-07", Name: "Ponto facultativo", Act: "Decreto nº 45/2026", Kind: "ponto_facultativo"},
		{ID: 3, Municipality: "campos-altos", MonthDay: "08-15", Name: "Padroeira", Act: "Lei nº 9/2001", Kind: "feriado"},
	}
	ok := Entry{Municipality: "lapa", Name: "Aniversário do bairro", Act: "Lei Municipal nº 2.000/2024"}
	with := func(f func(*Entry)) Entry { e := ok; f(&e); return e }
	for _, tc := range []struct {
		name string
		code *codes.Code
		e    Entry
		want []string // substrings of the problems; nil = valid
		norm func(Entry) bool
	}{
		{"a yearly holiday, dd/mm", lapa, with(func(e *Entry) { e.MonthDay = "05/10" }), nil,
			func(e Entry) bool { return e.MonthDay == "10-05" && e.Kind == "feriado" }},
		{"since, dd/mm/aaaa", lapa, with(func(e *Entry) { e.MonthDay = "10-05"; e.Since = "02/05/2024" }), nil,
			func(e Entry) bool { return e.Since == "2024-05-02" }},
		{"a single date, texts trimmed", lapa, with(func(e *Entry) {
			e.Date = "08/12/2026"
			e.Name = "  Recesso   de fim de ano "
			e.Kind = "ponto_facultativo"
		}), nil,
			func(e Entry) bool { return e.Date == "2026-12-08" && e.Name == "Recesso de fim de ano" }},
		{"the same yearly day of another municipality", lapa, with(func(e *Entry) { e.MonthDay = "08-15" }), nil, nil},
		{"unknown municipality", nil, with(func(e *Entry) { e.Municipality = "curitiba"; e.Date = "2026-12-08" }), []string{`município "curitiba" desconhecido`}, nil},
		{"no day", lapa, ok, []string{"informe o dia"}, nil},
		{"both days", lapa, with(func(e *Entry) { e.Date = "2026-12-08"; e.MonthDay = "12-08" }), []string{"não os dois"}, nil},
		{"30 February", lapa, with(func(e *Entry) { e.Date = "30/02/2026" }), []string{`data "30/02/2026" inválida`}, nil},
		{"month 13", lapa, with(func(e *Entry) { e.MonthDay = "13-01" }), []string{"dia do ano"}, nil},
		{"since on a single date", lapa, with(func(e *Entry) { e.Date = "2026-12-08"; e.Since = "2026-01-01" }), []string{"desde"}, nil},
		{"bad since", lapa, with(func(e *Entry) { e.MonthDay = "10-05"; e.Since = "ontem" }), []string{"início da vigência"}, nil},
		{"unknown kind", lapa, with(func(e *Entry) { e.Date = "2026-12-08"; e.Kind = "recesso" }), []string{`tipo "recesso"`}, nil},
		{"no name, no act: both said", lapa, Entry{Municipality: "lapa", Date: "2026-12-08"}, []string{"informe o nome", "informe o ato"}, nil},
		{"name too long", lapa, with(func(e *Entry) { e.Date = "2026-12-08"; e.Name = strings.Repeat("a", 121) }), []string{"nome: no máximo"}, nil},
		{"duplicate yearly", lapa, with(func(e *Entry) { e.MonthDay = "19/03" }), []string{"já cadastrado", "nº 1"}, nil},
		{"duplicate date", lapa, with(func(e *Entry) { e.Date = "2026-12-07" }), []string{"já cadastrado", "nº 2"}, nil},
		{"a date on a registered yearly holiday", lapa, with(func(e *Entry) { e.Date = "2027-03-19" }), []string{"já cadastrado", "São José"}, nil},
		{"a yearly day on a registered date", lapa, with(func(e *Entry) { e.MonthDay = "12-07" }), []string{"já cadastrado", "Ponto facultativo"}, nil},
		{"a national holiday", lapa, with(func(e *Entry) { e.Date = "25/12/2026" }), []string{"já é feriado (Natal)"}, nil},
		{"the code's own holiday every year", lapa, with(func(e *Entry) { e.MonthDay = "13/06" }), []string{"já é feriado todo ano"}, nil},
		{"an ordinary day of the year", lapa, with(func(e *Entry) { e.MonthDay = "04-03" }), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(tc.code, existing, tc.e)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tc.norm != nil && !tc.norm(got) {
					t.Errorf("normalised to %+v", got)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("want a ValidationError, got %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
