package dashboard

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
)

// vendorPins reads dashboard/static/vendor/uplot/VERSION (written by
// scripts/vendor-uplot.sh): the version line and "sha256  name" lines.
func vendorPins(t *testing.T) (version string, pins map[string]string) {
	t.Helper()
	b, err := fs.ReadFile(StaticFS(), "vendor/uplot/VERSION")
	if err != nil {
		t.Fatalf("read VERSION: %v", err)
	}
	pins = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "uplot":
			version = f[1]
		case len(f) == 2 && len(f[0]) == 64:
			pins[f[1]] = f[0]
		default:
			t.Fatalf("VERSION: unexpected line %q", line)
		}
	}
	return version, pins
}

// TestVendoredUPlot: the embedded uPlot files are exactly the ones pinned
// (VERSION and scripts/vendor-uplot.sh agree), nothing else sits in the
// folder, and the page loads them from this origin.
func TestVendoredUPlot(t *testing.T) {
	version, pins := vendorPins(t)
	if version != "1.6.32" {
		t.Errorf("VERSION names uplot %q, want 1.6.32", version)
	}
	for _, name := range []string{"uPlot.iife.min.js", "uPlot.min.css", "LICENSE"} {
		t.Run(name, func(t *testing.T) {
			want, ok := pins[name]
			if !ok {
				t.Fatalf("VERSION has no sha256 for %s", name)
			}
			b, err := fs.ReadFile(StaticFS(), "vendor/uplot/"+name)
			if err != nil {
				t.Fatalf("embedded %s: %v", name, err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); got != want {
				t.Errorf("embedded %s has sha256 %s, VERSION pins %s: re-run scripts/vendor-uplot.sh", name, got, want)
			}
		})
	}

	// The script's pins are the same as VERSION's.
	script, err := os.ReadFile("../scripts/vendor-uplot.sh")
	if err != nil {
		t.Fatalf("read script: %v", err)
	}
	if m := regexp.MustCompile(`(?m)^VERSION=(\S+)$`).FindSubmatch(script); m == nil || string(m[1]) != version {
		t.Errorf("scripts/vendor-uplot.sh pins version %q, VERSION says %q", m, version)
	}
	scriptPins := map[string]string{}
	for _, m := range regexp.MustCompile(`"([0-9a-f]{64}) \S+ (\S+)"`).FindAllSubmatch(script, -1) {
		scriptPins[string(m[2])] = string(m[1])
	}
	if len(scriptPins) != len(pins) {
		t.Errorf("scripts/vendor-uplot.sh pins %d files, VERSION %d", len(scriptPins), len(pins))
	}
	for name, sum := range pins {
		if scriptPins[name] != sum {
			t.Errorf("%s: VERSION pins %s, scripts/vendor-uplot.sh %q", name, sum, scriptPins[name])
		}
	}

	// Nothing unpinned is bundled.
	entries, err := fs.ReadDir(StaticFS(), "vendor/uplot")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := pins[e.Name()]; !ok && e.Name() != "VERSION" {
			t.Errorf("vendor/uplot/%s is not pinned in VERSION", e.Name())
		}
	}

	// index.html loads the bundle from this origin (the CSP allows only 'self').
	index, err := fs.ReadFile(StaticFS(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{`src="/static/vendor/uplot/uPlot.iife.min.js"`, `href="/static/vendor/uplot/uPlot.min.css"`} {
		if !bytes.Contains(index, []byte(ref)) {
			t.Errorf("index.html does not load %s", ref)
		}
	}
	if regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).Match(index) {
		t.Error("index.html loads something from another origin")
	}
}
