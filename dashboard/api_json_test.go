package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestReadJSON: the one body reader refuses what each kind of route must
// refuse, with a 400 whose pt-BR message says what to fix, and accepts the
// rest.
func TestReadJSON(t *testing.T) {
	type body struct {
		Note string `json:"note"`
	}
	for _, tc := range []struct {
		name, ctype, in string
		kind            bodyKind
		want            string // "" = accepted
		note            string
	}{
		{"object", "application/json", `{"note":"x"}`, jsonBody, "", "x"},
		{"charset", "application/json; charset=utf-8", `{"note":"x"}`, jsonBody, "", "x"},
		{"no content type", "", `{"note":"x"}`, jsonBody, "envie o corpo como JSON (Content-Type: application/json)", ""},
		{"form", "application/x-www-form-urlencoded", `note=x`, jsonBody, "envie o corpo como JSON", ""},
		{"empty", "application/json", ``, jsonBody, "corpo JSON vazio", ""},
		{"unknown field", "application/json", `{"nota":"x"}`, jsonBody, `corpo JSON inválido: campo desconhecido "nota"`, ""},
		{"trailing data", "application/json", `{"note":"x"} {}`, jsonBody, "corpo JSON inválido: dados depois do objeto", ""},
		{"over the cap", "application/json", `{"note":"` + strings.Repeat("x", 2048) + `"}`, jsonBody, "corpo JSON inválido: corpo maior que 1 KiB", ""},
		{"optional empty", "", ``, optionalBody, "", ""},
		{"optional any type", "text/plain", `{"note":"y"}`, optionalBody, "", "y"},
		{"optional unknown field", "", `{"nota":"x"}`, optionalBody, `campo desconhecido "nota"`, ""},
		{"optional trailing data", "", `{}x`, optionalBody, "dados depois do objeto", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tc.in))
			if tc.ctype != "" {
				r.Header.Set("Content-Type", tc.ctype)
			}
			var b body
			err := readJSON(httptest.NewRecorder(), r, 1<<10, tc.kind, &b)
			if tc.want == "" {
				if err != nil || b.Note != tc.note {
					t.Fatalf("readJSON = %v, note %q; want accepted with note %q", err, b.Note, tc.note)
				}
				return
			}
			var he *httpError
			if !errors.As(err, &he) || he.status != http.StatusBadRequest || !strings.Contains(he.msg, tc.want) {
				t.Fatalf("readJSON = %v; want 400 with %q", err, tc.want)
			}
		})
	}
}

// TestServerError: a failure inside the service answers in Portuguese with a
// fresh reference the log also carries; a full disk — as the OS or SQLite
// says it, wrapped however deep — is a 507 that says so.
func TestServerError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		want   string
	}{
		{"store error", errors.New("alertstore: sqlite /dados/cases.db: database is locked (5)"), 500, "erro interno do serviço"},
		{"disk full", fmt.Errorf("gravar: %w", &os.PathError{Op: "write", Path: "/dados/x", Err: syscall.ENOSPC}), 507,
			"o disco do servidor está cheio"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			refs := map[string]bool{}
			for range 3 {
				rec := httptest.NewRecorder()
				serverError(rec, slog.New(slog.NewTextHandler(&logs, nil)), "teste", tc.err)
				var ans struct{ Erro, Referencia string }
				if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
					t.Fatal(err)
				}
				if rec.Code != tc.status || !strings.HasPrefix(ans.Erro, tc.want) || strings.Contains(ans.Erro, "/dados") ||
					!strings.Contains(ans.Erro, ans.Referencia) || !strings.Contains(logs.String(), "referencia="+ans.Referencia) {
					t.Errorf("HTTP %d %+v; log %s", rec.Code, ans, logs.String())
				}
				refs[ans.Referencia] = true
			}
			if len(refs) != 3 {
				t.Errorf("references repeat: %v", refs)
			}
		})
	}
}
