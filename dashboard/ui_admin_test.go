package dashboard

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/dashboard/dashtest"
	"github.com/sossego/sossego/internal/monetary"
	"github.com/sossego/sossego/internal/monetary/monetarydb"
)

// TestUIAdmin: in a real browser the admin adds a fiscal (refused without
// matrícula, then accepted with the whole profile), disables an operador
// and sets Lapa's VRM for 2026 (a negative value refused first), and reads
// the evidence key's fingerprint and history; a fiscal then sees the units
// read-only and no users.
func TestUIAdmin(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	u, units, _ := newAdminUIServer(t)
	ctx := context.Background()
	current, retired := serveEvidenceKey(t, u)

	typeIn := func(form, name, text string) chromedp.Action[chromedp.Void] {
		return chromedp.SendKeys(chromedp.CSS(`[data-form="`+form+`"] [name="`+name+`"]`), text)
	}
	setJS := func(sel, v string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector('` + sel + `'); i.value = '` + v + `'; i.dispatchEvent(new Event('change')); })()`)
	}
	click := func(sel string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`document.querySelector('` + sel + `').click()`)
	}
	b := dashtest.Browser(t, dashtest.Desktop)
	dashtest.Run(t, b, dashtest.Login(u.srv.URL, "adm", testPassword),
		dashtest.WaitText(`nav`, "Administração"),
		chromedp.Navigate(u.srv.URL+"/#/administracao"),
		dashtest.WaitJS(`!!document.querySelector('[data-table="users"] [data-user="fis"]')`, "the users table"),
		// No calibration register on this server: no reminder, no error.
		dashtest.WaitJS(`document.querySelector('#admin-reminders') !== null && document.querySelector('#admin-reminders').textContent === ''`, "no calibration reminder"),
		dashtest.WaitText(`[data-user="fis"]`, "falta a matrícula"),
		click(`#new-user`),
		typeIn("new-user", "name", "maria.santos"),
		setJS(`[data-form="new-user"] [name="role"]`, "fiscal"),
		typeIn("new-user", "full_name", "Maria dos Santos"),
		typeIn("new-user", "password", "senha-da-maria-1"),
		click(`[data-form="new-user"] button[type=submit]`),
		dashtest.WaitText(`[data-error="user"]`, "matrícula: obrigatória para fiscal"),
		typeIn("new-user", "matricula", "12.345-6"),
		typeIn("new-user", "email", "maria.santos@lapa.pr.gov.br"),
		typeIn("new-user", "phone", "41999887766"),
		click(`[data-form="new-user"] button[type=submit]`),
		dashtest.WaitText(`#toasts`, "Usuário maria.santos criado."),
		dashtest.WaitText(`[data-user="maria.santos"]`, "Maria dos Santos"),
		dashtest.WaitText(`[data-user="maria.santos"]`, "(41) 99988-7766"),
		click(`[data-toggle-user="op"]`),
		dashtest.WaitText(`[data-user="op"]`, "desativado"),

		click(`[data-new-value="lapa/VRM"]`),
		setJS(`[data-form="unit-value"] [name="from"]`, "2026-01-01"),
		typeIn("unit-value", "value", "-5"),
		typeIn("unit-value", "act", "Decreto nº 20/2025"),
		click(`[data-form="unit-value"] button[type=submit]`),
		dashtest.WaitText(`[data-error="unit"]`, "valor negativo"),
		setJS(`[data-form="unit-value"] [name="value"]`, "4.938,24"),
		click(`[data-form="unit-value"] button[type=submit]`),
		dashtest.WaitText(`#toasts`, "VRM: R$ 4.938,24 a partir de 01/01/2026 cadastrado."),
		dashtest.WaitText(`[data-unit="lapa/VRM"] [data-current="VRM"]`, "VRM: R$ 4.938,24"),
		dashtest.WaitText(`[data-unit="lapa/VRM"] [data-table="periods"]`, "adm"),
		dashtest.WaitText(`[data-unit="entre-rios-de-minas/VR"] [data-current="VR"]`, "nenhum valor vigente hoje"),

		// The evidence key as the notices print it, with its history.
		dashtest.WaitJS(`document.querySelector('[data-evidence-fingerprint]')?.dataset.evidenceFingerprint === '`+current+`'`, "the current evidence key's fingerprint"),
		dashtest.WaitText(`[data-evidence-fingerprint]`, evidence.GroupedFingerprint(current)),
		dashtest.WaitText(`#evidence-key`, "sossego evidence verify pacote.zip --impressao "+current),
		dashtest.WaitText(`[data-table="evidence-keys"] [data-key="`+retired+`"]`, "substituída: troca anual — o que ela assinou antes continua válido"),
		dashtest.WaitText(`[data-table="evidence-keys"] [data-key="`+current+`"]`, "em vigor"),
		dashtest.WaitText(`[data-table="evidence-keys"] [data-key="`+retired+`"]`, "01/06/2026"),
	)
	// For the picture: no toasts over the tables, the sticky header once at the top.
	still := chromedp.Evaluate[chromedp.Void](`document.querySelector('#toasts').replaceChildren(); document.querySelector('.top').style.position = 'static'`)
	dashtest.Run(t, b, still)
	dashtest.Screenshot(t, b, "admin")

	m, err := u.store.Get(ctx, "maria.santos")
	if err != nil || m.FullName != "Maria dos Santos" || m.Matricula != "12.345-6" || m.Email != "maria.santos@lapa.pr.gov.br" || m.Phone != "(41) 99988-7766" {
		t.Fatalf("maria as stored: %+v, %v", m, err)
	}
	if op, err := u.store.Get(ctx, "op"); err != nil || !op.Disabled {
		t.Fatalf("op as stored: %+v, %v", op, err)
	}
	ps, err := units.Periods(ctx, "lapa")
	if err != nil || len(ps) != 1 || ps[0].Value != monetary.FromReais(4938.24) || ps[0].Act != "Decreto nº 20/2025" || ps[0].SetBy != "adm" {
		t.Fatalf("lapa periods: %+v, %v", ps, err)
	}

	// A fiscal reads the units, and nothing else of the page.
	dashtest.Run(t, b, click(`#logout`), chromedp.WaitVisible(chromedp.CSS(`#login-user`)),
		dashtest.Login(u.srv.URL, "fis", testPassword), chromedp.Navigate(u.srv.URL+"/#/administracao"),
		dashtest.WaitText(`[data-unit="lapa/VRM"] [data-current="VRM"]`, "R$ 4.938,24"),
		dashtest.WaitText(`#units-readonly`, "Somente administradores cadastram valores"),
		dashtest.WaitJS(`!document.querySelector('#admin-users') && !document.querySelector('[data-new-value]')`, "no user list, no value form for a fiscal"))
	dashtest.Run(t, b, still)
	dashtest.Screenshot(t, b, "admin-fiscal")
}

// serveEvidenceKey mounts GET /api/v1/evidence/key on u with a real key
// ring whose first key was rotated away on 2026-06-01, and returns the
// fingerprints of the current and the retired key.
func serveEvidenceKey(t *testing.T, u *uiServer) (current, retired string) {
	t.Helper()
	dir := t.TempDir()
	first, err := evidence.LoadOrCreateKeyRing(dir, time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	kr, err := evidence.RotateKey(dir, time.Date(2026, 6, 1, 15, 0, 0, 0, time.UTC), false, "troca anual")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(evidence.PublishedKey(kr))
	if err != nil {
		t.Fatal(err)
	}
	var k EvidenceKey
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	u.mux.Handle("GET /api/v1/evidence/key", EvidenceKeyHandler(func() (EvidenceKey, error) { return k, nil }, nil))
	return kr.Fingerprint(), first.Fingerprint()
}

// newAdminUIServer is the browser tests' server with the Administração
// routes (users and a real monetary units store) and the built-in codes.
func newAdminUIServer(t *testing.T) (*uiServer, *monetarydb.Store, *codes.Set) {
	t.Helper()
	u := newUIServer(t, false)
	units, err := monetarydb.Open(context.Background(), filepath.Join(t.TempDir(), monetarydb.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { units.Close() })
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	NewAdminAPI(AdminOptions{Users: u.store, Units: units, Codes: set}).Register(u.mux, u.auth)
	return u, units, set
}
