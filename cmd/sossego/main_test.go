package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/sqlitedb"
)

// cli runs `sossego args…` with an already cancelled context (nothing
// long-running may start) and returns the exit status and both outputs.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

// TestHelpEveryCommand: -h prints a pt-BR usage for every sub-command and
// exits 0; Go's English header ("Usage of …") and "(default …)" never show.
func TestHelpEveryCommand(t *testing.T) {
	var cases [][]string
	for name := range commands {
		cases = append(cases, []string{name, "-h"}, []string{name, "--help"})
	}
	cases = append(cases,
		[]string{"codes", "list", "-h"}, []string{"codes", "show", "--help"}, []string{"evidence", "export", "-h"},
		[]string{"evidence", "verify", "-h"}, []string{"slm", "analyze", "-h"}, []string{"users", "add", "-h"},
		[]string{"users", "list", "--data-dir", "x", "-h"}, []string{"-h"}, []string{"help"})
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errs := cli(t, args...)
			text := out + errs
			if code != 0 || !strings.Contains(text, "uso:") {
				t.Fatalf("exit %d, output:\n%s", code, text)
			}
			for _, en := range []string{"Usage", "usage of", "(default", "flag provided"} {
				if strings.Contains(text, en) {
					t.Fatalf("English %q in:\n%s", en, text)
				}
			}
		})
	}
	// The options are listed with their pt-BR defaults.
	_, _, errs := cli(t, "demo", "-h")
	for _, want := range []string{"--data-dir texto", `(padrão: "./var/demo")`, "--keep\n"} {
		if !strings.Contains(errs, want) {
			t.Errorf("demo -h lacks %q:\n%s", want, errs)
		}
	}
}

// TestBadFlagsInPortuguese: a bad flag is explained in pt-BR (what is
// wrong, what to write) with exit status 2, for every kind of flag.
func TestBadFlagsInPortuguese(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--nope"}, "sossego demo: opção desconhecida --nope"},
		{[]string{"demo", "--keep=talvez"}, `valor "talvez" inválido para --keep: use true ou false`},
		{[]string{"demo", "extra"}, `argumento inesperado "extra"`},
		{[]string{"central", "--retain-days", "muitos"}, `valor "muitos" inválido para --retain-days: use um número inteiro`},
		{[]string{"central", "--max-age", "3x"}, `valor "3x" inválido para --max-age: use uma duração como 30s, 15m ou 2h`},
		{[]string{"central", "--http"}, "a opção --http precisa de um valor"},
		{[]string{"loadgen", "--rate", "rápido"}, `valor "rápido" inválido para --rate: use um número`},
		{[]string{"loadgen", "--start-seq", "-1"}, `valor "-1" inválido para --start-seq: use um número inteiro`},
		{[]string{"codes", "list", "---x"}, `opção malformada "---x"`},
		{[]string{"evidence", "export", "--margem", "dez"}, `valor "dez" inválido para --margem`},
		{[]string{"slm", "analyze", "--rate", "x", "a.wav"}, `valor "x" inválido para --rate: use um número inteiro`},
		{[]string{"users", "list", "--nada"}, "sossego users list: opção desconhecida --nada"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errs := cli(t, tc.args...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant 2 and %q", code, errs, tc.want)
			}
			for _, en := range []string{"flag provided", "invalid value", "parse error", "Usage"} {
				if strings.Contains(errs, en) {
					t.Fatalf("English %q in:\n%s", en, errs)
				}
			}
		})
	}
}

// TestCentralRefusesDemoRegister: `sossego central` without --registry, or
// with the demonstration register, refuses to start with a pt-BR message
// that says what to pass, and writes nothing (not even the default data
// dir in the current folder), also when another flag is bad.
func TestCentralRefusesDemoRegister(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo.yaml")
	if err := os.WriteFile(demo, registry.DemoYAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no register", nil, "sossego central: informe o cadastro com --registry ARQUIVO"},
		{"no register, bad sync", []string{"--sync", "sempre"}, `--sync "sempre" inválido: use full ou normal`},
		{"no register, bad origin", []string{"--origin", "painel"}, `--origin "painel" inválida`},
		{"the demonstration register", []string{"--registry", demo}, "usam chaves de demonstração, que qualquer um pode derivar"},
		{"a register that is not there", []string{"--registry", "cadastro.yaml"},
			`sossego central: --registry: não foi possível abrir "cadastro.yaml": o arquivo ou a pasta não existe; confira o caminho`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := cli(t, append([]string{"central"}, tc.args...)...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant 2 and %q", code, errs, tc.want)
			}
			if ents, _ := os.ReadDir(cwd); len(ents) > 0 {
				t.Fatalf("refused, yet wrote %s in the current folder", ents[0].Name())
			}
		})
	}
}

// TestDescribe: the operating system's English reaches the terminal in
// pt-BR, inside whatever context wraps it.
func TestDescribe(t *testing.T) {
	_, openErr := os.Open("missing.zip")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, listenErr := net.Listen("tcp", ln.Addr().String())
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"missing file", openErr, `não foi possível abrir "missing.zip": o arquivo ou a pasta não existe; confira o caminho`},
		{"wrapped", fmt.Errorf("cadastro: %w", openErr), `cadastro: não foi possível abrir "missing.zip": o arquivo ou a pasta não existe`},
		{"permission", &fs.PathError{Op: "mkdir", Path: "/var/lib/sossego", Err: syscall.EACCES},
			`não foi possível criar a pasta "/var/lib/sossego": permissão negada`},
		{"disk full", fmt.Errorf("gravar: %w", &fs.PathError{Op: "write", Path: "a.db", Err: syscall.ENOSPC}), `gravar: não foi possível gravar "a.db": disco cheio`},
		{"port in use", listenErr, "não foi possível escutar em " + ln.Addr().String() + ": o endereço já está em uso"},
		{"joined", errors.Join(errors.New("primeiro"), openErr), "primeiro\nnão foi possível abrir"},
		{"interrupted", fmt.Errorf("casos: %w", context.Canceled), "casos: interrompido antes de terminar (Ctrl-C ou o serviço parando)"},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), "x: tempo esgotado"},
		{"damaged database", fmt.Errorf("alertstore: sqlite /dados/cases.db: open: %w", &sqlitedb.DamagedError{Detail: "file is not a database (26)"}),
			`/dados/cases.db: o arquivo não é um banco de dados SQLite ou está danificado (SQLite: "file is not a database (26)"): restaure-o da cópia de segurança mais recente`},
		{"package names dropped", fmt.Errorf("cadastro: %w", fmt.Errorf("calibration: store: %w", errors.New("o medidor m1 não existe"))),
			"cadastro: o medidor m1 não existe"},
		{"a cause's package name dropped", errors.Join(errors.New("primeiro"), errors.New("users: usuário bloqueado")), "primeiro\nusuário bloqueado"},
		{"words that are not package names kept", errors.New("destino: cases.db: storey: x"), "destino: cases.db: storey: x"},
		{"unknown stays", errors.New("algo em português"), "algo em português"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := describe(tc.err)
			if !strings.Contains(got, tc.want) {
				t.Fatalf("describe = %q, want %q", got, tc.want)
			}
			for _, en := range []string{"no such file", "permission denied", "address already in use", "no space left", "context canceled", "deadline exceeded"} {
				if strings.Contains(got, en) {
					t.Fatalf("English %q left in %q", en, got)
				}
			}
		})
	}
}

// TestEvidenceVerifyMissingFile: the example that reached users in English.
func TestEvidenceVerifyMissingFile(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, errs := cli(t, "evidence", "verify", "missing.zip")
	want := `sossego evidence verify: não foi possível abrir "missing.zip": o arquivo ou a pasta não existe; confira o caminho`
	if code != 1 || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, stderr %q; want 1 and %q", code, errs, want)
	}
}

// TestCentralBadAddressWritesNothing: with a valid register, a bad listen
// address or URL stops `sossego central` with exit status 2 and a pt-BR
// message naming the flag, before the data folder or the evidence signing
// key is made.
func TestCentralBadAddressWritesNothing(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(t.TempDir(), "cadastro.yaml")
	yaml := "version: 1\ngateways:\n  - id: lapa-teste-01\n    municipality: lapa\n    public_key: " +
		base64.StdEncoding.EncodeToString(pub) + "\nsensors: []\n"
	if err := os.WriteFile(reg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"http without port", []string{"--http", "nonsense"}, `sossego central: --http "nonsense" inválido: falta a porta; use host:porta`},
		{"http port out of range", []string{"--http", "127.0.0.1:70000"}, `--http "127.0.0.1:70000" inválido: porta 70000 fora de 0–65535`},
		{"http port not a port", []string{"--http", "127.0.0.1:oito"}, `--http "127.0.0.1:oito" inválido: porta "oito" inválida`},
		{"mqtt listen", []string{"--mqtt-listen", "1883"}, `--mqtt-listen "1883" inválido: falta a porta`},
		{"mqtt tls listen", []string{"--mqtt-tls-listen", "a:b:c"}, `--mqtt-tls-listen "a:b:c" inválido: não é host:porta`},
		{"mqtt url without scheme", []string{"--mqtt-url", "127.0.0.1:1883"}, `--mqtt-url "127.0.0.1:1883" inválida: use esquema://host:porta`},
		{"influx url", []string{"--influx-url", "influx:8086"}, `--influx-url "influx:8086" inválida: use esquema://host:porta, com esquema http, https`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "dados")
			code, _, errs := cli(t, append([]string{"central", "--registry", reg, "--data-dir", data}, tc.args...)...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant 2 and %q", code, errs, tc.want)
			}
			if _, err := os.Stat(data); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("refused, yet the data folder %s exists (stat: %v)", data, err)
			}
		})
	}
}
