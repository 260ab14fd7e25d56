package workflowapi_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/workflowapi"
)

var set = noticetest.Codes()

// fakeAlerts is the alerts table.
type fakeAlerts map[string]alerts.Alert

func (f fakeAlerts) GetAlert(_ context.Context, id string) (alerts.Alert, error) {
	a, ok := f[id]
	if !ok {
		return a, fmt.Errorf("alert %q not found", id)
	}
	return a, nil
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func at(m time.Month, d, h, min int) time.Time {
	return time.Date(2026, m, d, h, min, 0, 0, noticetest.SaoPaulo)
}

type env struct {
	srv   *httptest.Server
	clk   *clock
	key   ed25519.PrivateKey
	svc   *workflowapi.Service
	users map[string]workflowapi.User
}

// storeReadings writes the scenario's 1-s readings around its window into
// the real readings store as gateway-signed batches of 10 records.
func storeReadings(t *testing.T, st *store.SQLite, sc noticetest.Scenario, sensor, gateway, municipality string, seq0 uint64, synced bool) {
	t.Helper()
	key := loadgen.Key(loadgen.DefaultSeed, gateway)
	rs := sc.Readings(sc.Finding.WindowStart.Add(-15*time.Minute), sc.Finding.WindowEnd.Add(15*time.Minute))
	var w store.Write
	for i := 0; i < len(rs); i += 10 {
		seq := seq0 + uint64(i/10)
		b := wire.Batch{V: 1, Kind: "levels", Municipality: municipality, Gateway: gateway, Sensor: sensor, Seq: seq, SentAt: rs[i].T.Add(11 * time.Second),
			Device: wire.Device{Model: sc.Site.MeterModel, Serial: sc.Site.MeterSerial, Grade: sc.Site.Grade},
			Clock:  wire.Clock{Synced: synced, OffsetMs: 2.5, Source: "ntp"}}
		if !synced {
			b.Clock = wire.Clock{Synced: false, OffsetMs: 16000, Source: "none"}
		}
		for _, r := range rs[i:min(i+10, len(rs))] {
			b.Records = append(b.Records, wire.Record{T: r.T, DurMs: 1000, LAeq: r.LAeq, LAFmax: r.LAFmax, LAFmin: r.LAFmin})
		}
		body, err := json.Marshal(&b)
		if err != nil {
			t.Fatal(err)
		}
		sig := ed25519.Sign(key, body)
		w.Batches = append(w.Batches, store.Batch{Gateway: gateway, Municipality: municipality, Sensor: sensor, Kind: "levels",
			Topic: wire.LevelsTopic(municipality, gateway, sensor), Seq: seq, Body: body, Sig: sig, Verified: true,
			ReceivedAt: b.SentAt, Device: b.Device, Clock: b.Clock, Records: b.Records})
	}
	if _, err := st.Apply(context.Background(), w); err != nil {
		t.Fatal(err)
	}
}

func newEnv(t *testing.T, as fakeAlerts) *env {
	t.Helper()
	return newEnvClock(t, as, true)
}

// newEnvClock is newEnv with the gateways' clocks synchronised or not
// while the readings were taken.
func newEnvClock(t *testing.T, as fakeAlerts, synced bool) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenSQLite(filepath.Join(dir, "readings.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cs, err := cases.Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	key, err := evidence.LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	lapa, macabu := noticetest.Lapa(set), noticetest.Macabu(set)
	storeReadings(t, st, lapa, "lapa-bar-01", "lapa-centro-01", "lapa", 1, synced)
	storeReadings(t, st, macabu, "macabu-praca-01", "macabu-praca-01", "conceicao-de-macabu", 1, synced)
	clk := &clock{t: at(3, 9, 9, 0)}
	svc := &workflowapi.Service{Cases: cs, Alerts: as, Registry: reg, Readings: st, Batches: st, Codes: set, Key: key,
		Software: "sossego test", Now: clk.Now, Log: slog.New(slog.DiscardHandler)}
	e := &env{clk: clk, key: key, svc: svc, users: map[string]workflowapi.User{
		"ana":  {ID: "u-ana", Name: "Ana Fiscal", Role: "fiscal"},
		"otto": {ID: "u-otto", Name: "Otto Operador", Role: "operador"},
	}}
	h := workflowapi.New(svc, func(r *http.Request) (workflowapi.User, bool) {
		u, ok := e.users[r.Header.Get("X-Test-User")]
		return u, ok
	})
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) do(t *testing.T, user, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if user != "" {
		req.Header.Set("X-Test-User", user)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func (e *env) ok(t *testing.T, user, method, path string, body any, want int) map[string]any {
	t.Helper()
	code, b := e.do(t, user, method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d %s (want %d)", method, path, code, b, want)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	return m
}

func (e *env) refused(t *testing.T, user, method, path string, body any, want int, msg string) {
	t.Helper()
	code, b := e.do(t, user, method, path, body)
	if code != want || !strings.Contains(string(b), msg) {
		t.Fatalf("%s %s: %d %s, want %d with %q", method, path, code, b, want, msg)
	}
}

func witnesses(n int) []map[string]string {
	all := []map[string]string{{"name": "João da Silva", "document": "RG 1.234.567"}, {"name": "Maria Souza", "document": "CPF 111.444.777-35"}}
	return all[:n]
}

// TestUnsyncedClockNoNotice (the unsynchronised-clock goal): the same Lapa night
// exceedance, measured by a gateway whose clock was not synchronised, fires
// an alert but grounds no notice — neither the draft view nor the stored
// draft nor an evidence package — with a 409 that says why and what to do.
func TestUnsyncedClockNoNotice(t *testing.T) {
	lapa := noticetest.Lapa(set)
	e := newEnvClock(t, fakeAlerts{lapa.Alert.ID: *lapa.Alert}, false)
	id := lapa.Alert.ID
	path := "/api/v1/alerts/" + url.PathEscape(id) + "/notice"
	e.refused(t, "otto", "GET", path, nil, 409, "relógio do gateway lapa-centro-01 não sincronizado")
	e.refused(t, "ana", "POST", path, nil, 409, "Corrija a sincronização (NTP)")
	if _, err := e.svc.Cases.ForAlert(context.Background(), id); !errors.Is(err, cases.ErrNotFound) {
		t.Errorf("a document was stored for the alert: %v", err)
	}
	if _, err := e.svc.Export(context.Background(), id, io.Discard, nil); !errors.Is(err, workflowapi.ErrNoNotice) {
		t.Errorf("evidence export: %v, want a refusal", err)
	}

	// Synchronised readings in the window, but the alert counted
	// unsynchronised ones while it was open: refused too.
	counted := *lapa.Alert
	counted.UnsyncedRecords = 5
	e2 := newEnv(t, fakeAlerts{id: counted})
	e2.refused(t, "otto", "GET", path, nil, 409, "5 leituras do alerta vieram com o relógio do gateway lapa-centro-01 não sincronizado")
}

// TestLapaEndToEnd: the Lapa night exceedance becomes a Notificação
// Preliminar with every Art. 334 field, is issued, refused before two
// witnesses, the prazo expires, the auto de infração references it with the
// 2ª-infração penalty; the PDFs carry the fields; the evidence bag verifies
// and a tampered copy fails.
func TestLapaEndToEnd(t *testing.T) {
	lapa := noticetest.Lapa(set)
	e := newEnv(t, fakeAlerts{lapa.Alert.ID: *lapa.Alert})
	id := lapa.Alert.ID
	path := "/api/v1/alerts/" + url.PathEscape(id) + "/notice"

	e.refused(t, "", "GET", path, nil, 401, "faça login")
	d := e.ok(t, "otto", "GET", path, nil, 200)
	draft := d["draft"].(map[string]any)
	if d["stored"] != false || draft["kind"] != "notificacao_preliminar" {
		t.Fatalf("draft %v", d)
	}
	var arts []string
	for _, f := range draft["fields"].([]any) {
		arts = append(arts, f.(map[string]any)["article"].(string))
	}
	if strings.Join(arts, ",") != "Art. 334, I,Art. 334, II,Art. 334, III,Art. 334, IV,Art. 334, V,Art. 334, VI" {
		t.Fatalf("fields %v", arts)
	}
	e.refused(t, "otto", "POST", path, nil, 403, "somente um fiscal")
	created := e.ok(t, "ana", "POST", path, nil, 201)
	np := created["id"].(string)
	if np != "lapa-NP-2026-000001" {
		t.Fatalf("id %s", np)
	}
	e.ok(t, "ana", "POST", path, nil, 200) // idempotent

	e.clk.Set(at(3, 9, 10, 0))
	e.refused(t, "otto", "POST", "/api/v1/notices/"+np+"/issue", map[string]any{"agent_name": "Ana Fiscal", "matricula": "F-1234", "prazo_days": 5}, 403, "somente um fiscal")
	e.refused(t, "ana", "POST", "/api/v1/notices/"+np+"/recusa", map[string]any{"witnesses": witnesses(2)}, 409, "ainda é rascunho")
	e.refused(t, "ana", "POST", "/api/v1/notices/"+np+"/issue", map[string]any{"agent_name": "Ana Fiscal", "prazo_days": 5}, 409, "matrícula")
	e.refused(t, "ana", "POST", "/api/v1/notices/"+np+"/issue", map[string]any{"agente": "x"}, 400, "corpo JSON inválido")
	v := e.ok(t, "ana", "POST", "/api/v1/notices/"+np+"/issue", map[string]any{"agent_name": "Ana Fiscal", "matricula": "F-1234", "prazo_days": 5}, 200)
	if v["state"] != "issued" || len(v["pending_fields"].([]any)) != 0 {
		t.Fatalf("issued: %v", v)
	}
	e.clk.Set(at(3, 9, 10, 30))
	e.refused(t, "ana", "POST", "/api/v1/notices/"+np+"/recusa", map[string]any{"witnesses": witnesses(1)}, 409, "precisa de 2 testemunhas")
	v = e.ok(t, "ana", "POST", "/api/v1/notices/"+np+"/recusa", map[string]any{"witnesses": witnesses(2)}, 200)
	dl := v["deadlines"].([]any)[0].(map[string]any)
	if v["state"] != "refused" || dl["last_day"] != "14/03/2026" || dl["status"] != "running" {
		t.Fatalf("refused: %v", v)
	}
	e.clk.Set(at(3, 14, 18, 0))
	e.refused(t, "ana", "POST", "/api/v1/notices/"+np+"/auto", nil, 409, "corre até 14/03/2026")
	e.clk.Set(at(3, 16, 9, 0))
	out := e.ok(t, "ana", "POST", "/api/v1/notices/"+np+"/auto", nil, 201)
	auto := out["auto"].(map[string]any)
	aid := auto["id"].(string)
	ad := auto["draft"].(map[string]any)
	pen := ad["penalty"].(map[string]any)
	if ad["refers_to"].(map[string]any)["id"] != np || pen["ordinal"].(float64) != 2 || pen["percent"].(float64) != 25 || pen["appeal_allowed"] != false {
		t.Fatalf("auto %v", auto)
	}
	e.clk.Set(at(3, 16, 10, 0))
	e.ok(t, "ana", "POST", "/api/v1/notices/"+aid+"/issue", map[string]any{"agent_name": "Ana Fiscal", "matricula": "F-1234"}, 200)
	av := e.ok(t, "ana", "POST", "/api/v1/notices/"+aid+"/ciente", map[string]any{"signed_by": "Carlos Dono"}, 200)
	var recurso map[string]any
	for _, x := range av["deadlines"].([]any) {
		if x.(map[string]any)["id"] == "recurso" {
			recurso = x.(map[string]any)
		}
	}
	if recurso["status"] != "not_allowed" || !strings.Contains(recurso["note"].(string), "Art. 346, § 1º") {
		t.Fatalf("recurso %v", recurso)
	}

	// Audit trail.
	code, b := e.do(t, "otto", "GET", "/api/v1/notices/"+np+"/audit", nil)
	var trail []cases.Entry
	if code != 200 || json.Unmarshal(b, &trail) != nil || len(trail) != 4 || trail[2].Action != "recusa" || trail[2].Actor.ID != "u-ana" {
		t.Fatalf("audit %d %s", code, b)
	}

	// PDFs of both documents.
	for _, doc := range []struct {
		id   string
		want []string
	}{
		{np, []string{"NOTIFICAÇÃO PRELIMINAR", "(Art. 334, VI)", "Ana Fiscal, matrícula F-1234", "João da Silva", "Maria Souza"}},
		{aid, []string{"AUTO DE INFRAÇÃO", "(Art. 337, III)", "Notificação Preliminar nº " + np, "2ª infração", "não cabe recurso"}},
	} {
		code, b := e.do(t, "otto", "GET", "/api/v1/notices/"+doc.id+"/pdf", nil)
		if code != 200 || !bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Fatalf("pdf %s: %d", doc.id, code)
		}
		checkPDF(t, b, doc.want)
	}

	// Evidence.
	code, bag := e.do(t, "otto", "GET", "/api/v1/alerts/"+url.PathEscape(id)+"/evidence", nil)
	if code != 200 {
		t.Fatalf("evidence %d %s", code, bag)
	}
	rep := evidence.Verify(bytes.NewReader(bag), int64(len(bag)), e.key.Public().(ed25519.PublicKey))
	if !rep.OK || !rep.Trusted {
		t.Fatalf("bag: %+v", rep)
	}
	files := unzip(t, bag)
	root := evidence.BagName(id) + "/"
	info := string(files[root+"bag-info.txt"])
	for _, s := range []string{"Sossego-Notice: " + aid, "Sossego-Gateway-Signatures: 144 lotes: 144 verificados, 0 falharam",
		"| u-ana Ana Fiscal (fiscal) | recusa |", "Sossego-Code-Version: " + lapa.Code.Version} {
		if !strings.Contains(info, s) {
			t.Errorf("bag-info lacks %q:\n%s", s, info)
		}
	}
	if n := strings.Count(string(files[root+"data/readings.csv"]), "\n"); n != 24*60+1 {
		t.Errorf("readings.csv: %d lines, want the 4-min window + 2×10 min margins = 1440 records + header", n)
	}
	bad := bytes.Clone(bag)
	tampered := rezipFlip(t, bad, root+"data/readings.csv")
	if rep := evidence.Verify(bytes.NewReader(tampered), int64(len(tampered)), nil); rep.OK {
		t.Fatal("tampered bag verified")
	}
}

// TestMacabuEndToEnd: the Conceição de Macabu 45 dB exceedance gives an
// Intimação Preliminar with a prazo of at most 30 days set by the fiscal.
func TestMacabuEndToEnd(t *testing.T) {
	sc := noticetest.Macabu(set)
	e := newEnv(t, fakeAlerts{sc.Alert.ID: *sc.Alert})
	path := "/api/v1/alerts/" + url.PathEscape(sc.Alert.ID) + "/notice"
	e.clk.Set(at(3, 11, 9, 0))
	ip := e.ok(t, "ana", "POST", path, nil, 201)["id"].(string)
	if !strings.HasPrefix(ip, "conceicao-de-macabu-IP-2026-") {
		t.Fatalf("id %s", ip)
	}
	e.refused(t, "ana", "POST", "/api/v1/notices/"+ip+"/issue", map[string]any{"agent_name": "Ana", "matricula": "7", "prazo_days": 31}, 409, "máximo de 30 dias")
	e.ok(t, "ana", "POST", "/api/v1/notices/"+ip+"/issue", map[string]any{"agent_name": "Ana", "matricula": "7", "prazo_days": 10}, 200)
	e.ok(t, "ana", "POST", "/api/v1/notices/"+ip+"/ciente", map[string]any{"signed_by": "Dona Rosa"}, 200)
	e.clk.Set(at(3, 20, 9, 0))
	e.ok(t, "ana", "POST", "/api/v1/notices/"+ip+"/regularize", map[string]any{"note": "isolamento acústico instalado"}, 200)
	e.refused(t, "ana", "POST", "/api/v1/notices/"+ip+"/auto", nil, 409, "regularizado")
	code, bag := e.do(t, "ana", "GET", "/api/v1/alerts/"+url.PathEscape(sc.Alert.ID)+"/evidence", nil)
	if code != 200 {
		t.Fatalf("evidence %d", code)
	}
	if rep := evidence.Verify(bytes.NewReader(bag), int64(len(bag)), e.key.Public().(ed25519.PublicKey)); !rep.OK {
		t.Fatalf("bag %+v", rep)
	}
	e.refused(t, "ana", "GET", "/api/v1/alerts/nao-existe/notice", nil, 404, "nao-existe")
}

func checkPDF(t *testing.T, b []byte, want []string) {
	t.Helper()
	pdftoppm := testenv.Pdftoppm(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "doc.pdf")
	os.WriteFile(p, b, 0o644)
	out, err := exec.Command(filepath.Join(filepath.Dir(pdftoppm), "pdftotext"), p, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v %s", err, out)
	}
	text := strings.Join(strings.Fields(string(out)), " ")
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("PDF lacks %q", w)
		}
	}
	if out, err := exec.Command(pdftoppm, "-png", "-r", "40", "-f", "1", "-l", "1", p, filepath.Join(dir, "p")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v %s", err, out)
	}
}
