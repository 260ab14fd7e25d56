package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupCLI backs up a data folder whose stores the CLI itself wrote,
// reads the copy back through the same commands, checks it with
// sha256sum -c as the summary says, and refuses wrong input in Portuguese.
func TestBackupCLI(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if code, _, errs := runCLI(t, "", "units", "set", "--data-dir", data, "--code", "lapa", "--unit", "VRM", "--from", "01/01/2026",
		"--value", "4.938,24", "--act", "Decreto nº 20/2025", "--by", "ana"); code != 0 {
		t.Fatalf("units set: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "feriados", "add", "--data-dir", data, "--municipio", "lapa", "--dia", "05/08", "--nome", "Dia do Padroeiro",
		"--ato", "Lei nº 1/1900", "--por", "ana"); code != 0 {
		t.Fatalf("feriados add: exit %d: %s", code, errs)
	}
	if err := os.WriteFile(filepath.Join(data, "evidence-ed25519.key"), []byte("k\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	dest := filepath.Join(t.TempDir(), "copia de 03-12")
	code, out, errs := runCLI(t, "", "backup", "--data-dir", data, "-o", dest)
	if code != 0 {
		t.Fatalf("backup: exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"cópia de segurança gravada em " + dest,
		"2 bancos SQLite (cópias consistentes, conferidas), 1 outros arquivos",
		"confira com: cd '" + dest + "' && sha256sum -c SHA256SUMS",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	sha, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Fatalf("sha256sum (coreutils) is needed: %v", err)
	}
	check := exec.Command("sh", "-c", "cd '"+dest+"' && "+sha+" -c --strict SHA256SUMS")
	if b, err := check.CombinedOutput(); err != nil {
		t.Errorf("the summary's check fails: %v\n%s", err, b)
	}

	restored := t.TempDir()
	if err := os.CopyFS(restored, os.DirFS(dest)); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, "", "units", "list", "--data-dir", restored, "--code", "lapa"); code != 0 || !strings.Contains(out, "R$ 4.938,24") {
		t.Errorf("units list on the restored copy: exit %d, %q %q; want the value set before the backup", code, out, errs)
	}
	if code, out, errs := runCLI(t, "", "feriados", "list", "--data-dir", restored, "--municipio", "lapa"); code != 0 || !strings.Contains(out, "Dia do Padroeiro") {
		t.Errorf("feriados list on the restored copy: exit %d, %q %q", code, out, errs)
	}

	wrong := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no flags", nil, 2, "informe --data-dir (a pasta de dados do serviço central) e -o (a pasta da cópia)"},
		{"stray argument", []string{"--data-dir", data, "-o", dest + "2", "agora"}, 2, `argumentos inesperados ["agora"]`},
		{"unknown option", []string{"--destino", dest}, 2, "sossego backup: opção desconhecida --destino"},
		{"copy over a copy", []string{"--data-dir", data, "-o", dest}, 1, "já existe e não está vazio"},
		{"missing data folder", []string{"--data-dir", filepath.Join(data, "nao"), "-o", dest + "3"}, 1,
			"o arquivo ou a pasta não existe; confira o caminho\nnenhuma cópia foi gravada."},
		{"inside the data folder", []string{"--data-dir", data, "-o", filepath.Join(data, "bk")}, 1, "está dentro da pasta de dados"},
	}
	for _, tc := range wrong {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI(t, "", append([]string{"backup"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.err) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, tc.code, tc.err)
			}
		})
	}
}
