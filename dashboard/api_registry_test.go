package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sossego/sossego/internal/registry"
)

// fakeRegistryFile is the register file the routes read and replace, with a
// reload that can be made to fail.
type fakeRegistryFile struct {
	path      string
	reloadErr error
	reloads   int
}

func (f *fakeRegistryFile) Path() string                   { return f.path }
func (f *fakeRegistryFile) Check(*registry.Registry) error { return nil }
func (f *fakeRegistryFile) Reload() error {
	f.reloads++
	return f.reloadErr
}

var refPattern = regexp.MustCompile(`^[0-9a-f]{8}$`)

// TestRegistryAPIFailures: a register the service cannot read or write is a
// 500 whose Portuguese answer gives a reference and never the system's own
// words (paths, English errors); the log holds the error under that
// reference. A file written but not reloaded is said as such, and the file
// on disk is the one sent.
func TestRegistryAPIFailures(t *testing.T) {
	dir := t.TempDir()
	demo := registry.DemoYAML()
	for _, tc := range []struct {
		name      string
		method    string
		path      string // the register file
		reloadErr error
		status    int
		want      string // in the answer's "erro"
		logged    string // in the log line with the reference; "" = no error logged
		written   bool   // the file on disk is the body sent
	}{
		{"read a missing file", "GET", filepath.Join(dir, "nao-existe.yaml"), nil, 500,
			"a operação não foi concluída", "no such file or directory", false},
		{"write into a missing folder", "PUT", filepath.Join(dir, "sem-pasta", "registry.yaml"), nil, 500,
			"a operação não foi concluída", "nada foi alterado", false},
		{"written but not reloaded", "PUT", filepath.Join(dir, "reload.yaml"), errors.New("registry: stat: input/output error"), 500,
			"o cadastro foi gravado, mas o serviço não conseguiu relê-lo e segue com o anterior", "input/output error", true},
		{"written and reloaded", "PUT", filepath.Join(dir, "ok.yaml"), nil, 200, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			f := &fakeRegistryFile{path: tc.path, reloadErr: tc.reloadErr}
			h := NewRegistryAPI(f, slog.New(slog.NewTextHandler(&logs, nil)))
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(tc.method, "/api/v1/registry", bytes.NewReader(demo))
			if tc.method == "GET" {
				h.get(rec, req)
			} else {
				h.put(rec, req)
			}
			if rec.Code != tc.status {
				t.Fatalf("HTTP %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			got, err := os.ReadFile(tc.path)
			if tc.written != (err == nil && bytes.Equal(got, demo)) {
				t.Errorf("file written = %v, want %v (%v)", !tc.written, tc.written, err)
			}
			if tc.status == 200 {
				if f.reloads != 1 || logs.Len() != 0 && strings.Contains(logs.String(), "level=ERROR") {
					t.Errorf("reloads = %d, log = %s", f.reloads, logs.String())
				}
				return
			}
			var ans struct{ Erro, Referencia string }
			if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(ans.Erro, tc.want) || !refPattern.MatchString(ans.Referencia) ||
				!strings.Contains(ans.Erro, ans.Referencia) {
				t.Errorf("answer %+v, want %q and an 8-digit reference in it", ans, tc.want)
			}
			for _, leak := range []string{dir, "no such file", "input/output", "registry:", "open "} {
				if strings.Contains(ans.Erro, leak) {
					t.Errorf("answer shows %q: %s", leak, ans.Erro)
				}
			}
			if line := logs.String(); !strings.Contains(line, "referencia="+ans.Referencia) || !strings.Contains(line, tc.logged) {
				t.Errorf("log %q lacks the reference %s or %q", line, ans.Referencia, tc.logged)
			}
		})
	}
}
