package pdf_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/pdf"
	"github.com/sossego/sossego/internal/testenv"
)

// -samples DIR writes the rendered PDFs (and PNGs) there: go test ./internal/pdf -run TestRender -samples ../../docs/samples
var samples = flag.String("samples", "", "write the rendered PDFs to this directory")

var set = noticetest.Codes()

func at(m time.Month, d, h, min int) time.Time {
	return time.Date(2026, m, d, h, min, 0, 0, noticetest.SaoPaulo)
}

func chart(t testing.TB, sc noticetest.Scenario) []byte {
	t.Helper()
	f := sc.Finding
	var pts []pdf.Point
	for _, r := range sc.Readings(f.WindowStart.Add(-10*time.Minute), f.WindowEnd.Add(10*time.Minute)) {
		pts = append(pts, pdf.Point{T: r.T, DurMs: 1000, LAeq: r.LAeq, LAFmax: r.LAFmax})
	}
	png, err := pdf.Chart(pdf.ChartSpec{Title: "Sensor " + f.Sensor, Points: pts, LimitDB: f.LimitDB, EventStart: f.WindowStart, EventEnd: f.WindowEnd},
		18*vg.Centimeter, 7.5*vg.Centimeter, 150)
	if err != nil {
		t.Fatal(err)
	}
	return png
}

type docCase struct {
	name string
	sc   noticetest.Scenario
	doc  func(t *testing.T) notice.Document
	want []string
}

func lapaNotice(t testing.TB, issued bool) notice.Document {
	sc := noticetest.Lapa(set)
	d, err := notice.BuildFrom(sc.Code, sc.Finding, sc.Constatacao(), sc.Site, nil, at(3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	doc := notice.Document{ID: "lapa-NP-2026-000001", Draft: d, State: notice.StateDraft}
	if !issued {
		return doc
	}
	f := notice.Actor{ID: "u", Name: "Ana Fiscal", Role: notice.RoleFiscal, Matricula: "F-1234"}
	for _, a := range []notice.Action{
		{Kind: notice.ActIssue, Actor: f, At: at(3, 9, 10, 0), Agent: &notice.Agent{Name: "Ana Fiscal", Matricula: "F-1234"}, PrazoDays: 5},
		{Kind: notice.ActRefuse, Actor: f, At: at(3, 9, 10, 30), Witnesses: wits, Declaration: recusa, Observation: observacao},
	} {
		if doc, err = doc.Apply(sc.Code, a); err != nil {
			t.Fatal(err)
		}
	}
	return doc
}

func TestRender(t *testing.T) {
	pdftoppm := testenv.Pdftoppm(t)
	pdftotext := filepath.Join(filepath.Dir(pdftoppm), "pdftotext")
	if _, err := os.Stat(pdftotext); err != nil {
		testenv.Missing(t, "pdftotext", "apt-get install poppler-utils")
	}
	tests := []docCase{
		{"lapa-notificacao-preliminar", noticetest.Lapa(set), func(t *testing.T) notice.Document { return lapaNotice(t, false) },
			[]string{"PREFEITURA MUNICIPAL DE LAPA", "Estado do Paraná", "NOTIFICAÇÃO PRELIMINAR", "lapa-NP-2026-000001", "RASCUNHO",
				"I – Nome do notificado", "(Art. 334, I)", "(Art. 334, II)", "(Art. 334, III)", "(Art. 334, IV)", "(Art. 334, V)", "(Art. 334, VI)",
				"Bar Exemplo da Lapa", "12.345.678/0001-95", "68,4", "60", "Art. 96", "preenchimento à mão",
				"2ª infração: multa de 25% do VRM", "Departamento de Fiscalização Tributária", "Testemunha 1"}},
		{"lapa-notificacao-emitida", noticetest.Lapa(set), func(t *testing.T) notice.Document { return lapaNotice(t, true) },
			[]string{"Notificação Preliminar emitida em 09/03/2026 às 10:00 (horário de Brasília); recusa do notificado testemunhada em 09/03/2026", "Ana Fiscal, matrícula F-1234", "5 (cinco) dias corridos", "até 14/03/2026",
				"João da Silva (RG 1.234.567 SSP/PR)", "Maria Souza (CPF 111.444.777-35)", "Recusou-se a assinar",
				"Constatação nº lapa-CT-2026-000001", "calçada em frente ao estabelecimento",
				"Recusa em 09/03/2026 às 10:30", "Declaração do agente fiscal: " + recusa, "Observação: " + observacao}},
		{"campos-altos-relatorio-constatacao", noticetest.CamposAltos(set), func(t *testing.T) notice.Document {
			sc := noticetest.CamposAltos(set)
			d, err := notice.Build(sc.Code, sc.Finding, sc.Party, sc.Site, nil, at(3, 9, 9, 0))
			if err != nil {
				t.Fatal(err)
			}
			return notice.Document{ID: "campos-altos-RC-2026-000001", Draft: d, State: notice.StateDraft}
		}, []string{"PREFEITURA MUNICIPAL DE CAMPOS ALTOS", "Estado de Minas Gerais", "RELATÓRIO DE CONSTATAÇÃO", "(Art. 17, a)", "(Art. 17, d)",
			"Bar do Largo", "Art. 202, VIII", "não prevê notificação preliminar", "Cr$ 50,00 a Cr$ 200,00", "não fixa limite em decibéis"}},
		{"macabu-intimacao-preliminar", noticetest.Macabu(set), func(t *testing.T) notice.Document {
			sc := noticetest.Macabu(set)
			d, err := notice.Build(sc.Code, sc.Finding, sc.Party, sc.Site, nil, at(3, 11, 9, 0))
			if err != nil {
				t.Fatal(err)
			}
			return notice.Document{ID: "conceicao-de-macabu-IP-2026-000001", Draft: d, State: notice.StateDraft}
		}, []string{"CONCEIÇÃO DE MACABU", "Estado do Rio de Janeiro", "INTIMAÇÃO PRELIMINAR", "45", "58,7", "Art. 55", "máximo de 30 dias",
			"risco iminente", "(Art. 172, parágrafo único)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.doc(t)
			in := pdf.Input{Doc: doc, Deadlines: notice.Deadlines(tc.sc.Code, &doc, at(3, 12, 0, 0)), Chart: chart(t, tc.sc), Generated: at(3, 12, 8, 0)}
			b, err := pdf.Render(in)
			if err != nil {
				t.Fatal(err)
			}
			again, err := pdf.Render(in)
			if err != nil || !bytes.Equal(b, again) {
				t.Fatalf("render is not reproducible (%v)", err)
			}
			dir := t.TempDir()
			p := filepath.Join(dir, tc.name+".pdf")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(pdftotext, "-layout", p, "-").CombinedOutput()
			if err != nil {
				t.Fatalf("pdftotext: %v\n%s", err, out)
			}
			text := strings.Join(strings.Fields(string(out)), " ")
			for _, w := range tc.want {
				if !strings.Contains(text, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("PDF text lacks %q", w)
				}
			}
			if out, err := exec.Command(pdftoppm, "-png", "-r", "60", p, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
				t.Fatalf("pdftoppm: %v\n%s", err, out)
			}
			pages, _ := filepath.Glob(filepath.Join(dir, "page*.png"))
			if len(pages) == 0 {
				t.Fatal("pdftoppm rendered no page")
			}
			for _, pg := range pages {
				if st, err := os.Stat(pg); err != nil || st.Size() < 5000 {
					t.Errorf("page %s looks empty (%v)", pg, err)
				}
			}
			if *samples != "" {
				if err := os.WriteFile(filepath.Join(*samples, tc.name+".pdf"), b, 0o644); err != nil {
					t.Fatal(err)
				}
				if os.Getenv("SOSSEGO_SAMPLE_PNG") != "" {
					exec.Command(pdftoppm, "-png", "-r", "70", p, filepath.Join(*samples, tc.name)).Run()
				}
			}
		})
	}
}

func TestDownsampleIsEnergyCorrect(t *testing.T) {
	pts := []pdf.Point{{LAeq: 60, LAFmax: 61, DurMs: 1000}, {LAeq: 70, LAFmax: 75, DurMs: 1000}, {LAeq: 50, LAFmax: 52, DurMs: 1000}}
	got := pdf.Downsample(pts, 1)
	if len(got) != 1 {
		t.Fatalf("%d buckets", len(got))
	}
	// 10·lg((10^6 + 10^7 + 10^5)/3) = 65.68 dB; an arithmetic mean would say 60.
	if got[0].LAeq < 65.6 || got[0].LAeq > 65.8 || got[0].LAFmax != 75 || got[0].DurMs != 3000 {
		t.Fatalf("bucket %+v", got[0])
	}
	if len(pdf.Downsample(pts, 10)) != 3 {
		t.Fatal("short series must not be merged")
	}
}
