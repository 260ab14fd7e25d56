package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/sossego/sossego/internal/tz"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
)

func init() {
	register("users", "cria, altera e lista usuários do painel (admin, fiscal, operador) e seus perfis", runUsers)
}

// usersOptions is the store configuration; tests lower the argon2id cost.
var usersOptions = users.Options{}

const usersUsage = `uso: sossego users <add|edit|passwd|list> --data-dir DIR [opções]
  add --role admin|fiscal|operador [perfil] NOME
                        cria um usuário (a senha é lida da entrada padrão ou pedida no
                        terminal, duas vezes); um fiscal precisa de --full-name e --matricula
  edit NOME [--role PAPEL] [perfil] [--disable | --enable]
                        altera o papel, o perfil, ou desativa/reativa o usuário
  passwd NOME           troca a senha e encerra as sessões do usuário
  list                  lista os usuários com nome completo, matrícula e contatos
perfil (impresso nas notificações, autos e na trilha de auditoria):
  --full-name "NOME COMPLETO"   nome e sobrenome do agente
  --matricula MAT               matrícula funcional (ex.: 12.345-6)
  --email E-MAIL                e-mail (ex.: maria.santos@lapa.pr.gov.br)
  --phone TELEFONE              telefone com DDD (ex.: "(41) 99876-5432")
opções:
  --data-dir DIR   diretório de dados do serviço central (arquivo ` + usersdb.FileName + `)`

// userFlags are the options of "sossego users".
type userFlags struct {
	dir, role                         string
	fullName, matricula, email, phone string
	disable, enable                   bool
	set                               map[string]bool // flags given on the command line
}

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
	var f userFlags
	fs.StringVar(&f.dir, "data-dir", "", "diretório de dados do serviço central")
	fs.StringVar(&f.role, "role", "", "papel: admin, fiscal ou operador")
	fs.StringVar(&f.fullName, "full-name", "", "nome completo")
	fs.StringVar(&f.matricula, "matricula", "", "matrícula funcional")
	fs.StringVar(&f.email, "email", "", "e-mail")
	fs.StringVar(&f.phone, "phone", "", "telefone com DDD")
	fs.BoolVar(&f.disable, "disable", false, "desativa o usuário (encerra as sessões)")
	fs.BoolVar(&f.enable, "enable", false, "reativa o usuário")
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
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.dir == "" {
		fmt.Fprintln(io.err, "sossego users: informe --data-dir (o diretório de dados do serviço central)")
		return 2
	}
	switch sub {
	case "add", "edit", "passwd", "list":
	default:
		fmt.Fprintf(io.err, "sossego users: subcomando desconhecido %q\n", sub)
		fmt.Fprintln(io.err, usersUsage)
		return 2
	}
	for _, name := range []string{"full-name", "matricula", "email", "phone", "disable", "enable"} {
		allowed := sub == "edit" || (sub == "add" && name != "disable" && name != "enable")
		if f.set[name] && !allowed {
			fmt.Fprintf(io.err, "sossego users %s: a opção --%s não se aplica aqui (use \"sossego users edit\")\n", sub, name)
			return 2
		}
	}
	if f.set["role"] && sub != "add" && sub != "edit" {
		fmt.Fprintf(io.err, "sossego users %s: a opção --role não se aplica aqui (use \"sossego users edit --role\")\n", sub)
		return 2
	}
	if code, ok := dataFolder("sossego users "+sub, f.dir, sub == "add", io); !ok {
		return code
	}
	switch sub {
	case "add":
		return usersAdd(ctx, io, f, pos)
	case "edit":
		return usersEdit(ctx, io, f, pos)
	case "passwd":
		return usersPasswd(ctx, io, f.dir, pos)
	default:
		return usersList(ctx, io, f.dir)
	}
}

// profileOf is the profile the flags give.
func (f userFlags) profile() users.Profile {
	return users.NormalizeProfile(users.Profile{FullName: f.fullName, Matricula: f.matricula, Email: f.email, Phone: f.phone})
}

// printProblems prints a validation error's problems, one a line.
func printProblems(io stdio, sub string, err error) bool {
	var ve *users.ValidationError
	if !errors.As(err, &ve) {
		return false
	}
	fmt.Fprintf(io.err, "sossego users %s: corrija:\n", sub)
	for _, p := range ve.Problems {
		fmt.Fprintf(io.err, "  - %s\n", p)
	}
	return true
}

// usersAdd creates a user with their profile.
func usersAdd(ctx context.Context, io stdio, f userFlags, pos []string) int {
	if len(pos) != 1 {
		fmt.Fprintln(io.err, "sossego users add: informe exatamente um nome de usuário")
		return 2
	}
	r, err := users.ParseRole(f.role)
	if err != nil {
		fmt.Fprintf(io.err, "sossego users add: papel inválido %q: use --role admin, fiscal ou operador\n", f.role)
		return 2
	}
	if err := users.CheckName(pos[0]); err != nil {
		fmt.Fprintf(io.err, "sossego users add: nome inválido %q: use de 1 a 64 letras, dígitos e . _ - @\n", pos[0])
		return 2
	}
	p := f.profile()
	if err := users.CheckProfile(r, p); err != nil {
		printProblems(io, "add", err)
		return 2
	}
	pw, err := readPassword(io)
	if err != nil {
		fmt.Fprintf(io.err, "sossego users add: %s\n", describe(err))
		return 1
	}
	s, err := usersdb.OpenDir(ctx, f.dir, usersOptions)
	if err != nil {
		fmt.Fprintf(io.err, "sossego users: não foi possível abrir o cadastro de usuários: %s\n", describe(err))
		return 1
	}
	defer s.Close()
	_, err = s.Create(ctx, users.NewUser{Name: pos[0], Role: r, Password: pw, Profile: p}, time.Now())
	switch {
	case errors.Is(err, users.ErrExists):
		fmt.Fprintf(io.err, "sossego users add: o usuário %q já existe (use \"sossego users edit\" ou \"sossego users passwd\")\n", pos[0])
		return 1
	case errors.Is(err, users.ErrWeakPassword):
		fmt.Fprintf(io.err, "sossego users add: senha curta demais: use pelo menos %d caracteres\n", users.MinPasswordLen)
		return 1
	case printProblems(io, "add", err):
		return 1
	case err != nil:
		fmt.Fprintf(io.err, "sossego users add: %s\n", describe(err))
		return 1
	}
	fmt.Fprintf(io.out, "usuário %q criado com o papel %s\n", pos[0], r)
	return 0
}

// usersEdit changes a user's role, profile or state.
func usersEdit(ctx context.Context, io stdio, f userFlags, pos []string) int {
	if len(pos) != 1 {
		fmt.Fprintln(io.err, "sossego users edit: informe exatamente um nome de usuário")
		return 2
	}
	if f.disable && f.enable {
		fmt.Fprintln(io.err, "sossego users edit: use --disable ou --enable, não os dois")
		return 2
	}
	var ch users.Change
	if f.set["role"] {
		r, err := users.ParseRole(f.role)
		if err != nil {
			fmt.Fprintf(io.err, "sossego users edit: papel inválido %q: use --role admin, fiscal ou operador\n", f.role)
			return 2
		}
		ch.Role = &r
	}
	for name, dst := range map[string]**string{"full-name": &ch.FullName, "matricula": &ch.Matricula, "email": &ch.Email, "phone": &ch.Phone} {
		if f.set[name] {
			v := map[string]string{"full-name": f.fullName, "matricula": f.matricula, "email": f.email, "phone": f.phone}[name]
			*dst = &v
		}
	}
	if f.disable || f.enable {
		d := f.disable
		ch.Disabled = &d
	}
	if ch == (users.Change{}) {
		fmt.Fprintln(io.err, "sossego users edit: nada a alterar: use --role, --full-name, --matricula, --email, --phone, --disable ou --enable")
		return 2
	}
	s, err := usersdb.OpenDir(ctx, f.dir, usersOptions)
	if err != nil {
		fmt.Fprintf(io.err, "sossego users: não foi possível abrir o cadastro de usuários: %s\n", describe(err))
		return 1
	}
	defer s.Close()
	u, err := s.Update(ctx, pos[0], ch)
	switch {
	case errors.Is(err, users.ErrNotFound):
		fmt.Fprintf(io.err, "sossego users edit: o usuário %q não existe\n", pos[0])
		return 1
	case errors.Is(err, users.ErrLastAdmin):
		fmt.Fprintf(io.err, "sossego users edit: %q é o último administrador ativo: crie ou reative outro admin antes\n", pos[0])
		return 1
	case printProblems(io, "edit", err):
		return 1
	case err != nil:
		fmt.Fprintf(io.err, "sossego users edit: %s\n", describe(err))
		return 1
	}
	st := ""
	if u.Disabled {
		st = "; desativado (sessões encerradas)"
	}
	fmt.Fprintf(io.out, "usuário %q alterado: papel %s%s\n", u.Name, u.Role, st)
	return 0
}

// usersPasswd changes a password.
func usersPasswd(ctx context.Context, io stdio, dir string, pos []string) int {
	if len(pos) != 1 {
		fmt.Fprintln(io.err, "sossego users passwd: informe exatamente um nome de usuário")
		return 2
	}
	if err := users.CheckName(pos[0]); err != nil {
		fmt.Fprintf(io.err, "sossego users passwd: nome inválido %q: use de 1 a 64 letras, dígitos e . _ - @\n", pos[0])
		return 2
	}
	pw, err := readPassword(io)
	if err != nil {
		fmt.Fprintf(io.err, "sossego users passwd: %s\n", describe(err))
		return 1
	}
	s, err := usersdb.OpenDir(ctx, dir, usersOptions)
	if err != nil {
		fmt.Fprintf(io.err, "sossego users: não foi possível abrir o cadastro de usuários: %s\n", describe(err))
		return 1
	}
	defer s.Close()
	err = s.SetPassword(ctx, pos[0], pw)
	switch {
	case errors.Is(err, users.ErrNotFound):
		fmt.Fprintf(io.err, "sossego users passwd: o usuário %q não existe\n", pos[0])
		return 1
	case errors.Is(err, users.ErrWeakPassword):
		fmt.Fprintf(io.err, "sossego users passwd: senha curta demais: use pelo menos %d caracteres\n", users.MinPasswordLen)
		return 1
	case err != nil:
		fmt.Fprintf(io.err, "sossego users passwd: %s\n", describe(err))
		return 1
	}
	fmt.Fprintf(io.out, "senha de %q alterada; as sessões abertas foram encerradas\n", pos[0])
	return 0
}

// usersList prints the users, one a line.
func usersList(ctx context.Context, io stdio, dir string) int {
	s, err := usersdb.OpenDir(ctx, dir, usersOptions)
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
		var who []string
		if u.FullName != "" {
			who = append(who, u.FullName)
		}
		if u.Matricula != "" {
			who = append(who, "matrícula "+u.Matricula)
		}
		if u.Email != "" {
			who = append(who, u.Email)
		}
		if u.Phone != "" {
			who = append(who, u.Phone)
		}
		if len(who) > 0 {
			fmt.Fprintf(io.out, "    %s\n", strings.Join(who, " · "))
		}
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

// demoProfiles are the demo accounts' people (fictitious): the demo's
// notices and audit trail name them as a real installation names its staff.
var demoProfiles = map[string]users.Profile{
	"fiscal":   {FullName: "Fernanda Fiscal de Demonstração", Matricula: "DEMO-0001", Email: "fiscal@demo.sossego.invalid"},
	"operador": {FullName: "Otávio Operador de Demonstração", Matricula: "DEMO-0002"},
	"admin":    {FullName: "Adriana Coordenadora de Demonstração", Matricula: "DEMO-0003"},
}

// addDemoUser creates a demo account with its profile; one that exists is kept.
func addDemoUser(ctx context.Context, us *usersdb.Store, name string, role users.Role, password string) error {
	_, err := us.Create(ctx, users.NewUser{Name: name, Role: role, Password: password, Profile: demoProfiles[name]}, time.Now())
	if err != nil && !errors.Is(err, users.ErrExists) {
		return err
	}
	return nil
}
