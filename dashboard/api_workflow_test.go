package dashboard_test

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
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/workflow"
)

var set = noticetest.Codes()

// fakeAlerts is the alerts table.
type fakeAlerts map[string]alerts.Alert

func (f fakeAlerts) GetAlert(_ context.Context, id string) (alerts.Alert, error) {
	a, ok := f[id]
	if !ok {
		return a, fmt.Errorf("%w: %s", alerts.ErrNotFound, id)
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
	svc   *workflow.Service
	cfg   workflow.Config
	h     http.Handler
	cases *casesdb.Store
	users map[string]dashboard.WorkflowUser
}

// set changes the service's configuration: the service and its handler
// are built again from it.
func (e *env) set(f func(*workflow.Config)) {
	f(&e.cfg)
	e.svc = workflow.New(e.cfg)
	e.h = dashboard.NewWorkflowAPI(e.svc, func(r *http.Request) (dashboard.WorkflowUser, bool) {
		u, ok := e.users[r.Header.Get("X-Test-User")]
		return u, ok
	})
}

// storeReadings writes the scenario's 1-s readings around its window into
// the real readings store as gateway-signed batches of 10 records.
func storeReadings(t *testing.T, st *sqlitestore.Store, sc noticetest.Scenario, sensor, gateway, municipality string, seq0 uint64, synced bool) {
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
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cs, err := casesdb.Open(ctx, filepath.Join(dir, "cases.db"))
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
	cfg := workflow.Config{Cases: workflow.CaseStores{Documents: cs, Steps: cs, Constatacoes: cs, PDFs: cs, Triage: cs}, Alerts: as,
		Registry: reg, Readings: st, Batches: st, Codes: set, Key: key, Now: clk.Now, Log: slog.New(slog.DiscardHandler)}
	e := &env{clk: clk, key: key, cfg: cfg, cases: cs, users: map[string]dashboard.WorkflowUser{
		"ana":  {ID: "u-ana", Name: "ana", Role: "fiscal", FullName: "Ana Paula Ferreira", Matricula: "F-1234"},
		"bia":  {ID: "u-bia", Name: "bia", Role: "fiscal"}, // no full name nor matrícula in the register
		"otto": {ID: "u-otto", Name: "Otto Operador", Role: "operador"},
	}}
	e.set(func(*workflow.Config) {})
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.h.ServeHTTP(w, r) }))
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
	all := []map[string]string{{"name": "João da Silva", "doc_type": "rg", "document": "1.234.567-8", "issuer": "SSP/PR"},
		{"name": "Maria Souza", "doc_type": "cpf", "document": "111.444.777-35"}}
	return all[:n]
}

// calibrated is a calibration register that vouches for every sensor.
type calibrated struct{}

func (calibrated) Decide(context.Context, string, calibration.SensorMeter, time.Time) calibration.Decision {
	return calibration.Decision{OK: true, Why: "certificado RBC válido"}
}

// sensorWindow is a constatação body resting on the alert's own window.
// establishment is the register's CNPJ of the source ("" = the
// scenario's party).
func sensorWindow(sc noticetest.Scenario, establishment string) map[string]any {
	if establishment == "" {
		establishment = sc.Party.Document
	}
	return map[string]any{
		"source":      map[string]any{"kind": "establishment", "establishment_id": establishment},
		"position":    map[string]any{"address": sc.Site.Address, "description": "calçada oposta"},
		"at":          sc.Finding.WindowEnd.Add(10 * time.Minute),
		"heard":       "música amplificada com graves audíveis da calçada",
		"measurement": map[string]any{"kind": "sensor_window", "source_attested": true},
	}
}

// onSite is a constatação body with an on-site class 1 reading.
func onSite(sc noticetest.Scenario, when time.Time, laeq float64, followsUp string) map[string]any {
	b := sensorWindow(sc, "98.765.432/0001-98")
	b["at"], b["follows_up"] = when, followsUp
	b["measurement"] = map[string]any{"kind": "on_site", "meter": map[string]any{"grade": "class1", "model": "XL2", "serial": "A2A-77",
		"calibrated_at": "2026-01-10", "certificate": "RBC-7/2026"}, "laeq_db": laeq, "duration_s": 300, "residual_db": sc.Base}
	return b
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
	e.set(func(c *workflow.Config) { c.Calibrations = calibrated{} })
	e.refused(t, "otto", "GET", path, nil, 409, "relógio do gateway lapa-centro-01 não sincronizado")
	e.ok(t, "ana", "POST", "/api/v1/alerts/"+url.PathEscape(id)+"/constatacoes", sensorWindow(lapa, ""), 201)
	e.refused(t, "ana", "POST", path, nil, 409, "Corrija a sincronização (NTP)")
	if _, err := e.cases.ForAlert(context.Background(), id); !errors.Is(err, cases.ErrNotFound) {
		t.Errorf("a document was stored for the alert: %v", err)
	}
	if _, err := e.svc.Export(context.Background(), id, io.Discard, nil); !errors.Is(err, workflow.ErrNoNotice) {
		t.Errorf("evidence export: %v, want a refusal", err)
	}

	// Synchronised readings in the window, but the alert counted
	// unsynchronised ones while it was open: refused too.
	counted := *lapa.Alert
	counted.UnsyncedRecords = 5
	e2 := newEnv(t, fakeAlerts{id: counted})
	e2.refused(t, "otto", "GET", path, nil, 409, "5 leituras do alerta vieram com o relógio do gateway lapa-centro-01 não sincronizado")
}

// TestLapaEndToEnd: the Lapa night exceedance is an indício until a fiscal
// records a constatação; the sensor's window does not ground a notice (its
// registered calibration is later than the alert), an on-site class 1
// reading does. The Notificação Preliminar is edited, issued by the
// logged-in fiscal, refused before two checked witnesses; the prazo
// expires, a second constatação shows the noise went on, and the auto de
// infração cites both. The issued PDFs are served as stored; the evidence
// bag verifies and a tampered copy fails.
func TestLapaEndToEnd(t *testing.T) {
	lapa := noticetest.Lapa(set)
	e := newEnv(t, fakeAlerts{lapa.Alert.ID: *lapa.Alert})
	id := lapa.Alert.ID
	path := "/api/v1/alerts/" + url.PathEscape(id) + "/notice"
	kpath := "/api/v1/alerts/" + url.PathEscape(id) + "/constatacoes"

	e.refused(t, "", "GET", path, nil, 401, "faça login")
	d := e.ok(t, "otto", "GET", path, nil, 200)
	draft := d["draft"].(map[string]any)
	if d["stored"] != false || draft["kind"] != "notificacao_preliminar" || d["grounded"] != false || !strings.Contains(d["why"].(string), "registre a constatação") {
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
	e.refused(t, "ana", "POST", path, nil, 409, "o alerta é um indício, não uma infração")

	// Constatações: refusals, then one that does not ground a notice, then one that does.
	e.clk.Set(at(3, 7, 0, 30))
	noSource := sensorWindow(lapa, "")
	delete(noSource, "source")
	badCPF := onSite(lapa, at(3, 7, 0, 0), 70, "")
	badCPF["source"] = map[string]any{"kind": "other", "name": "José Vizinho", "document": "111.444.777-00", "address": "Rua XV, 102"}
	unknown := sensorWindow(lapa, "")
	unknown["source"] = map[string]any{"kind": "establishment", "establishment_id": "11.444.777/0001-61"}
	for _, tc := range []struct {
		user string
		body any
		code int
		msg  string
	}{
		{"otto", sensorWindow(lapa, ""), 403, "somente um fiscal"},
		{"bia", sensorWindow(lapa, ""), 422, "não tem nome completo e matrícula"},
		{"ana", noSource, 422, "informe a fonte do ruído"},
		{"ana", badCPF, 422, "dígito verificador do CPF não confere"},
		{"ana", unknown, 422, "não está no cadastro"},
		{"ana", map[string]any{"heard": 3}, 400, `deveria ser um texto, veio um número`},
	} {
		e.refused(t, tc.user, "POST", kpath, tc.body, tc.code, tc.msg)
	}
	if ks := e.ok(t, "otto", "GET", path, nil, 200)["alert_constatacoes"]; ks != nil {
		t.Fatalf("a refused constatação was stored: %v", ks)
	}
	k1 := e.ok(t, "ana", "POST", kpath, sensorWindow(lapa, ""), 201)
	if k1["grounds"] != false || !strings.Contains(k1["why"].(string), "posterior à medição") || k1["agent"].(map[string]any)["name"] != "Ana Paula Ferreira" {
		t.Fatalf("sensor window with a later calibration: %v", k1)
	}
	e.refused(t, "ana", "POST", path, nil, 409, "Faça a medição no local com medidor classe 1 ou 2 calibrado")
	unid := onSite(lapa, at(3, 7, 0, 0), 70, "")
	unid["source"] = map[string]any{"kind": "unidentified"}
	if k := e.ok(t, "ana", "POST", kpath, unid, 201); k["grounds"] != false || !strings.Contains(k["why"].(string), "não há a quem notificar") {
		t.Fatalf("unidentified source: %v", k)
	}
	e.refused(t, "ana", "POST", path, map[string]any{"constatacao_id": k1["id"]}, 409, "posterior à medição")
	k3 := e.ok(t, "ana", "POST", kpath, onSite(lapa, at(3, 7, 0, 10), 67.5, ""), 201)
	if k3["grounds"] != true || k3["id"] != "lapa-CT-2026-000003" {
		t.Fatalf("on-site reading: %v", k3)
	}
	e.clk.Set(at(3, 9, 9, 0))
	created := e.ok(t, "ana", "POST", path, nil, 201)
	np := created["id"].(string)
	if np != "lapa-NP-2026-000001" || created["grounded"] != true {
		t.Fatalf("created %v", created)
	}
	e.ok(t, "ana", "POST", path, nil, 200) // idempotent

	// Draft edits.
	npath := "/api/v1/notices/" + np
	edit := func(changes ...map[string]string) map[string]any { return map[string]any{"changes": changes} }
	e.refused(t, "otto", "PATCH", npath, edit(map[string]string{"field": "circumstances", "value": "x"}), 403, "somente um fiscal")
	e.refused(t, "ana", "PATCH", npath, edit(map[string]string{"field": "prazo_days", "value": "0"}), 422, "ao menos 1 dia")
	e.refused(t, "ana", "PATCH", npath, edit(map[string]string{"field": "prazo_days", "value": "10000"}), 422, "passa de 365 dias")
	e.refused(t, "ana", "PATCH", npath, edit(map[string]string{"field": "party.document", "value": "12.345.678/0001-00"}), 422, "dígito verificador do CNPJ")
	v := e.ok(t, "ana", "PATCH", npath, edit(map[string]string{"field": "lavratura_place", "value": "Sede da Prefeitura, Praça Gen. Carneiro"},
		map[string]string{"field": "circumstances", "value": "Portas abertas, caixas de som voltadas para a rua."},
		map[string]string{"field": "prazo_days", "value": "5"}), 200)
	if len(v["edits"].([]any)) != 3 || v["prazo_days"].(float64) != 5 {
		t.Fatalf("edited %v", v)
	}

	e.clk.Set(at(3, 9, 10, 0))
	e.refused(t, "otto", "POST", npath+"/issue", nil, 403, "somente um fiscal")
	e.refused(t, "ana", "POST", npath+"/recusa", map[string]any{"witnesses": witnesses(2)}, 409, "ainda é rascunho")
	e.refused(t, "ana", "POST", npath+"/issue", map[string]any{"agent_name": "Outro Fiscal"}, 422, "quem assina é o usuário logado")
	e.refused(t, "bia", "POST", npath+"/issue", nil, 422, "não tem nome completo e matrícula")
	e.refused(t, "ana", "POST", npath+"/issue", map[string]any{"agente": "x"}, 400, "corpo JSON inválido")
	v = e.ok(t, "ana", "POST", npath+"/issue", nil, 200)
	if v["state"] != "issued" || v["state_label"] != "emitida" || len(v["pending_fields"].([]any)) != 0 || v["pdf"] == nil {
		t.Fatalf("issued: %v", v)
	}
	e.refused(t, "ana", "PATCH", npath, edit(map[string]string{"field": "circumstances", "value": "x"}), 409, "um ato emitido não se altera")
	e.clk.Set(at(3, 9, 10, 30))
	decl := "O gerente recebeu a 1ª via e recusou-se a assinar."
	e.refused(t, "ana", "POST", npath+"/recusa", map[string]any{"witnesses": []map[string]string{witnesses(1)[0], {"name": "Pedro Alves", "document": "abc"}},
		"declaration": decl}, 409, "informe o tipo do documento")
	e.refused(t, "ana", "POST", npath+"/recusa", map[string]any{"witnesses": witnesses(1), "declaration": decl}, 409, "precisa de 2 testemunhas")
	e.refused(t, "ana", "POST", npath+"/recusa", map[string]any{"witnesses": witnesses(2)}, 409, "declaração do fiscal")
	v = e.ok(t, "ana", "POST", npath+"/recusa", map[string]any{"witnesses": witnesses(2), "declaration": decl, "observation": "música ainda alta"}, 200)
	dl := v["deadlines"].([]any)[0].(map[string]any)
	if v["state"] != "refused" || dl["last_day"] != "14/03/2026" || dl["status"] != "running" || v["declaration"] != decl || v["observation"] != "música ainda alta" {
		t.Fatalf("refused: %v", v)
	}

	// The prazo runs to 14/03; the auto needs a constatação after it, and
	// is not among the actions offered before.
	hasAuto := func(v map[string]any) bool {
		for _, a := range v["actions"].([]any) {
			if a == "auto" {
				return true
			}
		}
		return false
	}
	if hasAuto(v) {
		t.Errorf("auto offered while the prazo runs: actions %v", v["actions"])
	}
	e.clk.Set(at(3, 14, 23, 0))
	early := e.ok(t, "ana", "POST", kpath, onSite(lapa, at(3, 14, 22, 30), 68, np), 201)
	if v := e.ok(t, "ana", "GET", npath, nil, 200); hasAuto(v) {
		t.Errorf("auto offered on the prazo's last day: actions %v", v["actions"])
	}
	e.refused(t, "ana", "POST", npath+"/auto", map[string]any{"follow_up": early["id"]}, 409, "corre até 14/03/2026")
	e.clk.Set(at(3, 16, 9, 0))
	if v := e.ok(t, "ana", "GET", npath, nil, 200); !hasAuto(v) {
		t.Errorf("auto not offered after the prazo: actions %v", v["actions"])
	}
	e.refused(t, "ana", "POST", npath+"/auto", nil, 409, "registre a constatação após o prazo")
	e.refused(t, "ana", "POST", npath+"/auto", map[string]any{"follow_up": early["id"]}, 409, "anterior ao fim do prazo")
	e.refused(t, "ana", "POST", kpath, func() map[string]any { b := sensorWindow(lapa, ""); b["follows_up"] = np; return b }(), 422, "precisa de nova medição no local")
	late := e.ok(t, "ana", "POST", kpath, onSite(lapa, at(3, 15, 23, 0), 66.8, np), 201)
	out := e.ok(t, "ana", "POST", npath+"/auto", map[string]any{"follow_up": late["id"]}, 201)
	auto := out["auto"].(map[string]any)
	aid := auto["id"].(string)
	ad := auto["draft"].(map[string]any)
	pen := ad["penalty"].(map[string]any)
	if ad["refers_to"].(map[string]any)["id"] != np || pen["ordinal"].(float64) != 2 || pen["percent"].(float64) != 25 || pen["appeal_allowed"] != false ||
		len(ad["constatacoes"].([]any)) != 2 || out["notice"].(map[string]any)["follow_up"] != late["id"] {
		t.Fatalf("auto %v", auto)
	}
	e.clk.Set(at(3, 16, 10, 0))
	if v := e.ok(t, "ana", "POST", "/api/v1/notices/"+aid+"/issue", nil, 200); v["state_label"] != "emitido" {
		t.Fatalf("auto issued: %v", v["state_label"])
	}
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

	// Audit trail: every act by the same named person.
	code, b := e.do(t, "otto", "GET", "/api/v1/notices/"+np+"/audit", nil)
	var trail []cases.Entry
	if code != 200 || json.Unmarshal(b, &trail) != nil {
		t.Fatalf("audit %d %s", code, b)
	}
	var acts []string
	for _, en := range trail {
		acts = append(acts, en.Action)
		if en.Action != "create" && en.Actor.Name != "Ana Paula Ferreira" {
			t.Errorf("%s by %q", en.Action, en.Actor.Name)
		}
	}
	if got := strings.Join(acts, " "); got != "create edit edit edit issue recusa constatacao constatacao auto" {
		t.Fatalf("audit actions %q", got)
	}

	// PDFs of both documents: the bytes stored at issue.
	for _, doc := range []struct {
		id   string
		want []string
	}{
		{np, []string{"NOTIFICAÇÃO PRELIMINAR", "(Art. 334, VI)", "Ana Paula Ferreira, matrícula F-1234", "João da Silva", "Maria Souza",
			"Sede da Prefeitura, Praça Gen. Carneiro", "Circunstâncias: Portas abertas", "lapa-CT-2026-000003", "XL2"}},
		{aid, []string{"AUTO DE INFRAÇÃO", "(Art. 337, III)", "Notificação Preliminar nº " + np, "2ª infração", "não cabe recurso",
			"lapa-CT-2026-000003", "lapa-CT-2026-000005", "15/03/2026 às 23:00"}},
	} {
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/notices/"+doc.id+"/pdf", nil)
		req.Header.Set("X-Test-User", "otto")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		stored, meta, err := e.cases.PDF(context.Background(), doc.id)
		if res.StatusCode != 200 || err != nil || !bytes.Equal(b, stored) || res.Header.Get("X-Sossego-SHA256") != meta.SHA256 {
			t.Fatalf("pdf %s: %d, not the stored bytes (%v)", doc.id, res.StatusCode, err)
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
		"| u-ana Ana Paula Ferreira (fiscal) | recusa registrada | " + np + ": emitida → recusa testemunhada",
		"| u-ana Ana Paula Ferreira (fiscal) | constatação registrada | " + id, "Sossego-Code-Version: " + lapa.Code.Version} {
		if !strings.Contains(info, s) {
			t.Errorf("bag-info lacks %q:\n%s", s, info)
		}
	}
	if n := strings.Count(string(files[root+"data/readings.csv"]), "\n"); n != 24*60+1 {
		t.Errorf("readings.csv: %d lines, want the 4-min window + 2×10 min margins = 1440 records + header", n)
	}
	// The acts as stored at issue (and at the recusa), byte for byte, and
	// the constatações; no re-rendered document beside them.
	for _, doc := range []string{np, aid} {
		stored, meta, err := e.cases.PDFVersion(context.Background(), doc, 1)
		if err != nil || !bytes.Equal(files[root+"data/acts/"+doc+"-1-"+meta.Stage+".pdf"], stored) {
			t.Errorf("act %s not in the bag byte for byte (%v)", doc, err)
		}
	}
	if files[root+"data/notice.pdf"] != nil || !strings.Contains(string(files[root+"data/acts/index.json"]), np) {
		t.Error("a rendered notice beside the stored acts, or no act index")
	}
	if n := 0; true {
		for name := range files {
			if strings.HasPrefix(name, root+"data/constatacoes/") {
				n++
			}
		}
		ks, err := e.cases.Constatacoes(context.Background(), id)
		if err != nil || n != len(ks) || n < 2 {
			t.Errorf("%d constatações in the bag, the store has %d (%v)", n, len(ks), err)
		}
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
	e.set(func(c *workflow.Config) { c.Calibrations = calibrated{} })
	e.clk.Set(at(3, 11, 9, 0))
	if k := e.ok(t, "ana", "POST", "/api/v1/alerts/"+url.PathEscape(sc.Alert.ID)+"/constatacoes", sensorWindow(sc, "98.765.432/0001-98"), 201); k["grounds"] != true {
		t.Fatalf("calibrated class 1 window: %v", k)
	}
	ip := e.ok(t, "ana", "POST", path, nil, 201)["id"].(string)
	if !strings.HasPrefix(ip, "conceicao-de-macabu-IP-2026-") {
		t.Fatalf("id %s", ip)
	}
	e.refused(t, "ana", "POST", "/api/v1/notices/"+ip+"/issue", map[string]any{"prazo_days": 31}, 409, "máximo de 30 dias")
	e.ok(t, "ana", "POST", "/api/v1/notices/"+ip+"/issue", map[string]any{"prazo_days": 10}, 200)
	e.ok(t, "ana", "POST", "/api/v1/notices/"+ip+"/ciente", map[string]any{"signed_by": "Dona Rosa"}, 200)
	e.clk.Set(at(3, 20, 9, 0))
	e.ok(t, "ana", "POST", "/api/v1/notices/"+ip+"/regularize", map[string]any{"note": "isolamento acústico instalado"}, 200)
	e.refused(t, "ana", "POST", "/api/v1/notices/"+ip+"/auto", nil, 409, "regularizada")
	// A correction after issue is a new act citing the old one.
	e.refused(t, "otto", "POST", "/api/v1/notices/"+ip+"/correct", map[string]any{"reason": "x"}, 403, "somente um fiscal")
	e.refused(t, "ana", "POST", "/api/v1/notices/"+ip+"/correct", map[string]any{}, 422, "informe o motivo da correção")
	corr := e.ok(t, "ana", "POST", "/api/v1/notices/"+ip+"/correct", map[string]any{"reason": "nome do intimado incompleto"}, 201)
	cid := corr["correction"].(map[string]any)["id"].(string)
	if corr["old"].(map[string]any)["corrected_by"] != cid || corr["correction"].(map[string]any)["draft"].(map[string]any)["corrects"].(map[string]any)["id"] != ip {
		t.Fatalf("correction %v", corr)
	}
	e.refused(t, "ana", "PATCH", "/api/v1/notices/"+ip, map[string]any{"changes": []map[string]string{{"field": "circumstances", "value": "x"}}}, 409, "não se altera")
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

// brokenAlerts is an alerts store that fails (a locked or unreadable
// database), as opposed to one that holds no such alert.
type brokenAlerts struct{}

func (brokenAlerts) GetAlert(context.Context, string) (alerts.Alert, error) {
	return alerts.Alert{}, errors.New("database is locked")
}

// TestAlertStoreFailureIsNotNotFound: an unknown alert is a 404 that names
// it; a failing alerts store is a 500, never "não encontrado" (a fiscal
// told an alert does not exist while the database was only busy). The 500
// gives a reference the log holds with the store's own words, which the
// answer does not show.
func TestAlertStoreFailureIsNotNotFound(t *testing.T) {
	e := newEnv(t, fakeAlerts{})
	paths := []string{"/api/v1/alerts/lapa-x/notice", "/api/v1/alerts/lapa-x/constatacoes"}
	for _, p := range paths {
		e.refused(t, "ana", "GET", p, nil, 404, "não encontrado: alerta")
	}
	logs := &dashboard.SyncBuffer{}
	e.set(func(c *workflow.Config) { c.Alerts = brokenAlerts{} })
	e.set(func(c *workflow.Config) { c.Log = slog.New(slog.NewTextHandler(logs, nil)) })
	for _, p := range paths {
		code, b := e.do(t, "ana", "GET", p, nil)
		var ans struct{ Erro, Referencia string }
		_ = json.Unmarshal(b, &ans)
		if code != 500 || !strings.HasPrefix(ans.Erro, "erro interno do serviço") || strings.Contains(ans.Erro, "database is locked") ||
			ans.Referencia == "" || !regexp.MustCompile(`referencia=`+ans.Referencia+` .*database is locked`).MatchString(logs.String()) {
			t.Errorf("GET %s with a failing store: %d %s; log %s", p, code, b, logs.String())
		}
	}
}
