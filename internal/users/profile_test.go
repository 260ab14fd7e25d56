package users

import (
	"errors"
	"strings"
	"testing"
)

func TestFormatPhone(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"41999887766", "(41) 99988-7766", true},
		{"(41) 99988-7766", "(41) 99988-7766", true},
		{"+55 41 99988 7766", "(41) 99988-7766", true},
		{"41 3622-1234", "(41) 3622-1234", true},
		{"22.2762.1000", "(22) 2762-1000", true},
		{"+1 41 99988 7766", "", false},      // not Brazil
		{"4199988776", "", false},            // 10 digits, 8-digit part starts with 9
		{"41 89988-7766", "", false},         // mobile must start with 9
		{"41 6622-1234", "", false},          // landline starts 2–5
		{"01 3622-1234", "", false},          // DDD has no zero
		{"40 3622-1234", "", false},          // DDD second digit not zero
		{"3622-1234", "", false},             // no DDD
		{"419998877665", "", false},          // too long
		{"41 99988-7766 ramal 2", "", false}, // letters
		{"", "", false},
	}
	for _, tc := range tests {
		got, ok := formatPhone(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("formatPhone(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCheckProfile(t *testing.T) {
	ok := Profile{FullName: "Maria Aparecida dos Santos", Matricula: "12.345-6", Email: "maria.santos@lapa.pr.gov.br", Phone: "(41) 99988-7766"}
	tests := []struct {
		name string
		role Role
		p    Profile
		want string // substring of the problems; "" = valid
	}{
		{"full fiscal", Fiscal, ok, ""},
		{"operador without profile", Operador, Profile{}, ""},
		{"admin without profile", Admin, Profile{}, ""},
		{"fiscal without name", Fiscal, Profile{Matricula: "1"}, "nome completo: obrigatório para fiscal"},
		{"fiscal without matrícula", Fiscal, Profile{FullName: "Ana Souza"}, "matrícula: obrigatória para fiscal"},
		{"single word name", Fiscal, Profile{FullName: "fiscal", Matricula: "1"}, "use nome e sobrenome"},
		{"digits in name", Operador, Profile{FullName: "Ana 2 Souza"}, "use nome e sobrenome"},
		{"apostrophe and accents", Fiscal, Profile{FullName: "Joana D'Ávila Müller", Matricula: "A/77"}, ""},
		{"long name", Operador, Profile{FullName: "Ana " + strings.Repeat("a", 120)}, "no máximo 120"},
		{"matrícula with space", Fiscal, Profile{FullName: "Ana Souza", Matricula: "12 34"}, "matrícula \"12 34\""},
		{"long matrícula", Fiscal, Profile{FullName: "Ana Souza", Matricula: strings.Repeat("1", 33)}, "no máximo 32"},
		{"e-mail without domain dot", Operador, Profile{Email: "ana@lapa"}, "e-mail \"ana@lapa\" inválido"},
		{"e-mail with display name", Operador, Profile{Email: "Ana <ana@lapa.pr.gov.br>"}, "e-mail"},
		{"e-mail without @", Operador, Profile{Email: "ana.lapa.pr.gov.br"}, "e-mail"},
		{"e-mail double dot domain", Operador, Profile{Email: "ana@lapa..br"}, "e-mail"},
		{"bad phone", Operador, Profile{Phone: "1234"}, "telefone \"1234\" inválido"},
		{"every problem at once", Fiscal, Profile{Email: "x", Phone: "y"}, "autos); matrícula: obrigatória para fiscal (identifica o agente no ato, com o nome); e-mail \"x\" inválido"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckProfile(tc.role, NormalizeProfile(tc.p))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckProfile: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) || !strings.Contains(strings.Join(ve.Problems, "; "), tc.want) {
				t.Fatalf("CheckProfile = %v, want a problem with %q", err, tc.want)
			}
		})
	}
}
