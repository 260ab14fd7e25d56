package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCentralFlagErrors: bad flag values stop `sossego central` with exit
// status 2 and a pt-BR message before anything starts.
func TestCentralFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		err  string // substring of stderr
	}{
		{"size without number", []string{"--min-free-disk", "GB"}, `sossego central: --min-free-disk: tamanho "GB" inválido: use um número inteiro`},
		{"garbage size", []string{"--min-free-disk", "bastante"}, `--min-free-disk: tamanho "bastante" inválido`},
		{"decimal size", []string{"--min-free-disk", "1.5GB"}, `tamanho "1.5GB" inválido`},
		{"negative size", []string{"--min-free-disk=-1GiB"}, `tamanho "-1GiB" inválido`},
		{"unknown unit", []string{"--min-free-disk", "2G"}, `ex.: 500MB, 2GiB`},
		{"huge size", []string{"--min-free-disk", "9999999TiB"}, `tamanho "9999999TiB" grande demais`},
		{"log level", []string{"--log", "verbose"}, `--log "verbose" inválido`},
		{"negative retention", []string{"--retain-days", "-3"}, `--retain-days -3 inválido`},
		{"retention under max-age", []string{"--retain-days", "30"}, `--retain-days 30 é curto demais: precisa ser pelo menos --max-age (30 dias) mais 1 dia`},
		{"retention under a longer max-age", []string{"--max-age", "1440h", "--retain-days", "60"}, `--max-age (60 dias) mais 1 dia`},
	}
	// Already cancelled: should a bad value get through, the service stops
	// at once instead of hanging the test.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"central", "--data-dir", t.TempDir(), "--http", "127.0.0.1:0", "--mqtt-listen", "127.0.0.1:0"}, tc.args...)
			code := run(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != 2 || !strings.Contains(errb.String(), tc.err) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errb.String(), tc.err)
			}
		})
	}
}
