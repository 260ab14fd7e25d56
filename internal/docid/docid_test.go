package docid

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		doc, err string // err: "" = valid, else a substring of the message
	}{
		{"111.444.777-35", ""},
		{"11144477735", ""},
		{"111.444.777-36", "dígito verificador do CPF"},
		{"111.111.111-11", "todos os dígitos iguais"},
		{"12.345.678/0001-95", ""},
		{"12.345.678/0001-96", "dígito verificador do CNPJ"},
		{"12.ABC.345/01DE-35", ""}, // alphanumeric CNPJ (Receita Federal's example)
		{"abc", "11 dígitos (CPF) ou 14"},
		{"", "obrigatório"},
		{"1114447773A", "só tem dígitos"},
	}
	for _, tc := range tests {
		err := Check(tc.doc)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("Check(%q) = %v, want valid", tc.doc, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Check(%q) = %v, want %q", tc.doc, err, tc.err)
		}
	}
	if err := CheckCPF("12.345.678/0001-95"); err == nil {
		t.Error("CheckCPF accepted a CNPJ")
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"111.444.777-35", "12.ABC.345/01DE-35", "", "abc", "ÿÿÿÿÿÿÿÿÿÿÿ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := Check(s)
		if err == nil && len(Normalize(s)) != 11 && len(Normalize(s)) != 14 {
			t.Fatalf("Check(%q) valid with %d characters", s, len(Normalize(s)))
		}
	})
}
