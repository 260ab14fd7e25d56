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
	"github.com/sossego/sossego/internal/registry"
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
		{"data dir mistyped", []string{"list", "--data-dir", filepath.Join(dir, "nao-existe")}, 1, "", "a pasta de dados " + filepath.Join(dir, "nao-existe") + " não existe"},
		{"check in a mistyped data dir", []string{"check", "--data-dir", filepath.Join(dir, "nao-existe"), "--sensor", "m1"}, 1, "", "informe em --data-dir a pasta de dados do serviço central"},
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
	if _, err := os.Stat(filepath.Join(dir, "nao-existe")); !os.IsNotExist(err) {
		t.Fatalf("a read command made the mistyped data folder: %v", err)
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

// TestCalibrationCLIDecision: with the register of sensors (DIR/registry.yaml
// or --registry), list and check print the decision the workflow applies
// (calibration.Decide) and check exits by it: a certified screening meter is
// indicativas, an uncertified class 1 meter calibrated within 12 months is
// not. Without it, they say the class of each meter is unknown.
func TestCalibrationCLIDecision(t *testing.T) {
	dir, bare := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "registry.yaml"), registry.DemoYAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "cadastro.yaml")
	if err := os.WriteFile(other, registry.DemoYAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	today := time.Now().In(tz.Brasilia())
	day := func(d int) string { return today.AddDate(0, 0, d).Format(time.DateOnly) }
	add := func(d, sensor string) []string {
		return []string{"add", "--data-dir", d, "--sensor", sensor, "--number", "RBC-" + sensor, "--laboratory", "Lab Acústica",
			"--meter-model", "NTi XL2", "--meter-serial", "A2A-1", "--calibrated-on", day(-10), "--expires", day(300), "--uncertainty", "0.4"}
	}
	at := "2026-12-01T22:00:00-03:00" // macabu-praca-01 was calibrated on 2026-08-20 (register of sensors)
	for _, st := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"certify a screening meter", add(dir, "lapa-hospital-01"), 0, "registrado", ""},
		{"certify a class 2 meter", add(dir, "lapa-bar-01"), 0, "registrado", ""},
		{"certified screening: indicativas", []string{"check", "--data-dir", dir, "--sensor", "lapa-hospital-01"}, 3,
			"lapa-hospital-01: leituras indicativas: medidor de triagem (não é classe 1 ou 2, segundo o cadastro de sensores), mesmo com certificado no registro de calibrações (decidido pelo cadastro de sensores)\n" +
				"  registro de calibrações: certificado nº RBC-lapa-hospital-01", ""},
		{"certified class 2: valid", []string{"check", "--data-dir", dir, "--sensor", "lapa-bar-01"}, 0,
			"lapa-bar-01: leituras válidas para constatação: calibração válida no registro de calibrações (certificado nº RBC-lapa-bar-01", ""},
		{"uncertified class 1: valid by the register of sensors", []string{"check", "--data-dir", dir, "--sensor", "macabu-praca-01", "--at", at}, 0,
			"leituras válidas para constatação: calibrado em 20/08/2026 (cadastro do sensor; nenhum certificado no registro de calibrações) (decidido pelo cadastro de sensores)", ""},
		{"another registry file", []string{"check", "--data-dir", dir, "--registry", other, "--sensor", "lapa-hospital-01"}, 3, "medidor de triagem (não é classe 1 ou 2", ""},
		{"missing registry file", []string{"check", "--data-dir", dir, "--registry", filepath.Join(dir, "nada.yaml"), "--sensor", "lapa-bar-01"}, 1, "", "cadastro de sensores"},
		{"list: every registered sensor, with the decision", []string{"list", "--data-dir", dir, "--at", at}, 0,
			"macabu-praca-01: leituras válidas para constatação: calibrado em 20/08/2026 (cadastro do sensor; nenhum certificado no registro de calibrações) (decidido pelo cadastro de sensores)\n" +
				"  registro de calibrações: sem certificado; nenhuma verificação de campo; leituras indicativas: nenhum certificado de calibração cadastrado para o medidor\n" +
				"  aviso: nenhuma verificação de campo com calibrador registrada (a política do município pede uma a cada 30 dias)\n", ""},
		{"list: the screening meter", []string{"list", "--data-dir", dir}, 0, "(decidido pelo cadastro de sensores)", ""},
		{"no register of sensors: the register alone, said so", []string{"check", "--data-dir", bare, "--sensor", "lapa-hospital-01"}, 3,
			"leituras indicativas: nenhum certificado", "aviso: cadastro de sensores não encontrado"},
	} {
		t.Run(st.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"calibration"}, st.args...), stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != st.code || !strings.Contains(out.String(), st.out) || !strings.Contains(errb.String(), st.err) {
				t.Fatalf("exit %d (want %d); stdout %q (want %q), stderr %q (want %q)", code, st.code, out.String(), st.out, errb.String(), st.err)
			}
			if st.code == 0 && st.args[0] == "check" && !strings.Contains(out.String(), "(decidido pelo ") {
				t.Fatalf("no decision in %q", out.String())
			}
		})
	}
}
