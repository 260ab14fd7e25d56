package central

// Full-system end-to-end test in a real browser: the central service
// (embedded broker, ingest, SQLite, alerts, hub, UI, workflow API) runs
// in-process; signed batches from the demo registry's gateways feed it
// through MQTT; Debian chromium (dashboard/dashtest) logs in as a fiscal and
// as an operador and uses the UI as people would.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/cookiejar"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/gorilla/websocket"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/dashboard/dashtest"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
	"github.com/sossego/sossego/internal/wire"
)

// Users of the browser test (created before Run, like `sossego users add`).
const (
	fiscalUser   = "ana"
	fiscal2User  = "joao"
	operadorUser = "otavio"
	e2ePassword  = "senha-de-teste-456"
)

func addUser(t testing.TB, dir, name string, role users.Role) {
	t.Helper()
	us, err := usersdb.OpenDir(context.Background(), dir, users.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer us.Close()
	nu := users.NewUser{Name: name, Role: role, Password: e2ePassword}
	if role == users.Fiscal {
		// The signing fiscal is the logged-in user, with the name and
		// matrícula the notice prints.
		nu.Profile = users.Profile{FullName: "Ana Souza Fiscal", Matricula: "F-0042"}
		if name != fiscalUser {
			nu.Profile = users.Profile{FullName: "João Pereira Fiscal", Matricula: "F-0043"}
		}
	}
	if _, err := us.Create(context.Background(), nu, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// screenshotDir is $SOSSEGO_SCREENSHOTS (relative to the repository root)
// or a temporary directory.
func screenshotDir(t *testing.T) string {
	d := os.Getenv("SOSSEGO_SCREENSHOTS")
	if d == "" {
		return t.TempDir()
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join(testenv.RepoRoot(t), d)
	}
	return d
}

// publishOnline publishes each gateway's retained "online" status with a
// synchronised clock, as the gateway daemon does on connect. On a busy
// machine a CONNECT (bcrypt check included) can take many seconds: the
// client waits up to a minute, and is disconnected whatever happens, so a
// failure never leaves a client connecting behind the test's back.
func publishOnline(t *testing.T, url string, gws []loadgen.Gateway) {
	t.Helper()
	const wait = 60 * time.Second
	for _, g := range gws {
		c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID(g.ID).
			SetUsername(g.ID).SetPassword(g.Password).SetCleanSession(true).SetConnectTimeout(wait).SetAutoReconnect(false))
		if tok := c.Connect(); !tok.WaitTimeout(wait) || tok.Error() != nil {
			c.Disconnect(0)
			t.Fatalf("status connect %s within %s: %v", g.ID, wait, tok.Error())
		}
		b, _ := json.Marshal(wire.Status{V: 1, State: "online", At: time.Now().UTC().Truncate(time.Millisecond),
			Clock: &wire.Clock{Synced: true, OffsetMs: 0.8, Source: "ntp"}, Version: "e2e"})
		if tok := c.Publish(wire.StatusTopic(g.Municipality, g.ID), 1, true, b); !tok.WaitTimeout(wait) || tok.Error() != nil {
			c.Disconnect(0)
			t.Fatalf("status publish %s within %s: %v", g.ID, wait, tok.Error())
		}
		c.Disconnect(100)
	}
}

// sessionClient logs user in over HTTP and returns the client (cookie jar).
func sessionClient(t *testing.T, base, user string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/login", strings.NewReader(`{"user":"`+user+`","password":"`+e2ePassword+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login %s: HTTP %d", user, resp.StatusCode)
	}
	return c
}

// caseFeed reads the live feed of a fiscal's websocket and keeps the
// workflow ("case") frames.
type caseFeed struct {
	mu    sync.Mutex
	cases []map[string]any
}

func watchCases(t *testing.T, base string, c *http.Client) *caseFeed {
	t.Helper()
	conn := dialFeed(t, base, c)
	f := &caseFeed{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			var m struct {
				Type string         `json:"type"`
				Case map[string]any `json:"case"`
			}
			if json.Unmarshal(msg, &m) == nil && m.Type == "case" {
				f.mu.Lock()
				f.cases = append(f.cases, m.Case)
				f.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	return f
}

// dialFeed opens the live feed (/ws) of the session c holds.
func dialFeed(t testing.TB, base string, c *http.Client) *websocket.Conn {
	t.Helper()
	u, _ := neturl.Parse(base)
	var cookies []string
	for _, k := range c.Jar.Cookies(u) {
		cookies = append(cookies, k.Name+"="+k.Value)
	}
	h := http.Header{"Origin": {base}, "Cookie": {strings.Join(cookies, "; ")}}
	conn, resp, err := websocket.DefaultDialer.Dial("ws://"+u.Host+"/ws", h)
	if err != nil {
		t.Fatalf("websocket: %v (%v)", err, resp)
	}
	return conn
}

func (f *caseFeed) actions(alertID string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var s []string
	for _, c := range f.cases {
		if c["alert_id"] == alertID {
			s = append(s, fmt.Sprint(c["action"], ":", c["by"]))
		}
	}
	return strings.Join(s, ",")
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// TestBrowserEndToEnd: loadgen → embedded broker → ingest → SQLite →
// alerts → hub → chromium. A fiscal logs in, sees the Lapa bar sensor's
// value change live, sees it cross the limit, receives the alert live
// (sound and notification stubbed and counted), acknowledges and assigns it,
// opens the Notificação Preliminar draft with every Art. 334 field, stores
// and issues it, records a recusa with two witnesses (a repeated witness is
// refused by the API and the refusal shown), downloads the evidence bag
// (verified with alerts/evidence.Verify against the service's key) and the
// PDF. An operador at 360 px sees the overview and the read-only inbox
// without horizontal overflow. Screenshots go to $SOSSEGO_SCREENSHOTS.
func TestBrowserEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	testenv.Chromium(t) // skip (or fail under CI=true) before starting anything
	shots := screenshotDir(t)
	dir := t.TempDir()
	addUser(t, dir, fiscalUser, users.Fiscal)
	addUser(t, dir, fiscal2User, users.Fiscal)
	addUser(t, dir, operadorUser, users.Operador)
	// Short windows so that the alert fires within half a minute of noise.
	cfg := alerts.DefaultConfig()
	cfg.Window, cfg.MinDuration = 10*time.Second, 20*time.Second
	a := startCentral(t, Options{DataDir: dir, AlertConfig: &cfg})
	base := "http://" + a.HTTP

	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	gws := loadgen.FromRegistry(reg, seed)
	publishOnline(t, a.MQTT, gws)
	var loud atomic.Bool
	level := func(_, sensor string, at time.Time) float64 {
		x := float64(at.Unix())
		wobble := 1.6*math.Sin(x/23) + 0.9*math.Sin(x/3.7) // every record differs from the previous one
		switch {
		case sensor == "lapa-bar-01" && loud.Load():
			return 83 + wobble
		case sensor == "lapa-bar-01":
			return 53 + wobble
		default:
			return 35 + wobble // below every limit of the demo's zones
		}
	}
	// 15 minutes of history up to now, then one batch per second per
	// gateway, live, until the test ends.
	const history = 900
	start := time.Now().UTC().Truncate(time.Second).Add(-history * time.Second)
	st, err := loadgen.Run(context.Background(), loadgen.Options{URL: a.MQTT, Gateways: gws, Batches: history, Start: start,
		Level: level, Window: 300})
	if err != nil {
		t.Fatal(err)
	}
	if st.Acked != uint64(history*len(gws)) {
		t.Fatalf("history: acked %d of %d batches", st.Acked, history*len(gws))
	}
	liveCtx, stopLive := context.WithCancel(context.Background())
	liveDone := make(chan error, 1)
	// The live records start now, not where the history ended: storing the
	// history took a while, and records that much behind the clock are
	// shown as late ("atrasado"), not live.
	liveStart := time.Now().UTC().Truncate(time.Second)
	go func() {
		_, err := loadgen.Run(liveCtx, loadgen.Options{URL: a.MQTT, Gateways: gws, Rate: 1, StartSeq: history + 1,
			Start: liveStart, Level: level, WaitAcks: 5 * time.Second})
		liveDone <- err
	}()
	t.Cleanup(func() {
		stopLive()
		if err := <-liveDone; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("live feed: %v", err)
		}
	})
	// The second fiscal's live feed, to check the workflow changes reach
	// the other fiscais.
	feed := watchCases(t, base, sessionClient(t, base, fiscal2User))

	var alertID, noticeID string
	t.Run("fiscal-desktop", func(t *testing.T) {
		ctx := dashtest.Browser(t, dashtest.Desktop)
		downloads := dashtest.AllowDownloads(t, ctx)
		laeq := `[data-sensor="lapa-bar-01"] [data-field="laeq"]`
		dashtest.Run(t, ctx, dashtest.Login(base, fiscalUser, e2ePassword),
			dashtest.WaitText(`[data-sensor="lapa-bar-01"]`, "gateway lapa-centro-01 online"),
			dashtest.WaitText(`[data-sensor="lapa-bar-01"]`, "relógio sincronizado"),
			dashtest.WaitJS(`/^5\d,\d$/.test(document.querySelector('`+laeq+`').textContent)`, "a quiet value on the card"),
			chromedp.Evaluate[chromedp.Void](`window.__noReload = 1`))

		// A live value changes without a reload.
		first := eval[string](t, ctx, `document.querySelector('`+laeq+`').textContent`)
		dashtest.Run(t, ctx, dashtest.WaitJS(fmt.Sprintf(`(() => { const v = document.querySelector('%s').textContent; return v !== %q && /^5\d,\d$/.test(v); })()`, laeq, first),
			"the next live value"))
		// The bar turns its sound system up: the card goes red.
		loud.Store(true)
		dashtest.Run(t, ctx, dashtest.WaitJS(`/^8\d,\d$/.test(document.querySelector('`+laeq+`').textContent)`, "a loud value on the card"),
			dashtest.WaitText(`[data-sensor="lapa-bar-01"] [data-field="margin"]`, "acima do limite"))
		if got := eval[string](t, ctx, `document.querySelector('[data-sensor="lapa-bar-01"]').className`); !strings.Contains(got, "over") {
			t.Errorf("card class %q, want over", got)
		}
		dashtest.ScreenshotTo(t, ctx, shots, "overview", true)

		// Sensor detail: 15 minutes of history plus the live values, the limit line.
		dashtest.Run(t, ctx, dashtest.Click(`[data-sensor="lapa-bar-01"]`),
			dashtest.WaitJS(`!!document.querySelector('#chart .uplot canvas') && Number(document.querySelector('#chart').dataset.laeq) > 0 && document.querySelector('#chart').dataset.limit !== '' && [...document.querySelectorAll('#chart .u-legend .u-label')].some((e) => e.textContent === 'limite em vigor')`, "chart with LAeq and the limit"),
			dashtest.WaitJS(`/^8\d,\d$/.test(document.querySelector('#detail-laeq').textContent)`, "the loud value on the sensor page"),
			dashtest.WaitJS(`Number(document.querySelector('.stats .stat:last-child b').textContent) > 300`, "the history in the window"))

		// The inbox: the alert arrives live, with sound and notification.
		firing := `document.querySelector('.alert.firing[data-alert^="lapa-bar-01/"]')`
		dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(`nav a[data-nav="alerts"]`)),
			dashtest.WaitText(`#view h1`, "Alertas"),
			dashtest.WaitJSWithin(2*time.Minute, `!!`+firing, "the firing alert"),
			dashtest.WaitJS(`window.__beeps >= 1 && window.__notifications.some((n) => n.includes("lapa-bar-01"))`, "the alarm sound and notification"))
		if eval[int](t, ctx, `window.__noReload`) != 1 {
			t.Fatal("the page reloaded")
		}
		alertID = eval[string](t, ctx, firing+`.dataset.alert`)
		al := fmt.Sprintf(`[data-alert=%q]`, alertID)
		nb := fmt.Sprintf(`[data-notice=%q]`, alertID)
		tri := fmt.Sprintf(`[data-triage=%q]`, alertID)
		dashtest.Run(t, ctx, dashtest.WaitText(al, "Art. 96"), dashtest.WaitText(al, "dB(A) para limite de "))

		// Acknowledge and assign to the other fiscal.
		dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(al+` [data-action="ack"]`)),
			dashtest.WaitText(tri, "Reconhecido por Ana Souza Fiscal"),
			chromedp.Click(chromedp.CSS(al+` [data-action="assign"]`)),
			chromedp.SetValue(chromedp.CSS(al+` [data-form="assign"] [name="assignee"]`), fiscal2User),
			chromedp.Click(chromedp.CSS(al+` [data-submit="assign"]`)),
			dashtest.WaitText(tri, "atribuído a "))

		// The draft: every field Art. 334 requires, pre-filled or marked.
		dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(al+` [data-action="notice"]`)),
			dashtest.WaitText(nb+` h3`, "Notificação Preliminar — rascunho"))
		arts := eval[string](t, ctx, `[...document.querySelectorAll('`+nb+` dl.fields dt .art')].map((e) => e.textContent.trim()).join("|")`)
		if want := "(Art. 334, I)|(Art. 334, II)|(Art. 334, III)|(Art. 334, IV)|(Art. 334, V)|(Art. 334, VI)"; arts != want {
			t.Errorf("fields %q, want %q", arts, want)
		}
		for id, want := range map[string]string{"notificado": "Bar Exemplo da Lapa Ltda", "fato": "lapa-bar-01", "prazo": "a preencher pelo fiscal",
			"agente": "a preencher pelo fiscal", "penalidade": "25%"} {
			dashtest.Run(t, ctx, dashtest.WaitText(nb+fmt.Sprintf(` [data-field-id=%q]`, id), want))
		}
		dashtest.Run(t, ctx, dashtest.WaitText(nb+` [data-penalty]`, "1ª infração"), dashtest.WaitText(nb, "Se não regularizar no prazo"),
			dashtest.WaitText(nb+` [data-deadline="regularizacao"]`, "aguardando início"))
		// The inbox with the draft, in a window tall enough for the document.
		dashtest.Run(t, ctx, dashtest.WaitJS(`!document.querySelector('.alert.new')`, "the new alert's flash to end"),
			chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.toast').forEach((e) => e.remove()); window.scrollTo(0, 0)`),
			chromedp.EmulateViewport(int64(dashtest.Desktop.Width), 1320))
		dashtest.ScreenshotTo(t, ctx, shots, "alerts", false)
		dashtest.Run(t, ctx, chromedp.EmulateViewport(int64(dashtest.Desktop.Width), int64(dashtest.Desktop.Height)))

		// Store, issue (agent, matrícula, prazo).
		// The alert is an indício: the fiscal's constatação first (the
		// sensor's class 2 window, the source attested), then the draft.
		cf := func(name string) chromedp.CSS {
			return chromedp.CSS(nb + ` [data-form="constatacao"] [name="` + name + `"]`)
		}
		dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-step="constatacao"]`)),
			chromedp.SendKeys(cf("heard"), "música amplificada audível da calçada"),
			chromedp.SendKeys(cf("position_description"), "calçada em frente ao nº 100"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = "yes"; e.dispatchEvent(new Event("change", {bubbles: true})); })()`,
				nb+` [data-form="constatacao"] [name="attested"]`)),
			chromedp.Click(chromedp.CSS(nb+` [data-submit="constatacao"]`)),
			dashtest.WaitText(nb+` [data-constatacoes]`, "sustenta o documento"))
		dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-step="store"]`)),
			dashtest.WaitText(nb+` h3`, "nº lapa-NP-"),
			chromedp.Click(chromedp.CSS(nb+` [data-step="issue"]`)),
			dashtest.WaitText(nb+` [data-form="issue"]`, "Assina o fiscal logado"),
			chromedp.SetValue(chromedp.CSS(nb+` [data-form="issue"] [name="prazo_days"]`), "5"),
			chromedp.Click(chromedp.CSS(nb+` [data-submit="issue"]`)),
			dashtest.WaitText(nb+` [data-doc-state]`, "emitida"),
			dashtest.WaitText(nb+` [data-field-id="agente"]`, "Ana Souza Fiscal, matrícula F-0042"))
		noticeID = eval[string](t, ctx, `document.querySelector('`+nb+`').dataset.doc`)

		// Recusa: the API refuses a repeated witness and the UI says why;
		// with two distinct witnesses it is recorded and the prazo runs.
		w := nb + ` [data-form="recusa"] `
		dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-step="recusa"]`)),
			chromedp.SendKeys(chromedp.CSS(w+`[name="w1_name"]`), "Carlos Lima"),
			chromedp.SendKeys(chromedp.CSS(w+`[name="w1_doc"]`), "529.982.247-25"),
			chromedp.SendKeys(chromedp.CSS(w+`[name="w2_name"]`), "Carlos Lima"),
			chromedp.SendKeys(chromedp.CSS(w+`[name="w2_doc"]`), "111.444.777-35"),
			chromedp.SendKeys(chromedp.CSS(w+`[name="declaration"]`), "O gerente recebeu a 1ª via e recusou-se a assinar diante das testemunhas."),
			chromedp.Click(chromedp.CSS(nb+` [data-submit="recusa"]`)),
			dashtest.WaitText(w+`.error`, "pessoas distintas"),
			chromedp.SetValue(chromedp.CSS(w+`[name="w2_name"]`), "Beatriz Rocha"),
			chromedp.Click(chromedp.CSS(nb+` [data-submit="recusa"]`)),
			dashtest.WaitText(nb+` [data-doc-state]`, "recusa testemunhada"),
			dashtest.WaitText(nb+` .people`, "Beatriz Rocha (CPF 111.444.777-35)"),
			dashtest.WaitText(nb+` [data-deadline="regularizacao"]`, "correndo"),
			// The auto de infração only after the prazo: not offered while it runs.
			dashtest.WaitJS(`!document.querySelector('`+nb+` [data-step="auto"]')`, "no auto while the prazo runs"),
			dashtest.WaitText(nb+` [data-doc-state]`, "recusa testemunhada"))

		// Evidence bag and PDF, downloaded by the browser.
		dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(al+` [data-action="evidence"]`)))
		bag := downloads.Next(t)
		dashtest.Run(t, ctx, dashtest.WaitText(fmt.Sprintf(`[data-result=%q]`, alertID), "Pacote de evidências baixado"))
		zb, err := os.ReadFile(bag.Path)
		if err != nil {
			t.Fatal(err)
		}
		key, err := evidence.LoadKey(filepath.Join(dir, evidence.KeyFile))
		if err != nil {
			t.Fatal(err)
		}
		rep := evidence.Verify(bytes.NewReader(zb), int64(len(zb)), key.Public().(ed25519.PublicKey))
		if !rep.OK || !rep.Trusted || rep.AlertID != alertID || !strings.HasSuffix(bag.Name, ".zip") {
			t.Errorf("evidence bag %s (%d bytes): %+v", bag.Name, len(zb), rep)
		}
		dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(nb+` [data-step="pdf"]`)))
		pdf := downloads.Next(t)
		pb, err := os.ReadFile(pdf.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(pb, []byte("%PDF-")) || pdf.Name != noticeID+".pdf" {
			t.Errorf("PDF %q: %d bytes starting %q", pdf.Name, len(pb), pb[:min(8, len(pb))])
		}
		if eval[int](t, ctx, `window.__noReload`) != 1 {
			t.Fatal("the page reloaded")
		}

		// Back on the sensor: the loud stretch that made the alert, live.
		dashtest.Run(t, ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/sensor/lapa-bar-01"`),
			dashtest.WaitJS(`!!document.querySelector('#chart .uplot canvas') && Number(document.querySelector('#chart').dataset.laeq) > 0`, "the chart"),
			dashtest.WaitJS(`/^8\d,\d$/.test(document.querySelector('#detail-laeq').textContent)`, "the loud value"),
			chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.toast').forEach((e) => e.remove())`))
		dashtest.ScreenshotTo(t, ctx, shots, "sensor", false)
	})
	if alertID == "" || noticeID == "" {
		t.FailNow()
	}

	// What the server recorded, and what the other fiscal saw live.
	api := sessionClient(t, base, operadorUser)
	var audit []struct {
		Action string `json:"action"`
		Actor  struct {
			ID string `json:"id"`
		} `json:"actor"`
	}
	getWith(t, api, base+"/api/v1/notices/"+neturl.PathEscape(noticeID)+"/audit", &audit)
	var trail []string
	for _, e := range audit {
		trail = append(trail, e.Action+":"+e.Actor.ID)
	}
	if got, want := strings.Join(trail, ","), "create:ana,issue:ana,recusa:ana"; got != want {
		t.Errorf("audit trail %q, want %q", got, want)
	}
	var tc struct {
		Acked    bool   `json:"acked"`
		AckedBy  string `json:"acked_by"`
		Assignee string `json:"assignee"`
	}
	getWith(t, api, base+"/api/v1/alerts/"+neturl.PathEscape(alertID)+"/case", &tc)
	if !tc.Acked || tc.AckedBy != fiscalUser || tc.Assignee != fiscal2User {
		t.Errorf("triage %+v", tc)
	}
	want := "ack:ana,assign:ana,constatacao:ana,draft:ana,issue:ana,recusa:ana"
	deadline := time.Now().Add(10 * time.Second)
	for feed.actions(alertID) != want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := feed.actions(alertID); got != want {
		t.Errorf("the other fiscal's live feed: %q, want %q", got, want)
	}

	t.Run("operador-phone", func(t *testing.T) {
		ctx := dashtest.Browser(t, dashtest.Phone)
		dashtest.Run(t, ctx, dashtest.Login(base, operadorUser, e2ePassword),
			dashtest.WaitJS(`/^8\d,\d$/.test(document.querySelector('[data-sensor="lapa-bar-01"] [data-field="laeq"]').textContent)`, "the loud value"),
			dashtest.WaitText(`[data-sensor="macabu-praca-01"] [data-field="laeq"]`, ","))
		noOverflow := `document.documentElement.scrollWidth <= window.innerWidth`
		if !eval[bool](t, ctx, noOverflow) {
			t.Errorf("overview wider than the phone: %d px", eval[int](t, ctx, `document.documentElement.scrollWidth`))
		}
		dashtest.ScreenshotTo(t, ctx, shots, "phone", true)
		dashtest.Run(t, ctx, chromedp.Click(chromedp.CSS(`nav a[data-nav="alerts"]`)),
			dashtest.WaitText(fmt.Sprintf(`[data-alert=%q]`, alertID), "Art. 96"),
			dashtest.WaitText(fmt.Sprintf(`[data-triage=%q]`, alertID), "atribuído a "))
		if n := eval[int](t, ctx, `document.querySelectorAll('[data-action], [data-step]').length`); n != 0 {
			t.Errorf("operador sees %d workflow buttons, want none", n)
		}
		if !eval[bool](t, ctx, noOverflow) {
			t.Errorf("alerts page wider than the phone: %d px", eval[int](t, ctx, `document.documentElement.scrollWidth`))
		}
	})
}

func getWith(t *testing.T, c *http.Client, url string, v any) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
