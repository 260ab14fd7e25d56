package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/monetary"
	"github.com/sossego/sossego/internal/monetary/monetarydb"
	"github.com/sossego/sossego/internal/tz"
)

func init() {
	register("units", "valores das unidades monetárias (VRM, VR, UFM…) por vigência, usados no cálculo das multas", runUnits)
}

const unitsUsage = `uso: sossego units <list|set|history> --data-dir DIR [opções]
  list [--code CÓDIGO]       unidades de cada código, valor vigente hoje e vigências cadastradas
  set --code CÓDIGO --unit UNIDADE --from DATA [--to DATA] --value VALOR --act "ATO LEGAL" [--by NOME]
                             cadastra um valor com sua vigência; um valor em aberto que começou
                             antes é encerrado na véspera do novo
  history --code CÓDIGO [--unit UNIDADE]
                             histórico de alterações (quem, quando, o quê)
datas: AAAA-MM-DD ou dd/mm/aaaa; --to vazio = vigência em aberto
valor: em R$, com vírgula decimal (ex.: 4.938,24 ou 4938,24); até quatro casas
opções:
  --data-dir DIR     diretório de dados do serviço central (arquivo ` + monetarydb.FileName + `)
  --codes-dir DIR    diretório com códigos YAML adicionais`

// unitsCmd is one run of "sossego units <sub>": its options, the codes,
// the store once open, and where it writes.
type unitsCmd struct {
	sub, dir, codesDir, code, unit, from, to, value, act, by string
	codeSet                                                  *codes.Set
	amount                                                   monetary.Amount // --value, for set
	st                                                       *monetarydb.Store
	io                                                       stdio
}

func runUnits(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(io.err, unitsUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, code, ok := parseUnits(args[0], args[1:], io)
	if !ok {
		return code
	}
	if code, ok := c.checkArgs(); !ok {
		return code
	}
	if code, ok := dataFolder("sossego units "+c.sub, c.dir, c.sub == "set", io); !ok {
		return code
	}
	st, err := monetarydb.OpenDir(ctx, c.dir)
	if err != nil {
		fmt.Fprintf(io.err, "sossego units: não foi possível abrir o cadastro de unidades monetárias: %s\n", describe(err))
		return 1
	}
	defer st.Close()
	c.st = st
	switch c.sub {
	case "set":
		return c.set(ctx)
	case "history":
		return c.history(ctx)
	default: // list
		return c.list(ctx)
	}
}

// parseUnits checks the sub-command and reads its options.
func parseUnits(sub string, args []string, io stdio) (*unitsCmd, int, bool) {
	switch sub {
	case "list", "set", "history":
	default:
		fmt.Fprintf(io.err, "sossego units: subcomando desconhecido %q\n", sub)
		fmt.Fprintln(io.err, unitsUsage)
		return nil, 2, false
	}
	c := &unitsCmd{sub: sub, io: io}
	fs := newFlagsUsage("units "+sub, unitsUsage, io)
	fs.StringVar(&c.dir, "data-dir", "", "diretório de dados do serviço central")
	fs.StringVar(&c.codesDir, "codes-dir", "", "diretório com códigos YAML adicionais")
	fs.StringVar(&c.code, "code", "", "código municipal (sossego codes list)")
	fs.StringVar(&c.unit, "unit", "", "unidade monetária do código")
	fs.StringVar(&c.from, "from", "", "início da vigência")
	fs.StringVar(&c.to, "to", "", "fim da vigência")
	fs.StringVar(&c.value, "value", "", "valor em R$")
	fs.StringVar(&c.act, "act", "", "ato legal que fixou o valor")
	fs.StringVar(&c.by, "by", "", "quem cadastra (padrão: o usuário do sistema)")
	if code, ok := fs.parse(args); !ok {
		return nil, code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "sossego units %s: argumentos inesperados %q (as opções começam com --)\n", sub, fs.Args())
		return nil, 2, false
	}
	return c, 0, true
}

// checkArgs checks the options the sub-command needs, loads the codes and,
// for set, reads the value.
func (c *unitsCmd) checkArgs() (int, bool) {
	if c.dir == "" {
		fmt.Fprintln(c.io.err, "sossego units: informe --data-dir (o diretório de dados do serviço central)")
		return 2, false
	}
	set, err := codes.LoadDir(c.codesDir)
	if err != nil {
		fmt.Fprintf(c.io.err, "sossego units: %s\n", describe(err))
		return 1, false
	}
	c.codeSet = set
	if c.code != "" {
		if _, ok := set.Code(c.code); !ok {
			fmt.Fprintf(c.io.err, "sossego units %s: código municipal %q desconhecido: use %s\n", c.sub, c.code, strings.Join(set.IDs(), ", "))
			return 2, false
		}
	}
	if c.sub != "list" && c.code == "" {
		fmt.Fprintf(c.io.err, "sossego units %s: informe --code (um de %s)\n", c.sub, strings.Join(set.IDs(), ", "))
		return 2, false
	}
	if c.sub != "set" {
		return 0, true
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"--unit", c.unit}, {"--from", c.from}, {"--value", c.value}, {"--act", c.act}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(c.io.err, "sossego units set: informe %s\n", strings.Join(missing, ", "))
		return 2, false
	}
	if c.amount, err = monetary.ParseAmount(c.value); err != nil {
		fmt.Fprintf(c.io.err, "sossego units set: %s\n", err)
		return 2, false
	}
	return 0, true
}

// set records a value with its period of validity.
func (c *unitsCmd) set(ctx context.Context) int {
	who := c.by
	if who == "" {
		who = "linha de comando"
		if u := os.Getenv("USER"); u != "" {
			who += " (" + u + ")"
		}
	}
	p, err := c.st.Set(ctx, c.codeSet, monetary.Period{CodeID: c.code, Unit: c.unit, From: c.from, To: c.to, Value: c.amount, Act: c.act}, who, time.Now())
	var ve *monetary.ValidationError
	switch {
	case errors.As(err, &ve):
		fmt.Fprintln(c.io.err, "sossego units set: corrija:")
		for _, pr := range ve.Problems {
			fmt.Fprintf(c.io.err, "  - %s\n", pr)
		}
		return 1
	case err != nil:
		fmt.Fprintf(c.io.err, "sossego units set: %s\n", describe(err))
		return 1
	}
	fmt.Fprintf(c.io.out, "%s de %s: %s %s (%s)\n", p.Unit, c.code, p.Value, p.Text(), p.Act)
	return 0
}

// history prints the change log of a code (and unit).
func (c *unitsCmd) history(ctx context.Context) int {
	h, err := c.st.History(ctx, c.code, c.unit)
	if err != nil {
		fmt.Fprintf(c.io.err, "sossego units history: %s\n", describe(err))
		return 1
	}
	if len(h) == 0 {
		fmt.Fprintf(c.io.out, "nenhuma alteração registrada para %s\n", strings.TrimSpace(c.code+" "+c.unit))
		return 0
	}
	for _, ch := range h {
		what := "cadastrado"
		if ch.Action == "closed" {
			what = "encerrado (novo valor a seguir)"
		}
		fmt.Fprintf(c.io.out, "%s  %-20s %s %s: %s %s (%s)\n", ch.At.In(tz.Brasilia()).Format("02/01/2006 15:04"), ch.By, ch.Unit, what,
			ch.Period.Value, ch.Period.Text(), ch.Period.Act)
	}
	return 0
}

// list prints each code's units (or --code's), today's value and every
// period recorded.
func (c *unitsCmd) list(ctx context.Context) int {
	ps, err := c.st.Periods(ctx, c.code)
	if err != nil {
		fmt.Fprintf(c.io.err, "sossego units list: %s\n", describe(err))
		return 1
	}
	today := time.Now().In(tz.Brasilia()).Format(time.DateOnly)
	for _, id := range c.codeSet.IDs() {
		if c.code != "" && id != c.code {
			continue
		}
		code, _ := c.codeSet.Code(id)
		fmt.Fprintf(c.io.out, "%s — %s\n", id, code.Title())
		for _, u := range code.Units {
			line := "  " + u.ID + " (" + u.Name + ")"
			if u.Obsolete {
				line += " [unidade extinta]"
			}
			if p, ok := monetary.ValueAt(ps, id, u.ID, today); ok {
				line += fmt.Sprintf(": %s hoje (%s, %s)", p.Value, p.Text(), p.Act)
			} else if u.ValueBRL != nil {
				line += fmt.Sprintf(": sem valor cadastrado; padrão do arquivo do código %s", monetary.FromReais(*u.ValueBRL))
			} else {
				line += ": sem valor vigente hoje — as multas saem sem valor em R$ até que seja cadastrado (sossego units set)"
			}
			fmt.Fprintln(c.io.out, line)
			for _, p := range ps {
				if p.CodeID == id && p.Unit == u.ID {
					fmt.Fprintf(c.io.out, "      %s %s — %s\n", p.Value, p.Text(), p.Act)
				}
			}
		}
	}
	return 0
}

// setDemoUnits gives the demo's Lapa VRM a value, so the demo's autos show
// a fine in R$; the act says it is not the municipality's.
func setDemoUnits(ctx context.Context, dir string) error {
	set, err := codes.Builtin()
	if err != nil {
		return err
	}
	st, err := monetarydb.OpenDir(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	ps, err := st.Periods(ctx, "lapa")
	if err != nil || len(ps) > 0 {
		return err
	}
	_, err = st.Set(ctx, set, monetary.Period{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", Value: monetary.FromReais(250),
		Act: "valor fictício da demonstração (não é o VRM oficial de Lapa)"}, "demonstração", time.Now())
	return err
}
