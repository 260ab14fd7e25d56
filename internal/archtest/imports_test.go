package archtest

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sossego/sossego/"

// rule says what the packages matching pkg may import besides the standard
// library: module packages (paths relative to the module) and outside
// modules (path prefixes). A pattern ending in "/..." matches the folder and
// everything under it. This table is ARCHITECTURE.md's "may import" column
// made checkable; change both together.
type rule struct {
	pkg      string
	internal []string
	external []string
}

var rules = []rule{
	// Pure engines: no I/O libraries, no store, no network.
	{"codes", []string{"internal/tz"}, []string{"go.yaml.in/yaml/v3"}},
	{"alerts", []string{"codes", "internal/level", "internal/tz"}, nil},
	{"alerts/notice", []string{"alerts", "codes", "internal/docid", "internal/tz"}, nil},
	{"alerts/evidence", []string{"alerts", "alerts/notice", "codes", "internal/level", "internal/tz", "internal/wire", "internal/wire/signature"}, []string{"github.com/go-json-experiment/json", "github.com/klauspost/compress/flate"}},
	{"alerts/notify", []string{"alerts", "internal/tz"}, []string{"go.yaml.in/yaml/v3"}},
	{"alerts/alertstest", []string{"alerts", "codes", "internal/tz"}, nil},
	{"alerts/notice/noticetest", []string{"alerts", "alerts/notice", "codes", "internal/tz"}, nil},
	{"internal/level", nil, nil},
	{"internal/stats", []string{"codes", "internal/level", "internal/tz"}, nil},
	{"internal/tz", nil, nil},
	{"internal/docid", nil, nil},
	{"internal/archtest", nil, nil},
	{"internal/testenv", nil, nil},
	{"internal/mochitest", []string{"internal/conntrack"}, []string{"github.com/mochi-mqtt/server/v2"}},

	// The edge: drivers and the gateway link nothing of the central service.
	{"firmware-bridge/...", []string{"firmware-bridge/...", "internal/level", "internal/tz"},
		[]string{"periph.io/x/", "go.bug.st/serial", "golang.org/x/sys/"}},
	{"gateway", []string{"firmware-bridge", "internal/level", "internal/sqlitedb", "internal/wire"},
		[]string{"golang.org/x/sync/", "golang.org/x/sys/", "modernc.org/sqlite"}},
	{"gateway/mqttconn", []string{"gateway", "firmware-bridge", "internal/mqttnet", "internal/wire"},
		[]string{"github.com/eclipse/paho.mqtt.golang", "golang.org/x/sync/"}},
	{"gateway/gatewaytest", []string{"firmware-bridge", "gateway/mqttconn", "internal/mochitest", "internal/wire", "internal/wire/signature"},
		[]string{"github.com/eclipse/paho.mqtt.golang"}},
	{"cmd/sossego-gateway", []string{"firmware-bridge/...", "gateway/...", "internal/wire", "internal/tz"},
		[]string{"go.yaml.in/yaml/v3", "periph.io/x/"}},

	// Shared plumbing.
	{"internal/wire", []string{"internal/level"}, []string{"github.com/go-json-experiment/json"}},
	{"internal/wire/signature", []string{"internal/wire"}, []string{"github.com/oasisprotocol/curve25519-voi/"}},
	{"internal/mqttnet", nil, []string{"github.com/eclipse/paho.mqtt.golang"}},
	{"internal/sqlitedb", nil, []string{"modernc.org/sqlite"}},
	{"internal/backup", []string{"internal/sqlitedb"}, nil},
	{"internal/conntrack", nil, nil},

	// The central service's parts.
	{"internal/broker", []string{"internal/conntrack", "internal/wire"}, []string{"github.com/mochi-mqtt/server/v2", "golang.org/x/crypto/"}},
	{"internal/registry", []string{"internal/calibration", "internal/docid", "internal/wire", "internal/wire/signature"}, []string{"go.yaml.in/yaml/v3"}},
	{"internal/ingest/...", []string{"internal/ingest/...", "internal/mqttnet", "internal/registry", "internal/store", "internal/wire", "internal/wire/signature"},
		[]string{"github.com/eclipse/paho.mqtt.golang", "github.com/prometheus/client_golang/", "golang.org/x/crypto/"}},
	{"internal/store", []string{"internal/level", "internal/wire"}, nil},
	{"internal/store/sqlitestore", []string{"internal/level", "internal/sqlitedb", "internal/store", "internal/wire"}, nil},
	{"internal/store/influxstore", []string{"internal/store"}, []string{"github.com/influxdata/influxdb-client-go/v2"}},
	{"internal/alertstore", []string{"alerts", "internal/sqlitedb"}, []string{"modernc.org/sqlite"}},
	{"internal/longterm", []string{"internal/sqlitedb", "internal/stats", "internal/store"}, nil},
	{"internal/calibration", []string{"internal/tz", "internal/wire"}, nil},
	{"internal/calibration/calibrationdb", []string{"internal/calibration", "internal/ingest", "internal/sqlitedb"},
		[]string{"github.com/prometheus/client_golang/"}},
	{"internal/retention", []string{"internal/store"}, []string{"github.com/prometheus/client_golang/"}},
	{"internal/cases", []string{"alerts/notice", "codes", "internal/tz"}, nil},
	{"internal/cases/casesdb", []string{"alerts/notice", "codes", "internal/cases", "internal/sqlitedb", "internal/tz"}, nil},
	{"internal/pdf", []string{"alerts", "alerts/evidence", "alerts/notice", "codes", "internal/level", "internal/stats", "internal/tz"},
		[]string{"codeberg.org/go-pdf/fpdf", "codeberg.org/go-fonts/liberation/", "gonum.org/v1/plot", "golang.org/x/image/font", "github.com/boombuler/barcode"}},
	{"internal/users", nil, []string{"golang.org/x/crypto/"}},
	{"internal/users/usersdb", []string{"internal/sqlitedb", "internal/users"}, nil},
	{"internal/monetary", []string{"codes"}, nil},
	{"internal/monetary/monetarydb", []string{"internal/monetary", "internal/sqlitedb"}, nil},
	{"internal/holidays", []string{"codes"}, nil},
	{"internal/holidays/holidaysdb", []string{"internal/holidays", "internal/sqlitedb"}, nil},
	{"internal/notify", []string{"alerts", "alerts/notify", "internal/sqlitedb", "internal/tz"},
		[]string{"github.com/wneessen/go-mail", "github.com/SherClockHolmes/webpush-go", "github.com/prometheus/client_golang/",
			"golang.org/x/sync/", "modernc.org/sqlite"}},
	// The HTTP API: every /api/v1 handler, the fiscal's workflow and the
	// register's included; consumers of types and small interfaces, never a
	// database driver.
	{"dashboard", []string{"alerts", "alerts/evidence", "alerts/notice", "alerts/notify", "codes", "internal/calibration", "internal/cases",
		"internal/docid", "internal/holidays", "internal/monetary", "internal/pdf", "internal/registry", "internal/stats", "internal/store", "internal/users", "internal/tz"},
		[]string{"github.com/gorilla/websocket", "gonum.org/v1/plot/vg"}},
	{"dashboard/dashtest", []string{"internal/testenv"}, []string{"github.com/chromedp/"}},

	// Wiring: only these reach everything.
	{"internal/central", []string{"alerts/...", "codes", "dashboard", "internal/..."},
		[]string{"github.com/prometheus/client_golang/", "golang.org/x/sync/", "golang.org/x/sys/"}},
	{"cmd/sossego", []string{"..."}, []string{"golang.org/x/"}},
}

func match(pattern, path string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

func ruleFor(pkg string) (rule, bool) {
	for _, r := range rules {
		if match(r.pkg, pkg) {
			return r, true
		}
	}
	return rule{}, false
}

func (r rule) allows(imp string) bool {
	if rel, ok := strings.CutPrefix(imp, module); ok {
		for _, p := range r.internal {
			if match(p, rel) {
				return true
			}
		}
		return false
	}
	if !strings.Contains(strings.Split(imp, "/")[0], ".") {
		return true // standard library
	}
	for _, p := range r.external {
		if imp == p || strings.HasPrefix(imp, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

type listed struct {
	ImportPath string
	Imports    []string
}

// packages lists the module's packages and their non-test imports.
func packages(t *testing.T) []listed {
	t.Helper()
	return goList(t, "./...")
}

// goList runs go list -json=ImportPath,Imports with args from the module's
// root.
func goList(t *testing.T, args ...string) []listed {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports"}, args...)...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestImportsFollowArchitecture(t *testing.T) {
	pkgs := packages(t)
	if len(pkgs) < 30 {
		t.Fatalf("go list found %d packages; expected the whole module", len(pkgs))
	}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module)
		r, ok := ruleFor(rel)
		if !ok {
			t.Errorf("%s has no row in the import rules: add it here and to ARCHITECTURE.md", rel)
			continue
		}
		for _, imp := range p.Imports {
			if !r.allows(imp) {
				t.Errorf("%s imports %s, which its row (%q) does not allow", rel, strings.TrimPrefix(imp, module), r.pkg)
			}
		}
	}
}

// TestRulesCatchViolations checks the checker on imports that must be
// refused, so an empty result above means something.
func TestRulesCatchViolations(t *testing.T) {
	cases := []struct {
		pkg, imp string
		allowed  bool
	}{
		{"codes", module + "internal/store", false},
		{"codes", "os", true},
		{"codes", "go.yaml.in/yaml/v3", true},
		{"alerts", "modernc.org/sqlite", false},
		{"alerts/notify", module + "internal/notify", false},
		{"alerts/notify", "github.com/wneessen/go-mail", false},
		{"dashboard", module + "internal/notify", false},
		{"alerts/notice", module + "internal/pdf", false},
		{"gateway", module + "internal/store", false},
		{"gateway", module + "codes", false},
		{"firmware-bridge/pcbadbm", module + "gateway", false},
		{"firmware-bridge/pcbadbm", "periph.io/x/conn/v3/i2c", true},
		{"dashboard", module + "internal/central", false},
		{"dashboard", "modernc.org/sqlite", false},
		{"dashboard", "github.com/influxdata/influxdb-client-go/v2", false},
		{"internal/store", module + "dashboard", false},
		{"internal/store", "modernc.org/sqlite", false},
		{"internal/store", module + "internal/sqlitedb", false},
		{"internal/store", "github.com/influxdata/influxdb-client-go/v2", false},
		{"dashboard", module + "internal/store/sqlitestore", false},
		{"dashboard", module + "internal/store/influxstore", false},
		{"dashboard", module + "internal/cases", true},
		{"dashboard", module + "internal/cases/casesdb", false},
		{"internal/cases", module + "internal/sqlitedb", false},
		{"internal/cases", "modernc.org/sqlite", false},
		{"internal/central", module + "internal/cases/casesdb", true},
		{"dashboard", module + "internal/calibration/calibrationdb", false},
		{"dashboard", module + "internal/calibration", true},
		{"internal/calibration", module + "internal/sqlitedb", false},
		{"internal/calibration", "modernc.org/sqlite", false},
		{"internal/calibration", "github.com/prometheus/client_golang/prometheus", false},
		{"internal/ingest", module + "internal/store/sqlitestore", false},
		{"internal/retention", module + "internal/store/sqlitestore", false},
		{"internal/longterm", module + "internal/store/influxstore", false},
		{"internal/central", module + "internal/store/sqlitestore", true},
		{"internal/central", module + "internal/store", true},
		{"internal/central", module + "cmd/sossego", false},
		{"cmd/sossego", module + "internal/central", true},
	}
	for _, c := range cases {
		r, ok := ruleFor(c.pkg)
		if !ok {
			t.Fatalf("no rule for %s", c.pkg)
		}
		if got := r.allows(c.imp); got != c.allowed {
			t.Errorf("%s importing %s: allowed=%v, want %v", c.pkg, c.imp, got, c.allowed)
		}
	}
}

// TestRulesNameArchitectureFolders: every module folder in the rules is
// named in ARCHITECTURE.md, so the document and the check cannot drift apart
// silently.
func TestRulesNameArchitectureFolders(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for _, r := range rules {
		top := strings.TrimSuffix(r.pkg, "/...")
		if !strings.Contains(text, top) {
			t.Errorf("ARCHITECTURE.md does not name %s, which the import rules cover", top)
		}
	}
}

// TestConsumersLinkNoStoreBackend: the stores' consumers link their types,
// not their backends. The dashboard and the types packages of every store
// (readings, cases, calibration, users, monetary units, holidays) link no
// SQLite at all; the others reach it only through internal/sqlitedb, the
// one package that imports the driver itself.
func TestConsumersLinkNoStoreBackend(t *testing.T) {
	forbidden := []string{
		module + "internal/store/sqlitestore",
		module + "internal/store/influxstore",
		"github.com/influxdata/influxdb-client-go/v2",
	}
	// Driver-free: what their consumers import links no SQLite at all.
	// The dashboard reaches every store through the consumer-side
	// interfaces it declares; only internal/central wires the backends.
	driverFree := map[string]bool{"dashboard": true, "internal/store": true, "internal/calibration": true, "internal/cases": true,
		"internal/users": true, "internal/monetary": true, "internal/holidays": true}
	for _, pkg := range []string{"dashboard", "internal/store", "internal/calibration", "internal/cases", "internal/users", "internal/monetary",
		"internal/holidays", "internal/ingest", "internal/retention", "internal/longterm"} {
		deps := dependencies(t, pkg)
		if len(deps) < 5 {
			t.Fatalf("go list -deps %s: %d packages; expected its whole graph", pkg, len(deps))
		}
		for _, d := range deps {
			for _, f := range forbidden {
				if d.ImportPath == f || strings.HasPrefix(d.ImportPath, f+"/") {
					t.Errorf("%s links %s", pkg, d.ImportPath)
				}
			}
			if d.ImportPath != module+"internal/sqlitedb" && slices.Contains(d.Imports, "modernc.org/sqlite") {
				t.Errorf("%s links the SQLite driver through %s, not internal/sqlitedb", pkg, d.ImportPath)
			}
		}
		if driverFree[pkg] {
			for _, d := range deps {
				if strings.HasPrefix(d.ImportPath, "modernc.org/sqlite") || d.ImportPath == module+"internal/sqlitedb" {
					t.Errorf("%s links %s: it must stay driver-free", pkg, d.ImportPath)
				}
			}
		}
	}
}

// dependencies lists pkg and everything it links (not its tests).
func dependencies(t *testing.T, pkg string) []listed {
	t.Helper()
	return goList(t, "-deps", "./"+pkg)
}
