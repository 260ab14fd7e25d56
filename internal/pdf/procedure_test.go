package pdf_test

import (
	"encoding/json"
	"fmt"
	"image"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	gzqr "github.com/makiuchi-d/gozxing/qrcode"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/pdf"
	"github.com/sossego/sossego/internal/testenv"
)

// poppler returns pdftotext and pdftoppm, or skips (fails in CI).
func poppler(t *testing.T) (pdftotext, pdftoppm string) {
	t.Helper()
	pdftoppm = testenv.Pdftoppm(t)
	pdftotext = filepath.Join(filepath.Dir(pdftoppm), "pdftotext")
	if _, err := os.Stat(pdftotext); err != nil {
		testenv.Missing(t, "pdftotext", "apt-get install poppler-utils")
	}
	return pdftotext, pdftoppm
}

// pageTexts renders b and returns each page's text, whitespace collapsed.
func pageTexts(t *testing.T, pdftotext string, b []byte) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pdftotext, "-layout", p, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	pages := strings.Split(strings.TrimRight(string(out), "\f\n "), "\f")
	for i := range pages {
		pages[i] = strings.Join(strings.Fields(pages[i]), " ")
	}
	return pages
}

func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// ruleScenario is a rule-based finding (the code has no decibel limit for
// it) for a code without a shared scenario.
func ruleScenario(t *testing.T, set *codes.Set, id string, o codes.Observation, p notice.Party, s notice.Site) noticetest.Scenario {
	t.Helper()
	c, ok := set.Code(id)
	if !ok {
		t.Fatalf("code %s not loaded", id)
	}
	v := codes.Evaluate(c, o)
	sensor := s.Sensor
	f, err := notice.FromVerdict(c, v, sensor+"/"+o.At.UTC().Format("2006-01-02T15:04:05.000Z"), sensor, alerts.GradeClass2,
		o.At.UTC(), o.At.Add(10*time.Minute).UTC(), *o.LAeq, *o.LAeq+9)
	if err != nil {
		t.Fatalf("%s: %v (%+v)", id, err, v)
	}
	return noticetest.Scenario{Name: id, Code: c, Finding: f, Party: p, Site: s, Base: 45, Event: *o.LAeq}
}

func lvl(v float64) *float64 { return &v }

// procedureCase is one municipal code: the documents its procedure
// prescribes, and the articles of their required elements as the law
// numbers them (written out here, so a field lost from the YAML fails).
type procedureCase struct {
	sc noticetest.Scenario
	// first: the preliminary notice (or, for codes without one, the
	// relatório that prepares the auto), then the auto.
	firstTitle, firstArticle string
	firstItems               []string
	autoArticle              string
	autoItems                []string
}

func procedureCases(t *testing.T) []procedureCase {
	cgs := ruleScenario(t, set, "campina-grande-do-sul", codes.Observation{At: time.Date(2026, 3, 10, 23, 0, 0, 0, noticetest.SaoPaulo),
		Zone: "other", Source: "generic", LAeq: lvl(64), AssumeInForce: true,
		Facts: map[string]any{"establishment_type": "bar", "operating": true, "alcohol_sold": true}},
		notice.Party{Name: "Bar da Estação Ltda (fictício)", Document: "11.444.777/0001-61", Address: "Rua Quinze, 10, Centro, Campina Grande do Sul - PR", Type: "bar"},
		notice.Site{Sensor: "cgs-bar-01", Address: "Rua Quinze, 12, Campina Grande do Sul - PR", Lat: -25.3047, Lon: -49.0551, Zone: "other",
			Grade: alerts.GradeClass2, MeterModel: "NSRT_mk4", MeterSerial: "NSRT-0999", CalibratedAt: "2026-01-20"})
	erm := ruleScenario(t, set, "entre-rios-de-minas", codes.Observation{At: time.Date(2026, 3, 10, 23, 0, 0, 0, noticetest.SaoPaulo),
		Zone: "other", Source: "batuque_congado", LAeq: lvl(71), Facts: map[string]any{"licensed": false}},
		notice.Party{Name: "Associação Cultural do Largo (fictícia)", Document: "529.982.247-25", Address: "Largo do Rosário, 3, Entre Rios de Minas - MG"},
		notice.Site{Sensor: "erm-largo-01", Address: "Largo do Rosário, 1, Entre Rios de Minas - MG", Lat: -20.6711, Lon: -44.0653, Zone: "other",
			Grade: alerts.GradeClass2, MeterModel: "NSRT_mk4", MeterSerial: "NSRT-0555", CalibratedAt: "2026-02-02"})
	return []procedureCase{
		{sc: noticetest.Lapa(set), firstTitle: "NOTIFICAÇÃO PRELIMINAR", firstArticle: "Arts. 333–335",
			firstItems:  []string{"Art. 334, I", "Art. 334, II", "Art. 334, III", "Art. 334, IV", "Art. 334, V", "Art. 334, VI"},
			autoArticle: "Arts. 336–338", autoItems: []string{"Art. 337, I", "Art. 337, II", "Art. 337, III", "Art. 337, IV", "Art. 337, V", "Art. 337, VI"}},
		{sc: noticetest.Macabu(set), firstTitle: "INTIMAÇÃO PRELIMINAR", firstArticle: "Arts. 171–172",
			firstItems:  []string{"Art. 171", "Art. 171", "Art. 171, § 1º", "Art. 172", "Art. 172, parágrafo único"},
			autoArticle: "Art. 176", autoItems: []string{"Art. 176, I", "Art. 176, II", "Art. 176, III", "Art. 176, IV", "Art. 176, V", "Art. 176, VI"}},
		{sc: erm, firstTitle: "NOTIFICAÇÃO/INTIMAÇÃO", firstArticle: "Art. 128",
			firstItems:  []string{"Art. 127, I", "Art. 127, II", "Art. 127, III", "Art. 127, IV"},
			autoArticle: "Art. 127", autoItems: []string{"Art. 127, I", "Art. 127, II", "Art. 127, III", "Art. 127, IV", "Art. 127, parágrafo único"}},
		{sc: noticetest.CamposAltos(set), firstTitle: "RELATÓRIO DE CONSTATAÇÃO", firstArticle: "Art. 17",
			firstItems:  []string{"Art. 17, a", "Art. 17, b", "Art. 17, c", "Art. 17, d", "Art. 17, § 1º"},
			autoArticle: "Art. 17", autoItems: []string{"Art. 17, a", "Art. 17, b", "Art. 17, c", "Art. 17, d", "Art. 17, § 1º"}},
		{sc: cgs, firstTitle: "RELATÓRIO DE CONSTATAÇÃO", firstArticle: "Art. 19",
			firstItems:  []string{"Art. 19, I", "Art. 19, II", "Art. 19, III", "Art. 19, IV", "Art. 19, V"},
			autoArticle: "Art. 19", autoItems: []string{"Art. 19, I", "Art. 19, II", "Art. 19, III", "Art. 19, IV", "Art. 19, V"}},
	}
}

var (
	fiscal = notice.Actor{ID: "u-ana", Name: "Ana Fiscal", Role: notice.RoleFiscal}
	agent  = &notice.Agent{Name: "Ana Maria da Silva Fiscal", Matricula: "F-1234"}
	wits   = []notice.Witness{{Name: "João da Silva", DocType: notice.WitnessRG, Document: "1.234.567", Issuer: "SSP/PR"},
		{Name: "Maria Souza", DocType: notice.WitnessCPF, Document: "111.444.777-35"}}
	recusa     = "O responsável, Sr. Carlos, recebeu a notificação, leu-a e recusou-se a apor o ciente, diante das testemunhas abaixo."
	observacao = "Música ainda audível da calçada às 10h25."
)

func apply(t testing.TB, c *codes.Code, d notice.Document, as ...notice.Action) notice.Document {
	t.Helper()
	for _, a := range as {
		var err error
		if d, err = d.Apply(c, a); err != nil {
			t.Fatalf("%s %s: %v", d.ID, a.Kind, err)
		}
	}
	return d
}

// procedureDocs are a code's two documents, issued as the procedure goes:
// the first one (with recusa and witnesses when it is a notice), then the
// auto de infração after the prazo.
func procedureDocs(t *testing.T, pc procedureCase) (first, auto notice.Document) {
	t.Helper()
	c := pc.sc.Code
	start := pc.sc.Finding.WindowStart
	d, err := notice.BuildFrom(c, pc.sc.Finding, pc.sc.Constatacao(), pc.sc.Site, nil, start.Add(10*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	first = notice.Document{ID: c.ID + "-" + notice.Kind(d.Kind).Abbrev() + "-2026-000001", Draft: d, State: notice.StateDraft}
	issue := notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: start.Add(11 * time.Hour), Agent: agent}
	var follow *notice.Constatacao
	if d.Kind.IsNotice() {
		issue.PrazoDays = 5
		first = apply(t, c, first, issue, notice.Action{Kind: notice.ActRefuse, Actor: fiscal, At: start.Add(11*time.Hour + 20*time.Minute),
			Witnesses: wits, Declaration: recusa, Observation: observacao})
		k := pc.sc.FollowUp(first.ID, first.PrazoEnd.Add(time.Hour), pc.sc.Event)
		follow = &k
		first = apply(t, c, first, notice.Action{Kind: notice.ActEscalate, Actor: fiscal, At: first.PrazoEnd.Add(2 * time.Hour), FollowUp: follow})
	} else {
		first = apply(t, c, first, issue)
	}
	ad, err := notice.BuildAuto(c, &first, follow, nil, start.Add(10*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	auto = notice.Document{ID: c.ID + "-AI-2026-000001", Draft: ad, State: notice.StateDraft}
	auto = apply(t, c, auto, notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: start.Add(10*24*time.Hour + time.Hour), Agent: agent})
	return first, auto
}

var isoDate = regexp.MustCompile(`\d{4}-\d\d-\d\d`)

// TestProcedureElementsInPDF renders, for each of the five codes, the
// documents its procedure prescribes and checks in the PDF's text every
// element the procedure requires, the copies, and what every page carries.
func TestProcedureElementsInPDF(t *testing.T) {
	pdftotext, _ := poppler(t)
	for _, pc := range procedureCases(t) {
		t.Run(pc.sc.Code.ID, func(t *testing.T) {
			first, auto := procedureDocs(t, pc)
			c := pc.sc.Code
			for _, doc := range []struct {
				d          notice.Document
				title, art string
				items      []string
				proc       *codes.Document
				situation  string
			}{
				{first, pc.firstTitle, pc.firstArticle, pc.firstItems, c.Procedure.Notice, ""},
				{auto, "AUTO DE INFRAÇÃO", pc.autoArticle, pc.autoItems, c.Procedure.Auto, "Auto de Infração emitido em"},
			} {
				d := doc.d
				proc := doc.proc
				if d.Draft.Kind == notice.KindRelatorio {
					proc = c.Procedure.Auto // the relatório prepares the auto: the auto's elements
				}
				b, err := pdf.Render(pdf.Input{Doc: d, Deadlines: notice.Deadlines(c, &d, d.IssuedAt.Add(time.Hour)), Chart: chart(t, pc.sc), Generated: d.IssuedAt,
					EvidenceKey: testEvidenceKey})
				if err != nil {
					t.Fatal(err)
				}
				pages := pageTexts(t, pdftotext, b)
				text := strings.Join(pages, " ")
				must := []string{doc.title, "(" + doc.art + " da " + c.Title() + ")", "PREFEITURA MUNICIPAL DE " + strings.ToUpper(c.Municipality)}
				if doc.situation != "" {
					must = append(must, doc.situation)
				}
				if d.Draft.Kind.IsNotice() {
					must = append(must, d.Draft.Title+" emitida em", "recusa do", "testemunhada", "Testemunha 1: João da Silva (RG 1.234.567 SSP/PR)",
						"Maria Souza (CPF 111.444.777-35)", "Declaração do agente fiscal: "+recusa, "Observação: "+observacao)
				}
				// The constatações the document rests on, as recorded.
				for _, k := range d.Draft.Constatacoes {
					must = append(must, "Constatação nº "+k.ID, k.Heard, k.Position.Address)
				}
				if d.Draft.Kind == notice.KindAuto && d.Draft.RefersTo != nil && d.Draft.RefersTo.Kind.IsNotice() {
					if len(d.Draft.Constatacoes) != 2 {
						t.Errorf("the auto rests on %d constatações, want the notice's and the one after the prazo", len(d.Draft.Constatacoes))
					}
					must = append(must, "Documento anterior: "+first.Draft.Title+" nº "+first.ID)
				}
				// Every element the code's procedure requires, in its words and with its article.
				if len(proc.Fields) != len(doc.items) {
					t.Errorf("%s: the code's procedure lists %d elements, the law %d", doc.title, len(proc.Fields), len(doc.items))
				}
				for i, f := range proc.Fields {
					if i < len(doc.items) && f.Article != doc.items[i] {
						t.Errorf("%s element %d: article %q, the law says %q", doc.title, i+1, f.Article, doc.items[i])
					}
					r := []rune(f.Label)
					label := strings.ToUpper(string(r[0])) + string(r[1:])
					must = append(must, label+" ("+f.Article+")")
				}
				for _, f := range d.Draft.Fields {
					if f.Value != "" {
						must = append(must, pdf.BRDates(f.Value))
					}
				}
				must = append(must, pc.sc.Party.Name, d.Draft.Penalty.Text, "Ana Maria da Silva Fiscal — matrícula F-1234")
				for _, w := range must {
					if !strings.Contains(text, flat(w)) {
						t.Errorf("%s: PDF text lacks %q", doc.title, w)
					}
				}
				checkPages(t, d, pages)
				// Dates are dd/mm/aaaa: an ISO date may only appear inside identifiers.
				rest := strings.NewReplacer(d.Draft.Finding.AlertID, "", mustSeal(t, d).Bag, "").Replace(text)
				if m := isoDate.FindString(rest); m != "" {
					t.Errorf("%s: ISO date %q in the text", doc.title, m)
				}
			}
		})
	}
}

func mustSeal(t *testing.T, d notice.Document) pdf.Seal {
	t.Helper()
	s, err := pdf.SealOf(d)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkPages checks what every page carries (summary, copy, "página
// n/N", the agent's initials, the seal) and that no page holds the
// signatures without the text they sign.
func checkPages(t *testing.T, d notice.Document, pages []string) {
	t.Helper()
	vias := pdf.Vias(d.Draft.Kind)
	if len(pages)%len(vias) != 0 {
		t.Fatalf("%d pages for %d copies", len(pages), len(vias))
	}
	per := len(pages) / len(vias)
	seal := mustSeal(t, d)
	summary := pdf.Summary(d)
	signed := 0
	for i, p := range pages {
		via, n := vias[i/per], i%per+1
		if strings.Contains(p, "Ana Maria da Silva Fiscal — matrícula F-1234") {
			signed++
		}
		for _, w := range []string{
			fmt.Sprintf("%s · página %d/%d", via.Label, n, per),
			"Rubrica do agente fiscal (AMSF)",
			seal.URI(),
			"Pacote de evidências: " + seal.Bag,
			"Chave que assina o pacote (publicada em /api/v1/evidence/key): SHA256:",
		} {
			if !strings.Contains(p, w) {
				t.Errorf("page %d lacks %q", i+1, w)
			}
		}
		// The summary may be cut with an ellipsis: its first 40 characters.
		if head := string([]rune(summary)[:40]); !strings.Contains(p, head) {
			t.Errorf("page %d lacks the summary %q", i+1, head)
		}
		// The agent's signature line is the signature block's.
		if strings.Contains(p, "Ana Maria da Silva Fiscal — matrícula F-1234") && !strings.Contains(p, "Penalidade desta infração") {
			t.Errorf("page %d holds the signatures without the penalty they sign", i+1)
		}
	}
	if signed != len(vias) {
		t.Errorf("the signature block is on %d pages, want once per copy (%d)", signed, len(vias))
	}
	if len(vias) == 2 && (!strings.Contains(pages[0], strings.ToUpper(vias[0].Label)) || !strings.Contains(pages[per], strings.ToUpper(vias[1].Label))) {
		t.Errorf("copies not labelled in their headers")
	}
}

// TestQRCodeOnEveryPage reads the QR code of every page of a rendered
// notice back from the page image: it is the act's seal.
func TestQRCodeOnEveryPage(t *testing.T) {
	_, pdftoppm := poppler(t)
	doc := lapaNotice(t, true)
	sc := noticetest.Lapa(set)
	b, err := pdf.Render(pdf.Input{Doc: doc, Deadlines: notice.Deadlines(sc.Code, &doc, at(3, 12, 0, 0)), Chart: chart(t, sc), Generated: at(3, 12, 8, 0)})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Only the footer band, at 150 dpi: the bottom 30 mm of the page.
	if out, err := exec.Command(pdftoppm, "-png", "-r", "150", "-y", "1577", "-H", "177", p, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	imgs, _ := filepath.Glob(filepath.Join(dir, "page*.png"))
	want := mustSeal(t, doc).URI()
	if len(imgs) != 4 {
		t.Fatalf("%d pages, want 4 (two copies of two pages)", len(imgs))
	}
	for _, img := range imgs {
		fh, err := os.Open(img)
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := image.Decode(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		bmp, err := gozxing.NewBinaryBitmapFromImage(m)
		if err != nil {
			t.Fatal(err)
		}
		res, err := gzqr.NewQRCodeReader().Decode(bmp, nil)
		if err != nil {
			t.Fatalf("%s: no QR code read: %v", filepath.Base(img), err)
		}
		if res.GetText() != want {
			t.Errorf("%s: QR code says %q, want %q", filepath.Base(img), res.GetText(), want)
		}
	}
	if !strings.HasPrefix(want, "sossego:ato:lapa-NP-2026-000001:") || len(want) != len("sossego:ato:lapa-NP-2026-000001:")+pdf.SealHashLen {
		t.Errorf("seal URI %q", want)
	}
}

// The seal is the act's: the same stored act, whatever offset its times
// came back with, seals the same; what is recorded after issue does not
// change it; any change of what the act states does.
func TestSeal(t *testing.T) {
	sc := noticetest.Lapa(set)
	issued := apply(t, sc.Code, notice.Document{ID: "lapa-NP-2026-000001", Draft: lapaNotice(t, false).Draft, State: notice.StateDraft},
		notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 9, 10, 0), Agent: agent, PrazoDays: 5})
	base := mustSeal(t, issued)
	if len(base.Hash) != pdf.SealHashLen || base.ID != issued.ID || base.Bag != "evidencia-lapa-bar-01_2026-03-07T02_10_00.000Z" {
		t.Fatalf("seal %+v", base)
	}
	js, err := json.Marshal(issued)
	if err != nil {
		t.Fatal(err)
	}
	var stored notice.Document
	if err := json.Unmarshal(js, &stored); err != nil {
		t.Fatal(err)
	}
	stored.IssuedAt = stored.IssuedAt.UTC()
	stored.Draft.Finding.WindowStart = stored.Draft.Finding.WindowStart.In(noticetest.SaoPaulo)
	refused := apply(t, sc.Code, issued, notice.Action{Kind: notice.ActRefuse, Actor: fiscal, At: at(3, 9, 10, 30), Witnesses: wits, Declaration: recusa})
	for name, d := range map[string]notice.Document{"stored and read back": stored, "after the recusa": refused} {
		if got := mustSeal(t, d); got != base {
			t.Errorf("%s: seal %+v, want %+v", name, got, base)
		}
	}
	changes := map[string]func(d *notice.Document){
		"party":     func(d *notice.Document) { d.Draft.Party.Name += " ME" },
		"number":    func(d *notice.Document) { d.ID = "lapa-NP-2026-000002" },
		"agent":     func(d *notice.Document) { d.Agent = &notice.Agent{Name: "Outro Fiscal", Matricula: "F-9"} },
		"issued at": func(d *notice.Document) { d.IssuedAt = d.IssuedAt.Add(time.Minute) },
		"level":     func(d *notice.Document) { d.Draft.Finding.LAeqDB += 0.1 },
		"prazo":     func(d *notice.Document) { d.PrazoDays = 6 },
	}
	for name, change := range changes {
		d := issued
		d.Draft.Party = issued.Draft.Party
		a := *issued.Agent
		d.Agent = &a
		change(&d)
		if mustSeal(t, d).Hash == base.Hash {
			t.Errorf("changing the %s keeps the seal", name)
		}
	}
}

// A closing block longer than a page (many notes) flows over pages, and
// the signatures still do not stand alone: their page opens with the
// document's summary.
func TestLongClosingBlockKeepsSignaturesWithText(t *testing.T) {
	pdftotext, _ := poppler(t)
	// Enough notes to flow over a page, in counts that put the page's end
	// at every point of the signature block.
	for n := 40; n <= 52; n++ {
		doc := lapaNotice(t, true)
		for i := range n {
			doc.Draft.Notes = append(doc.Draft.Notes, fmt.Sprintf("observação de teste número %d, longa o bastante para ocupar uma linha inteira do documento impresso", i+1))
		}
		b, err := pdf.Render(pdf.Input{Doc: doc, Generated: at(3, 12, 8, 0)})
		if err != nil {
			t.Fatal(err)
		}
		pages := pageTexts(t, pdftotext, b)
		for i, p := range pages {
			// Some of the document's text stands before the signatures' heading.
			if j := strings.Index(p, "Assinaturas Ana Fiscal"); j >= 0 && j < 40 {
				t.Errorf("%d notes: page %d holds the signatures alone:\n%s", n, i+1, p)
			}
		}
		if len(pages) < 4 {
			t.Fatalf("%d notes, %d pages: the notes should have needed more than one page per copy", n, len(pages))
		}
	}
}

// testEvidenceKey is a fingerprint as evidence.Fingerprint writes it.
const testEvidenceKey = "SHA256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
