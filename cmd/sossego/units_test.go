package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestUnitsCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	steps := []struct {
		name     string
		args     []string
		code     int
		out, err string // substrings
	}{
		{"empty list", []string{"list", "--data-dir", dir, "--code", "lapa"}, 0, "VRM (Valor de Referência do Município (VRM) em vigência): sem valor vigente hoje", ""},
		{"set", []string{"set", "--data-dir", dir, "--code", "lapa", "--unit", "VRM", "--from", "01/01/2026", "--value", "4.938,24", "--act", "Decreto nº 20/2025", "--by", "ana"},
			0, "VRM de lapa: R$ 4.938,24 a partir de 01/01/2026 (Decreto nº 20/2025)", ""},
		{"next year", []string{"set", "--data-dir", dir, "--code", "lapa", "--unit", "VRM", "--from", "2027-01-01", "--value", "5100", "--act", "Decreto nº 30/2026", "--by", "ana"},
			0, "R$ 5.100,00 a partir de 01/01/2027", ""},
		{"overlap", []string{"set", "--data-dir", dir, "--code", "lapa", "--unit", "VRM", "--from", "2026-06-01", "--to", "2026-06-30", "--value", "1", "--act", "x"},
			1, "", "coincide com a já cadastrada de 01/01/2026 a 31/12/2026"},
		{"negative", []string{"set", "--data-dir", dir, "--code", "lapa", "--unit", "VRM", "--from", "2030-01-01", "--value", "-10", "--act", "x"}, 1, "", "valor negativo"},
		{"unit of another code", []string{"set", "--data-dir", dir, "--code", "lapa", "--unit", "UFM", "--from", "2030-01-01", "--value", "10", "--act", "x"},
			1, "", `a unidade "UFM" não existe em Lei nº 1783/2004 (Lapa/PR): use VRM`},
		{"unknown code", []string{"set", "--data-dir", dir, "--code", "atlantida", "--unit", "VRM", "--from", "2030-01-01", "--value", "10", "--act", "x"},
			2, "", `código municipal "atlantida" desconhecido`},
		{"bad value", []string{"set", "--data-dir", dir, "--code", "lapa", "--unit", "VRM", "--from", "2030-01-01", "--value", "dez", "--act", "x"}, 2, "", `valor "dez"`},
		{"missing flags", []string{"set", "--data-dir", dir, "--code", "lapa"}, 2, "", "informe --unit, --from, --value, --act"},
		{"bad date", []string{"set", "--data-dir", dir, "--code", "lapa", "--unit", "VRM", "--from", "31/02/2030", "--value", "10", "--act", "x"}, 1, "", "início da vigência \"31/02/2030\" inválido"},
		{"no code for history", []string{"history", "--data-dir", dir}, 2, "", "informe --code"},
		{"unknown code for history", []string{"history", "--data-dir", dir, "--code", "atlantida"}, 2, "", `sossego units history: código municipal "atlantida" desconhecido: use `},
		{"unknown option", []string{"list", "--data-dir", dir, "--codigo", "lapa"}, 2, "", "sossego units list: opção desconhecida --codigo"},
		{"no data dir", []string{"list"}, 2, "", "--data-dir"},
		{"unknown sub", []string{"delete", "--data-dir", dir}, 2, "", "subcomando desconhecido"},
		{"stray argument", []string{"list", "--data-dir", dir, "lapa"}, 2, "", "argumentos inesperados"},
		{"list", []string{"list", "--data-dir", dir}, 0, "      R$ 4.938,24 de 01/01/2026 a 31/12/2026 — Decreto nº 20/2025", ""},
		{"history", []string{"history", "--data-dir", dir, "--code", "lapa", "--unit", "VRM"}, 0, "VRM encerrado (novo valor a seguir): R$ 4.938,24 de 01/01/2026 a 31/12/2026", ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"units"}, st.args...), stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != st.code {
				t.Fatalf("exit %d, want %d; stdout %s stderr: %s", code, st.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), st.out) || !strings.Contains(errb.String(), st.err) {
				t.Fatalf("stdout %q (want %q), stderr %q (want %q)", out.String(), st.out, errb.String(), st.err)
			}
		})
	}
}
