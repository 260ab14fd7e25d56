package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/holidays"
	"github.com/sossego/sossego/internal/holidays/holidaysdb"
	"github.com/sossego/sossego/internal/tz"
)

func init() {
	register("feriados", "feriados municipais e pontos facultativos decretados, além do calendário de cada código", runFeriados)
}

const feriadosUsage = `uso: sossego feriados <list|add|remove|history> --data-dir DIR [opções]
  list [--municipio M]       dias cadastrados (todos os municípios, ou um)
  add --municipio M --dia DIA --nome NOME --ato "ATO" [--tipo feriado|ponto_facultativo] [--desde DATA] [--por NOME]
                             cadastra um dia: DIA dd/mm/aaaa (uma vez) ou dd/mm (todo ano);
                             --desde: primeiro ano de um feriado de todo ano (a data da lei)
  remove --id N [--motivo TEXTO] [--por NOME]
                             remove um dia cadastrado (o histórico guarda quem, quando e por quê)
  history [--municipio M]    histórico de alterações (quem, quando, o quê)
datas: dd/mm/aaaa ou AAAA-MM-DD; todo ano: dd/mm ou MM-DD
tipo: feriado (padrão; vale para as regras de "feriados" do código e não é dia útil) ou
      ponto_facultativo (não é dia útil nos prazos, mas não é feriado para as regras do código)
O serviço central em execução aplica as alterações em até 15 s.
opções:
  --data-dir DIR     diretório de dados do serviço central (arquivo ` + holidaysdb.FileName + `)
  --codes-dir DIR    diretório com códigos YAML adicionais`

// feriadosCmd is one run of sossego feriados: the subcommand, its options
// once checked, the codes and the register.
type feriadosCmd struct {
	io               stdio
	sub, name        string
	dir, codesDir    string
	muni, day, since string
	nome, act, kind  string
	id, reason, by   string
	set              *codes.Set
	code             string // the municipality's code id ("" for all)
	entry            holidays.Entry
	removeID         int64
	st               *holidaysdb.Store
}

func runFeriados(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(io.err, feriadosUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c := &feriadosCmd{io: io, sub: args[0], name: "sossego feriados " + args[0]}
	switch c.sub {
	case "list", "add", "remove", "history":
	default:
		fmt.Fprintf(io.err, "sossego feriados: subcomando desconhecido %q (use list, add, remove ou history)\n", c.sub)
		fmt.Fprintln(io.err, feriadosUsage)
		return 2
	}
	if code, ok := c.parse(args[1:]); !ok {
		return code
	}
	if code, ok := c.resolve(); !ok {
		return code
	}
	if code, ok := c.open(ctx); !ok {
		return code
	}
	defer c.st.Close()
	switch c.sub {
	case "add":
		return c.add(ctx)
	case "remove":
		return c.remove(ctx)
	case "history":
		return c.history(ctx)
	}
	return c.list(ctx)
}

// parse reads the options; it reports the exit code when they are wrong.
func (c *feriadosCmd) parse(args []string) (int, bool) {
	fs := newFlagsUsage("feriados "+c.sub, feriadosUsage, c.io)
	fs.StringVar(&c.dir, "data-dir", "", "diretório de dados do serviço central")
	fs.StringVar(&c.codesDir, "codes-dir", "", "diretório com códigos YAML adicionais")
	fs.StringVar(&c.muni, "municipio", "", "município (id do código ou nome: lapa, \"Conceição de Macabu\")")
	fs.StringVar(&c.day, "dia", "", "dd/mm/aaaa (uma vez) ou dd/mm (todo ano)")
	fs.StringVar(&c.since, "desde", "", "primeiro dia em vigor de um feriado de todo ano")
	fs.StringVar(&c.nome, "nome", "", "nome do dia")
	fs.StringVar(&c.act, "ato", "", "ato que fixou o dia")
	fs.StringVar(&c.kind, "tipo", codes.DecreedHoliday, "feriado ou ponto_facultativo")
	fs.StringVar(&c.id, "id", "", "número do dia na lista")
	fs.StringVar(&c.reason, "motivo", "", "por que o dia é removido")
	fs.StringVar(&c.by, "por", "", "quem altera (padrão: o usuário do sistema)")
	if code, ok := fs.parse(args); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.io.err, "%s: argumentos inesperados %q (as opções começam com --, ex.: --nome \"São José\")\n", c.name, fs.Args())
		return 2, false
	}
	if c.dir == "" {
		fmt.Fprintf(c.io.err, "%s: informe --data-dir (o diretório de dados do serviço central)\n", c.name)
		return 2, false
	}
	return 0, true
}

// resolve loads the codes, finds the municipality and checks what add and
// remove need.
func (c *feriadosCmd) resolve() (int, bool) {
	var err error
	if c.set, err = codes.LoadDir(c.codesDir); err != nil {
		fmt.Fprintf(c.io.err, "%s: %s\n", c.name, describe(err))
		return 1, false
	}
	if c.muni != "" {
		code, err := c.set.Resolve(c.muni)
		if err != nil {
			fmt.Fprintf(c.io.err, "%s: --municipio: %s\n", c.name, err)
			return 2, false
		}
		c.code = code.ID
	}
	switch c.sub {
	case "add":
		var missing []string
		for _, f := range []struct{ name, v string }{{"--municipio", c.muni}, {"--dia", c.day}, {"--nome", c.nome}, {"--ato", c.act}} {
			if strings.TrimSpace(f.v) == "" {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(c.io.err, "%s: informe %s\n", c.name, strings.Join(missing, ", "))
			return 2, false
		}
		date, md, err := holidays.ParseDay(c.day)
		if err != nil {
			fmt.Fprintf(c.io.err, "%s: --dia: %s\n", c.name, err)
			return 2, false
		}
		c.entry = holidays.Entry{Municipality: c.code, Date: date, MonthDay: md, Since: c.since, Name: c.nome, Act: c.act, Kind: c.kind}
	case "remove":
		if c.id == "" {
			fmt.Fprintf(c.io.err, "%s: informe --id (o número mostrado por sossego feriados list)\n", c.name)
			return 2, false
		}
		if c.removeID, err = strconv.ParseInt(strings.TrimSpace(c.id), 10, 64); err != nil || c.removeID <= 0 {
			fmt.Fprintf(c.io.err, "%s: --id %q: use o número mostrado por sossego feriados list (ex.: --id 3)\n", c.name, c.id)
			return 2, false
		}
	}
	return 0, true
}

// open opens the register of municipal holidays in the data folder.
func (c *feriadosCmd) open(ctx context.Context) (int, bool) {
	if code, ok := dataFolder(c.name, c.dir, c.sub == "add", c.io); !ok {
		return code, false
	}
	st, err := holidaysdb.OpenDir(ctx, c.dir)
	if err != nil {
		fmt.Fprintf(c.io.err, "%s: não foi possível abrir o cadastro de feriados: %s\n", c.name, describe(err))
		return 1, false
	}
	c.st = st
	return 0, true
}

// who is the author a change records: --por, else the system user.
func (c *feriadosCmd) who() string {
	if c.by != "" {
		return c.by
	}
	who := "linha de comando"
	if u := os.Getenv("USER"); u != "" {
		who += " (" + u + ")"
	}
	return who
}

func (c *feriadosCmd) add(ctx context.Context) int {
	e, err := c.st.Add(ctx, c.set, c.entry, c.who(), time.Now())
	var ve *holidays.ValidationError
	switch {
	case errors.As(err, &ve):
		fmt.Fprintf(c.io.err, "%s: corrija:\n", c.name)
		for _, p := range ve.Problems {
			fmt.Fprintf(c.io.err, "  - %s\n", p)
		}
		return 1
	case err != nil:
		fmt.Fprintf(c.io.err, "%s: %s\n", c.name, describe(err))
		return 1
	}
	fmt.Fprintf(c.io.out, "nº %d cadastrado: %s — %s, %s (%s, %s)\n", e.ID, e.Municipality, e.When(), e.Name, holidays.KindLabel(e.Kind), e.Act)
	return 0
}

func (c *feriadosCmd) remove(ctx context.Context) int {
	e, err := c.st.Remove(ctx, c.code, c.removeID, c.who(), c.reason, time.Now())
	switch {
	case holidays.IsNotFound(err):
		where := ""
		if c.code != "" {
			where = " em " + c.code
		}
		fmt.Fprintf(c.io.err, "%s: nº %d não está cadastrado%s: veja os números com sossego feriados list\n", c.name, c.removeID, where)
		return 1
	case err != nil:
		fmt.Fprintf(c.io.err, "%s: %s\n", c.name, describe(err))
		return 1
	}
	fmt.Fprintf(c.io.out, "nº %d removido: %s — %s, %s\n", e.ID, e.Municipality, e.When(), e.Name)
	return 0
}

func (c *feriadosCmd) history(ctx context.Context) int {
	h, err := c.st.History(ctx, c.code)
	if err != nil {
		fmt.Fprintf(c.io.err, "%s: %s\n", c.name, describe(err))
		return 1
	}
	if len(h) == 0 {
		fmt.Fprintln(c.io.out, "nenhuma alteração registrada")
		return 0
	}
	for _, ch := range h {
		what := "cadastrado"
		if ch.Action == "removed" {
			what = "removido"
		}
		line := fmt.Sprintf("%s  %-20s nº %d %s: %s — %s, %s (%s, %s)", ch.At.In(tz.Brasilia()).Format("02/01/2006 15:04"), ch.By, ch.Entry.ID, what,
			ch.Entry.Municipality, ch.Entry.When(), ch.Entry.Name, holidays.KindLabel(ch.Entry.Kind), ch.Entry.Act)
		if ch.Reason != "" {
			line += "; motivo: " + ch.Reason
		}
		fmt.Fprintln(c.io.out, line)
	}
	return 0
}

func (c *feriadosCmd) list(ctx context.Context) int {
	es, err := c.st.List(ctx, c.code)
	if err != nil {
		fmt.Fprintf(c.io.err, "%s: %s\n", c.name, describe(err))
		return 1
	}
	if len(es) == 0 {
		fmt.Fprintln(c.io.out, "nenhum dia cadastrado além do calendário dos códigos (sossego feriados add)")
		return 0
	}
	for _, e := range es {
		fmt.Fprintf(c.io.out, "%4d  %-22s %-36s %s (%s) — %s\n", e.ID, e.Municipality, e.When(), e.Name, holidays.KindLabel(e.Kind), e.Act)
	}
	return 0
}
