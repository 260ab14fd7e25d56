package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoRefusesBadOptions: a bad --log level or a stray argument stops
// the demo with exit status 2 and a pt-BR message, before its data folder
// is written.
func TestDemoRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		err  string
	}{
		{"log level", []string{"--log", "verbose"}, `sossego demo: --log "verbose" inválido; use debug, info, warn ou error`},
		{"stray argument", []string{"lapa"}, `sossego demo: argumento inesperado "lapa"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "demo")
			args := append([]string{"demo", "--data-dir", dir, "--http", "127.0.0.1:0", "--mqtt-listen", "127.0.0.1:0"}, tc.args...)
			var out, errb bytes.Buffer
			code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != 2 || !strings.Contains(errb.String(), tc.err) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errb.String(), tc.err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the data folder was written (%v)", err)
			}
		})
	}
}
