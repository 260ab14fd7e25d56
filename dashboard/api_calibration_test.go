package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/users"
)

// calibrationFixture is the dashboard with the calibration routes on a real
// register (SQLite) over the demo registry.
func calibrationFixture(t *testing.T) (*fixture, *calibrationdb.Register) {
	t.Helper()
	f := newFixture(t, HubOptions{Tick: 100 * time.Millisecond}, AuthOptions{})
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	live := registry.NewLive(reg)
	cal, err := calibrationdb.Open(context.Background(), filepath.Join(t.TempDir(), calibration.FileName), calibrationdb.Options{
		Sensors: func() []calibration.Sensor {
			var out []calibration.Sensor
			for _, s := range live.Current().Sensors() {
				g, _ := live.Current().Gateway(s.Gateway)
				out = append(out, calibration.Sensor{ID: s.ID, Municipality: g.Municipality, Meter: s.Meter.Calibration()})
			}
			return out
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cal.Close() })
	NewCalibrationAPI(CalibrationOptions{Register: cal, Certificates: cal, Registry: live}).Register(f.mux, f.auth)
	// The sensors and gateways the page's frame loads.
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "readings.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	apiMux := http.NewServeMux()
	NewAPI(APIOptions{Registry: live, Store: st}).Register(apiMux)
	f.mux.Handle("/api/v1/", f.auth.Protect(f.auth.RequireRole(users.Roles...)(apiMux)))
	return f, cal
}

// call makes an API request as user and decodes the JSON answer.
func (f *fixture) call(t *testing.T, user, method, path string, body any) (int, map[string]any, http.Header, []byte) {
	t.Helper()
	cookie, csrf := f.login(t, user)
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, rd)
	req.Header.Set("Cookie", CookieName+"="+cookie)
	req.Header.Set(CSRFHeader, csrf)
	req.Header.Set("Origin", f.srv.URL)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, resp.Header, raw
}

func TestCalibrationAPI(t *testing.T) {
	f, _ := calibrationFixture(t)
	today := time.Now().In(loc).Format(time.DateOnly)
	pdf := []byte("%PDF-1.4\n% certificado de teste\n")
	good := map[string]any{"number": "RBC-123/2026", "laboratory": "Laboratório de Acústica", "meter_model": "NTi XL2",
		"meter_serial": "A2A-1", "calibrated_on": today, "expires": time.Now().In(loc).AddDate(1, 0, 0).Format(time.DateOnly),
		"uncertainty_db": 0.4, "file_name": "rbc 123.pdf", "file_base64": base64.StdEncoding.EncodeToString(pdf)}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range good {
			m[a] = b
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name, user, method, path string
		body                     any
		status                   int
		want                     string // in the JSON answer
	}{
		{"operador cannot add", "op", "POST", "/api/v1/calibration/sensors/lapa-bar-01/certificates", good, 403, ""},
		{"expiry before date", "adm", "POST", "/api/v1/calibration/sensors/lapa-bar-01/certificates", with("expires", "2020-01-01"), 400, "precisa ser posterior à data de calibração"},
		{"missing number", "adm", "POST", "/api/v1/calibration/sensors/lapa-bar-01/certificates", with("number", ""), 400, "informe o número do certificado"},
		{"not a PDF", "adm", "POST", "/api/v1/calibration/sensors/lapa-bar-01/certificates", with("file_base64", base64.StdEncoding.EncodeToString([]byte("GIF89a"))), 400, "não é um PDF"},
		{"bad base64", "adm", "POST", "/api/v1/calibration/sensors/lapa-bar-01/certificates", with("file_base64", "%%%"), 400, "não é base64"},
		{"unknown field", "adm", "POST", "/api/v1/calibration/sensors/lapa-bar-01/certificates", with("serial", "x"), 400, "JSON inválido"},
		{"unknown sensor", "adm", "POST", "/api/v1/calibration/sensors/nao-existe/certificates", good, 404, "não está no cadastro"},
		{"added", "adm", "POST", "/api/v1/calibration/sensors/lapa-bar-01/certificates", good, 201, "RBC-123/2026"},
		{"overview", "op", "GET", "/api/v1/calibration", nil, 200, "lapa-hospital-01"},
		{"sensor", "fis", "GET", "/api/v1/calibration/sensors/lapa-bar-01", nil, 200, "RBC-123/2026"},
		// A sensor without a certificate: the register of sensors decides, as
		// in the workflow (calibration.Decide) — a screening meter never
		// grounds an act, a class 1 meter calibrated this year does.
		{"status of an uncertified screening sensor", "fis", "GET", "/api/v1/calibration/sensors/lapa-hospital-01/status", nil, 200,
			`"ok":false,"sensor":"lapa-hospital-01","source":"cadastro de sensores","why":"leituras indicativas: medidor de triagem, sem classe (nenhum certificado no registro de calibrações)"`},
		{"status of an uncertified calibrated sensor", "fis", "GET", "/api/v1/calibration/sensors/macabu-praca-01/status?at=2026-12-01T22:00:00-03:00", nil, 200,
			`"ok":true,"sensor":"macabu-praca-01","source":"cadastro de sensores","why":"calibrado em 20/08/2026 (cadastro do sensor; nenhum certificado no registro de calibrações)"`},
		{"status of a certified sensor", "fis", "GET", "/api/v1/calibration/sensors/lapa-bar-01/status", nil, 200, `"source":"registro de calibrações","warnings"`},
		{"status at a bad time", "fis", "GET", "/api/v1/calibration/sensors/lapa-bar-01/status?at=ontem", nil, 400, "RFC 3339"},
		// A certificate does not make a screening meter class 1 or 2: its
		// readings stay indicativas, with the register's warnings.
		{"added to a screening sensor", "adm", "POST", "/api/v1/calibration/sensors/lapa-hospital-01/certificates", good, 201, "RBC-123/2026"},
		{"status of a certified screening sensor", "fis", "GET", "/api/v1/calibration/sensors/lapa-hospital-01/status", nil, 200,
			`"ok":false,"reasons":null,"sensor":"lapa-hospital-01","source":"cadastro de sensores","warnings":`},
		{"why of a certified screening sensor", "fis", "GET", "/api/v1/calibration/sensors/lapa-hospital-01/status", nil, 200,
			`"why":"leituras indicativas: medidor de triagem (não é classe 1 ou 2, segundo o cadastro de sensores), mesmo com certificado no registro de calibrações"`},
		{"policy by operador", "op", "PUT", "/api/v1/calibration/policy/lapa", map[string]any{"check_max_days": 10}, 403, ""},
		{"policy out of range", "adm", "PUT", "/api/v1/calibration/policy/lapa", map[string]any{"check_max_days": 999}, 400, "use 1 a 366 dias"},
		{"policy", "adm", "PUT", "/api/v1/calibration/policy/lapa", map[string]any{"check_max_days": 10}, 200, "10"},
		{"file of nothing", "op", "GET", "/api/v1/calibration/certificates/999/file", nil, 404, "sem arquivo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, _, raw := f.call(t, tc.user, tc.method, tc.path, tc.body)
			if status != tc.status || !strings.Contains(string(raw), tc.want) {
				t.Fatalf("%s %s as %s: %d %s, want %d with %q", tc.method, tc.path, tc.user, status, raw, tc.status, tc.want)
			}
		})
	}
	// The file comes back byte for byte, with its sha256.
	_, sensor, _, _ := f.call(t, "op", "GET", "/api/v1/calibration/sensors/lapa-bar-01", nil)
	certs := sensor["certificates"].([]any)
	id := int64(certs[0].(map[string]any)["id"].(float64))
	status, _, hdr, raw := f.call(t, "op", "GET", "/api/v1/calibration/certificates/"+itoa(id)+"/file", nil)
	sum := sha256.Sum256(pdf)
	if status != 200 || string(raw) != string(pdf) || hdr.Get("X-Content-SHA256") != hex.EncodeToString(sum[:]) ||
		hdr.Get("Content-Type") != "application/pdf" || !strings.Contains(hdr.Get("Content-Disposition"), `filename="rbc_123.pdf"`) {
		t.Fatalf("file: %d %q %v", status, raw, hdr)
	}
	// The policy shows in the verdict.
	_, st, _, _ := f.call(t, "op", "GET", "/api/v1/calibration/sensors/lapa-bar-01", nil)
	if v := st["verdict"].(map[string]any); v["check_max_days"].(float64) != 10 {
		t.Fatalf("verdict %v", v)
	}
}

// TestCalibrationAPIDecision: the overview's rows and the per-meter view
// carry calibration.Decide's decision (the workflow's and the alert card's),
// beside the register's own verdict: a screening meter with a certificate in
// force is indicativas though the register finds its certificate valid.
func TestCalibrationAPIDecision(t *testing.T) {
	f, cal := calibrationFixture(t)
	ctx := context.Background()
	now := time.Now().In(loc)
	for _, id := range []string{"lapa-bar-01", "lapa-hospital-01"} {
		if _, err := cal.Add(ctx, calibration.Certificate{Sensor: id, Number: "RBC-" + id, Laboratory: "Lab", MeterModel: "NTi XL2",
			MeterSerial: "A2A-1", CalibratedOn: now.Format(time.DateOnly), Expires: now.AddDate(1, 0, 0).Format(time.DateOnly),
			UncertaintyDB: 0.4}, nil, "ana"); err != nil {
			t.Fatal(err)
		}
	}
	type decision struct {
		OK      bool            `json:"ok"`
		Why     string          `json:"why"`
		Source  string          `json:"source"`
		Verdict json.RawMessage `json:"verdict"`
	}
	type answer struct {
		Sensor   string   `json:"sensor"`
		Decision decision `json:"decision"`
		Verdict  struct {
			OK bool `json:"ok"`
		} `json:"verdict"`
	}
	_, _, _, raw := f.call(t, "op", "GET", "/api/v1/calibration", nil)
	var overview struct{ Sensors []answer }
	if err := json.Unmarshal(raw, &overview); err != nil {
		t.Fatal(err)
	}
	rows := map[string]answer{}
	for _, r := range overview.Sensors {
		rows[r.Sensor] = r
	}
	for _, tc := range []struct {
		sensor         string
		registerOK, ok bool
		source, why    string
	}{
		{"lapa-bar-01", true, true, calibration.SourceRegister, "calibração válida no registro de calibrações (certificado nº RBC-lapa-bar-01"},
		{"lapa-hospital-01", true, false, calibration.SourceSensors, "leituras indicativas: medidor de triagem (não é classe 1 ou 2"},
	} {
		_, _, _, raw := f.call(t, "fis", "GET", "/api/v1/calibration/sensors/"+tc.sensor, nil)
		var one answer
		if err := json.Unmarshal(raw, &one); err != nil {
			t.Fatal(err)
		}
		for where, a := range map[string]answer{"overview": rows[tc.sensor], "sensor": one} {
			d := a.Decision
			if a.Verdict.OK != tc.registerOK || d.OK != tc.ok || d.Source != tc.source || !strings.Contains(d.Why, tc.why) || d.Verdict != nil {
				t.Errorf("%s of %s: %+v, want register ok %v, decision ok %v from %s saying %q", where, tc.sensor, a, tc.registerOK, tc.ok, tc.source, tc.why)
			}
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
