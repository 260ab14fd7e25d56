package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// flagSet is a flag.FlagSet that speaks pt-BR: -h prints the sub-command's
// own usage and the options with "(padrão: …)" (exit status 0); a bad flag
// prints what is wrong in Portuguese and how to see the options (status 2).
// Go's own "Usage of …" header and English messages never reach the user.
type flagSet struct {
	*flag.FlagSet
	io       stdio
	head     string // printed before the options by -h
	headOnly bool   // head lists the options itself
}

// newFlags returns the flag set of "sossego <name>"; head is its usage text
// (what it does, its arguments), printed by -h above the options.
func newFlags(name, head string, sio stdio) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, io: sio, head: head}
}

// newFlagsUsage is newFlags for a sub-command whose usage text already
// describes its options: -h prints just that.
func newFlagsUsage(name, usage string, sio stdio) *flagSet {
	f := newFlags(name, usage, sio)
	f.headOnly = true
	return f
}

// usage prints the head and the options.
func (f *flagSet) usage() {
	w := f.io.err
	if f.head != "" {
		fmt.Fprintln(w, strings.TrimRight(f.head, "\n"))
	}
	if f.headOnly {
		return
	}
	var opts []*flag.Flag
	f.VisitAll(func(fl *flag.Flag) { opts = append(opts, fl) })
	if len(opts) == 0 {
		return
	}
	fmt.Fprintln(w, "\nopções:")
	for _, fl := range opts {
		kind, text := flag.UnquoteUsage(fl)
		line := "  --" + fl.Name
		if kind != "" {
			line += " " + kindName(kind)
		}
		fmt.Fprintln(w, line)
		text = strings.ReplaceAll(text, "\n", "\n    \t")
		if def := defaultText(fl); def != "" {
			text += " (padrão: " + def + ")"
		}
		fmt.Fprintln(w, "    \t"+text)
	}
}

// kindName translates flag.UnquoteUsage's type names.
func kindName(k string) string {
	switch k {
	case "string":
		return "texto"
	case "int", "uint", "float":
		return "número"
	case "duration":
		return "duração"
	case "value":
		return "valor"
	}
	return k
}

// defaultText is a flag's default as -h shows it; "" for a zero default.
func defaultText(fl *flag.Flag) string {
	switch fl.DefValue {
	case "", "0", "false", "0s":
		return ""
	}
	if reflect.TypeOf(fl.Value).String() == "*flag.stringValue" {
		return strconv.Quote(fl.DefValue)
	}
	return fl.DefValue
}

// parse parses args. When ok is false the command returns code: 0 after
// -h (the usage was printed), 2 after a bad flag (the problem was).
func (f *flagSet) parse(args []string) (code int, ok bool) {
	err := f.Parse(args)
	if err == nil {
		return 0, true
	}
	if errors.Is(err, flag.ErrHelp) {
		f.usage()
		return 0, false
	}
	fmt.Fprintf(f.io.err, "sossego %s: %s\nUse \"sossego %s -h\" para ver as opções.\n", f.Name(), flagProblem(f.FlagSet, err), f.Name())
	return 2, false
}

var (
	reUndefined = regexp.MustCompile(`^flag provided but not defined: -(.*)$`)
	reSyntax    = regexp.MustCompile(`^bad flag syntax: (.*)$`)
	reNoValue   = regexp.MustCompile(`^flag needs an argument: -(.*)$`)
	reBadBool   = regexp.MustCompile(`^invalid boolean value (".*") for -([^:]+): (.*)$`)
	reBoolFlag  = regexp.MustCompile(`^invalid boolean flag ([^:]+): (.*)$`)
	reBadValue  = regexp.MustCompile(`^invalid value (".*") for flag -([^:]+): (.*)$`)
)

// flagProblem says in pt-BR what the flag package's err complains about.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := reUndefined.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("opção desconhecida --%s", m[1])
	}
	if m := reSyntax.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("opção malformada %q: escreva --nome ou --nome=valor", m[1])
	}
	if m := reNoValue.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("a opção --%s precisa de um valor", m[1])
	}
	if m := reBadBool.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("valor %s inválido para --%s: use true ou false", m[1], m[2])
	}
	if m := reBoolFlag.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("valor inválido para --%s: use true ou false", m[1])
	}
	if m := reBadValue.FindStringSubmatch(msg); m != nil {
		value, name, why := m[1], m[2], m[3]
		kind := ""
		if fl := fs.Lookup(name); fl != nil {
			kind, _ = flag.UnquoteUsage(fl)
		}
		switch {
		case why == "value out of range":
			why = "número grande demais"
		case why != "parse error":
			// A flag of ours (flag.Func) explained itself.
		case kind == "int" || kind == "uint":
			why = "use um número inteiro"
		case kind == "float":
			why = "use um número (com ponto decimal, ex.: 2.5)"
		case kind == "duration":
			why = "use uma duração como 30s, 15m ou 2h"
		default:
			why = "valor ilegível"
		}
		return fmt.Sprintf("valor %s inválido para --%s: %s", value, name, why)
	}
	return msg
}
