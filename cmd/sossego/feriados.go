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
  --data-dir DIR     diretório de dados do serviço central (arquivo ` + holidays.FileName + `)
  --codes-dir DIR    diretório com códigos YAML adicionais`

func runFeriados(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(io.err, feriadosUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	switch sub {
	case "list", "add", "remove", "history":
	default:
		fmt.Fprintf(io.err, "sossego feriados: subcomando desconhecido %q (use list, add, remove ou history)\n", sub)
		fmt.Fprintln(io.err, feriadosUsage)
		return 2
	}
	name := "sossego feriados " + sub
	fs := newFlagsUsage("feriados "+sub, feriadosUsage, io)
	dir := fs.String("data-dir", "", "diretório de dados do serviço central")
	codesDir := fs.String("codes-dir", "", "diretório com códigos YAML adicionais")
	muni := fs.String("municipio", "", "município (id do código ou nome: lapa, \"Conceição de Macabu\")")
	day := fs.String("dia", "", "dd/mm/aaaa (uma vez) ou dd/mm (todo ano)")
	since := fs.String("desde", "", "primeiro dia em vigor de um feriado de todo ano")
	nome := fs.String("nome", "", "nome do dia")
	act := fs.String("ato", "", "ato que fixou o dia")
	kind := fs.String("tipo", codes.DecreedHoliday, "feriado ou ponto_facultativo")
	id := fs.String("id", "", "número do dia na lista")
	reason := fs.String("motivo", "", "por que o dia é removido")
	by := fs.String("por", "", "quem altera (padrão: o usuário do sistema)")
	if c, ok := fs.parse(args[1:]); !ok {
		return c
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "%s: argumentos inesperados %q (as opções começam com --, ex.: --nome \"São José\")\n", name, fs.Args())
		return 2
	}
	if *dir == "" {
		fmt.Fprintf(io.err, "%s: informe --data-dir (o diretório de dados do serviço central)\n", name)
		return 2
	}
	set, err := codes.LoadDir(*codesDir)
	if err != nil {
		fmt.Fprintf(io.err, "%s: %s\n", name, describe(err))
		return 1
	}
	code := ""
	if *muni != "" {
		c, err := set.Resolve(*muni)
		if err != nil {
			fmt.Fprintf(io.err, "%s: --municipio: %s\n", name, err)
			return 2
		}
		code = c.ID
	}
	var entry holidays.Entry
	var removeID int64
	switch sub {
	case "add":
		var missing []string
		for _, f := range []struct{ name, v string }{{"--municipio", *muni}, {"--dia", *day}, {"--nome", *nome}, {"--ato", *act}} {
			if strings.TrimSpace(f.v) == "" {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(io.err, "%s: informe %s\n", name, strings.Join(missing, ", "))
			return 2
		}
		date, md, err := holidays.ParseDay(*day)
		if err != nil {
			fmt.Fprintf(io.err, "%s: --dia: %s\n", name, err)
			return 2
		}
		entry = holidays.Entry{Municipality: code, Date: date, MonthDay: md, Since: *since, Name: *nome, Act: *act, Kind: *kind}
	case "remove":
		if *id == "" {
			fmt.Fprintf(io.err, "%s: informe --id (o número mostrado por sossego feriados list)\n", name)
			return 2
		}
		if removeID, err = strconv.ParseInt(strings.TrimSpace(*id), 10, 64); err != nil || removeID <= 0 {
			fmt.Fprintf(io.err, "%s: --id %q: use o número mostrado por sossego feriados list (ex.: --id 3)\n", name, *id)
			return 2
		}
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fmt.Fprintf(io.err, "%s: %s\n", name, describe(err))
		return 1
	}
	st, err := holidays.OpenDir(ctx, *dir)
	if err != nil {
		fmt.Fprintf(io.err, "%s: não foi possível abrir o cadastro de feriados: %s\n", name, describe(err))
		return 1
	}
	defer st.Close()
	who := *by
	if who == "" {
		who = "linha de comando"
		if u := os.Getenv("USER"); u != "" {
			who += " (" + u + ")"
		}
	}
	switch sub {
	case "add":
		e, err := st.Add(ctx, set, entry, who, time.Now())
		var ve *holidays.ValidationError
		switch {
		case errors.As(err, &ve):
			fmt.Fprintf(io.err, "%s: corrija:\n", name)
			for _, p := range ve.Problems {
				fmt.Fprintf(io.err, "  - %s\n", p)
			}
			return 1
		case err != nil:
			fmt.Fprintf(io.err, "%s: %s\n", name, describe(err))
			return 1
		}
		fmt.Fprintf(io.out, "nº %d cadastrado: %s — %s, %s (%s, %s)\n", e.ID, e.Municipality, e.When(), e.Name, holidays.KindLabel(e.Kind), e.Act)
		return 0
	case "remove":
		e, err := st.Remove(ctx, code, removeID, who, *reason, time.Now())
		switch {
		case holidays.IsNotFound(err):
			where := ""
			if code != "" {
				where = " em " + code
			}
			fmt.Fprintf(io.err, "%s: nº %d não está cadastrado%s: veja os números com sossego feriados list\n", name, removeID, where)
			return 1
		case err != nil:
			fmt.Fprintf(io.err, "%s: %s\n", name, describe(err))
			return 1
		}
		fmt.Fprintf(io.out, "nº %d removido: %s — %s, %s\n", e.ID, e.Municipality, e.When(), e.Name)
		return 0
	case "history":
		h, err := st.History(ctx, code)
		if err != nil {
			fmt.Fprintf(io.err, "%s: %s\n", name, describe(err))
			return 1
		}
		if len(h) == 0 {
			fmt.Fprintln(io.out, "nenhuma alteração registrada")
			return 0
		}
		for _, c := range h {
			what := "cadastrado"
			if c.Action == "removed" {
				what = "removido"
			}
			line := fmt.Sprintf("%s  %-20s nº %d %s: %s — %s, %s (%s, %s)", c.At.In(tz.Brasilia()).Format("02/01/2006 15:04"), c.By, c.Entry.ID, what,
				c.Entry.Municipality, c.Entry.When(), c.Entry.Name, holidays.KindLabel(c.Entry.Kind), c.Entry.Act)
			if c.Reason != "" {
				line += "; motivo: " + c.Reason
			}
			fmt.Fprintln(io.out, line)
		}
		return 0
	}
	es, err := st.List(ctx, code)
	if err != nil {
		fmt.Fprintf(io.err, "%s: %s\n", name, describe(err))
		return 1
	}
	if len(es) == 0 {
		fmt.Fprintln(io.out, "nenhum dia cadastrado além do calendário dos códigos (sossego feriados add)")
		return 0
	}
	for _, e := range es {
		fmt.Fprintf(io.out, "%4d  %-22s %-36s %s (%s) — %s\n", e.ID, e.Municipality, e.When(), e.Name, holidays.KindLabel(e.Kind), e.Act)
	}
	return 0
}
