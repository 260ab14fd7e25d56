package dashboard

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
)

// TestReportAcrossHoliday: a Lapa report over 12–14 June 2026 across the
// city's own holiday (13 June, Fundação da Cidade, Art. 294) reads the days
// from the code's calendar — the eve, the holiday, the Sunday — tags the
// nights by the day they began on, and draws, minute by minute, the same
// limit the alert engine applies (alerts.CodeLimits).
func TestReportAcrossHoliday(t *testing.T) {
	e := newReportsEnv(t)
	from := time.Date(2026, 6, 12, 0, 0, 0, 0, loc)
	to := from.AddDate(0, 0, 3)
	if err := e.tier.AddMinutes(context.Background(), "lapa-bar-01", synthMinutes(from, to, rand.New(rand.NewPCG(4, 4)))); err != nil {
		t.Fatal(err)
	}
	rec := do(t, e.h, "/api/v1/reports?sensor=lapa-bar-01&from=2026-06-12&to=2026-06-14")
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
	type day struct {
		date, holiday string
		eve, business bool
	}
	want := []day{{"2026-06-12", "", true, true}, {"2026-06-13", "Fundação da Cidade", false, false}, {"2026-06-14", "", false, false}}
	if len(r.Days) != len(want) {
		t.Fatalf("%d days", len(r.Days))
	}
	for i, w := range want {
		d := r.Days[i]
		if d.Date != w.date || d.Holiday != w.holiday || d.HolidayEve != w.eve || d.BusinessDay == nil || *d.BusinessDay != w.business {
			t.Errorf("day %s: holiday %q eve %v business %v, want %+v", d.Date, d.Holiday, d.HolidayEve, d.BusinessDay, w)
		}
	}
	nights := map[string]string{} // service date → holiday or "eve"
	for _, o := range r.Occurrences {
		if o.Period != "noturno" {
			continue
		}
		switch {
		case o.Holiday != "":
			nights[o.ServiceDate] = o.Holiday
		case o.HolidayEve:
			nights[o.ServiceDate] = "eve"
		default:
			nights[o.ServiceDate] = ""
		}
	}
	// The night clipped at 12 June 00:00 began on the 11th (a Thursday).
	for date, w := range map[string]string{"2026-06-11": "", "2026-06-12": "eve", "2026-06-13": "Fundação da Cidade", "2026-06-14": ""} {
		if got, ok := nights[date]; !ok || got != w {
			t.Errorf("night begun %s: %q (present %v), want %q; nights %v", date, got, ok, w, nights)
		}
	}
	// The limit drawn is the engine's, every minute.
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
	// CSV: the day rows say it.
	rec = do(t, e.h, "/api/v1/reports?sensor=lapa-bar-01&from=2026-06-12&to=2026-06-14&format=csv")
	var dayRows []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "lapa-bar-01;dia;") {
			dayRows = append(dayRows, strings.Split(line, ";")[4])
		}
	}
	if strings.Join(dayRows, "|") != "véspera de feriado|feriado: Fundação da Cidade|" {
		t.Errorf("CSV day rows' calendar: %q", dayRows)
	}
}
