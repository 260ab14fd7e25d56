package dashboard

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sossego/sossego/dashboard/dashtest"
	"github.com/sossego/sossego/internal/calibration"
)

// TestUICalibration: the Metrologia page in chromium over a real register:
// the reminder of an expiring certificate, a screening meter whose signed
// batches report another serial (readings indicativas, and why: the rule
// the workflow applies, calibration.Decide), a stale field check with its
// drift, an uncertified sensor judged by the register of sensors; an admin's revision refused
// with the pt-BR problems, then recorded with its PDF, the first kept in
// the history; and the alert card's note.
func TestUICalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	f, cal := calibrationFixture(t)
	ctx := context.Background()
	now := time.Now().In(loc)
	day := func(months, days int) string { return now.AddDate(0, months, days).Format(time.DateOnly) }
	for _, c := range []calibration.Certificate{
		{Sensor: "lapa-bar-01", Number: "RBC-0457/2026", Laboratory: "Lab. de Acústica e Vibrações (RBC)", MeterModel: "PCB Artists PCBA-DBM-r3",
			MeterSerial: "3f00a1c2", CalibratedOn: day(-11, 0), Expires: day(0, 20), UncertaintyDB: 0.8},
		{Sensor: "lapa-hospital-01", Number: "RBC-0458/2026", Laboratory: "Lab. de Acústica e Vibrações (RBC)", MeterModel: "NTi XL2",
			MeterSerial: "A2A-10233-E0", CalibratedOn: day(-2, 0), Expires: day(10, 0), UncertaintyDB: 0.4},
	} {
		if _, err := cal.Add(ctx, c, nil, "adm"); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []calibration.Sighting{
		{Sensor: "lapa-bar-01", Model: "PCB Artists PCBA-DBM-r3", Serial: "3f00a1c2", At: now.AddDate(0, -1, 0), Gateway: "lapa-centro-01", Seq: 1},
		{Sensor: "lapa-hospital-01", Model: "NTi XL2", Serial: "A2A-99999-X", At: now.AddDate(0, 0, -3), Gateway: "lapa-centro-01", Seq: 7},
	} {
		if _, err := cal.Saw(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for i, k := range []calibration.FieldCheck{
		{Sensor: "lapa-bar-01", Gateway: "lapa-centro-01", Municipality: "lapa", Seq: 2, At: now.AddDate(0, 0, -40), ReferenceDB: 94, MeasuredDB: 94.2,
			FrequencyHz: 1000, CalibratorModel: "Brüel & Kjær 4231", CalibratorSerial: "2671834", MeterModel: "PCB Artists PCBA-DBM-r3", MeterSerial: "3f00a1c2", Verified: true},
		{Sensor: "lapa-hospital-01", Gateway: "lapa-centro-01", Municipality: "lapa", Seq: 8, At: now.AddDate(0, 0, -2), ReferenceDB: 114, MeasuredDB: 113.9,
			FrequencyHz: 1000, CalibratorModel: "Brüel & Kjær 4231", CalibratorSerial: "2671834", MeterModel: "NTi XL2", MeterSerial: "A2A-99999-X", Verified: true},
	} {
		k.ReceivedAt = k.At
		if _, err := cal.RecordCheck(ctx, k, []byte(`{}`), nil); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	pdf := filepath.Join(t.TempDir(), "rbc-0457-2026-corrigido.pdf")
	if err := os.WriteFile(pdf, []byte("%PDF-1.4\n% certificado\n%%EOF\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	b := dashtest.Browser(t, dashtest.Desktop)
	row := func(s string) string { return `[data-cal-sensor="` + s + `"]` }
	dashtest.Run(t, b, dashtest.Login(f.srv.URL, "adm", testPassword),
		dashtest.WaitText(`nav`, "Metrologia"),
		chromedp.Navigate(f.srv.URL+"/#/metrologia"),
		dashtest.WaitText(`#cal-reminders`, "1 certificado(s) vencem nos próximos 30 dias: agende a calibração."),
		dashtest.WaitText(row("lapa-bar-01")+` [data-cal-expiry="expiring"]`, "vence em 20 dias"),
		dashtest.WaitText(row("lapa-bar-01")+` [data-cal-check="stale"]`, "desvio +0,20 dB"),
		dashtest.WaitText(row("lapa-bar-01")+` [data-cal-check="stale"]`, "mais antiga que 30 dias"),
		dashtest.WaitText(row("lapa-bar-01")+` [data-cal-state="valida"]`, "Válidas para constatação"),
		dashtest.WaitText(row("lapa-hospital-01")+` [data-cal-mismatch]`, "lotes assinados informam NTi XL2 nº A2A-99999-X"),
		dashtest.WaitText(row("lapa-hospital-01")+` [data-cal-state="indicativa"]`, `"A2A-99999-X", diferente do "A2A-10233-E0"`),
		// The standing is calibration.Decide's: a screening meter stays
		// indicativa with a certificate; an uncertified sensor is judged by
		// the register of sensors, the register's own verdict beside it.
		dashtest.WaitText(row("lapa-hospital-01")+` [data-cal-state="indicativa"]`, "medidor de triagem (não é classe 1 ou 2, segundo o cadastro de sensores)"),
		dashtest.WaitText(row("lapa-hospital-01")+` [data-cal-source]`, "decidido pelo cadastro de sensores"),
		dashtest.WaitText(row("lapa-bar-01")+` [data-cal-source]`, "decidido pelo registro de calibrações"),
		dashtest.WaitText(row("macabu-praca-01")+` [data-cal-source]`, "decidido pelo cadastro de sensores"),
		dashtest.WaitText(row("macabu-praca-01"), "nenhum certificado no registro de calibrações"),
		dashtest.WaitText(`#cal-policy`, "Política de verificação de campo"),
		// Municipalities by name, not by id.
		dashtest.WaitText(row("lapa-bar-01")+` td:first-child .muted`, "Lapa/PR"),
		dashtest.WaitText(`#cal-policy select`, "Conceição de Macabu/RJ"),
	)
	dashtest.Screenshot(t, b, "metrologia")

	// Administração repeats the reminder, with the way to Metrologia.
	dashtest.Run(t, b, chromedp.Navigate(f.srv.URL+"/#/administracao"),
		dashtest.WaitText(`#admin-reminders`, "1 certificado(s) vencem nos próximos 30 dias: agende a calibração."),
		dashtest.WaitText(`#admin-reminders a[href="#/metrologia"]`, "Ver a Metrologia"),
		chromedp.Navigate(f.srv.URL+"/#/metrologia"),
		dashtest.WaitText(`#cal-reminders`, "agende a calibração"),
	)

	// The sensor: history, checks, and a revision refused then recorded.
	dashtest.Run(t, b, chromedp.Click(row("lapa-bar-01")+` a`),
		dashtest.WaitText(`#cal-history`, "RBC-0457/2026"),
		dashtest.WaitText(`#cal-situation [data-cal-state="valida"]`, "Válidas para constatação"),
		dashtest.WaitText(`#cal-situation`, "calibração válida no registro de calibrações (certificado nº RBC-0457/2026"),
		dashtest.WaitText(`#cal-checks`, "Brüel & Kjær 4231 nº 2671834"),
		chromedp.Click(`#cal-history button`),
		dashtest.WaitText(`#cal-form h3`, "Corrigir a revisão"),
		chromedp.Evaluate[chromedp.Void](`(() => { const e = document.querySelector('#cal-form').elements;
			e.number.value = ''; e.expires.value = '2020-01-01'; })()`),
		chromedp.Click(`#cal-form button[type=submit]`),
		dashtest.WaitText(`#cal-form-error`, "informe o número do certificado"),
		dashtest.WaitText(`#cal-form-error`, "precisa ser posterior à data de calibração"),
		chromedp.Evaluate[chromedp.Void](`(() => { const e = document.querySelector('#cal-form').elements;
			e.number.value = 'RBC-0457/2026'; e.expires.value = '`+day(12, 0)+`'; })()`),
		dashtest.WaitText(`#cal-form [data-file-name]`, "nenhum arquivo escolhido"),
		chromedp.SetUploadFiles(`#cal-form input[name=file]`, []string{pdf}),
		dashtest.WaitText(`#cal-form [data-file-name]`, "rbc-0457-2026-corrigido.pdf"),
		chromedp.Click(`#cal-form button[type=submit]`),
		dashtest.WaitJS(`document.querySelectorAll('#cal-history [data-cal-revision]').length === 2`, "two revisions in the history"),
		dashtest.WaitText(`#cal-history`, "rbc-0457-2026-corrigido.pdf"),
		dashtest.WaitText(`#cal-history`, "corrige"),
		dashtest.WaitJS(`!document.querySelector('#cal-reminders') || !document.querySelector('#cal-reminders').textContent.includes('vencem')`, "the reminder gone after the new expiry"),
	)
	hist, err := cal.History(ctx, "lapa-bar-01")
	if err != nil || len(hist) != 2 || hist[0].Expires != day(0, 20) || hist[1].Replaces != hist[0].ID || hist[1].FileSHA256 == "" {
		t.Fatalf("history after the UI: %v %+v", err, hist)
	}
	dashtest.ScreenshotTo(t, b, dashtest.ScreenshotDir(t), "metrologia-sensor", true)

	// The alert card's note for the swapped meter.
	dashtest.Run(t, b,
		// the page's own module instance (same URL), not a global
		chromedp.Evaluate[chromedp.Void](`void import('/static/js/calibration.js').then((m) => document.querySelector('#view').append(m.alertNote({id: 'a1', sensor: 'lapa-hospital-01', firing_at: new Date().toISOString()})))`),
		dashtest.WaitText(`[data-cal-alert="a1"]`, "Leituras indicativas — não sustentam constatação nem notificação"),
		dashtest.WaitText(`[data-cal-alert="a1"]`, "A2A-99999-X"),
	)
}
