package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestFeriadosCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	steps := []struct {
		name     string
		args     []string
		code     int
		out, err string // substrings
	}{
		{"empty list", []string{"list", "--data-dir", dir}, 0, "nenhum dia cadastrado", ""},
		{"add yearly", []string{"add", "--data-dir", dir, "--municipio", "Lapa", "--dia", "19/03", "--desde", "02/05/2019", "--nome", "São José",
			"--ato", "Lei Municipal nº 1.234/2019", "--por", "ana"}, 0, "nº 1 cadastrado: lapa — todo ano em 19/03, desde 02/05/2019, São José (feriado, Lei Municipal nº 1.234/2019)", ""},
		{"add once", []string{"add", "--data-dir", dir, "--municipio", "conceição de macabu", "--dia", "2026-12-07", "--nome", "Ponto facultativo",
			"--ato", "Decreto nº 45/2026", "--tipo", "ponto_facultativo"}, 0, "nº 2 cadastrado: conceicao-de-macabu — 07/12/2026", ""},
		{"duplicate", []string{"add", "--data-dir", dir, "--municipio", "lapa", "--dia", "19/03/2027", "--nome", "x", "--ato", "y"}, 1, "",
			"corrija:\n  - já cadastrado: todo ano em 19/03, desde 02/05/2019, São José"},
		{"a national holiday", []string{"add", "--data-dir", dir, "--municipio", "lapa", "--dia", "25/12/2026", "--nome", "x", "--ato", "y"}, 1, "", "já é feriado (Natal)"},
		{"bad day", []string{"add", "--data-dir", dir, "--municipio", "lapa", "--dia", "31/04", "--nome", "x", "--ato", "y"}, 2, "",
			`--dia: dia "31/04" inválido: use dd/mm/aaaa ou AAAA-MM-DD para uma data, dd/mm ou MM-DD para todo ano`},
		{"bad kind and since on a date", []string{"add", "--data-dir", dir, "--municipio", "lapa", "--dia", "01/12/2026", "--desde", "2026-01-01", "--nome", "x", "--ato", "y", "--tipo", "recesso"},
			1, "", `"desde" só vale para um feriado de todo ano; uma data única já diz o dia`},
		{"missing flags", []string{"add", "--data-dir", dir, "--municipio", "lapa"}, 2, "", "informe --dia, --nome, --ato"},
		{"unknown municipality", []string{"add", "--data-dir", dir, "--municipio", "lapinha", "--dia", "01/12/2026", "--nome", "x", "--ato", "y"}, 2, "",
			`--municipio: código "lapinha" desconhecido; você quis dizer "lapa"?`},
		{"stray argument", []string{"add", "--data-dir", dir, "--municipio", "lapa", "São José"}, 2, "", "argumentos inesperados"},
		{"no data dir", []string{"list"}, 2, "", "--data-dir"},
		{"unknown sub", []string{"delete", "--data-dir", dir}, 2, "", "subcomando desconhecido \"delete\" (use list, add, remove ou history)"},
		{"remove without id", []string{"remove", "--data-dir", dir}, 2, "", "informe --id"},
		{"remove a bad id", []string{"remove", "--data-dir", dir, "--id", "dois"}, 2, "", `--id "dois": use o número mostrado por sossego feriados list`},
		{"remove another municipality's", []string{"remove", "--data-dir", dir, "--id", "2", "--municipio", "lapa"}, 1, "", "nº 2 não está cadastrado em lapa"},
		{"remove", []string{"remove", "--data-dir", dir, "--id", "2", "--motivo", "decreto revogado", "--por", "ana"}, 0, "nº 2 removido: conceicao-de-macabu — 07/12/2026, Ponto facultativo", ""},
		{"list", []string{"list", "--data-dir", dir, "--municipio", "lapa"}, 0, "todo ano em 19/03, desde 02/05/2019  São José (feriado) — Lei Municipal nº 1.234/2019", ""},
		{"history", []string{"history", "--data-dir", dir}, 0, "nº 2 removido: conceicao-de-macabu — 07/12/2026, Ponto facultativo (ponto facultativo, Decreto nº 45/2026); motivo: decreto revogado", ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"feriados"}, st.args...), stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != st.code {
				t.Fatalf("exit %d, want %d; stdout %s stderr: %s", code, st.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), st.out) || !strings.Contains(errb.String(), st.err) {
				t.Fatalf("stdout %q (want %q), stderr %q (want %q)", out.String(), st.out, errb.String(), st.err)
			}
		})
	}
}
