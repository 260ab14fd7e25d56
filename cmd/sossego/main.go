// Command sossego is the central service and the operator's tool box:
//
//	sossego central            run the central service (broker, ingest, alerts, dashboard)
//	sossego demo               central service plus simulated gateways (what `make run` starts)
//	sossego codes …            list, show, evaluate and validate municipal codes
//	sossego slm analyze …      software sound-level meter over a WAV file
//	sossego evidence …         export and verify evidence packages
//	sossego users add …        create dashboard users
//	sossego backup …           copy the data folder while the service runs
//
// main stays thin: it turns signals into a context and hands the arguments to
// the sub-command, each of which lives in its own file of this package.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// stdio is what a sub-command reads and writes; tests pass buffers.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// command is one sub-command. run returns the process exit status.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, io stdio) int
}

// commands is filled by register calls in each sub-command's file.
var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string, io stdio) int) {
	if _, dup := commands[name]; dup {
		panic("sossego: command registered twice: " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}

// isHelp reports whether a sub-command's first argument asks for its usage.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

func run(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || isHelp(args[0]) {
		usage(io.err)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(io.err, "sossego: comando desconhecido %q\n\n", args[0])
		usage(io.err)
		return 2
	}
	return c.run(ctx, args[1:], io)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "uso: sossego <comando> [opções]")
	fmt.Fprintln(w, "\ncomandos:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nUse \"sossego <comando> -h\" para as opções de cada comando.")
}
