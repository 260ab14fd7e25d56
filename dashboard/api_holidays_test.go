package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/holidays"
	"github.com/sossego/sossego/internal/holidays/holidaysdb"
)

// TestHolidaysAPI: the admin registers and removes decreed days (every
// change in the register's log with the session's user and in the service
// log), other roles only read; every refusal says what to fix; a change
// reaches the calendar the other consumers read before the answer.
func TestHolidaysAPI(t *testing.T) {
	f := newFixture(t, HubOptions{}, AuthOptions{LoginAttempts: 100})
	st, err := holidaysdb.Open(context.Background(), filepath.Join(t.TempDir(), holidaysdb.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var mu syncBuffer
	NewHolidaysAPI(HolidaysOptions{Store: st, Codes: set, Now: f.clock.Now, Log: slog.New(slog.NewTextHandler(&mu, nil)),
		OnChange: func(ctx context.Context) error { _, err := holidays.Apply(ctx, st, set, nil); return err }}).Register(f.mux, f.auth)
	admC, admX := f.login(t, "adm")
	fisC, fisX := f.login(t, "fis")
	opC, _ := f.login(t, "op")
	const sj = `{"municipality":"lapa","month_day":"19/03","since":"02/05/2019","name":"São José","act":"Lei Municipal nº 1.234/2019"}`
	tests := []struct {
		name         string
		method, path string
		body         string
		cookie, csrf string
		want         int
		wantErr      string
	}{
		{"fiscal cannot add", "POST", "/api/v1/admin/holidays", sj, fisC, fisX, 403, "seu perfil (fiscal) não permite"},
		{"no login", "GET", "/api/v1/holidays", "", "", "", 401, "faça login"},
		{"no CSRF token", "POST", "/api/v1/admin/holidays", sj, admC, "", 403, "CSRF"},
		{"unknown field", "POST", "/api/v1/admin/holidays", `{"municipio":"lapa"}`, admC, admX, 400, "JSON inválido"},
		{"unknown municipality", "POST", "/api/v1/admin/holidays", strings.Replace(sj, `"lapa"`, `"curitiba"`, 1), admC, admX, 400,
			`município "curitiba" desconhecido: use campina-grande-do-sul`},
		{"bad day, no act: both said", "POST", "/api/v1/admin/holidays", `{"municipality":"lapa","date":"31/02/2026","name":"x"}`, admC, admX, 400,
			`data "31/02/2026" inválida: use dd/mm/aaaa ou AAAA-MM-DD (ex.: 07/12/2026); informe o ato`},
		{"the code's own holiday", "POST", "/api/v1/admin/holidays", strings.Replace(sj, "19/03", "13/06", 1), admC, admX, 400, "já é feriado todo ano (Fundação da Cidade)"},
		{"added", "POST", "/api/v1/admin/holidays", sj, admC, admX, 201, ""},
		{"duplicate", "POST", "/api/v1/admin/holidays", strings.Replace(sj, `"month_day":"19/03","since":"02/05/2019"`, `"date":"2027-03-19"`, 1), admC, admX, 400,
			"já cadastrado: todo ano em 19/03, desde 02/05/2019, São José"},
		{"a ponto facultativo", "POST", "/api/v1/admin/holidays", `{"municipality":"Lapa","date":"2026-03-20","name":"Emenda","act":"Decreto nº 45/2026","kind":"ponto_facultativo"}`, admC, admX, 201, ""},
		{"operador reads", "GET", "/api/v1/holidays?municipality=lapa", "", opC, "", 200, ""},
		{"reads of an unknown municipality", "GET", "/api/v1/holidays?municipality=atlantida", "", opC, "", 404, `código "atlantida" desconhecido`},
		{"fiscal reads the history", "GET", "/api/v1/holidays/history?municipality=lapa", "", fisC, "", 200, ""},
		{"fiscal cannot remove", "DELETE", "/api/v1/admin/holidays/2", "", fisC, fisX, 403, "não permite"},
		{"remove a bad id", "DELETE", "/api/v1/admin/holidays/dois", "", admC, admX, 400, "número do feriado inválido"},
		{"remove an unknown id", "DELETE", "/api/v1/admin/holidays/99", "", admC, admX, 404, "feriado nº 99 não está cadastrado"},
		{"removed", "DELETE", "/api/v1/admin/holidays/2?reason=decreto%20revogado", "", admC, admX, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, tc.method, tc.path, tc.body, tc.cookie, tc.csrf, f.srv.URL)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %v", resp.StatusCode, tc.want, body)
			}
			if tc.wantErr != "" && !strings.Contains(body["erro"].(string), tc.wantErr) {
				t.Fatalf("erro %q lacks %q", body["erro"], tc.wantErr)
			}
		})
	}
	_, body := f.do(t, "GET", "/api/v1/holidays", "", opC, "", "")
	list := body["holidays"].([]any)
	if len(list) != 1 {
		t.Fatalf("list %v", list)
	}
	if h := list[0].(map[string]any); h["month_day"] != "03-19" || h["since"] != "2019-05-02" || h["when"] != "todo ano em 19/03, desde 02/05/2019" ||
		h["kind_label"] != "feriado" || h["set_by"] != "adm" || h["municipality_title"] != "Lapa/PR" {
		t.Errorf("entry as listed: %v", h)
	}
	_, body = f.do(t, "GET", "/api/v1/holidays/history", "", opC, "", "")
	hist := body["history"].([]any)
	if len(hist) != 3 || hist[2].(map[string]any)["action"] != "removed" || hist[2].(map[string]any)["reason"] != "decreto revogado" ||
		hist[2].(map[string]any)["by"] != "adm" {
		t.Errorf("history %v", hist)
	}
	logs := mu.String()
	for _, w := range []string{"dia cadastrado", "dia removido", "motivo=\"decreto revogado\"", "por=adm"} {
		if !strings.Contains(logs, w) {
			t.Errorf("service log lacks %q:\n%s", w, logs)
		}
	}
	// The calendar the other consumers read: 19/03 a holiday, 20/03 (its
	// ponto facultativo removed) a business day again.
	lapa, _ := set.Code("lapa")
	if name, _ := lapa.Holiday(codes.Date{Y: 2026, M: 3, D: 19}); name != "São José" || !lapa.BusinessDay(codes.Date{Y: 2026, M: 3, D: 20}) {
		t.Errorf("calendar after the API: 19/03 %q, 20/03 business %v", name, lapa.BusinessDay(codes.Date{Y: 2026, M: 3, D: 20}))
	}
}

// TestReportAcrossDecreedHoliday: a report over a holiday the municipality
// decreed reads it like the code's own: the eve, the holiday, a ponto
// facultativo that is no business day, in JSON and CSV, and draws the limit
// the alert engine applies, minute by minute.
func TestReportAcrossDecreedHoliday(t *testing.T) {
	e := newReportsEnv(t)
	if err := e.codes.SetDecreed(map[string][]codes.Decreed{"lapa": {
		{MonthDay: "03-19", Name: "São José", Act: "Lei Municipal nº 1.234/2019", Kind: codes.DecreedHoliday},
		{Date: "2026-03-20", Name: "Emenda", Act: "Decreto nº 45/2026", Kind: codes.DecreedOptional},
	}}); err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 3, 18, 0, 0, 0, 0, loc)
	to := from.AddDate(0, 0, 3)
	if err := e.tier.AddMinutes(context.Background(), "lapa-bar-01", synthMinutes(from, to, rand.New(rand.NewPCG(5, 5)))); err != nil {
		t.Fatal(err)
	}
	rec := do(t, e.h, "/api/v1/reports?sensor=lapa-bar-01&from=2026-03-18&to=2026-03-20")
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var out struct {
		Sensors []SensorReport `json:"sensors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	r := out.Sensors[0]
	want := []struct {
		holiday, optional string
		eve, business     bool
	}{{"", "", true, true}, {"São José", "", false, false}, {"", "Emenda", false, false}}
	if len(r.Days) != 3 {
		t.Fatalf("%d days", len(r.Days))
	}
	for i, w := range want {
		d := r.Days[i]
		if d.Holiday != w.holiday || d.Optional != w.optional || d.HolidayEve != w.eve || d.BusinessDay == nil || *d.BusinessDay != w.business {
			t.Errorf("day %s: %+v, want %+v", d.Date, d.DayInfo, w)
		}
	}
	s, _ := e.rp.o.Registry.Current().Sensor("lapa-bar-01")
	est, mech := s.Establishments[0].Type, s.Establishments[0].Mechanism
	engine := alerts.CodeLimits{Set: e.codes}
	k := 0
	for m := from; m.Before(to); m = m.Add(time.Minute) {
		for k < len(r.Limits) && !m.Before(r.Limits[k].End) {
			k++
		}
		if k == len(r.Limits) {
			t.Fatalf("no limit step at %s", m)
		}
		l, ok, err := engine.LimitAt(s.Code, s.Zone, est, mech, m)
		if err != nil {
			t.Fatal(err)
		}
		st := r.Limits[k]
		if ok != (st.LimitDBA != nil) || ok && (*st.LimitDBA != l.DB || st.RuleID != l.RuleID) {
			t.Fatalf("%s: report limit %v %s, engine %v %v %s", m.In(loc), st.LimitDBA, st.RuleID, ok, l.DB, l.RuleID)
		}
	}
	rec = do(t, e.h, "/api/v1/reports?sensor=lapa-bar-01&from=2026-03-18&to=2026-03-20&format=csv")
	var dayRows []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "lapa-bar-01;dia;") {
			dayRows = append(dayRows, strings.Split(line, ";")[4])
		}
	}
	if got := strings.Join(dayRows, "|"); got != "véspera de feriado|feriado: São José|ponto facultativo: Emenda" {
		t.Errorf("CSV day rows' calendar: %q", got)
	}
}

// syncBuffer is a log sink the server's goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
