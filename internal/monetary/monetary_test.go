package monetary

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

func TestAmountText(t *testing.T) {
	tests := []struct {
		a    Amount
		want string
	}{
		{FromReais(1234.56), "R$ 1.234,56"},
		{FromReais(4938.24), "R$ 4.938,24"},
		{FromReais(0.5), "R$ 0,50"},
		{FromReais(4.2719), "R$ 4,2719"},
		{FromReais(1234567.8), "R$ 1.234.567,80"},
		{FromReais(100), "R$ 100,00"},
		{FromReais(-3), "-R$ 3,00"},
	}
	for _, tc := range tests {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("%d.String() = %q, want %q", tc.a, got, tc.want)
		}
	}
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in   string
		want Amount
		err  string
	}{
		{"4938,24", FromReais(4938.24), ""},
		{"4.938,24", FromReais(4938.24), ""},
		{"R$ 4.938,24", FromReais(4938.24), ""},
		{"4938.24", FromReais(4938.24), ""},
		{"1.234.567", FromReais(1234567), ""},
		{"4,2719", FromReais(4.2719), ""},
		{"100", FromReais(100), ""},
		{"-5", FromReais(-5), ""}, // parsed; Check refuses it
		{"", 0, "informe o valor"},
		{"R$", 0, "informe o valor"},
		{"4,27195", 0, "quatro casas"},
		{"12a", 0, "só dígitos"},
		{"1.234", FromReais(1234), ""}, // pt-BR: a thousands point
		{"1,2,3", 0, "só dígitos"},
		{"12.34,5", 0, "só dígitos"},
		{"1.2.3,4.5", 0, "só dígitos"},
		{"--1", 0, "só dígitos"},
		{"1e9", 0, "só dígitos"},
	}
	for _, tc := range tests {
		got, err := ParseAmount(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseAmount(%q) = %d, %v; want %d, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"4.938,24", "R$ 1,00", "0.0001", "-1", "9999999999999", ",", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAmount(s)
		if err != nil {
			return
		}
		// What parses prints and parses back to the same amount.
		b, err := ParseAmount(a.String())
		if err != nil || b != a {
			t.Fatalf("%q → %d → %q → %d, %v", s, a, a.String(), b, err)
		}
	})
}

func TestCheck(t *testing.T) {
	lapa, _ := builtin(t).Code("lapa")
	v := FromReais(4938.24)
	stored := []Period{
		{ID: 1, CodeID: "lapa", Unit: "VRM", From: "2025-01-01", To: "2025-12-31", Value: FromReais(4700), Act: "Decreto nº 10/2024"},
		{ID: 2, CodeID: "lapa", Unit: "VRM", From: "2026-01-01", Value: v, Act: "Decreto nº 20/2025"},
	}
	tests := []struct {
		name   string
		c      *codes.Code
		p      Period
		want   string // problem substring; "" = accepted
		closes int64  // id of the period closed
		to     string // its new end
	}{
		{"next year supersedes the open period", lapa, Period{Unit: "VRM", From: "2027-01-01", Value: v, Act: "Decreto nº 30/2026"}, "", 2, "2026-12-31"},
		{"dates as typed in Brazil", lapa, Period{Unit: "VRM", From: "01/07/2027", To: "31/12/2027", Value: v, Act: "Lei nº 9/2027"}, "", 2, "2027-06-30"},
		{"before every stored period", lapa, Period{Unit: "VRM", From: "2024-01-01", To: "2024-12-31", Value: v, Act: "Decreto nº 1/2023"}, "", 0, ""},
		{"overlaps a closed period", lapa, Period{Unit: "VRM", From: "2025-06-01", To: "2025-06-30", Value: v, Act: "x"}, "coincide com a já cadastrada de 01/01/2025 a 31/12/2025", 0, ""},
		{"open period over a later one", lapa, Period{Unit: "VRM", From: "2024-06-01", Value: v, Act: "x"}, "coincide", 0, ""},
		{"same start as the open one", lapa, Period{Unit: "VRM", From: "2026-01-01", Value: v, Act: "x"}, "coincide com a já cadastrada a partir de 01/01/2026", 0, ""},
		{"unknown unit", lapa, Period{Unit: "UFM", From: "2026-01-01", Value: v, Act: "x"}, `a unidade "UFM" não existe em Lei nº 1783/2004 (Lapa/PR): use VRM`, 0, ""},
		{"negative value", lapa, Period{Unit: "VRM", From: "2030-01-01", Value: -v, Act: "x"}, "valor negativo (-R$ 4.938,24)", 0, ""},
		{"zero value", lapa, Period{Unit: "VRM", From: "2030-01-01", Act: "x"}, "valor zero", 0, ""},
		{"no act", lapa, Period{Unit: "VRM", From: "2030-01-01", Value: v, Act: "  "}, "informe o ato legal", 0, ""},
		{"long act", lapa, Period{Unit: "VRM", From: "2030-01-01", Value: v, Act: strings.Repeat("a", 301)}, "no máximo 300", 0, ""},
		{"bad start", lapa, Period{Unit: "VRM", From: "2030-13-01", Value: v, Act: "x"}, "início da vigência \"2030-13-01\" inválido", 0, ""},
		{"no start", lapa, Period{Unit: "VRM", Value: v, Act: "x"}, "início da vigência \"\" inválido", 0, ""},
		{"bad end", lapa, Period{Unit: "VRM", From: "2030-01-01", To: "amanhã", Value: v, Act: "x"}, "fim da vigência \"amanhã\" inválido", 0, ""},
		{"end before start", lapa, Period{Unit: "VRM", From: "2030-02-01", To: "2030-01-31", Value: v, Act: "x"}, "o fim da vigência (31/01/2030) é anterior ao início (01/02/2030)", 0, ""},
		{"no code", nil, Period{CodeID: "atlantida", Unit: "VRM", From: "2030-01-01", Value: v, Act: "x"}, `código municipal "atlantida" desconhecido`, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, closes, err := Check(tc.c, stored, tc.p)
			if tc.want != "" {
				var ve *ValidationError
				if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) || !strings.Contains(strings.Join(ve.Problems, "; "), tc.want) {
					t.Fatalf("Check = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.closes == 0 && closes != nil:
				t.Fatalf("closes %+v", closes)
			case tc.closes != 0 && (closes == nil || closes.ID != tc.closes || closes.To != tc.to):
				t.Fatalf("closes %+v, want id %d to %s", closes, tc.closes, tc.to)
			}
		})
	}
}

func TestValueAt(t *testing.T) {
	ps := []Period{
		{CodeID: "lapa", Unit: "VRM", From: "2025-01-01", To: "2025-12-31", Value: 1},
		{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", Value: 2},
		{CodeID: "entre-rios-de-minas", Unit: "VR", From: "2026-01-01", Value: 3},
	}
	tests := []struct {
		code, unit, day string
		want            Amount
		ok              bool
	}{
		{"lapa", "VRM", "2025-12-31", 1, true},
		{"lapa", "VRM", "2026-01-01", 2, true},
		{"lapa", "VRM", "2090-05-05", 2, true},
		{"lapa", "VRM", "2024-12-31", 0, false},
		{"lapa", "VR", "2026-05-05", 0, false},
		{"entre-rios-de-minas", "VR", "2026-05-05", 3, true},
	}
	for _, tc := range tests {
		p, ok := ValueAt(ps, tc.code, tc.unit, tc.day)
		if ok != tc.ok || p.Value != tc.want {
			t.Errorf("ValueAt(%s %s %s) = %d, %v", tc.code, tc.unit, tc.day, p.Value, ok)
		}
	}
}
