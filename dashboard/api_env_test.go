package dashboard

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

// TestAPIEnv: GET /api/v1/sensors/{id}/env answers the stored environmental
// records of a window in time order (default the last 24 h), refuses
// unknown sensors and bad parameters in Portuguese, and says when the limit
// cut the answer.
func TestAPIEnv(t *testing.T) {
	api, st, _ := newTestAPI(t)
	// Three readings: 30 h, 2 h and 10 min before apiNow.
	ages := []time.Duration{30 * time.Hour, 2 * time.Hour, 10 * time.Minute}
	b := store.Batch{Gateway: "lapa-centro-01", Municipality: "lapa", Sensor: "lapa-bar-01", Kind: wire.KindEnv, Seq: 2,
		Topic: "t", Body: []byte("{}"), ReceivedAt: apiNow, Device: wire.Device{Model: "BME280", Serial: "76", Grade: "screening"}}
	for i, age := range ages {
		b.Env = append(b.Env, wire.EnvRecord{T: apiNow.Add(-age), TemperatureC: ptr(15 + float64(i)), HumidityPct: ptr(80.0), PressureHPa: ptr(913.5)})
	}
	if _, err := st.Apply(context.Background(), store.Write{Batches: []store.Batch{b}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		url       string
		status    int
		erro      string    // for errors
		temps     []float64 // for 200: the records' temperatures, in order
		truncated bool
	}{
		{"unknown sensor", "/api/v1/sensors/nope/env", 404, "não está cadastrado", nil, false},
		{"bad from", "/api/v1/sensors/lapa-bar-01/env?from=ontem", 400, "from inválido", nil, false},
		{"bad to", "/api/v1/sensors/lapa-bar-01/env?to=2026-13-01T00:00:00Z", 400, "to inválido", nil, false},
		{"from after to", "/api/v1/sensors/lapa-bar-01/env?from=2026-11-30T23:00:00Z&to=2026-11-30T22:00:00Z", 400, "anterior", nil, false},
		{"window over a year", "/api/v1/sensors/lapa-bar-01/env?from=2024-01-01T00:00:00Z", 400, "um ano", nil, false},
		{"limit zero", "/api/v1/sensors/lapa-bar-01/env?limit=0", 400, "limit", nil, false},
		{"limit not a number", "/api/v1/sensors/lapa-bar-01/env?limit=x", 400, "limit", nil, false},
		{"default: last 24 h", "/api/v1/sensors/lapa-bar-01/env", 200, "", []float64{16, 17}, false},
		{"explicit window", "/api/v1/sensors/lapa-bar-01/env?from=2026-11-29T00:00:00Z&to=2026-11-30T22:00:00Z", 200, "", []float64{15, 16}, false},
		{"limit cuts", "/api/v1/sensors/lapa-bar-01/env?from=2026-11-29T00:00:00Z&limit=2", 200, "", []float64{15, 16}, true},
		{"limit exact", "/api/v1/sensors/lapa-bar-01/env?from=2026-11-29T00:00:00Z&limit=3", 200, "", []float64{15, 16, 17}, false},
		{"sensor without env", "/api/v1/sensors/lapa-hospital-01/env", 200, "", []float64{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, api, tc.url)
			if code != tc.status {
				t.Fatalf("%s: %d %v, want %d", tc.url, code, body, tc.status)
			}
			if tc.status != 200 {
				if e, _ := body["erro"].(string); !strings.Contains(e, tc.erro) {
					t.Errorf("erro %q, want it to contain %q", e, tc.erro)
				}
				return
			}
			recs, ok := body["records"].([]any)
			if !ok {
				t.Fatalf("no records array: %v", body)
			}
			var temps []float64
			for _, r := range recs {
				m := r.(map[string]any)
				temps = append(temps, m["temperature_c"].(float64))
				if m["humidity_pct"] != 80.0 || m["pressure_hpa"] != 913.5 || m["gateway"] != "lapa-centro-01" {
					t.Errorf("record %v", m)
				}
			}
			if len(temps) != len(tc.temps) {
				t.Fatalf("temperatures %v, want %v", temps, tc.temps)
			}
			for i := range temps {
				if temps[i] != tc.temps[i] {
					t.Errorf("temperatures %v, want %v", temps, tc.temps)
					break
				}
			}
			if body["truncated"] != tc.truncated {
				t.Errorf("truncated = %v, want %v", body["truncated"], tc.truncated)
			}
		})
	}
}

// TestAPIEnvUnavailable: without an env source the route answers 503.
func TestAPIEnvUnavailable(t *testing.T) {
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	api := NewAPI(APIOptions{Registry: registry.NewLive(reg), Store: noEnvStore{}})
	code, body := get(t, api, "/api/v1/sensors/lapa-bar-01/env")
	if code != 503 || !strings.Contains(body["erro"].(string), "indisponível") {
		t.Errorf("%d %v", code, body)
	}
}

// noEnvStore is an APIStore without environmental records.
type noEnvStore struct{}

func (noEnvStore) Latest(context.Context, string) (store.Record, bool, error) {
	return store.Record{}, false, nil
}
func (noEnvStore) GatewayStatuses(context.Context) ([]store.GatewayStatus, error) { return nil, nil }
func (noEnvStore) DeadLetters(context.Context, store.DeadLetterFilter) ([]store.DeadLetter, error) {
	return nil, nil
}

var _ APIEnv = (*sqlitestore.Store)(nil)
