package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
)

// cheapPasswords makes the users commands hash with the cheapest argon2id
// parameters for the rest of the test.
func cheapPasswords(t *testing.T) {
	old := usersOptions
	usersOptions = users.Options{Params: users.Params{Time: 1, MemKiB: 64, Threads: 1}}
	t.Cleanup(func() { usersOptions = old })
}

func TestUsersCLI(t *testing.T) {
	cheapPasswords(t)
	dir := t.TempDir()
	steps := []struct {
		name     string
		args     []string
		stdin    string
		code     int
		out, err string // substrings
	}{
		{"empty list", []string{"list", "--data-dir", dir}, "", 0, "nenhum usuário cadastrado", ""},
		{"first admin", []string{"add", "--data-dir", dir, "--role", "admin", "ana"}, "senha-da-ana-123\n", 0, `usuário "ana" criado com o papel admin`, ""},
		{"flags after name", []string{"add", "joao", "--role", "fiscal", "--data-dir", dir, "--full-name", "João  Pereira", "--matricula", "4521-7",
			"--email", "joao@lapa.pr.gov.br", "--phone", "41 99988 7766"}, "senha-do-joao-1\n", 0, `"joao" criado com o papel fiscal`, ""},
		{"fiscal without profile", []string{"add", "--data-dir", dir, "--role", "fiscal", "rui"}, "senha-do-rui-123\n", 2, "",
			"nome completo: obrigatório para fiscal"},
		{"fiscal without matrícula", []string{"add", "--data-dir", dir, "--role", "fiscal", "--full-name", "Rui Costa", "rui"}, "senha-do-rui-123\n", 2, "",
			"matrícula: obrigatória para fiscal"},
		{"bad e-mail", []string{"add", "--data-dir", dir, "--role", "operador", "--email", "rui@", "rui"}, "senha-do-rui-123\n", 2, "", `e-mail "rui@" inválido`},
		{"bad phone", []string{"add", "--data-dir", dir, "--role", "operador", "--phone", "123", "rui"}, "senha-do-rui-123\n", 2, "", `telefone "123" inválido`},
		{"duplicate", []string{"add", "--data-dir", dir, "--role", "operador", "ana"}, "senha-da-ana-123\n", 1, "", `"ana" já existe`},
		{"disable on add", []string{"add", "--data-dir", dir, "--role", "operador", "--disable", "rui"}, "senha-do-rui-123\n", 2, "", "--disable não se aplica"},
		{"bad role", []string{"add", "--data-dir", dir, "--role", "chefe", "bia"}, "senha-da-bia-123\n", 2, "", `papel inválido "chefe"`},
		{"missing role", []string{"add", "--data-dir", dir, "bia"}, "senha-da-bia-123\n", 2, "", "papel inválido"},
		{"short password", []string{"add", "--data-dir", dir, "--role", "operador", "bia"}, "curta\n", 1, "", "senha curta demais"},
		{"empty password", []string{"add", "--data-dir", dir, "--role", "operador", "bia"}, "", 1, "", "senha vazia"},
		{"bad name", []string{"add", "--data-dir", dir, "--role", "operador", "bia souza"}, "senha-da-bia-123\n", 2, "", "nome inválido"},
		{"no name", []string{"add", "--data-dir", dir, "--role", "operador"}, "x\n", 2, "", "exatamente um nome"},
		{"no data dir", []string{"add", "--role", "operador", "bia"}, "senha-da-bia-123\n", 2, "", "--data-dir"},
		{"passwd", []string{"passwd", "--data-dir", dir, "joao"}, "nova-senha-do-joao\r\n", 0, "senha de \"joao\" alterada", ""},
		{"passwd unknown", []string{"passwd", "--data-dir", dir, "zeca"}, "nova-senha-do-zeca\n", 1, "", `"zeca" não existe`},
		{"unknown sub", []string{"remove", "--data-dir", dir}, "", 2, "", "subcomando desconhecido"},
		{"edit e-mail", []string{"edit", "--data-dir", dir, "joao", "--email", "joao.pereira@lapa.pr.gov.br"}, "", 0, `"joao" alterado: papel fiscal`, ""},
		{"edit clears matrícula", []string{"edit", "--data-dir", dir, "joao", "--matricula", ""}, "", 1, "", "matrícula: obrigatória para fiscal"},
		{"edit nothing", []string{"edit", "--data-dir", dir, "joao"}, "", 2, "", "nada a alterar"},
		{"edit unknown", []string{"edit", "--data-dir", dir, "zeca", "--phone", "41 3622-1234"}, "", 1, "", `"zeca" não existe`},
		{"edit bad role", []string{"edit", "--data-dir", dir, "joao", "--role", "chefe"}, "", 2, "", `papel inválido "chefe"`},
		{"edit both", []string{"edit", "--data-dir", dir, "joao", "--disable", "--enable"}, "", 2, "", "não os dois"},
		{"last admin", []string{"edit", "--data-dir", dir, "ana", "--disable"}, "", 1, "", "último administrador ativo"},
		{"operador becomes fiscal without profile", []string{"edit", "--data-dir", dir, "ana", "--role", "fiscal"}, "", 1, "", "nome completo"},
		{"disable", []string{"edit", "--data-dir", dir, "joao", "--disable"}, "", 0, "desativado (sessões encerradas)", ""},
		{"enable", []string{"edit", "--data-dir", dir, "joao", "--enable"}, "", 0, `"joao" alterado`, ""},
		{"passwd with profile flag", []string{"passwd", "--data-dir", dir, "joao", "--email", "a@b.com.br"}, "x\n", 2, "", "--email não se aplica"},
		{"list", []string{"list", "--data-dir", dir}, "", 0, "ana                      admin", ""},
		{"list shows the profile", []string{"list", "--data-dir", dir}, "", 0, "João Pereira · matrícula 4521-7 · joao.pereira@lapa.pr.gov.br · (41) 99988-7766", ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"users"}, st.args...), stdio{in: strings.NewReader(st.stdin), out: &out, err: &errb})
			if code != st.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, st.code, errb.String())
			}
			if !strings.Contains(out.String(), st.out) || !strings.Contains(errb.String(), st.err) {
				t.Fatalf("stdout %q (want %q), stderr %q (want %q)", out.String(), st.out, errb.String(), st.err)
			}
		})
	}
	s, err := usersdb.OpenDir(context.Background(), dir, usersOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct{ name, pw, role string }{{"ana", "senha-da-ana-123", "admin"}, {"joao", "nova-senha-do-joao", "fiscal"}} {
		u, err := s.Authenticate(context.Background(), c.name, c.pw)
		if err != nil || string(u.Role) != c.role {
			t.Errorf("Authenticate(%s) = %+v, %v", c.name, u, err)
		}
	}
}
