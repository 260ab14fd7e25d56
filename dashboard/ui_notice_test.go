package dashboard

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/dashboard/dashtest"
	"github.com/sossego/sossego/internal/testenv"
)

// TestUINoticePath drives the legal path from an alert to an auto de
// infração in a real browser, on the real workflow API and case store: the
// alert is an indício (no draft can be saved), the fiscal records a
// constatação (an invalid CPF refused in the form), saves and edits the
// draft (place of lavratura, circumstances, prazo), issues it signed by the
// logged-in fiscal, records the recusa with two checked witnesses (a
// witness document "abc" refused); the service's clock moves past the
// prazo, a second constatação with an on-site reading is recorded, the auto
// de infração cites both; its PDF, as stored at issue, is fetched and read
// with poppler. The constatação after the prazo is offered only once the
// prazo ran out; before, the card says from when. With SOSSEGO_SCREENSHOTS=docs/img the screenshots of
// docs/workflow-api.md are written.
func TestUINoticePath(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	pdftotext := filepath.Join(filepath.Dir(testenv.Pdftoppm(t)), "pdftotext")
	u := newUIServer(t, true)
	ctx := dashtest.Browser(t, dashtest.Desktop)
	dl := dashtest.AllowDownloads(t, ctx)
	const id = "lapa-bar-01/1"
	const al, nb = `[data-alert="lapa-bar-01/1"]`, `[data-notice="lapa-bar-01/1"]`
	form := func(kind, name string) chromedp.CSS {
		return chromedp.CSS(nb + ` [data-form="` + kind + `"] [name="` + name + `"]`)
	}
	setText := func(kind, name, v string) chromedp.Action[chromedp.Void] {
		clear := chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).value = ""`, nb+` [data-form="`+kind+`"] [name="`+name+`"]`))
		return chromedp.Steps(clear, chromedp.SendKeys(form(kind, name), v))
	}
	// choose sets a select and tells the form (it shows the fields of the choice).
	choose := func(kind, name, v string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event("change", {bubbles: true})); })()`,
			nb+` [data-form="`+kind+`"] [name="`+name+`"]`, v))
	}
	shot := func(name string) {
		dashtest.Run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.toast').forEach((e) => e.remove())`))
		dashtest.ScreenshotTo(t, ctx, dashtest.ScreenshotDir(t), name, false)
	}

	dashtest.Run(t, ctx, dashtest.Login(u.srv.URL, "fis", testPassword), chromedp.Navigate(u.srv.URL+"/#/alertas"),
		dashtest.WaitText(`#view h1`, "Alertas"), dashtest.StubAlarms())
	u.fire(t, id, "lapa-bar-01", 71.2)

	// The alert is an indício: the draft cannot be saved before a constatação.
	dashtest.Run(t, ctx, dashtest.WaitText(al, "71,2 dB(A)"),
		chromedp.Click(chromedp.CSS(al+` [data-action="notice"]`)),
		dashtest.WaitText(nb+` h3`, "Notificação Preliminar — rascunho"),
		dashtest.WaitText(nb+` [data-why]`, "registre a constatação do fiscal"),
		dashtest.WaitJS(`!document.querySelector('`+nb+` [data-step="store"]')`, "no save before a constatação"))

	// Constatação: another party with an invalid CPF is refused in the form.
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-step="constatacao"]`)),
		choose("constatacao", "source", "other"),
		chromedp.SendKeys(form("constatacao", "other_name"), "José Vizinho"),
		chromedp.SendKeys(form("constatacao", "other_document"), "111.444.777-00"),
		chromedp.SendKeys(form("constatacao", "other_address"), "Rua XV de Novembro, 102, Lapa - PR"),
		chromedp.SendKeys(form("constatacao", "heard"), "música ao vivo amplificada, audível da calçada oposta"),
		choose("constatacao", "attested", "yes"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="constatacao"]`)),
		dashtest.WaitText(nb+` [data-form="constatacao"] .error`, "dígito verificador do CPF não confere"),
		choose("constatacao", "source", "establishment"),
		setText("constatacao", "position_description", "calçada oposta, em frente ao nº 100"))
	shot("notice-constatacao")
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-submit="constatacao"]`)),
		dashtest.WaitText(nb+` [data-constatacoes]`, "sustenta o documento"),
		dashtest.WaitText(nb+` [data-constatacoes]`, "lapa-CT-"),
		chromedp.Click(chromedp.CSS(nb+` [data-step="store"]`)),
		dashtest.WaitText(nb+` h3`, "nº lapa-NP-"))

	// Draft edits: place of lavratura, circumstances, prazo; kept with who and when.
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-step="edit"]`)),
		setText("edit", "lavratura_place", "Sede da Prefeitura, Praça General Carneiro, Lapa - PR"),
		setText("edit", "circumstances", "Portas abertas e caixas de som voltadas para a rua."),
		setText("edit", "prazo_days", "10000"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="edit"]`)),
		dashtest.WaitText(nb+` [data-form="edit"] .error`, "passa de 365 dias"),
		setText("edit", "prazo_days", "5"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="edit"]`)),
		dashtest.WaitText(nb+` [data-doc-result]`, "Minuta alterada (3 campos)"),
		dashtest.WaitText(nb+` [data-edits]`, "Alterações da minuta (3)"),
		dashtest.WaitText(nb+` [data-field-id="fato"]`, "Circunstâncias: Portas abertas"),
		dashtest.WaitText(nb+` [data-field-id="lavratura"]`, "Sede da Prefeitura"))
	shot("notice-draft-edit")

	// Issue, signed by the logged-in fiscal; the prazo comes from the draft.
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-step="issue"]`)),
		dashtest.WaitText(nb+` [data-form="issue"]`, "Assina o fiscal logado"),
		dashtest.WaitJS(`document.querySelector('`+nb+` [data-form="issue"] [name="prazo_days"]').value === "5"`, "the draft's prazo"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="issue"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "emitida"),
		dashtest.WaitText(nb+` [data-field-id="agente"]`, "Ana Paula Ferreira, matrícula F-1234"),
		dashtest.WaitText(nb, "PDF armazenado (como emitido)"))

	// Recusa: a witness document "abc" is refused; then recorded with what was said.
	decl := "O gerente recebeu a 1ª via e recusou-se a assinar diante das testemunhas."
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-step="recusa"]`)),
		chromedp.SendKeys(form("recusa", "w1_name"), "João da Silva"),
		choose("recusa", "w1_type", "rg"),
		chromedp.SendKeys(form("recusa", "w1_doc"), "1.234.567-8"),
		chromedp.SendKeys(form("recusa", "w1_issuer"), "SSP/PR"),
		chromedp.SendKeys(form("recusa", "w2_name"), "Maria Souza"),
		chromedp.SendKeys(form("recusa", "w2_doc"), "abc"),
		chromedp.SendKeys(form("recusa", "declaration"), decl),
		chromedp.SendKeys(form("recusa", "observation"), "música ainda alta durante a entrega"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="recusa"]`)),
		dashtest.WaitText(nb+` [data-form="recusa"] .error`, `CPF "abc" inválido`),
		setText("recusa", "w2_doc", "111.444.777-35"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="recusa"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "recusa testemunhada"),
		dashtest.WaitText(nb, "João da Silva (RG 1.234.567-8 SSP/PR)"),
		dashtest.WaitText(nb, "Declaração do fiscal: "+decl),
		dashtest.WaitText(nb+` [data-deadline="regularizacao"]`, "correndo"))
	shot("notice-recusa")

	// While the prazo runs, the constatação after it is not offered: the
	// card says from when it is (the end of the stored prazo, Brasília time).
	np, err := u.work.cases.ForAlert(t.Context(), id)
	if err != nil || np.PrazoEnd.IsZero() {
		t.Fatalf("the notice's prazo: %v %+v", err, np.PrazoEnd)
	}
	brt := time.FixedZone("BRT", -3*3600)
	dashtest.Run(t, ctx,
		dashtest.WaitText(nb+` [data-followup-at]`, "Registrar constatação após o prazo: disponível após "+np.PrazoEnd.In(brt).Format("02/01/2006 15:04")),
		dashtest.WaitJS(`!document.querySelector('`+nb+` [data-step="constatacao"]')`, "no constatação after the prazo while it runs"))
	if got := evalJS[string](t, ctx, `document.querySelector('`+nb+` [data-followup-at]').dataset.followupAt`); got != np.PrazoEnd.UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("data-followup-at %q, want the prazo's end %v", got, np.PrazoEnd)
	}

	// The auto is not offered while the prazo runs (the server would refuse it).
	dashtest.Run(t, ctx, dashtest.WaitJS(`!document.querySelector('`+nb+` [data-step="auto"]')`, "no auto while the prazo runs"))

	// Seven days later (the service's clock): the prazo of 5 days is over.
	u.work.advance(7 * 24 * time.Hour)
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(al+` [data-action="notice"]`)),
		dashtest.WaitText(nb+` [data-deadline="regularizacao"]`, "vencido"),
		dashtest.WaitText(nb+` [data-step="constatacao"]`, "Registrar constatação após o prazo"),
		dashtest.WaitJS(`!document.querySelector('`+nb+` [data-followup-at]')`, "no waiting line once the prazo expired"),
		chromedp.Click(chromedp.CSS(nb+` [data-step="constatacao"]`)),
		dashtest.WaitText(nb+` [data-form="constatacao"]`, "Constatação após o prazo"),
		chromedp.SendKeys(form("constatacao", "heard"), "a mesma música amplificada, com as portas abertas"),
		choose("constatacao", "meter_grade", "class1"),
		choose("constatacao", "meter_calibrated_at", "2026-07-15"),
		chromedp.SendKeys(form("constatacao", "meter_model"), "NTi XL2"),
		chromedp.SendKeys(form("constatacao", "meter_serial"), "A2A-12345"),
		chromedp.SendKeys(form("constatacao", "laeq"), "68,4"),
		chromedp.SendKeys(form("constatacao", "duration_min"), "5"),
		chromedp.SendKeys(form("constatacao", "residual"), "48,0"),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="constatacao"]`)),
		dashtest.WaitText(nb+` [data-constatacoes]`, "após o prazo de lapa-NP-"),
		chromedp.Click(chromedp.CSS(nb+` [data-step="auto"]`)),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="auto"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "auto de infração lavrado"),
		chromedp.Click(chromedp.CSS(nb+` [data-open-doc]`)),
		dashtest.WaitText(nb+` h3`, "Auto de Infração nº "),
		// Drafted while the monetary register had no value of the VRM.
		dashtest.WaitText(nb+` [data-field-id="penalidade"]`, "valor em R$ a calcular"))
	// An admin sets the VRM before the auto is issued: the fine is valued
	// on the date of the act, in the stored PDF too.
	const vrm = 4938.24
	u.work.setUnits([]notice.UnitValue{{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", ValueBRL: vrm, Act: "Decreto nº 20/2025"}})
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-step="issue"]`)),
		chromedp.Click(chromedp.CSS(nb+` [data-submit="issue"]`)),
		dashtest.WaitText(nb+` [data-doc-state]`, "emitido"),
		dashtest.WaitText(nb+` [data-field-id="fato"]`, "LAeq 68,4 dB(A) em 5 min"))
	shot("notice-auto")
	if got, want := u.work.actions(), "constatacao:fis,draft:fis,edit:fis,issue:fis,recusa:fis,constatacao:fis,auto:fis,draft:fis,issue:fis"; got != want {
		t.Errorf("workflow changes %q, want %q", got, want)
	}

	// The auto's PDF, as stored at issue, read with poppler.
	dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-step="pdf"]`)),
		dashtest.WaitText(nb+` [data-doc-result]`, "PDF baixado"))
	file := dl.Next(t)
	if !strings.HasPrefix(file.Name, "lapa-AI-") {
		t.Fatalf("downloaded %q, want the auto's PDF", file.Name)
	}
	b, err := os.ReadFile(file.Path)
	if err != nil {
		t.Fatal(err)
	}
	aid := strings.TrimSuffix(file.Name, ".pdf")
	stored, _, err := u.work.cases.PDF(t.Context(), aid)
	if err != nil || string(stored) != string(b) {
		t.Fatalf("the downloaded PDF is not the one stored at issue (%v)", err)
	}
	out, err := exec.Command(pdftotext, "-layout", file.Path, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v %s", err, out)
	}
	text := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{"AUTO DE INFRAÇÃO", "Art. 337", "Notificação Preliminar nº lapa-NP-", "Ana Paula Ferreira",
		"F-1234", "lapa-CT-2026-000001", "lapa-CT-2026-000002", "LAeq 68,4 dB(A) em 5 min", "NTi XL2", "recusada pelo notificado"} {
		if !strings.Contains(text, want) {
			t.Errorf("the auto's PDF lacks %q", want)
		}
	}
	// The fine in R$, valued at issue: pt-BR currency on the paper and on
	// the page.
	auto, err := u.work.cases.Get(t.Context(), aid)
	if err != nil {
		t.Fatal(err)
	}
	fine := auto.Draft.Fine
	if fine == nil || fine.Percent == nil || fine.UnitValueBRL == nil || *fine.UnitValueBRL != vrm {
		t.Fatalf("the issued auto's fine %+v, want one valued with the VRM of R$ 4.938,24", fine)
	}
	amount := notice.BRL(math.Round(*fine.Percent*vrm) / 100)
	if fine.Amount != amount || !regexp.MustCompile(`^R\$ \d{1,3}(\.\d{3})*,\d\d$`).MatchString(amount) {
		t.Errorf("fine %q, want %q (%v%% of R$ 4.938,24) written as R$ 1.234,56", fine.Amount, amount, *fine.Percent)
	}
	for _, want := range []string{"Valor da multa: ", "= " + amount, "VRM de R$ 4.938,24"} {
		if !strings.Contains(text, want) {
			t.Errorf("the auto's PDF lacks %q", want)
		}
	}
	if strings.Contains(text, "a calcular") || strings.Contains(text, "multa sem valor") {
		t.Error("the auto's PDF still says the fine has no value")
	}
	dashtest.Run(t, ctx, dashtest.WaitText(nb+` [data-field-id="penalidade"]`, "= "+amount))
	if strings.Contains(text, "fiscal fiscal") {
		t.Error("the PDF names the agent by role")
	}
	// The constatações' dates are dd/mm/aaaa.
	if !regexp.MustCompile(`Constatação nº lapa-CT-2026-000002, em \d\d/\d\d/20\d\d às \d\d:\d\d`).MatchString(text) {
		t.Error("the follow-up constatação is not dated dd/mm/aaaa hh:mm")
	}
}
