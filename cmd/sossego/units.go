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
  --data-dir DIR     diretório de dados do serviço central (arquivo ` + monetary.FileName + `)
  --codes-dir DIR    diretório com códigos YAML adicionais`

func runUnits(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(io.err, unitsUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	switch sub {
	case "list", "set", "history":
	default:
		fmt.Fprintf(io.err, "sossego units: subcomando desconhecido %q\n", sub)
		fmt.Fprintln(io.err, unitsUsage)
		return 2
	}
	fs := newFlagsUsage("units "+sub, unitsUsage, io)
	dir := fs.String("data-dir", "", "diretório de dados do serviço central")
	codesDir := fs.String("codes-dir", "", "diretório com códigos YAML adicionais")
	code := fs.String("code", "", "código municipal (sossego codes list)")
	unit := fs.String("unit", "", "unidade monetária do código")
	from := fs.String("from", "", "início da vigência")
	to := fs.String("to", "", "fim da vigência")
	value := fs.String("value", "", "valor em R$")
	act := fs.String("act", "", "ato legal que fixou o valor")
	by := fs.String("by", "", "quem cadastra (padrão: o usuário do sistema)")
	if c, ok := fs.parse(args[1:]); !ok {
		return c
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "sossego units %s: argumentos inesperados %q (as opções começam com --)\n", sub, fs.Args())
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(io.err, "sossego units: informe --data-dir (o diretório de dados do serviço central)")
		return 2
	}
	set, err := codes.LoadDir(*codesDir)
	if err != nil {
		fmt.Fprintf(io.err, "sossego units: %s\n", describe(err))
		return 1
	}
	if *code != "" {
		if _, ok := set.Code(*code); !ok {
			fmt.Fprintf(io.err, "sossego units %s: código municipal %q desconhecido: use %s\n", sub, *code, strings.Join(set.IDs(), ", "))
			return 2
		}
	}
	if sub != "list" && *code == "" {
		fmt.Fprintf(io.err, "sossego units %s: informe --code (um de %s)\n", sub, strings.Join(set.IDs(), ", "))
		return 2
	}
	var amount monetary.Amount
	if sub == "set" {
		var missing []string
		for _, f := range []struct{ name, v string }{{"--unit", *unit}, {"--from", *from}, {"--value", *value}, {"--act", *act}} {
			if strings.TrimSpace(f.v) == "" {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(io.err, "sossego units set: informe %s\n", strings.Join(missing, ", "))
			return 2
		}
		if amount, err = monetary.ParseAmount(*value); err != nil {
			fmt.Fprintf(io.err, "sossego units set: %s\n", err)
			return 2
		}
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fmt.Fprintf(io.err, "sossego units: %s\n", describe(err))
		return 1
	}
	st, err := monetary.OpenDir(ctx, *dir)
	if err != nil {
		fmt.Fprintf(io.err, "sossego units: não foi possível abrir o cadastro de unidades monetárias: %s\n", describe(err))
		return 1
	}
	defer st.Close()
	switch sub {
	case "set":
		who := *by
		if who == "" {
			who = "linha de comando"
			if u := os.Getenv("USER"); u != "" {
				who += " (" + u + ")"
			}
		}
		p, err := st.Set(ctx, set, monetary.Period{CodeID: *code, Unit: *unit, From: *from, To: *to, Value: amount, Act: *act}, who, time.Now())
		var ve *monetary.ValidationError
		switch {
		case errors.As(err, &ve):
			fmt.Fprintln(io.err, "sossego units set: corrija:")
			for _, pr := range ve.Problems {
				fmt.Fprintf(io.err, "  - %s\n", pr)
			}
			return 1
		case err != nil:
			fmt.Fprintf(io.err, "sossego units set: %s\n", describe(err))
			return 1
		}
		fmt.Fprintf(io.out, "%s de %s: %s %s (%s)\n", p.Unit, *code, p.Value, p.Text(), p.Act)
		return 0
	case "history":
		h, err := st.History(ctx, *code, *unit)
		if err != nil {
			fmt.Fprintf(io.err, "sossego units history: %s\n", describe(err))
			return 1
		}
		if len(h) == 0 {
			fmt.Fprintf(io.out, "nenhuma alteração registrada para %s\n", strings.TrimSpace(*code+" "+*unit))
			return 0
		}
		for _, c := range h {
			what := "cadastrado"
			if c.Action == "closed" {
				what = "encerrado (novo valor a seguir)"
			}
			fmt.Fprintf(io.out, "%s  %-20s %s %s: %s %s (%s)\n", c.At.In(tz.Brasilia()).Format("02/01/2006 15:04"), c.By, c.Unit, what,
				c.Period.Value, c.Period.Text(), c.Period.Act)
		}
		return 0
	}
	ps, err := st.Periods(ctx, *code)
	if err != nil {
		fmt.Fprintf(io.err, "sossego units list: %s\n", describe(err))
		return 1
	}
	today := time.Now().In(tz.Brasilia()).Format(time.DateOnly)
	for _, id := range set.IDs() {
		if *code != "" && id != *code {
			continue
		}
		c, _ := set.Code(id)
		fmt.Fprintf(io.out, "%s — %s\n", id, c.Title())
		for _, u := range c.Units {
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
			fmt.Fprintln(io.out, line)
			for _, p := range ps {
				if p.CodeID == id && p.Unit == u.ID {
					fmt.Fprintf(io.out, "      %s %s — %s\n", p.Value, p.Text(), p.Act)
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
	st, err := monetary.OpenDir(ctx, dir)
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
