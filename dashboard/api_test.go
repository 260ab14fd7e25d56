package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/wire"
)

var apiNow = time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC) // 20:30 in Lapa

type fakeAlerts struct{ got AlertFilter }

func (f *fakeAlerts) ListAlerts(_ context.Context, af AlertFilter) (any, error) {
	f.got = af
	return []map[string]string{{"id": "lapa-bar-01/x", "state": "firing"}}, nil
}

func newTestAPI(t *testing.T) (*API, *sqlitestore.Store, *fakeAlerts) {
	t.Helper()
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "api.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := store.Batch{Gateway: "lapa-centro-01", Municipality: "lapa", Sensor: "lapa-bar-01", Kind: wire.KindLevels, Seq: 1,
		Topic: "t", Body: []byte("{}"), ReceivedAt: apiNow, Device: wire.Device{Grade: "class2"}}
	for i, l := range []float64{50, 60, 70} {
		b.Records = append(b.Records, wire.Record{T: apiNow.Add(-10*time.Minute + time.Duration(i)*time.Second), DurMs: 1000, LAeq: l, LAFmax: l + 2, LAFmin: l - 2})
	}
	if _, err := st.Apply(context.Background(), store.Write{Batches: []store.Batch{b},
		DeadLetters: []store.DeadLetter{{ReceivedAt: apiNow, Topic: "x", Reason: wire.ReasonRange, Message: "900 dB", Payload: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	fa := &fakeAlerts{}
	api := NewAPI(APIOptions{Registry: registry.NewLive(reg), Store: st, Alerts: fa, Now: func() time.Time { return apiNow },
		Limits: func(s registry.Sensor, at time.Time) (Limit, bool, error) {
			if s.Code == "lapa" && s.Zone == "other" {
				return Limit{LimitDBA: 65, Code: "lapa", Article: "Art. 96", Period: "diurno"}, true, nil
			}
			return Limit{}, false, errors.New("sem limite")
		}})
	return api, st, fa
}

func get(t *testing.T, h http.Handler, url string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s: body %q is not JSON: %v", url, rec.Body.String(), err)
	}
	return rec.Code, out
}

func TestAPIEndpoints(t *testing.T) {
	api, _, fa := newTestAPI(t)
	code, body := get(t, api, "/api/v1/sensors")
	if code != 200 {
		t.Fatalf("sensors: %d %v", code, body)
	}
	sensors := body["sensors"].([]any)
	if len(sensors) != 3 {
		t.Fatalf("sensors = %d", len(sensors))
	}
	bar := sensors[0].(map[string]any)
	if bar["id"] != "lapa-bar-01" || bar["latest"].(map[string]any)["laeq_db"] != 70.0 ||
		bar["limit"].(map[string]any)["limit_dba"] != 65.0 || bar["municipality"] != "lapa" {
		t.Errorf("lapa-bar-01 = %v", bar)
	}
	if s := sensors[1].(map[string]any); s["latest"] != nil || s["limit"] != nil || s["limit_erro"] != "sem limite" {
		t.Errorf("hospital sensor = %v", s)
	}

	code, body = get(t, api, "/api/v1/readings?sensor=lapa-bar-01&from=2026-11-30T23:00:00Z&to=2026-11-30T23:30:00Z&step=1m")
	buckets, _ := body["buckets"].([]any)
	if code != 200 || len(buckets) != 1 {
		t.Fatalf("buckets: %d %v", code, body)
	}
	if leq := buckets[0].(map[string]any)["laeq_db"].(float64); leq < 65.68 || leq > 65.69 {
		t.Errorf("bucket LAeq = %v, want 65.68 (energy mean of 50/60/70)", leq)
	}
	code, body = get(t, api, "/api/v1/readings?sensor=lapa-bar-01")
	if recs, _ := body["records"].([]any); code != 200 || len(recs) != 3 {
		t.Errorf("records (last hour): %d %v", code, body)
	}

	code, body = get(t, api, "/api/v1/gateways")
	gws, _ := body["gateways"].([]any)
	if code != 200 || len(gws) != 2 {
		t.Fatalf("gateways: %d %v", code, body)
	}
	if g := gws[0].(map[string]any); g["gateway"] != "lapa-centro-01" || g["ack_watermark"] != 1.0 || g["registered"] != true {
		t.Errorf("gateway = %v", g)
	}

	code, body = get(t, api, "/api/v1/alerts?state=firing&municipality=lapa&sensor=lapa-bar-01&limit=5")
	if code != 200 || len(body["alerts"].([]any)) != 1 || fa.got != (AlertFilter{State: "firing", Municipality: "lapa", Sensor: "lapa-bar-01", Limit: 5}) {
		t.Errorf("alerts: %d %v filter %+v", code, body, fa.got)
	}

	code, body = get(t, api, "/api/v1/dead-letters?reason=range")
	if dl, _ := body["dead_letters"].([]any); code != 200 || len(dl) != 1 {
		t.Errorf("dead letters: %d %v", code, body)
	}
}

func TestAPIErrorsInPortuguese(t *testing.T) {
	api, _, _ := newTestAPI(t)
	cases := []struct {
		url    string
		status int
		erro   string
	}{
		{"/api/v1/sensors/nope", 404, "não está cadastrado"},
		{"/api/v1/readings", 400, "informe o parâmetro sensor"},
		{"/api/v1/readings?sensor=nope", 404, "não está cadastrado"},
		{"/api/v1/readings?sensor=lapa-bar-01&from=ontem", 400, "from inválido"},
		{"/api/v1/readings?sensor=lapa-bar-01&step=500ms", 400, "step inválido"},
		{"/api/v1/readings?sensor=lapa-bar-01&from=2026-11-30T23:00:00Z&to=2026-11-30T22:00:00Z", 400, "anterior"},
		{"/api/v1/alerts?state=burning", 400, "state"},
		{"/api/v1/alerts?limit=0", 400, "limit"},
		{"/api/v1/dead-letters?before=x", 400, "before"},
		{"/api/v1/nothing", 404, "não encontrado"},
	}
	for _, tc := range cases {
		code, body := get(t, api, tc.url)
		if code != tc.status || !strings.Contains(body["erro"].(string), tc.erro) {
			t.Errorf("%s: %d %v, want %d with %q", tc.url, code, body, tc.status, tc.erro)
		}
	}
}

// TestHealth: "ok" with 200; "degradado" with 200 and the problems listed
// while the service works without a part; "degradado" with 503 when it
// cannot ingest. Without a session (an outside monitor) the same status
// codes and only the verdict: no components, problems or error text.
func TestHealth(t *testing.T) {
	down := errors.New("ingestão sem conexão MQTT")
	for _, tc := range []struct {
		name     string
		report   HealthReport
		code     int
		status   string
		problems int
	}{
		{"ok", HealthReport{Components: map[string]string{"mqtt": "conectado"}}, 200, "ok", 0},
		{"influx down", HealthReport{Components: map[string]string{"influxdb": "indisponível"}, Problems: []string{"InfluxDB indisponível"}}, 200, "degradado", 1},
		{"no mqtt", HealthReport{Components: map[string]string{"mqtt": "desconectado"}, Down: down}, 503, "degradado", 0},
		{"both", HealthReport{Problems: []string{"InfluxDB indisponível"}, Down: down}, 503, "degradado", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := NewAPI(APIOptions{Registry: registry.NewLive(&registry.Registry{}), Health: func(context.Context) HealthReport { return tc.report }})
			logged := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s := users.Session{User: users.User{Name: "op", Role: users.Operador}}
				api.HealthProbe().ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, s)))
			})
			code, out := get(t, logged, "/api/v1/health")
			if code != tc.code || out["status"] != tc.status {
				t.Errorf("%d %v, want %d %q", code, out, tc.code, tc.status)
			}
			ps, _ := out["problemas"].([]any)
			if len(ps) != tc.problems {
				t.Errorf("problemas %v, want %d", out["problemas"], tc.problems)
			}
			if (tc.report.Down != nil) != (out["erro"] != nil) {
				t.Errorf("erro %v with Down %v", out["erro"], tc.report.Down)
			}
			code, out = get(t, api.HealthProbe(), "/api/v1/health")
			if code != tc.code || out["status"] != tc.status || len(out) != 1 {
				t.Errorf("without a session: %d %v, want %d and only {\"status\": %q}", code, out, tc.code, tc.status)
			}
		})
	}
}
