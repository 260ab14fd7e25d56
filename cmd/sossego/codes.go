package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sossego/sossego/codes"
)

func init() {
	register("codes", "lista, mostra, avalia e valida códigos de posturas", runCodes)
}

const codesUsage = `uso: sossego codes <list|show|eval|validate> [opções]
  list                 lista os códigos carregados
  show CÓDIGO          quadro do código: limites por período e zona, horários, penalidades
  eval                 JSON Lines na entrada, um veredito por linha na saída (docs/codes-eval.md)
  validate ARQUIVO...  valida arquivos YAML de código
opção comum: --codes-dir DIR  carrega códigos adicionais de DIR
CÓDIGO: o id (lapa, conceicao-de-macabu, …) ou o nome do município, sem distinção de maiúsculas`

func runCodes(_ context.Context, args []string, io stdio) int {
	usage := func() int {
		fmt.Fprintln(io.err, codesUsage)
		return 2
	}
	if len(args) == 0 {
		return usage()
	}
	if isHelp(args[0]) {
		fmt.Fprintln(io.err, codesUsage)
		return 0
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "list", "show", "eval", "validate":
	default:
		fmt.Fprintf(io.err, "sossego codes: subcomando desconhecido %q\n\n", sub)
		return usage()
	}
	fs := newFlags("codes "+sub, codesUsage, io)
	dir := fs.String("codes-dir", "", "diretório com códigos YAML adicionais")
	if code, ok := fs.parse(rest); !ok {
		return code
	}
	if sub == "validate" {
		return codesValidate(fs.Args(), io)
	}
	set, err := codes.LoadDir(*dir)
	if err != nil {
		fmt.Fprintf(io.err, "sossego codes: %s\n", describe(err))
		return 1
	}
	switch sub {
	case "list":
		if fs.NArg() != 0 {
			fmt.Fprintf(io.err, "sossego codes list: argumentos inesperados %q\n", fs.Args())
			return 2
		}
		for _, id := range set.IDs() {
			c, _ := set.Code(id)
			st := "em vigor"
			if !c.Status.InForce {
				st = "REVOGADA (" + c.Status.RevokedBy + ")"
			}
			fmt.Fprintf(io.out, "%-24s %-40s %s\n", id, c.Title(), st)
		}
		return 0
	case "show":
		if fs.NArg() != 1 {
			fmt.Fprintln(io.err, "uso: sossego codes show CÓDIGO (veja sossego codes list)")
			return 2
		}
		c, err := set.Resolve(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(io.err, "sossego codes: %v\n", err)
			return 1
		}
		fmt.Fprint(io.out, codes.Schedule(c))
		return 0
	case "eval":
		if fs.NArg() != 0 {
			fmt.Fprintf(io.err, "sossego codes eval: lê as observações da entrada padrão (JSON Lines), não de argumentos: %q\n", fs.Args())
			return 2
		}
		return codesEval(set, io)
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(io.err, "sossego codes %s: argumentos inesperados %q\n", sub, fs.Args())
		return 2
	}
	return usage()
}

func codesEval(set *codes.Set, io stdio) int {
	sc := bufio.NewScanner(io.in)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	w := bufio.NewWriter(io.out)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	status := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		resp := set.EvalLine([]byte(line))
		if resp.Error != "" {
			status = 1
		}
		if err := enc.Encode(resp); err != nil {
			fmt.Fprintf(io.err, "sossego codes eval: escrita: %s\n", describe(err))
			return 1
		}
	}
	if err := sc.Err(); err != nil {
		what := describe(err)
		if errors.Is(err, bufio.ErrTooLong) {
			what = "uma linha tem mais de 4 MiB; escreva uma observação por linha"
		}
		fmt.Fprintf(io.err, "sossego codes eval: leitura: %s\n", what)
		_ = enc.Encode(codes.Response{Error: "entrada ilegível: " + what})
		return 1
	}
	return status
}

func codesValidate(files []string, io stdio) int {
	if len(files) == 0 {
		fmt.Fprintln(io.err, "uso: sossego codes validate ARQUIVO.yaml...")
		return 2
	}
	status := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(io.err, "%s\n", describe(err))
			status = 1
			continue
		}
		c, err := codes.Parse(f, data)
		if err != nil {
			var es codes.Errors
			if errors.As(err, &es) {
				for _, e := range es {
					fmt.Fprintln(io.out, e.Error())
				}
			} else {
				fmt.Fprintln(io.out, err.Error())
			}
			status = 1
			continue
		}
		fmt.Fprintf(io.out, "%s: ok — %s, %d regras, %d penalidades\n", f, c.Title(), len(c.Rules), len(c.Penalties))
	}
	return status
}
