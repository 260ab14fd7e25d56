package dashboard

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/dashboard/dashtest"
	"github.com/sossego/sossego/internal/holidays"
	"github.com/sossego/sossego/internal/holidays/holidaysdb"
)

// TestUIHolidays: in a real browser the admin decrees Lapa's patron saint
// every year (a day the code already keeps refused first, saying which),
// a ponto facultativo once, then removes the patron saint with a reason;
// the list, the change log and the calendar the alerts read follow. A
// fiscal reads the list and may not change it.
func TestUIHolidays(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	u, _, set := newAdminUIServer(t)
	ctx := context.Background()
	st, err := holidaysdb.Open(ctx, filepath.Join(t.TempDir(), holidaysdb.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	NewHolidaysAPI(HolidaysOptions{Store: st, Codes: set,
		OnChange: func(ctx context.Context) error { _, err := holidays.Apply(ctx, st, set, nil); return err }}).Register(u.mux, u.auth)

	form := func(name string) string { return `[data-form="holiday"] [name="` + name + `"]` }
	setJS := func(sel, v string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector('` + sel + `'); i.value = '` + v + `'; i.dispatchEvent(new Event('change')); })()`)
	}
	click := func(sel string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`document.querySelector('` + sel + `').click()`)
	}
	rows := `document.querySelectorAll('[data-table="holidays"] tbody tr').length`
	b := dashtest.Browser(t, dashtest.Desktop)
	dashtest.Run(t, b, dashtest.Login(u.srv.URL, "adm", testPassword),
		chromedp.Navigate(u.srv.URL+"/#/administracao"),
		dashtest.WaitText(`#admin-holidays [data-empty="holidays"]`, "Nenhum dia decretado"),
		click(`#new-holiday`),
		setJS(form("municipality"), "lapa"),
		setJS(form("month_day"), "13/06"),
		setJS(form("name"), "São José, padroeiro"),
		setJS(form("act"), "Lei Municipal nº 1.234/2019"),
		click(`[data-form="holiday"] button[type=submit]`),
		dashtest.WaitText(`[data-error="holiday"]`, "já é feriado todo ano (Fundação da Cidade)"),
		setJS(form("month_day"), "19/03"),
		setJS(form("since"), "2019-05-02"),
		click(`[data-form="holiday"] button[type=submit]`),
		dashtest.WaitText(`#toasts`, "São José, padroeiro (todo ano em 19/03, desde 02/05/2019) cadastrado para Lapa/PR."),
		dashtest.WaitJS(rows+` === 1`, "the patron saint listed"),
		click(`#new-holiday`),
		click(`[data-form="holiday"] [name="recurrence"][value="once"]`),
		dashtest.WaitJS(`!document.querySelector('`+form("date")+`').closest('.row').hidden`, "the date field for a day decreed once"),
		setJS(form("municipality"), "lapa"),
		setJS(form("date"), "2026-12-07"),
		setJS(form("name"), "Emenda de feriado"),
		setJS(form("act"), "Decreto nº 45/2026"),
		setJS(form("kind"), "ponto_facultativo"),
		click(`[data-form="holiday"] button[type=submit]`),
		dashtest.WaitJS(rows+` === 2`, "both days listed"),
		dashtest.WaitText(`[data-table="holidays"]`, "ponto facultativo"),
		dashtest.WaitText(`[data-table="holidays"]`, "07/12/2026"),
	)
	es, err := st.List(ctx, "lapa")
	if err != nil || len(es) != 2 {
		t.Fatalf("lapa's decreed days: %+v, %v", es, err)
	}
	var patron holidays.Entry
	for _, e := range es {
		if e.MonthDay == "03-19" {
			patron = e
		}
	}
	if patron.Since != "2019-05-02" || patron.Kind != codes.DecreedHoliday || patron.SetBy != "adm" {
		t.Fatalf("the patron saint as stored: %+v", patron)
	}
	lapa, _ := set.Code("lapa")
	if name, _ := lapa.Holiday(codes.Date{Y: 2027, M: 3, D: 19}); name != "São José, padroeiro" {
		t.Fatalf("the calendar after the page: 19/03/2027 is %q", name)
	}
	id := `[data-holiday="` + itoa(patron.ID) + `"]`
	dashtest.Run(t, b,
		click(id+` [data-remove-holiday]`),
		setJS(id+` [name="reason"]`, "lei revogada"),
		click(id+` [data-form="remove-holiday"] button[type=submit]`),
		dashtest.WaitJS(rows+` === 1 && !document.querySelector('`+id+`')`, "the patron saint removed"),
		click(`#holiday-history summary`),
		dashtest.WaitText(`#holiday-history`, "adm removeu São José, padroeiro"),
		dashtest.WaitText(`#holiday-history`, "motivo: lei revogada"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#toasts').replaceChildren(); document.querySelector('.top').style.position = 'static'; document.querySelector('#holidays-heading').scrollIntoView()`),
	)
	dashtest.Screenshot(t, b, "admin-feriados")
	// The set hands out a new code once the calendar changes.
	lapa, _ = set.Code("lapa")
	if name, _ := lapa.Holiday(codes.Date{Y: 2027, M: 3, D: 19}); name != "" {
		t.Fatalf("19/03/2027 still a holiday after the removal: %q", name)
	}

	// A fiscal reads the list and the log, and cannot change them.
	dashtest.Run(t, b, click(`#logout`), chromedp.WaitVisible(chromedp.CSS(`#login-user`)),
		dashtest.Login(u.srv.URL, "fis", testPassword), chromedp.Navigate(u.srv.URL+"/#/administracao"),
		dashtest.WaitText(`[data-table="holidays"]`, "Emenda de feriado"),
		dashtest.WaitText(`#holidays-readonly`, "Somente administradores"),
		dashtest.WaitJS(`!document.querySelector('#new-holiday') && !document.querySelector('[data-remove-holiday]')`, "no form and no removal for a fiscal"))
}
