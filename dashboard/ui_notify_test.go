package dashboard

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/dashboard/dashtest"
	inotify "github.com/sossego/sossego/internal/notify"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/users"
)

// TestUINotifications: in a real browser, the fiscal sees who is on duty
// in Alertas and the alert's notification history, silences its sensor;
// the admin edits the plantão, gets the pt-BR validation errors, saves.
func TestUINotifications(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	u := newUIServer(t, false)
	ctx := context.Background()
	dir := t.TempDir()
	svc, err := inotify.Open(ctx, inotify.Options{Path: filepath.Join(dir, inotify.FileName),
		Users: func(ctx context.Context) ([]notify.UserRef, error) {
			list, err := u.store.List(ctx)
			var out []notify.UserRef
			for _, x := range list {
				out = append(out, notify.UserRef{Name: x.Name, Role: string(x.Role)})
			}
			return out, err
		}, Poll: 20 * time.Millisecond, Municipalities: func() []string { return []string{"conceicao-de-macabu", "lapa"} }})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := registry.Parse(registry.DemoYAML())
	NewNotifyAPI(NotifyOptions{Settings: svc, Silences: svc, Push: svc, Registry: registry.NewLive(reg),
		Users: func(ctx context.Context) ([]users.User, error) { return u.store.List(ctx) }}).Register(u.mux, u.auth)
	all := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	if _, err := svc.PutSettings(ctx, notify.Settings{
		Email: notify.EmailSettings{Enabled: true, Transport: "dir", Dir: filepath.Join(dir, "mail"), From: "sossego@lapa.pr.gov.br"},
		Municipalities: []notify.Municipality{{ID: "lapa", Coordinator: "adm",
			Weekly: []notify.Shift{{Days: all, From: "00:00", To: "24:00", User: "fis"}}}},
		Contacts: []notify.Contact{{User: "fis", Email: "fis@lapa.pr.gov.br"}},
	}, "adm"); err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- svc.Run(rctx) }()
	defer func() { stop(); <-done; svc.Close() }()

	b := dashtest.Browser(t, dashtest.Desktop)
	dashtest.Run(t, b, dashtest.Login(u.srv.URL, "fis", testPassword))
	u.fire(t, "lapa-bar-01/ui-notify", "lapa-bar-01", 72)
	a := u.alerts.list[0]
	svc.Notify(ctx, alerts.Event{Kind: alerts.EventFiring, At: a.FiringAt, Alert: a})
	dashtest.Run(t, b, chromedp.Navigate(u.srv.URL+"/#/alertas/"+strings.ReplaceAll(a.ID, "/", "%2F")),
		dashtest.WaitText(`#on-duty`, "Lapa/PR: fis"),
		dashtest.WaitText(`#on-duty`, "sem destinatário"), // conceição de macabu has no schedule
		dashtest.WaitJS(`!!document.querySelector('[data-notif-history]')`, "the history box"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-notif-history] summary').click()`),
		dashtest.WaitText(`[data-notif-history]`, "entregue por e-mail a fis"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-notify="silence"]').click()`),
		chromedp.SendKeys(chromedp.CSS(`[data-form="silence"] [name="reason"]`), "evento licenciado 12/2026"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-form="silence"] button[type=submit]').click()`),
		dashtest.WaitText(`#toasts`, "Silenciado até"))
	dashtest.Screenshot(t, b, "notify-alertas-fiscal")
	list, _, err := svc.Silences(ctx, time.Time{})
	if err != nil || len(list) != 1 || list[0].Sensor != "lapa-bar-01" || list[0].CreatedBy != "fis" {
		t.Fatalf("silences %+v %v", list, err)
	}
	dashtest.Run(t, b, chromedp.Navigate(u.srv.URL+"/#/notificacoes"),
		dashtest.WaitJS(`!!document.querySelector('[data-silence]')`, "the silence in the list"),
		dashtest.WaitText(`#duty-list`, "Lapa/PR: fis"),
		dashtest.WaitJS(`!document.querySelector('#notify-settings')`, "no settings for a fiscal"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#logout').click()`),
		chromedp.WaitVisible(chromedp.CSS(`#login-user`)))

	// The admin edits the settings.
	dashtest.Run(t, b, dashtest.Login(u.srv.URL, "adm", testPassword), chromedp.Navigate(u.srv.URL+"/#/notificacoes"),
		dashtest.WaitJS(`!!document.querySelector('[data-form="notify-settings"] [data-municipality="lapa"]')`, "the settings form"),
		chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector('[data-contact="fis"] [name=email]'); i.value = 'fis-na-lapa'; })()`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-notify="save-settings"]').click()`),
		dashtest.WaitText(`[data-form="notify-settings"] .error`, `e-mail "fis-na-lapa" inválido`))
	dashtest.Screenshot(t, b, "notify-settings-error")
	dashtest.Run(t, b,
		chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector('[data-contact="fis"] [name=email]'); i.value = 'fiscal@lapa.pr.gov.br'; })()`),
		// an exception for Christmas Eve: fis replaced by op is refused (an operador), then by adm… also refused; keep fis
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-municipality="lapa"] [name=escalate_after_min]').value = '10'`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-notify="save-settings"]').click()`),
		dashtest.WaitText(`#toasts`, "Configurações de notificação salvas"))
	dashtest.Screenshot(t, b, "notify-settings")
	got, _ := svc.Settings()
	if len(got.Contacts) != 1 || got.Contacts[0].Email != "fiscal@lapa.pr.gov.br" || got.Municipalities[0].EscalateAfterMin != 10 ||
		got.Municipalities[0].Weekly[0].To != "24:00" || got.Municipalities[0].Weekly[0].User != "fis" {
		t.Fatalf("saved settings %+v", got)
	}
}
