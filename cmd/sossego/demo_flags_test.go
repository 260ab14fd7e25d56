package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sossego/sossego/internal/central"
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

// TestDemoBusyDefaultPorts: when the default ports (8080, 1883) are taken
// and no --http or --mqtt-listen is given, the demo takes free ports and
// says so; an address given on the command line is kept as given.
func TestDemoBusyDefaultPorts(t *testing.T) {
	for _, addr := range []string{central.DefaultHTTP, central.DefaultMQTTListen} {
		// Busy either way: held here, or already taken by something else.
		if ln, err := net.Listen("tcp", addr); err == nil {
			t.Cleanup(func() { ln.Close() })
		}
	}
	var out, errb bytes.Buffer
	io := stdio{in: strings.NewReader(""), out: &out, err: &errb}
	f, code, ok := parseDemo([]string{"--data-dir", t.TempDir()}, io)
	if !ok || f.httpAddr != "127.0.0.1:0" || f.mqttAddr != "127.0.0.1:0" {
		t.Fatalf("parseDemo: ok %v code %d http %q mqtt %q; want free ports (127.0.0.1:0)", ok, code, f.httpAddr, f.mqttAddr)
	}
	for _, addr := range []string{central.DefaultHTTP, central.DefaultMQTTListen} {
		if want := "sossego demo: " + addr + " ocupado; usando uma porta livre"; !strings.Contains(errb.String(), want) {
			t.Errorf("stderr %q lacks %q", errb.String(), want)
		}
	}
	errb.Reset()
	f, _, ok = parseDemo([]string{"--data-dir", t.TempDir(), "--http", central.DefaultHTTP, "--mqtt-listen", central.DefaultMQTTListen}, io)
	if !ok || f.httpAddr != central.DefaultHTTP || f.mqttAddr != central.DefaultMQTTListen {
		t.Errorf("addresses given on the command line: got http %q mqtt %q; want them kept", f.httpAddr, f.mqttAddr)
	}
}
