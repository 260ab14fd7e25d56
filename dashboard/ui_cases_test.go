package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/dashboard/dashtest"
	"github.com/sossego/sossego/internal/tz"
)

// TestUICases: in chromium the fiscal's "Casos" page lists the cases of a
// real case store with their states and deadlines, the filters (overdue,
// municipality, mine, address) narrow it, the party's history opens with
// the records the penalty ladder counts, and the alert card in Alertas
// shows its case's state and deadline.
func TestUICases(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	u := newUIServer(t, false)
	loc := tz.Brasilia()
	now := time.Now().In(loc)
	day := func(d int) time.Time { return now.AddDate(0, 0, d) }
	cs := newCaseStore(t, time.Now)
	cs.api.Register(u.mux, u.auth)
	lapa, macabu := noticetest.Lapa(cs.set), noticetest.Macabu(cs.set)
	other := notice.Actor{ID: "outro", Name: "outro", Role: notice.RoleFiscal}
	const alertID = "lapa-bar-01/ui-cases"
	// The alert's case: issued by fis, ciente today, 10 days.
	running := cs.add(t, lapa, alertID, "", "", day(-1),
		notice.Action{Kind: notice.ActIssue, At: day(-1).Add(time.Minute), Agent: caseAgent, PrazoDays: 10},
		notice.Action{Kind: notice.ActAcknowledge, At: day(-1).Add(2 * time.Minute), SignedBy: "Carlos Dono"})
	// Another bar of the same code, its prazo's last day was 4 days ago.
	overdue := cs.add(t, lapa, "lapa-bar-01/old", "11444777000161", "Avenida Manoel Pedro, 50, Lapa - PR", day(-9),
		notice.Action{Kind: notice.ActIssue, Actor: other, At: day(-9).Add(time.Minute), Agent: caseAgent, PrazoDays: 5},
		notice.Action{Kind: notice.ActRefuse, Actor: other, At: day(-9).Add(2 * time.Minute), Witnesses: []notice.Witness{{Name: "João da Silva", DocType: notice.WitnessRG, Document: "1.234.567-8", Issuer: "SSP/PR"},
			{Name: "Maria Souza", DocType: notice.WitnessCPF, Document: "111.444.777-35"}},
			Declaration: "O notificado recebeu a 1ª via e recusou-se a assinar diante das testemunhas."})
	cs.add(t, macabu, "macabu-praca-01/x", "", "", day(-2))
	cs.add(t, macabu, "macabu-praca-01/y", "52998224725", "Rua das Flores, 8, Conceição de Macabu - RJ", day(-3),
		notice.Action{Kind: notice.ActIssue, Actor: other, At: day(-3).Add(time.Minute), Agent: caseAgent, PrazoDays: 20},
		notice.Action{Kind: notice.ActAcknowledge, Actor: other, At: day(-3).Add(2 * time.Minute), SignedBy: "Dona Maria"})
	lastDay := func(d notice.Document) string { return d.PrazoEnd.Add(-time.Nanosecond).In(loc).Format("02/01/2006") }
	got, err := cs.s.Get(t.Context(), running.ID)
	if err != nil {
		t.Fatal(err)
	}
	got2, err := cs.s.Get(t.Context(), overdue.ID)
	if err != nil {
		t.Fatal(err)
	}

	rows := `document.querySelectorAll('#cases-table tr[data-case]').length`
	row := func(id string) string { return fmt.Sprintf(`#cases-table tr[data-case=%q]`, id) }
	click := func(sel string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`document.querySelector('` + sel + `').click()`)
	}
	pick := func(sel, v string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event('change')); })()`, sel, v))
	}
	ctx := dashtest.Browser(t, dashtest.Desktop)
	dashtest.Run(t, ctx, dashtest.Login(u.srv.URL, "fis", testPassword),
		dashtest.WaitText(`nav`, "Casos"),
		chromedp.Navigate(u.srv.URL+"/#/casos"),
		dashtest.WaitJS(rows+` === 4`, "four cases"),
		dashtest.WaitText(`#cases-msg`, "4 casos"),
		// Sorted by next deadline: the overdue prazo first.
		dashtest.WaitJS(`document.querySelector('#cases-table tr[data-case]').dataset.case === '`+overdue.ID+`'`, "overdue first"),
		dashtest.WaitText(row(overdue.ID)+` [data-field="deadline"]`, "vencido há 4 dias"),
		dashtest.WaitText(row(overdue.ID)+` [data-field="state"]`, "notificação preliminar com recusa testemunhada"),
		dashtest.WaitText(row(running.ID)+` [data-field="deadline"]`, "prazo para regularização até "+lastDay(got)),
		dashtest.WaitText(row(running.ID)+` [data-field="deadline"]`, "faltam 9 dias"),
		// Only overdue.
		click(`#cases-overdue`),
		dashtest.WaitJS(rows+` === 1 && !!document.querySelector('`+row(overdue.ID)+`')`, "only the overdue case"),
		click(`#cases-overdue`),
		dashtest.WaitJS(rows+` === 4`, "all again"),
		// Municipality.
		pick(`#cases-municipality`, "conceicao-de-macabu"),
		dashtest.WaitJS(rows+` === 2`, "the two Macabu cases"),
		pick(`#cases-municipality`, ""),
		dashtest.WaitJS(rows+` === 4`, "all again"),
		// Mine: fis issued only the alert's case.
		click(`#cases-mine`),
		dashtest.WaitJS(rows+` === 1 && !!document.querySelector('`+row(running.ID)+`')`, "only fis's case"),
		click(`#cases-mine`),
		dashtest.WaitJS(rows+` === 4`, "all again"),
		// Address, accents ignored.
		chromedp.SendKeys(`#cases-address`, "manoel pedro"),
		click(`#cases-go`),
		dashtest.WaitJS(rows+` === 1 && !!document.querySelector('`+row(overdue.ID)+`')`, "the case on Avenida Manoel Pedro"),
		// The party's history: its refused notice counts for the ladder.
		click(row(overdue.ID)+` [data-party]`),
		dashtest.WaitText(`#party-history h2`, "11.444.777/0001-61"),
		dashtest.WaitText(fmt.Sprintf(`#party-history [data-party-doc=%q] [data-field="counts"]`, overdue.ID), "sim"),
		// Laws by their title, not by the code's id.
		dashtest.WaitText(`#party-counts`, lapa.Code.Title()+": 1 infração anterior conta para a gradação da próxima penalidade ("+overdue.ID+")"),
		dashtest.WaitText(fmt.Sprintf(`#party-history [data-party-doc=%q] [data-field="code"]`, overdue.ID), lapa.Code.Title()),
		// The history stays open while the list goes back to every case.
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#cases-address').value = ''`),
		click(`#cases-go`),
		dashtest.WaitJS(rows+` === 4`, "all again"),
		dashtest.WaitText(`#party-history h2`, "11.444.777/0001-61"),
	)
	dashtest.Screenshot(t, ctx, "casos")
	if got2.State != notice.StateRefused {
		t.Fatalf("overdue notice state %s", got2.State)
	}

	// The alert card says its case's state and deadline.
	dashtest.Run(t, ctx, chromedp.Navigate(u.srv.URL+"/#/alertas"), dashtest.WaitText(`#view h1`, "Alertas"), dashtest.StubAlarms())
	u.fire(t, alertID, "lapa-bar-01", 72)
	line := fmt.Sprintf(`[data-case-line=%q]`, alertID)
	dashtest.Run(t, ctx, dashtest.WaitText(line, "Caso: notificação preliminar com ciente do notificado — prazo para regularização até "+lastDay(got)+" (faltam 9 dias)"))
	dashtest.Screenshot(t, ctx, "casos-alerta")
	if href := evalJS[string](t, ctx, `document.querySelector('`+line+` a').getAttribute('href')`); !strings.HasPrefix(href, "#/casos?alert=") {
		t.Errorf("case link %q", href)
	}
	// A workflow change on the feed refreshes the line.
	if _, _, err := cs.s.Apply(t.Context(), lapa.Code, running.ID, notice.Action{Kind: notice.ActRegularise, Actor: caseFiscal, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	u.hub.PublishCase(CaseUpdate{AlertID: alertID, NoticeID: running.ID, Action: "regularize", State: "regularised", By: "fis", At: time.Now()})
	dashtest.Run(t, ctx, dashtest.WaitJS(`document.querySelector('`+line+`').textContent === 'Caso: notificação preliminar regularizada'`, "the line after the regularisation"))
	// The link opens the case.
	dashtest.Run(t, ctx, click(line+` a`), dashtest.WaitJS(rows+` === 1 && !!document.querySelector('`+row(running.ID)+`')`, "the alert's case"))
}
