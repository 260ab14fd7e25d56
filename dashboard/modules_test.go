package dashboard

import (
	"io"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"testing"
)

// The UI's scripts are ES modules under static/js, served with a
// JavaScript MIME type and the strict CSP; every import names an embedded
// module and an export it has; no module reaches another through a global.
func TestModulesServed(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{})
	mods, err := fs.Glob(StaticFS(), "js/*.js")
	if err != nil || len(mods) < 10 {
		t.Fatalf("modules under static/js: %v %v", mods, err)
	}
	for _, name := range append(mods, "vendor/uplot/uPlot.iife.min.js", "sw.js") {
		resp, err := http.Get(f.srv.URL + "/static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("%s: %d, %d bytes", name, resp.StatusCode, len(body))
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/javascript; charset=utf-8" {
			t.Errorf("%s: Content-Type %q, want text/javascript", name, ct)
		}
		if got := resp.Header.Get("Content-Security-Policy"); got != csp {
			t.Errorf("%s: CSP %q", name, got)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", name)
		}
	}
	// The CSP stays strict: scripts from this origin only, nothing inline.
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
		if strings.Contains(csp, bad) {
			t.Errorf("CSP allows %q: %s", bad, csp)
		}
	}

	index, err := fs.ReadFile(StaticFS(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(index), `<script type="module" src="/static/js/app.js"></script>`) {
		t.Error("index.html does not load js/app.js as a module")
	}
	if n := strings.Count(string(index), "<script"); n != 2 {
		t.Errorf("index.html has %d scripts, want uPlot and the entry module", n)
	}
}

var (
	importRe = regexp.MustCompile(`(?m)^import\s+(?:\{([^}]*)\}|\*\s+as\s+\w+)\s+from\s+"([^"]+)";`)
	exportRe = regexp.MustCompile(`(?m)^export\s+(?:async\s+)?(?:function|const|class|let)\s+([\w$]+)|^export\s+\{([^}]*)\}`)
	globalRe = regexp.MustCompile(`window\.sossego|window\.__|sossego:case`)
)

func TestModulesResolve(t *testing.T) {
	static := StaticFS()
	mods, _ := fs.Glob(static, "js/*.js")
	exports := map[string]map[string]bool{}
	src := map[string]string{}
	for _, m := range mods {
		b, err := fs.ReadFile(static, m)
		if err != nil {
			t.Fatal(err)
		}
		src[m] = string(b)
		exports[m] = map[string]bool{}
		for _, e := range exportRe.FindAllStringSubmatch(string(b), -1) {
			if e[1] != "" {
				exports[m][e[1]] = true
			}
			for _, n := range strings.Split(e[2], ",") {
				if n = strings.TrimSpace(n); n != "" {
					exports[m][n] = true
				}
			}
		}
	}
	reached, checked := map[string]bool{"js/app.js": true}, map[string]bool{}
	for changed := true; changed; {
		changed = false
		for m := range reached {
			if checked[m] {
				continue
			}
			checked[m] = true
			for _, im := range importRe.FindAllStringSubmatch(src[m], -1) {
				dep := path.Join(path.Dir(m), im[2])
				if _, ok := src[dep]; !ok {
					t.Errorf("%s imports %s: no such module", m, im[2])
					continue
				}
				for _, n := range strings.Split(im[1], ",") {
					n = strings.TrimSpace(strings.Split(strings.TrimSpace(n), " as ")[0])
					if n != "" && !exports[dep][n] {
						t.Errorf("%s imports %s from %s, which does not export it", m, n, im[2])
					}
				}
				if !reached[dep] {
					reached[dep], changed = true, true
				}
			}
		}
	}
	for _, m := range mods {
		if !reached[m] {
			t.Errorf("%s is not imported from js/app.js", m)
		}
		if g := globalRe.FindString(src[m]); g != "" {
			t.Errorf("%s uses the global %q: modules import what they need", m, g)
		}
	}
}
