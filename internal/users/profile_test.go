package users

import (
	"context"
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

func TestCreateAndUpdate(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	maria := NewUser{Name: "maria", Role: Fiscal, Password: "senha-da-maria-1",
		Profile: Profile{FullName: "  Maria   dos Santos ", Matricula: "123", Email: "maria@lapa.pr.gov.br", Phone: "41999887766"}}
	u, err := s.Create(ctx, maria, t0)
	if err != nil {
		t.Fatal(err)
	}
	if u.FullName != "Maria dos Santos" || u.Phone != "(41) 99988-7766" {
		t.Fatalf("Create did not normalise: %+v", u)
	}
	if _, err := s.Create(ctx, NewUser{Name: "ana", Role: Admin, Password: "senha-da-ana-123"}, t0); err != nil {
		t.Fatal(err)
	}
	creates := []struct {
		name string
		n    NewUser
		is   error
		msg  string
	}{
		{"duplicate", maria, ErrExists, ""},
		{"fiscal without matrícula", NewUser{Name: "bia", Role: Fiscal, Password: "senha-da-bia-123", Profile: Profile{FullName: "Bia Lima"}}, ErrInvalid, "matrícula"},
		{"bad everything", NewUser{Name: "b i a", Role: "chefe", Password: "curta"}, ErrBadName, "papel \"chefe\" inválido"},
		{"short password", NewUser{Name: "bia", Role: Operador, Password: "curta"}, ErrWeakPassword, "senha: use pelo menos 10"},
	}
	for _, tc := range creates {
		t.Run("create "+tc.name, func(t *testing.T) {
			_, err := s.Create(ctx, tc.n, t0)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Create = %v, want %v with %q", err, tc.is, tc.msg)
			}
		})
	}
	ss, err := s.CreateSession(ctx, u, t0, 3600e9)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	role := func(r Role) *Role { return &r }
	yes, no := true, false
	updates := []struct {
		name string
		user string
		ch   Change
		is   error
		msg  string
		then func(t *testing.T, u User)
	}{
		{"new e-mail", "maria", Change{Email: str("m.santos@lapa.pr.gov.br")}, nil, "", func(t *testing.T, u User) {
			if u.Email != "m.santos@lapa.pr.gov.br" || u.Matricula != "123" {
				t.Errorf("%+v", u)
			}
		}},
		{"clear matrícula of a fiscal", "maria", Change{Matricula: str("")}, ErrInvalid, "matrícula: obrigatória", nil},
		{"admin becomes fiscal without profile", "ana", Change{Role: role(Fiscal)}, ErrInvalid, "nome completo", nil},
		{"unknown user", "zeca", Change{Email: str("z@x.com.br")}, ErrNotFound, "", nil},
		{"bad role", "maria", Change{Role: role("chefe")}, ErrBadRole, "", nil},
		{"last admin disabled", "ana", Change{Disabled: &yes}, ErrLastAdmin, "", nil},
		{"last admin demoted", "ana", Change{Role: role(Operador)}, ErrLastAdmin, "", nil},
		{"short password", "maria", Change{Password: str("curta")}, ErrWeakPassword, "", nil},
		{"fiscal made admin", "maria", Change{Role: role(Admin)}, nil, "", nil},
		{"now the first admin may go", "ana", Change{Disabled: &yes}, nil, "", func(t *testing.T, u User) {
			if !u.Disabled {
				t.Errorf("%+v", u)
			}
		}},
		{"re-enabled", "ana", Change{Disabled: &no}, nil, "", nil},
		{"back to fiscal", "maria", Change{Role: role(Fiscal)}, nil, "", nil},
	}
	for _, tc := range updates {
		t.Run("update "+tc.name, func(t *testing.T) {
			u, err := s.Update(ctx, tc.user, tc.ch)
			if !errors.Is(err, tc.is) || (err != nil && !strings.Contains(err.Error(), tc.msg)) {
				t.Fatalf("Update = %v, want %v with %q", err, tc.is, tc.msg)
			}
			if err == nil && tc.then != nil {
				tc.then(t, u)
			}
		})
	}
	// A refused update changed nothing; the session survived the edits.
	got, err := s.Get(ctx, "maria")
	if err != nil || got.Matricula != "123" || got.Role != Fiscal {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := s.Session(ctx, ss.Token, t0); err != nil {
		t.Fatalf("session after profile edits: %v", err)
	}
	// A new password or disabling ends the sessions.
	if _, err := s.Update(ctx, "maria", Change{Password: str("outra-senha-boa")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, ss.Token, t0); !errors.Is(err, ErrNoSession) {
		t.Fatalf("session after new password: %v", err)
	}
	if _, err := s.Authenticate(ctx, "maria", "outra-senha-boa"); err != nil {
		t.Fatal(err)
	}
	ss, _ = s.CreateSession(ctx, got, t0, 3600e9)
	if _, err := s.Update(ctx, "maria", Change{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, ss.Token, t0); !errors.Is(err, ErrNoSession) {
		t.Fatalf("session after disabling: %v", err)
	}
}
