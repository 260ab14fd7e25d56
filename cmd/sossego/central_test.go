package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sossego/sossego/internal/ingest"
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
		{"no message rate", []string{"--gateway-msgs-per-s", "0"}, `--gateway-msgs-per-s precisa ser maior que 0`},
		{"message rate not a number", []string{"--gateway-msgs-per-s", "muitas"}, `--gateway-msgs-per-s`},
		{"no burst", []string{"--gateway-msgs-burst", "0"}, `--gateway-msgs-burst pelo menos 1`},
		{"byte rate zero", []string{"--gateway-bytes-per-s", "0"}, `--gateway-bytes-per-s: use mais que 0`},
		{"byte rate garbage", []string{"--gateway-bytes-per-s", "rápido"}, `--gateway-bytes-per-s: tamanho "rápido" inválido`},
		{"byte burst under one message", []string{"--gateway-bytes-burst", "512KiB"}, `--gateway-bytes-burst 512KiB é pouco`},
		{"no evidence years", []string{"--evidence-years", "0"}, `sossego central: --evidence-years 0 inválido; use pelo menos 1 ano`},
		{"no connections", []string{"--http-max-conns", "0"}, `--http-max-conns e --http-max-conns-per-ip precisam ser pelo menos 1`},
		{"stray argument", []string{"lapa.yaml"}, `sossego central: argumento inesperado "lapa.yaml"`},
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

// TestCentralQuotaFlags: the per-gateway quota flags reach the service's
// options; without them it runs on ingest.DefaultQuota.
func TestCentralQuotaFlags(t *testing.T) {
	base := []string{"--registry", "x.yaml", "--data-dir", t.TempDir()}
	for _, tc := range []struct {
		name string
		args []string
		want ingest.Quota
	}{
		{"defaults", nil, ingest.DefaultQuota},
		{"all four", []string{"--gateway-msgs-per-s", "2.5", "--gateway-msgs-burst", "500", "--gateway-bytes-per-s", "16KiB", "--gateway-bytes-burst", "2MiB"},
			ingest.Quota{MessagesPerSecond: 2.5, MessageBurst: 500, BytesPerSecond: 16 << 10, ByteBurst: 2 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			o, code, ok := centralOptions(append(append([]string{}, base...), tc.args...), stdio{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &errb})
			if !ok && code != 0 {
				// The register does not exist: Check refuses it, after the flags were read.
				if !strings.Contains(errb.String(), "--registry") {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
			}
			if o.IngestQuota != tc.want {
				t.Errorf("quota = %+v, want %+v", o.IngestQuota, tc.want)
			}
		})
	}
}
