package archtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/sossego/sossego/"

// rule says what the packages matching pkg may import besides the standard
// library: module packages (paths relative to the module) and outside
// modules (path prefixes). A pattern ending in "/..." matches the folder and
// everything under it.
type rule struct {
	pkg      string
	internal []string
	external []string
}

// rules is ARCHITECTURE.md's table, read once.
var rules = sync.OnceValues(func() ([]rule, error) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "ARCHITECTURE.md"))
	if err != nil {
		return nil, err
	}
	return parseRules(string(doc))
})

// parseRules reads the table whose header is "| package | what it is | may
// import |": the first column's first `quoted` path is the row's package
// (a trailing "/" dropped), the third column's `quoted` paths what it may
// import (an outside module when its first element has a dot).
func parseRules(doc string) ([]rule, error) {
	var out []rule
	in := false
	for n, line := range strings.Split(doc, "\n") {
		cells := strings.Split(strings.TrimSpace(line), "|")
		switch {
		case len(cells) == 5 && strings.TrimSpace(cells[1]) == "package" && strings.TrimSpace(cells[3]) == "may import":
			in = true
			continue
		case !in:
			continue
		case len(cells) < 5:
			if len(out) == 0 {
				return nil, fmt.Errorf("ARCHITECTURE.md:%d: the package table has no rows", n+1)
			}
			return out, nil
		case strings.HasPrefix(strings.TrimSpace(cells[1]), "---"):
			continue
		}
		pkgs := quoted(cells[1])
		if len(pkgs) == 0 {
			return nil, fmt.Errorf("ARCHITECTURE.md:%d: a row without a `package`", n+1)
		}
		r := rule{pkg: strings.TrimSuffix(pkgs[0], "/")}
		for _, imp := range quoted(cells[len(cells)-2]) {
			if imp != "..." && strings.Contains(strings.Split(imp, "/")[0], ".") {
				r.external = append(r.external, imp)
			} else {
				r.internal = append(r.internal, imp)
			}
		}
		out = append(out, r)
	}
	if !in {
		return nil, errors.New("ARCHITECTURE.md has no table headed | package | what it is | may import |")
	}
	return out, nil
}

// quoted is every `backquoted` text of a table cell.
func quoted(cell string) []string {
	parts := strings.Split(cell, "`")
	var out []string
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}

// rulesOf is the table, failing t when it cannot be read.
func rulesOf(t *testing.T) []rule {
	t.Helper()
	rs, err := rules()
	if err != nil {
		t.Fatal(err)
	}
	return rs
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

// ruleFor is the row of pkg: its own, else the folder row covering it.
func ruleFor(rs []rule, pkg string) (rule, bool) {
	for _, r := range rs {
		if r.pkg == pkg {
			return r, true
		}
	}
	for _, r := range rs {
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
	rs := rulesOf(t)
	pkgs := packages(t)
	if len(pkgs) < 30 {
		t.Fatalf("go list found %d packages; expected the whole module", len(pkgs))
	}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module)
		r, ok := ruleFor(rs, rel)
		if !ok {
			t.Errorf("%s has no row in ARCHITECTURE.md's table: add one", rel)
			continue
		}
		for _, imp := range p.Imports {
			if !r.allows(imp) {
				t.Errorf("%s imports %s, which its row in ARCHITECTURE.md (%q) does not allow", rel, strings.TrimPrefix(imp, module), r.pkg)
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
		{"internal/workflow", module + "dashboard", false},
		{"internal/workflow", module + "internal/cases/casesdb", false},
		{"internal/workflow", "modernc.org/sqlite", false},
		{"dashboard", module + "internal/workflow", true},
	}
	rs := rulesOf(t)
	for _, c := range cases {
		r, ok := ruleFor(rs, c.pkg)
		if !ok {
			t.Fatalf("no rule for %s", c.pkg)
		}
		if got := r.allows(c.imp); got != c.allowed {
			t.Errorf("%s importing %s: allowed=%v, want %v", c.pkg, c.imp, got, c.allowed)
		}
	}
}

// TestEveryRowIsAPackage: a row of ARCHITECTURE.md's table names a
// package (or a folder of packages) that exists, so the table holds no
// stale row; scripts/ is the one folder without Go.
func TestEveryRowIsAPackage(t *testing.T) {
	var paths []string
	for _, p := range packages(t) {
		paths = append(paths, strings.TrimPrefix(p.ImportPath, module))
	}
	for _, r := range rulesOf(t) {
		if r.pkg == "scripts" {
			continue
		}
		if !slices.ContainsFunc(paths, func(p string) bool { return match(r.pkg, p) }) {
			t.Errorf("ARCHITECTURE.md has a row for %s, which is no package of the module", r.pkg)
		}
	}
}

// TestParseRules: the table's grammar, on a small document.
func TestParseRules(t *testing.T) {
	doc := "intro\n\n| package | what it is | may import |\n|---|---|---|\n" +
		"| `codes/` | the codes. | `internal/tz`, `go.yaml.in/yaml/v3` |\n" +
		"| `internal/level` | maths. | — |\n" +
		"| `firmware-bridge/...` (package `bridge`) | drivers. | `firmware-bridge/...`, `periph.io/x/` |\n" +
		"| `cmd/sossego` | the main (`central`, `demo`). | `...`, `golang.org/x/` |\n\nRules: prose.\n"
	rs, err := parseRules(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []rule{{"codes", []string{"internal/tz"}, []string{"go.yaml.in/yaml/v3"}}, {"internal/level", nil, nil},
		{"firmware-bridge/...", []string{"firmware-bridge/..."}, []string{"periph.io/x/"}}, {"cmd/sossego", []string{"..."}, []string{"golang.org/x/"}}}
	if !reflect.DeepEqual(rs, want) {
		t.Errorf("parseRules = %+v, want %+v", rs, want)
	}
	if _, err := parseRules("no table here"); err == nil {
		t.Error("a document without the table parsed")
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

// TestWorkflowSpeaksNoHTTP: the fiscal's workflow (called by the
// dashboard's handlers, the CLI and the central service alike) and the
// report engine neither serve nor read HTTP.
func TestWorkflowSpeaksNoHTTP(t *testing.T) {
	pkgs := goList(t, "./internal/workflow/...", "./internal/reports/...")
	if len(pkgs) < 2 {
		t.Fatal("go list found no internal/workflow or internal/reports package")
	}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if imp == "net/http" || strings.HasPrefix(imp, "net/http/") {
				t.Errorf("%s imports %s: HTTP belongs to dashboard", p.ImportPath, imp)
			}
			if strings.HasSuffix(imp, "/dashboard") {
				t.Errorf("%s imports %s: dashboard calls it, not the other way round", p.ImportPath, imp)
			}
		}
	}
}
