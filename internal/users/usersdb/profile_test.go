package usersdb

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sossego/sossego/internal/users"
)

func TestCreateAndUpdate(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	maria := users.NewUser{Name: "maria", Role: users.Fiscal, Password: "senha-da-maria-1",
		Profile: users.Profile{FullName: "  Maria   dos Santos ", Matricula: "123", Email: "maria@lapa.pr.gov.br", Phone: "41999887766"}}
	u, err := s.Create(ctx, maria, t0)
	if err != nil {
		t.Fatal(err)
	}
	if u.FullName != "Maria dos Santos" || u.Phone != "(41) 99988-7766" {
		t.Fatalf("Create did not normalise: %+v", u)
	}
	if _, err := s.Create(ctx, users.NewUser{Name: "ana", Role: users.Admin, Password: "senha-da-ana-123"}, t0); err != nil {
		t.Fatal(err)
	}
	creates := []struct {
		name string
		n    users.NewUser
		is   error
		msg  string
	}{
		{"duplicate", maria, users.ErrExists, ""},
		{"fiscal without matrícula", users.NewUser{Name: "bia", Role: users.Fiscal, Password: "senha-da-bia-123", Profile: users.Profile{FullName: "Bia Lima"}}, users.ErrInvalid, "matrícula"},
		{"bad everything", users.NewUser{Name: "b i a", Role: "chefe", Password: "curta"}, users.ErrBadName, "papel \"chefe\" inválido"},
		{"short password", users.NewUser{Name: "bia", Role: users.Operador, Password: "curta"}, users.ErrWeakPassword, "senha: use pelo menos 10"},
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
	role := func(r users.Role) *users.Role { return &r }
	yes, no := true, false
	updates := []struct {
		name string
		user string
		ch   users.Change
		is   error
		msg  string
		then func(t *testing.T, u users.User)
	}{
		{"new e-mail", "maria", users.Change{Email: str("m.santos@lapa.pr.gov.br")}, nil, "", func(t *testing.T, u users.User) {
			if u.Email != "m.santos@lapa.pr.gov.br" || u.Matricula != "123" {
				t.Errorf("%+v", u)
			}
		}},
		{"clear matrícula of a fiscal", "maria", users.Change{Matricula: str("")}, users.ErrInvalid, "matrícula: obrigatória", nil},
		{"admin becomes fiscal without profile", "ana", users.Change{Role: role(users.Fiscal)}, users.ErrInvalid, "nome completo", nil},
		{"unknown user", "zeca", users.Change{Email: str("z@x.com.br")}, users.ErrNotFound, "", nil},
		{"bad role", "maria", users.Change{Role: role("chefe")}, users.ErrBadRole, "", nil},
		{"last admin disabled", "ana", users.Change{Disabled: &yes}, users.ErrLastAdmin, "", nil},
		{"last admin demoted", "ana", users.Change{Role: role(users.Operador)}, users.ErrLastAdmin, "", nil},
		{"short password", "maria", users.Change{Password: str("curta")}, users.ErrWeakPassword, "", nil},
		{"fiscal made admin", "maria", users.Change{Role: role(users.Admin)}, nil, "", nil},
		{"now the first admin may go", "ana", users.Change{Disabled: &yes}, nil, "", func(t *testing.T, u users.User) {
			if !u.Disabled {
				t.Errorf("%+v", u)
			}
		}},
		{"re-enabled", "ana", users.Change{Disabled: &no}, nil, "", nil},
		{"back to fiscal", "maria", users.Change{Role: role(users.Fiscal)}, nil, "", nil},
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
	if err != nil || got.Matricula != "123" || got.Role != users.Fiscal {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := s.Session(ctx, ss.Token, t0); err != nil {
		t.Fatalf("session after profile edits: %v", err)
	}
	// A new password or disabling ends the sessions.
	if _, err := s.Update(ctx, "maria", users.Change{Password: str("outra-senha-boa")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, ss.Token, t0); !errors.Is(err, users.ErrNoSession) {
		t.Fatalf("session after new password: %v", err)
	}
	if _, err := s.Authenticate(ctx, "maria", "outra-senha-boa"); err != nil {
		t.Fatal(err)
	}
	ss, _ = s.CreateSession(ctx, got, t0, 3600e9)
	if _, err := s.Update(ctx, "maria", users.Change{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, ss.Token, t0); !errors.Is(err, users.ErrNoSession) {
		t.Fatalf("session after disabling: %v", err)
	}
}
