// Package docid checks Brazilian identity numbers by their check digits:
// CPF (11 digits) and CNPJ (14 characters, numeric or the alphanumeric form
// in use from July 2026). It is pure and has no dependencies; the register,
// the constatações and the witnesses of a notice all check through it.
//
// Overview of its parts: pure CPF and CNPJ (numeric and alphanumeric) check
// digits, pt-BR errors; the one home used by the register, the constatações
// and the witnesses.
package docid

import (
	"errors"
	"strings"
)

// Normalize drops the punctuation (. - / and spaces) and upper-cases letters.
func Normalize(doc string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '.', '-', '/', ' ':
			return -1
		}
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, doc)
}

// Check validates a CPF or CNPJ, with or without punctuation, by its
// check digits. The error is pt-BR and says what is wrong.
func Check(doc string) error {
	s := Normalize(doc)
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

// CheckCPF validates a CPF only.
func CheckCPF(doc string) error {
	s := Normalize(doc)
	if len(s) != 11 {
		return errors.New("o CPF tem 11 dígitos")
	}
	return checkCPF(s)
}

// IsCPF reports whether doc has the length of a CPF (11 characters after
// punctuation is dropped).
func IsCPF(doc string) bool { return len(Normalize(doc)) == 11 }

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
