package registry

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestDemoRegistryIsValidAndMatchesDocs(t *testing.T) {
	r, err := Parse(DemoYAML())
	if err != nil {
		t.Fatalf("demo registry: %v", err)
	}
	s, ok := r.Sensor("lapa-bar-01")
	if !ok {
		t.Fatal("lapa-bar-01 missing")
	}
	if s.Code != "lapa" || s.Zone != "other" || s.Municipality() != "lapa" || len(s.Establishments) != 1 ||
		s.Establishments[0].Type != "bar" || s.Establishments[0].Mechanism != "sound_system" {
		t.Errorf("lapa-bar-01 = %+v", s)
	}
	h, _ := r.Sensor("lapa-hospital-01")
	if h.Code != "lapa" { // defaulted from the gateway
		t.Errorf("default code = %q, want lapa", h.Code)
	}
	m, _ := r.Sensor("macabu-praca-01")
	if m.Code != "conceicao-de-macabu" {
		t.Errorf("macabu code = %q", m.Code)
	}
	g, _ := r.Gateway("lapa-centro-01")
	if !g.SignatureRequired() || len(g.Key()) != 32 {
		t.Errorf("gateway key/signature: %v %d", g.SignatureRequired(), len(g.Key()))
	}
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "registry.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(docs, DemoYAML()) {
		t.Error("docs/registry.example.yaml differs from internal/registry/demo.yaml; copy one onto the other")
	}
}

const good = `version: 1
gateways:
  - id: gw-1
    municipality: lapa
    public_key: WrzeNbYxVwayPNXiG85tUhP9oy1l28/sW1YVlsn/6G0=
sensors:
  - id: s-1
    gateway: gw-1
    zone: other
    location: {lat: -25.7, lon: -49.7}
    address: Rua A, 1
    meter: {grade: screening}
`

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name     string
		yaml     string
		line     int
		contains string
	}{
		{"unknown top key", good + "extra: 1\n", 13, `campo desconhecido "extra"`},
		{"unknown gateway key", strings.Replace(good, "    municipality: lapa\n", "    municipality: lapa\n    colour: red\n", 1), 5, `campo desconhecido "colour" em raiz do cadastro.gateways[0]; campos válidos: id, municipality`},
		{"unknown nested key", strings.Replace(good, "{grade: screening}", "{grade: screening, gain: 3}", 1), 12, `"gain"`},
		{"bad zone", strings.Replace(good, "zone: other", "zone: downtown", 1), 7, "zone \"downtown\" desconhecida"},
		{"unknown gateway", strings.Replace(good, "gateway: gw-1", "gateway: gw-9", 1), 7, "gw-9"},
		{"bad key", strings.Replace(good, "WrzeNbYxVwayPNXiG85tUhP9oy1l28/sW1YVlsn/6G0=", "abc", 1), 3, "public_key"},
		// 32 bytes that do not decode to a curve point (y = 2).
		{"key off the curve", strings.Replace(good, "WrzeNbYxVwayPNXiG85tUhP9oy1l28/sW1YVlsn/6G0=", "AgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", 1), 3, "fora da curva"},
		{"key of small order", strings.Replace(good, "WrzeNbYxVwayPNXiG85tUhP9oy1l28/sW1YVlsn/6G0=", "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", 1), 3, "de ordem pequena"},
		{"missing key with signature", strings.Replace(good, "    public_key: WrzeNbYxVwayPNXiG85tUhP9oy1l28/sW1YVlsn/6G0=\n", "", 1), 3, "public_key ausente"},
		{"bad id", strings.Replace(good, "id: s-1", "id: S 1", 1), 7, "sensor id"},
		{"bad grade", strings.Replace(good, "grade: screening", "grade: pro", 1), 7, "meter.grade"},
		{"class2 without calibration", strings.Replace(good, "grade: screening", "grade: class2", 1), 7, "calibrated_at"},
		{"no location", strings.Replace(good, "    location: {lat: -25.7, lon: -49.7}\n", "", 1), 7, "location"},
		{"plain password", strings.Replace(good, "    municipality: lapa\n", "    municipality: lapa\n    mqtt_password_hash: secret\n", 1), 3, "bcrypt"},
		{"mosquitto_passwd hash", strings.Replace(good, "    municipality: lapa\n", "    municipality: lapa\n    mqtt_password_hash: $7$101$c2FsdA==$aGFzaA==\n", 1), 3, "formato do mosquitto_passwd ($7$…), que o broker embutido não lê; gere um hash bcrypt com `htpasswd -nbB gw-1 SENHA`"},
		{"wrong type", strings.Replace(good, "{lat: -25.7, lon: -49.7}", "{lat: north, lon: -49.7}", 1), 10, "tipo errado"},
		{"version", strings.Replace(good, "version: 1", "version: 2", 1), 1, "version"},
		{"bad cnpj", good + "    establishments:\n      - {name: X, document: 12.345.678/0001-96, address: Y, type: bar}\n", 7, "dígito verificador do CNPJ"},
		{"bad type", good + "    establishments:\n      - {name: X, document: 123.456.789-09, address: Y, type: pub}\n", 7, `type "pub"`},
		{"duplicate sensor", good + strings.SplitN(good, "sensors:\n", 2)[1], 13, "duas vezes"},
		{"service user as gateway id", strings.ReplaceAll(good, "gw-1", ServiceUser), 3, `gateway id "sossego-central" é reservado`},
		{"not yaml", "version: [1\n", 0, "YAML inválido"},
		{"empty", "", 0, "vazio"},
		{"alias", "version: 1\nx: &a 1\ngateways: *a\n", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil {
				t.Fatal("want error, got nil")
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q does not contain %q", err, tc.contains)
			}
			if tc.line > 0 && !strings.Contains(err.Error(), "linha "+strconv.Itoa(tc.line)+":") {
				t.Errorf("error %q does not name line %d", err, tc.line)
			}
		})
	}
}

func TestCheckDocument(t *testing.T) {
	cases := []struct {
		doc string
		ok  bool
	}{
		{"123.456.789-09", true},
		{"12345678909", true},
		{"123.456.789-08", false},
		{"111.111.111-11", false},
		{"12.345.678/0001-95", true},
		{"12345678000195", true},
		{"12.345.678/0001-94", false},
		{"00.000.000/0000-00", false},
		{"12.ABC.345/01DE-35", true}, // Receita Federal's alphanumeric example
		{"12.ABC.345/01DE-36", false},
		{"12.345.678/0001-9A", false},
		{"", false},
		{"123", false},
	}
	for _, tc := range cases {
		err := CheckDocument(tc.doc)
		if (err == nil) != tc.ok {
			t.Errorf("CheckDocument(%q) = %v, want ok=%v", tc.doc, err, tc.ok)
		}
	}
}

func TestLiveReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	first := l.Current()
	if _, ok := first.Sensor("s-1"); !ok {
		t.Fatal("s-1 missing")
	}
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, time.Hour, hup) }()

	// A broken file keeps the old register.
	if err := os.WriteFile(path, []byte(good+"bogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hup <- struct{}{}
	waitFor(t, func() bool { return l.Err() != nil })
	if l.Current() != first {
		t.Error("broken file replaced the register")
	}
	// A valid change is swapped in.
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(good, "s-1", "s-2")), 0o600); err != nil {
		t.Fatal(err)
	}
	hup <- struct{}{}
	waitFor(t, func() bool { _, ok := l.Current().Sensor("s-2"); return ok })
	if l.Err() != nil {
		t.Errorf("Err after good reload = %v", l.Err())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestLivePollsModTime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = l.Run(ctx, 10*time.Millisecond, nil) }()
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(good, "s-1", "s-polled")), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, ok := l.Current().Sensor("s-polled"); return ok })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached in 10 s")
}

func TestErrorsType(t *testing.T) {
	_, err := Parse([]byte(good + "extra: 1\n"))
	var es Errors
	if !errors.As(err, &es) || len(es) != 1 || es[0].Line != 13 {
		t.Fatalf("err = %#v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add(DemoYAML())
	f.Add([]byte("version: 1\ngateways: [{id: a}]\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			if r != nil {
				t.Fatal("registry returned with an error")
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		for _, s := range r.Sensors() {
			if _, ok := r.Gateway(s.Gateway); !ok {
				t.Fatalf("sensor %q references unknown gateway", s.ID)
			}
		}
	})
}
