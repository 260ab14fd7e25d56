package notify

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
)

var testDetails = func(sensor string) (SensorDetails, bool) {
	if sensor != "bar" {
		return SensorDetails{}, false
	}
	return SensorDetails{Address: "Rua XV de Novembro, 100, Centro, Lapa - PR", Establishment: "Bar do Tropeiro Ltda",
		EstablishmentAddress: "Rua XV de Novembro, 98", Gateway: "gw-1", GatewayName: "Gateway Centro"}, true
}

func TestRenderFiring(t *testing.T) {
	e := exceed("bar", t0)
	e.Alert.PeriodLabel, e.Alert.CodeID, e.Alert.CodeVersion, e.Alert.MarginDB = "período noturno (22:00–07:00)", "lapa", "2004", 1.1
	e.Alert.Quote = "Art. 96. É proibido perturbar o sossego público"
	n := Notification{ID: "n1", Type: TypeFiring, Municipality: "lapa", Class: ClassLevel, User: "fiscal-b",
		Alerts: []alerts.Alert{e.Alert}, At: t0, EscalateAfter: 15 * time.Minute}
	m := Render(n, RenderContext{PublicURL: "https://sossego.lapa.pr.gov.br/", Location: saoPaulo, Details: testDetails})
	if want := "[Sossego] Alerta em lapa: bar a 72,4 dB(A), limite 60,0 dB(A)"; m.Subject != want {
		t.Errorf("subject %q, want %q", m.Subject, want)
	}
	for _, want := range []string{
		"Sensor: bar — Rua XV de Novembro, 100, Centro, Lapa - PR",
		"Estabelecimento: Bar do Tropeiro Ltda — Rua XV de Novembro, 98",
		"Nível: 72,4 dB(A) (LAeq) para limite de 60,0 dB(A): +12,4 dB; margem de incerteza do medidor 1,1 dB",
		"Dispositivo legal: Art. 96 — Código de Posturas lapa (2004)",
		"Desde: 24/11/2026 20:00:00",
		"Abrir o alerta: https://sossego.lapa.pr.gov.br/#/alertas/bar%2F2026-11-24T23:00:00.000Z",
		"sem reconhecimento em 15 minutos",
	} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
	if !strings.Contains(m.HTML, `<a href="https://sossego.lapa.pr.gov.br/#/alertas/bar%2F2026-11-24T23:00:00.000Z">`) ||
		!strings.Contains(m.HTML, "Bar do Tropeiro Ltda") {
		t.Errorf("html:\n%s", m.HTML)
	}
	if m.URL == "" || !strings.HasPrefix(m.Short, "Alerta em lapa") {
		t.Errorf("url %q short %q", m.URL, m.Short)
	}
}

func TestRenderNoDataStormAndEscalation(t *testing.T) {
	var as []alerts.Alert
	for _, s := range []string{"s1", "s2", "s3", "s4"} {
		as = append(as, noData(s, t0).Alert)
	}
	n := Notification{ID: "n2", Type: TypeFiring, Municipality: "lapa", Class: ClassNoData, User: "fiscal-b", Alerts: as, At: t0}
	m := Render(n, RenderContext{Location: saoPaulo})
	if m.Subject != "[Sossego] 4 sensores sem dados em lapa" || !strings.Contains(m.Text, "Resumo: gateway gw-storm: 4 sensor(es).") ||
		!strings.Contains(m.Short, "e mais 1") {
		t.Errorf("storm: %q\n%s\n%s", m.Subject, m.Short, m.Text)
	}
	n = Notification{ID: "n3", Type: TypeEscalation, Step: 2, Municipality: "lapa", Class: ClassLevel, User: "coord",
		Called: []string{"fiscal-b", "fiscal-a"}, Alerts: []alerts.Alert{exceed("bar", t0).Alert}, At: t0}
	m = Render(n, RenderContext{Location: saoPaulo, Details: testDetails})
	if !strings.HasPrefix(m.Subject, "[Sossego] ESCALONADO: bar") || !strings.Contains(m.Text, "chamados antes: fiscal-b, fiscal-a") ||
		!strings.Contains(m.Text, "Você é a coordenação") {
		t.Errorf("escalation: %q\n%s", m.Subject, m.Text)
	}
}

func TestWebhookPayloadAndSignature(t *testing.T) {
	n := Notification{ID: "n1", Type: TypeFiring, Group: "lapa/level", Municipality: "lapa", Class: ClassLevel, User: "fiscal-b",
		Alerts: []alerts.Alert{exceed("bar", t0).Alert}, At: t0}
	rc := RenderContext{PublicURL: "https://s.lapa", Location: saoPaulo, Details: testDetails}
	p := BuildWebhook("n1/webhook:zap", n, Render(n, rc), WebhookRecipient{User: "fiscal-b", Phone: "+5541999990000"}, rc)
	body, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	a := back["alerts"].([]any)[0].(map[string]any)
	if back["version"] != 1.0 || back["type"] != "firing" || a["address"] != "Rua XV de Novembro, 100, Centro, Lapa - PR" ||
		a["establishment"] != "Bar do Tropeiro Ltda" || a["limit_db"] != 60.0 || a["url"] == "" ||
		back["recipient"].(map[string]any)["phone"] != "+5541999990000" {
		t.Fatalf("payload: %s", body)
	}
	if _, ok := a["resolved_at"]; ok {
		t.Errorf("zero resolved_at written: %s", body)
	}
	secret := []byte("segredo-do-webhook-123")
	ts := t0
	sig := Sign(secret, ts, body)
	tsh := strconv.FormatInt(ts.Unix(), 10)
	tests := []struct {
		name      string
		secret    []byte
		ts, sig   string
		body      []byte
		now       time.Time
		wantError error
	}{
		{"valid", secret, tsh, sig, body, t0.Add(time.Minute), nil},
		{"key rotation: second value matches", secret, tsh, "v1=00ff," + sig, body, t0, nil},
		{"wrong secret", []byte("outro"), tsh, sig, body, t0, ErrBadSignature},
		{"body changed", secret, tsh, sig, append([]byte(" "), body...), t0, ErrBadSignature},
		{"replayed later", secret, tsh, sig, body, t0.Add(10 * time.Minute), ErrStale},
		{"no timestamp", secret, "", sig, body, t0, ErrBadTimestamp},
		{"garbage signature", secret, tsh, "sha256=zz", body, t0, ErrBadSignature},
	}
	for _, tc := range tests {
		if err := Verify(tc.secret, tc.ts, tc.sig, tc.body, tc.now, 5*time.Minute); !errors.Is(err, tc.wantError) {
			t.Errorf("%s: Verify = %v, want %v", tc.name, err, tc.wantError)
		}
	}
}

// FuzzVerify: no input panics Verify, and only the real signature passes.
func FuzzVerify(f *testing.F) {
	f.Add("1795575600", "v1=abcd", []byte("{}"))
	f.Add("-1", "v1=,v1=", []byte(""))
	f.Add("99999999999999999999999", "", []byte("x"))
	secret := []byte("segredo-do-webhook-123")
	now := time.Unix(1795575600, 0)
	f.Fuzz(func(t *testing.T, ts, sig string, body []byte) {
		if Verify(secret, ts, sig, body, now, 5*time.Minute) != nil {
			return
		}
		v, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
		if err != nil || !strings.Contains(sig, Sign(secret, time.Unix(v, 0), body)[len("v1="):]) {
			t.Fatalf("accepted a signature that is not the HMAC: ts %q sig %q", ts, sig)
		}
	})
}
