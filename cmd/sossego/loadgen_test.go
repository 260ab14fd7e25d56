package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sossego/sossego/internal/registry"
)

// TestLoadgenCLI: what loadgen refuses before it connects to a broker, each
// with a pt-BR message that says what to fix, and the register it writes
// for sossego central.
func TestLoadgenCLI(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("vazio.yaml", "version: 1\n")
	old := write("antigo.yaml", "gateways: []\n")
	reg := filepath.Join(dir, "lg.yaml")
	steps := []struct {
		name     string
		args     []string
		code     int
		out, err string // substrings
	}{
		{"register without gateways", []string{"--write-registry", reg}, 2, "", "sossego loadgen: --write-registry precisa de --gateways N"},
		{"register into a missing folder", []string{"--write-registry", filepath.Join(dir, "nada", "lg.yaml"), "--gateways", "2"}, 1, "",
			"sossego loadgen: não foi possível"},
		{"gateways not a number", []string{"--gateways", "dez"}, 2, "", `sossego loadgen: valor "dez" inválido para --gateways: use um número inteiro`},
		{"unknown option", []string{"--brokers", "2"}, 2, "", "sossego loadgen: opção desconhecida --brokers"},
		{"missing register", []string{"--registry", filepath.Join(dir, "nada.yaml")}, 1, "", "o arquivo ou a pasta não existe; confira o caminho"},
		{"register of another version", []string{"--registry", old}, 1, "", "sossego loadgen: cadastro: linha 1: version: 0 não suportada; use version: 1"},
		{"nothing to simulate", []string{"--registry", empty}, 1, "", "sossego loadgen: nenhum gateway com sensores para simular"},
		{"register written", []string{"--write-registry", reg, "--gateways", "3", "--sensors", "2"}, 0, "cadastro com 3 gateways gravado em " + reg, ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"loadgen"}, st.args...), stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != st.code {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, st.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), st.out) || !strings.Contains(errb.String(), st.err) {
				t.Fatalf("stdout %q (want %q), stderr %q (want %q)", out.String(), st.out, errb.String(), st.err)
			}
		})
	}
	b, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := registry.Parse(b)
	if err != nil {
		t.Fatalf("the written register does not load: %v", err)
	}
	if g, s := len(r.Gateways()), len(r.Sensors()); g != 3 || s != 6 {
		t.Errorf("%d gateways and %d sensors in the written register, want 3 and 6", g, s)
	}
}
