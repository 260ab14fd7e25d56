package central

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
)

// TestRunRefusesDemoRegisterAndBadOptions: outside the demonstration the
// service refuses to start without a register, on the demonstration
// register, or on any register with a gateway key derived from the public
// demonstration seed; bad option values are refused too, each with a
// pt-BR message naming the flag, and before anything is written.
func TestRunRefusesDemoRegisterAndBadOptions(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	demo := write("demo.yaml", registry.DemoYAML())
	synthetic, err := loadgen.RegistryYAML(loadgen.DefaultSeed, 3, 1, "lapa")
	if err != nil {
		t.Fatal(err)
	}
	lg := write("loadgen.yaml", synthetic)
	own, err := loadgen.RegistryYAML("uma-semente-so-nossa", 3, 1, "lapa")
	if err != nil {
		t.Fatal(err)
	}
	ownPath := write("own.yaml", own)
	for _, tc := range []struct {
		name string
		o    Options
		want string // "" = accepted
	}{
		{"no register", Options{}, "informe o cadastro com --registry"},
		{"the demonstration register", Options{Registry: demo}, "os gateways lapa-centro-01 e mais 1 usam chaves de demonstração"},
		{"a load-test register on the public seed", Options{Registry: lg}, "os gateways lg-0001 e mais 2 usam chaves de demonstração"},
		{"a register that does not exist", Options{Registry: filepath.Join(dir, "nada.yaml")}, "--registry: open "},
		{"bad store", Options{Registry: ownPath, Store: "postgres"}, `--store "postgres" inválido`},
		{"influx without URL", Options{Registry: ownPath, Store: "influx"}, "--store influx precisa de --influx-url"},
		{"bad sync", Options{Registry: ownPath, Sync: "sempre"}, `--sync "sempre" inválido`},
		{"bad origin", Options{Registry: ownPath, Origins: []string{"painel.lapa"}}, `--origin "painel.lapa" inválida`},
		{"bad proxy", Options{Registry: ownPath, TrustedProxies: []string{"proxy.lapa"}}, `--trusted-proxy "proxy.lapa" inválido`},
		{"TLS listener without certificates", Options{Registry: ownPath, MQTTTLSListen: ":8883"}, "precisa de --tls-cert"},
		{"own keys", Options{Registry: ownPath}, ""},
		{"the demonstration, with Demo", Options{Demo: true}, ""},
		{"the demonstration register, with Demo", Options{Registry: demo, Demo: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Check()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v, want %q", err, tc.want)
			}
			// Run refuses the same way, before creating its data dir.
			o := tc.o
			o.DataDir = filepath.Join(t.TempDir(), "dados")
			o.HTTP, o.MQTTListen = "127.0.0.1:0", "127.0.0.1:0"
			if err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(o.DataDir); !os.IsNotExist(err) {
				t.Fatalf("Run created %s before refusing (%v)", o.DataDir, err)
			}
		})
	}
}

// TestHealthProbeWithoutLogin: an outside monitor reads the health with no
// session and gets the verdict only; a logged-in user also gets the
// components. The HTTP connection gauge is exported.
func TestHealthProbeWithoutLogin(t *testing.T) {
	a := startCentral(t, Options{})
	// The ingest's MQTT session comes up after the listeners: until then
	// the probe rightly answers 503 "degradado" — the verdict only, either
	// way.
	var (
		code int
		b    []byte
	)
	probe := func() bool {
		resp, err := http.Get("http://" + a.HTTP + "/api/v1/health")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		code = resp.StatusCode
		if got := strings.TrimSpace(string(b)); got != `{"status":"ok"}` && got != `{"status":"degradado"}` {
			t.Fatalf("without a login: %d %s; want the verdict only", code, b)
		}
		return code == 200
	}
	if !waitFor(2*time.Minute, probe) {
		var detail map[string]any
		getJSON(t, "http://"+a.HTTP+"/api/v1/health", &detail)
		t.Fatalf("without a login: %d %s after 2 min; logged in: %v", code, b, detail)
	}
	var detail map[string]any
	if code := getJSON(t, "http://"+a.HTTP+"/api/v1/health", &detail); code != 200 || detail["components"] == nil {
		t.Fatalf("logged in: %d %v", code, detail)
	}
	// Other API routes still need the login.
	resp, err := http.Get("http://" + a.HTTP + "/api/v1/sensors")
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]string
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("/api/v1/sensors without a login: %d %v", resp.StatusCode, e)
	}
	resp, err = http.Get("http://" + a.HTTP + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(m), "sossego_http_connections ") {
		t.Fatal("/metrics lacks sossego_http_connections")
	}
}
