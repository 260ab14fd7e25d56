package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/tz"
)

func TestCalibrationCLI(t *testing.T) {
	dir := t.TempDir()
	today := time.Now().In(tz.Brasilia())
	day := func(d int) string { return today.AddDate(0, 0, d).Format(time.DateOnly) }
	pdf := filepath.Join(t.TempDir(), "rbc-1.pdf")
	if err := os.WriteFile(pdf, []byte("%PDF-1.4\n%%EOF\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(t.TempDir(), "foto.png")
	if err := os.WriteFile(png, []byte("\x89PNG"), 0o644); err != nil {
		t.Fatal(err)
	}
	add := []string{"add", "--data-dir", dir, "--sensor", "m1", "--number", "RBC-1/2026", "--laboratory", "Lab Acústica",
		"--meter-model", "NTi XL2", "--meter-serial", "A2A-1", "--calibrated-on", day(-300), "--expires", day(20), "--uncertainty", "0.4"}
	with := func(extra ...string) []string { return append(append([]string{}, add...), extra...) }
	steps := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"empty list", []string{"list", "--data-dir", dir}, 0, "nenhum certificado registrado", ""},
		{"no data dir", []string{"list"}, 2, "", "--data-dir"},
		{"unknown sub", []string{"remove", "--data-dir", dir}, 2, "", "subcomando desconhecido"},
		{"check without sensor", []string{"check", "--data-dir", dir}, 2, "", "informe --sensor"},
		{"history without sensor", []string{"history", "--data-dir", dir}, 2, "", "sossego calibration history: informe --sensor"},
		{"add without sensor", []string{"add", "--data-dir", dir, "--number", "RBC-1/2026"}, 2, "", "sossego calibration add: informe --sensor"},
		{"stray argument", []string{"list", "--data-dir", dir, "m1"}, 2, "", `sossego calibration list: argumento inesperado "m1" (as opções começam com --)`},
		{"bad uncertainty", with("--uncertainty", "0,4"), 2, "", `valor "0,4" inválido para --uncertainty: use um número (com ponto decimal, ex.: 2.5)`},
		{"uncertified", []string{"check", "--data-dir", dir, "--sensor", "m1"}, 3, "leituras indicativas: nenhum certificado", ""},
		{"expiry before date", with("--expires", day(-400)), 1, "", "a validade (" + today.AddDate(0, 0, -400).Format("02/01/2006") + ") precisa ser posterior"},
		{"missing number", with("--number", ""), 1, "", "  - informe o número do certificado"},
		{"not a PDF", with("--file", png), 1, "", "não é um PDF"},
		{"missing file", with("--file", filepath.Join(dir, "nada.pdf")), 1, "", "--file"},
		{"added", with("--file", pdf, "--by", "ana"), 0, "certificado nº RBC-1/2026 registrado para o sensor m1 (revisão 1, válido até " + today.AddDate(0, 0, 20).Format("02/01/2006") + ")", ""},
		{"valid now, expiring", []string{"check", "--data-dir", dir, "--sensor", "m1"}, 0, "aviso: o certificado de calibração nº RBC-1/2026 vence em", ""},
		{"indicativas after expiry", []string{"check", "--data-dir", dir, "--sensor", "m1", "--at", today.AddDate(0, 0, 22).Format(time.RFC3339)}, 3, "venceu em", ""},
		{"bad time", []string{"check", "--data-dir", dir, "--sensor", "m1", "--at", "amanhã"}, 2, "", "RFC 3339"},
		{"correction", with("--expires", day(60), "--replaces", "1", "--by", "bia"), 0, "revisão 2", ""},
		{"history keeps both", []string{"history", "--data-dir", dir, "--sensor", "m1"}, 0, "revisão 2 (corrige a revisão 1)", ""},
		{"policy", []string{"policy", "--data-dir", dir, "--municipality", "lapa", "--days", "15"}, 0, "lapa: verificação de campo a cada 15 dias", ""},
		{"policy out of range", []string{"policy", "--data-dir", dir, "--municipality", "lapa", "--days", "500"}, 1, "", "use 1 a 366 dias"},
		{"policy without days", []string{"policy", "--data-dir", dir, "--municipality", "lapa"}, 2, "", "informe --municipality e --days"},
		{"list", []string{"list", "--data-dir", dir}, 0, "m1: certificado nº RBC-1/2026 (Lab Acústica), válido até " + today.AddDate(0, 0, 60).Format("02/01/2006") + "; nenhuma verificação de campo; leituras válidas para constatação", ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"calibration"}, st.args...), stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != st.code {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, st.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), st.out) || !strings.Contains(errb.String(), st.err) {
				t.Fatalf("stdout %q (want %q), stderr %q (want %q)", out.String(), st.out, errb.String(), st.err)
			}
		})
	}
	r, err := calibrationdb.Open(context.Background(), filepath.Join(dir, calibration.FileName), calibrationdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hist, err := r.History(context.Background(), "m1")
	if err != nil || len(hist) != 2 || hist[0].RecordedBy != "ana" || hist[0].FileName != "rbc-1.pdf" || hist[1].Replaces != 1 {
		t.Fatalf("history %v %+v", err, hist)
	}
}
