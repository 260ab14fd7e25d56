package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/sossego/sossego/internal/tz"
	"github.com/sossego/sossego/internal/users"
)

func init() {
	register("users", "cria e lista usuários do painel (admin, fiscal, operador)", runUsers)
}

// usersOptions is the store configuration; tests lower the argon2id cost.
var usersOptions = users.Options{}

const usersUsage = `uso: sossego users <add|passwd|list> --data-dir DIR [opções]
  add --role admin|fiscal|operador NOME   cria um usuário (a senha é lida da entrada padrão
                                          ou pedida no terminal, duas vezes)
  passwd NOME                             troca a senha e encerra as sessões do usuário
  list                                    lista os usuários
opções:
  --data-dir DIR   diretório de dados do serviço central (arquivo ` + users.FileName + `)`

func runUsers(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(io.err, usersUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	fs := newFlagsUsage("users "+sub, usersUsage, io)
	dir := fs.String("data-dir", "", "diretório de dados do serviço central")
	role := fs.String("role", "", "papel: admin, fiscal ou operador")
	// Flags may come before or after the name.
	var pos []string
	rest := args[1:]
	for {
		if code, ok := fs.parse(rest); !ok {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if *dir == "" {
		fmt.Fprintln(io.err, "sossego users: informe --data-dir (o diretório de dados do serviço central)")
		return 2
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fmt.Fprintf(io.err, "sossego users: %s\n", describe(err))
		return 1
	}
	switch sub {
	case "add", "passwd":
		return usersSet(ctx, io, sub, *dir, *role, pos)
	case "list":
		return usersList(ctx, io, *dir)
	default:
		fmt.Fprintf(io.err, "sossego users: subcomando desconhecido %q\n", sub)
		fmt.Fprintln(io.err, usersUsage)
		return 2
	}
}

// usersSet creates a user (add) or changes a password (passwd).
func usersSet(ctx context.Context, io stdio, sub, dir, role string, pos []string) int {
	if len(pos) != 1 {
		fmt.Fprintf(io.err, "sossego users %s: informe exatamente um nome de usuário\n", sub)
		return 2
	}
	var r users.Role
	if sub == "add" {
		var err error
		if r, err = users.ParseRole(role); err != nil {
			fmt.Fprintf(io.err, "sossego users add: papel inválido %q: use --role admin, fiscal ou operador\n", role)
			return 2
		}
	}
	if err := users.CheckName(pos[0]); err != nil {
		fmt.Fprintf(io.err, "sossego users %s: nome inválido %q: use de 1 a 64 letras, dígitos e . _ - @\n", sub, pos[0])
		return 2
	}
	pw, err := readPassword(io)
	if err != nil {
		fmt.Fprintf(io.err, "sossego users %s: %s\n", sub, describe(err))
		return 1
	}
	s, err := users.OpenDir(ctx, dir, usersOptions)
	if err != nil {
		fmt.Fprintf(io.err, "sossego users: não foi possível abrir o cadastro de usuários: %s\n", describe(err))
		return 1
	}
	defer s.Close()
	if sub == "add" {
		_, err = s.Add(ctx, pos[0], r, pw, time.Now())
	} else {
		err = s.SetPassword(ctx, pos[0], pw)
	}
	switch {
	case errors.Is(err, users.ErrExists):
		fmt.Fprintf(io.err, "sossego users add: o usuário %q já existe (use \"sossego users passwd\" para trocar a senha)\n", pos[0])
		return 1
	case errors.Is(err, users.ErrNotFound):
		fmt.Fprintf(io.err, "sossego users passwd: o usuário %q não existe\n", pos[0])
		return 1
	case errors.Is(err, users.ErrWeakPassword):
		fmt.Fprintf(io.err, "sossego users %s: senha curta demais: use pelo menos %d caracteres\n", sub, users.MinPasswordLen)
		return 1
	case err != nil:
		fmt.Fprintf(io.err, "sossego users %s: %s\n", sub, describe(err))
		return 1
	}
	if sub == "add" {
		fmt.Fprintf(io.out, "usuário %q criado com o papel %s\n", pos[0], r)
	} else {
		fmt.Fprintf(io.out, "senha de %q alterada; as sessões abertas foram encerradas\n", pos[0])
	}
	return 0
}

// usersList prints the users, one a line.
func usersList(ctx context.Context, io stdio, dir string) int {
	s, err := users.OpenDir(ctx, dir, usersOptions)
	if err != nil {
		fmt.Fprintf(io.err, "sossego users: não foi possível abrir o cadastro de usuários: %s\n", describe(err))
		return 1
	}
	defer s.Close()
	list, err := s.List(ctx)
	if err != nil {
		fmt.Fprintf(io.err, "sossego users list: %s\n", describe(err))
		return 1
	}
	if len(list) == 0 {
		fmt.Fprintln(io.out, "nenhum usuário cadastrado; crie o primeiro com: sossego users add --data-dir DIR --role admin NOME")
		return 0
	}
	for _, u := range list {
		st := ""
		if u.Disabled {
			st = "  (desativado)"
		}
		fmt.Fprintf(io.out, "%-24s %-9s criado em %s%s\n", u.Name, u.Role, u.Created.In(saoPaulo()).Format("02/01/2006 15:04"), st)
	}
	return 0
}

func saoPaulo() *time.Location { return tz.Brasilia() }

// readPassword prompts twice without echo on a terminal, otherwise reads the
// first line of standard input.
func readPassword(std stdio) (string, error) {
	if f, ok := std.in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(std.err, "Senha: ")
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(std.err)
		if err != nil {
			return "", fmt.Errorf("não foi possível ler a senha: %w", err)
		}
		fmt.Fprint(std.err, "Repita a senha: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(std.err)
		if err != nil {
			return "", fmt.Errorf("não foi possível ler a senha: %w", err)
		}
		if string(a) != string(b) {
			return "", errors.New("as senhas digitadas não conferem")
		}
		return string(a), nil
	}
	line, err := bufio.NewReader(std.in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("não foi possível ler a senha da entrada padrão: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("senha vazia: envie a senha na entrada padrão (uma linha) ou rode num terminal")
	}
	return line, nil
}
