package registry

import (
	"errors"
	"strings"
)

// CheckDocument validates a Brazilian CPF (11 digits) or CNPJ (14
// characters, numeric or the alphanumeric form in use from July 2026),
// with or without punctuation, by its check digits.
func CheckDocument(doc string) error {
	s := strings.Map(func(r rune) rune {
		switch r {
		case '.', '-', '/', ' ':
			return -1
		}
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, doc)
	switch len(s) {
	case 11:
		return checkCPF(s)
	case 14:
		return checkCNPJ(s)
	case 0:
		return errors.New("CPF ou CNPJ obrigatório")
	}
	return errors.New("deve ter 11 dígitos (CPF) ou 14 caracteres (CNPJ)")
}

func allSame(s string) bool { return strings.Count(s, s[:1]) == len(s) }

func checkCPF(s string) error {
	d := make([]int, 11)
	for i, c := range s {
		if c < '0' || c > '9' {
			return errors.New("CPF só tem dígitos")
		}
		d[i] = int(c - '0')
	}
	if allSame(s) {
		return errors.New("CPF com todos os dígitos iguais não é válido")
	}
	for k := 9; k <= 10; k++ {
		sum := 0
		for i := 0; i < k; i++ {
			sum += d[i] * (k + 1 - i)
		}
		dv := sum * 10 % 11
		if dv == 10 {
			dv = 0
		}
		if dv != d[k] {
			return errors.New("dígito verificador do CPF não confere")
		}
	}
	return nil
}

func checkCNPJ(s string) error {
	v := make([]int, 14)
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			v[i] = int(c - '0')
		case c >= 'A' && c <= 'Z' && i < 12:
			v[i] = int(c) - '0' // alphanumeric CNPJ: ASCII value minus 48
		default:
			return errors.New("CNPJ com caractere inválido (os 2 últimos são dígitos)")
		}
	}
	if allSame(s) {
		return errors.New("CNPJ com todos os caracteres iguais não é válido")
	}
	w1 := []int{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	w2 := []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	for k, w := range [][]int{w1, w2} {
		sum := 0
		for i, wi := range w {
			sum += v[i] * wi
		}
		dv := 11 - sum%11
		if dv >= 10 {
			dv = 0
		}
		if dv != v[12+k] {
			return errors.New("dígito verificador do CNPJ não confere")
		}
	}
	return nil
}
