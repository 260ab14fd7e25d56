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

func TestCheckNewUser(t *testing.T) {
	tests := []struct {
		name string
		n    NewUser
		is   error  // nil = valid
		msg  string // substring of the problems
	}{
		{"fiscal normalised", NewUser{Name: "maria", Role: Fiscal, Password: "senha-da-maria-1",
			Profile: Profile{FullName: "  Maria   dos Santos ", Matricula: " 123 ", Phone: "41999887766"}}, nil, ""},
		{"operador without profile", NewUser{Name: "op", Role: Operador, Password: "0123456789"}, nil, ""},
		{"every problem at once", NewUser{Name: "b i a", Role: "chefe", Password: "curta"}, ErrBadName,
			"usuário \"b i a\" inválido: use de 1 a 64 letras, dígitos e . _ - @, começando por letra ou dígito; papel \"chefe\" inválido: use admin, fiscal ou operador; senha: use pelo menos 10 caracteres"},
		{"bad role", NewUser{Name: "bia", Role: "chefe", Password: "0123456789"}, ErrBadRole, "papel"},
		{"short password", NewUser{Name: "bia", Role: Operador, Password: "curta"}, ErrWeakPassword, "senha"},
		{"fiscal without matrícula", NewUser{Name: "bia", Role: Fiscal, Password: "0123456789", Profile: Profile{FullName: "Bia Lima"}},
			ErrInvalid, "matrícula: obrigatória para fiscal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckNewUser(tc.n)
			if tc.is == nil {
				if err != nil {
					t.Fatalf("CheckNewUser: %v", err)
				}
				if want := NormalizeProfile(tc.n.Profile); got.Profile != want || got.Name != tc.n.Name || got.Password != tc.n.Password {
					t.Fatalf("CheckNewUser = %+v, want the profile normalised to %+v", got, want)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) || !errors.Is(err, tc.is) || !strings.Contains(strings.Join(ve.Problems, "; "), tc.msg) {
				t.Fatalf("CheckNewUser = %v, want %v with %q", err, tc.is, tc.msg)
			}
		})
	}
}

func TestChangeApply(t *testing.T) {
	maria := User{Name: "maria", Role: Fiscal, Profile: Profile{FullName: "Maria dos Santos", Matricula: "123"}}
	str := func(s string) *string { return &s }
	role := func(r Role) *Role { return &r }
	yes := true
	tests := []struct {
		name string
		u    User
		ch   Change
		want User  // when valid
		is   error // nil = valid
	}{
		{"nothing changes", maria, Change{}, maria, nil},
		{"new e-mail, trimmed", maria, Change{Email: str(" m.santos@lapa.pr.gov.br ")},
			User{Name: "maria", Role: Fiscal, Profile: Profile{FullName: "Maria dos Santos", Matricula: "123", Email: "m.santos@lapa.pr.gov.br"}}, nil},
		{"phone formatted", maria, Change{Phone: str("41999887766")},
			User{Name: "maria", Role: Fiscal, Profile: Profile{FullName: "Maria dos Santos", Matricula: "123", Phone: "(41) 99988-7766"}}, nil},
		{"disabled", maria, Change{Disabled: &yes},
			User{Name: "maria", Role: Fiscal, Profile: maria.Profile, Disabled: true}, nil},
		{"the password is the store's", maria, Change{Password: str("x")}, maria, nil},
		{"a fiscal keeps a matrícula", maria, Change{Matricula: str("")}, User{}, ErrInvalid},
		{"an operador made fiscal needs a profile", User{Name: "op", Role: Operador}, Change{Role: role(Fiscal)}, User{}, ErrInvalid},
		{"unknown role", maria, Change{Role: role("chefe")}, User{}, ErrBadRole},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.ch.Apply(tc.u)
			if !errors.Is(err, tc.is) {
				t.Fatalf("Apply = %v, want %v", err, tc.is)
			}
			if err == nil && got != tc.want {
				t.Fatalf("Apply = %+v, want %+v", got, tc.want)
			}
		})
	}
}
