package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataFolder: the commands that read or change a register refuse a
// data folder that does not exist (or is a file) and make nothing there;
// the ones that add the first entry make it.
func TestDataFolder(t *testing.T) {
	cheapPasswords(t)
	base := t.TempDir()
	file := filepath.Join(base, "um-arquivo")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	const refused = "não existe ou não é uma pasta (informe em --data-dir a pasta de dados do serviço central)"
	for _, tc := range []struct {
		name   string
		args   []string // --data-dir DIR is appended
		stdin  string
		code   int
		stderr string
		makes  bool
	}{
		{"users list", []string{"users", "list"}, "", 1, "sossego users list: a pasta de dados", false},
		{"users edit", []string{"users", "edit", "--role", "admin", "ana"}, "", 1, refused, false},
		{"users passwd", []string{"users", "passwd", "ana"}, "", 1, refused, false},
		{"units list", []string{"units", "list"}, "", 1, "sossego units list: a pasta de dados", false},
		{"units history", []string{"units", "history", "--code", "lapa"}, "", 1, refused, false},
		{"feriados list", []string{"feriados", "list", "--municipio", "lapa"}, "", 1, "sossego feriados list: a pasta de dados", false},
		{"feriados history", []string{"feriados", "history"}, "", 1, refused, false},
		{"feriados remove", []string{"feriados", "remove", "--id", "3", "--motivo", "erro"}, "", 1, refused, false},
		{"calibration list", []string{"calibration", "list"}, "", 1, refused, false},
		{"users add makes the folder", []string{"users", "add", "--role", "admin", "ana"}, "senha-da-ana-123\n", 0, "", true},
		{"units set makes the folder", []string{"units", "set", "--code", "lapa", "--unit", "VRM", "--from", "2026-01-01",
			"--value", "4.938,24", "--act", "Decreto nº 20/2025"}, "", 0, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, dir := range []string{filepath.Join(t.TempDir(), "nao-existe"), file} {
				if tc.makes && dir == file {
					continue
				}
				var out, errb bytes.Buffer
				code := run(context.Background(), append(tc.args, "--data-dir", dir), stdio{in: strings.NewReader(tc.stdin), out: &out, err: &errb})
				if code != tc.code || !strings.Contains(errb.String(), tc.stderr) {
					t.Fatalf("%s: exit %d, stderr %q; want exit %d and %q", dir, code, errb.String(), tc.code, tc.stderr)
				}
				_, err := os.Stat(dir)
				if made := err == nil; dir != file && made != tc.makes {
					t.Fatalf("%s: folder made: %v, want %v", dir, made, tc.makes)
				}
			}
		})
	}
}
