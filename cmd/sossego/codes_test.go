package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, stdio{in: strings.NewReader(stdin), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

func TestCodesEvalContract(t *testing.T) {
	in := strings.Join([]string{
		`{"id": "ok-1", "code": "lapa", "at": "2026-03-10T21:59:00-03:00", "zone": "other", "source": "amplified_music", "laeq_dba": 65.0, "duration_s": null, "prior_infractions": 0, "assume_in_force": false, "facts": {"establishment_type": "bar", "mechanism": "sound_system"}}`,
		`{"id": "bad-1", "code": "lapa", "at": "yesterday", "zone": "other", "source": "generic"}`,
		``,
		`{"id": "ok-2", "code": "lapa", "at": "2026-03-10T22:00:00-03:00", "zone": "other", "source": "amplified_music", "laeq_dba": 65.0, "facts": {"establishment_type": "bar"}}`,
	}, "\n")
	code, out, _ := runCLI(t, in, "codes", "eval")
	if code != 1 {
		t.Errorf("exit %d, want 1 when a line had an error", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d output lines, want 3 (blank input lines skipped):\n%s", len(lines), out)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "violation", "article", "articles", "limit_dba", "penalty_step", "reason", "warnings"} {
		if _, ok := first[k]; !ok {
			t.Errorf("output lacks key %q: %s", k, lines[0])
		}
	}
	if first["violation"] != false || first["limit_dba"] != 65.0 || first["article"] != "Art. 96" {
		t.Errorf("first verdict wrong: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"id":"bad-1"`) || !strings.Contains(lines[1], `"error"`) {
		t.Errorf("error line: %s", lines[1])
	}
	if !strings.Contains(lines[2], `"violation":true`) || !strings.Contains(lines[2], `"limit_dba":60`) {
		t.Errorf("third verdict: %s", lines[2])
	}
	code, _, _ = runCLI(t, lines[0][:0]+`{"code":"lapa","at":"2026-03-10T21:59:00-03:00","zone":"other","source":"generic"}`, "codes", "eval")
	if code != 0 {
		t.Errorf("exit %d, want 0 when every line was read", code)
	}
	if code, _, _ := runCLI(t, "", "codes", "eval", "--nope"); code != 2 {
		t.Errorf("usage error exit %d, want 2", code)
	}
}

func TestCodesShowListValidate(t *testing.T) {
	code, out, _ := runCLI(t, "", "codes", "show", "lapa")
	if code != 0 || !strings.Contains(out, "60 dB") || !strings.Contains(out, "Notificação Preliminar") {
		t.Errorf("show lapa: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "codes", "list")
	if code != 0 || strings.Count(out, "\n") != 5 || !strings.Contains(out, "REVOGADA") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	if code, _, errs := runCLI(t, "", "codes", "show", "atlantida"); code != 1 || !strings.Contains(errs, "desconhecido") {
		t.Errorf("show unknown: exit %d %s", code, errs)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "x.yaml")
	if err := os.WriteFile(bad, []byte("id: x\nfoo: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "", "codes", "validate", bad)
	if code != 1 || !strings.Contains(out, "x.yaml:2") {
		t.Errorf("validate bad: exit %d %s", code, out)
	}
	code, out, _ = runCLI(t, "", "codes", "validate", filepath.Join("..", "..", "codes", "data", "lapa.yaml"))
	if code != 0 || !strings.Contains(out, "ok") {
		t.Errorf("validate lapa: exit %d %s", code, out)
	}
}

func TestCodesCLIWrongInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args     []string
		stdin    string
		code     int
		out, err string // substrings; "" = not checked
		notInOut string
	}{
		{args: []string{"codes", "show", "Lapa"}, code: 0, out: "Lei nº 1783/2004 (Lapa/PR)"},
		{args: []string{"codes", "show", "Conceição de Macabu"}, code: 0, out: "45 dB qualquer horário (Art. 55)"},
		{args: []string{"codes", "show", "lap"}, code: 1, err: `você quis dizer "lapa"`},
		{args: []string{"codes", "show"}, code: 2, err: "uso: sossego codes show CÓDIGO"},
		{args: []string{"codes", "frobnicate"}, code: 2, err: `subcomando desconhecido "frobnicate"`},
		{args: []string{"codes", "list", "lapa"}, code: 2, err: "argumentos inesperados"},
		{args: []string{"codes", "eval", "obs.jsonl"}, code: 2, err: "entrada padrão"},
		{args: []string{"codes", "eval"}, code: 0,
			stdin: `{"code":"LAPA","at":"2026-03-10T23:00:00-03:00","zone":"other","source":"amplified_music","laeq_dba":61,"facts":{"establishment_type":"bar"}}`,
			out:   `"violation":true`},
		{args: []string{"codes", "eval"}, code: 1,
			stdin: `{"id":"m","code":"macabu","at":"2026-03-10T23:00:00-03:00","zone":"other","source":"generic"}`,
			out:   `quis dizer \"conceicao-de-macabu\"`},
		{args: []string{"codes", "eval"}, code: 1,
			stdin: `{"id":"u","code":"lapa","at":"2026-03-10T23:00:00-03:00","zone":"other","source":"generic","operating":true}`,
			out:   `campo \"operating\" desconhecido`, notInOut: "unknown field"},
		{args: []string{"codes", "eval"}, code: 1, stdin: `{"id":"l","code":"` + strings.Repeat("x", 5<<20) + `"}`,
			out: "mais de 4 MiB", err: "mais de 4 MiB", notInOut: "token too long"},
	} {
		code, out, errs := runCLI(t, tc.stdin, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.err) ||
			(tc.notInOut != "" && strings.Contains(out+errs, tc.notInOut)) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s", tc.args, code, tc.code, out, errs)
		}
	}
	// Every code's schedule fits 100 columns and shows no identifiers nor
	// internal words.
	for _, id := range []string{"lapa", "conceicao-de-macabu", "entre-rios-de-minas", "campos-altos", "campina-grande-do-sul"} {
		_, out, _ := runCLI(t, "", "codes", "show", id)
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 100 {
				t.Errorf("show %s: %d columns: %q", id, n, line)
			}
		}
		for _, bad := range []string{"all:", "mon", "holiday_eve", "→ undetermined", "06-13", "seed"} {
			if strings.Contains(out, bad) {
				t.Errorf("show %s prints %q", id, bad)
			}
		}
	}
}
