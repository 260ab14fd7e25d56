package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/tz"
)

var brt = tz.Brasilia()

func at(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, brt)
	if err != nil {
		panic(err)
	}
	return t
}

func lapa(t *testing.T) *codes.Code {
	t.Helper()
	set, err := codes.LoadDir("")
	if err != nil {
		t.Fatal(err)
	}
	c, ok := set.Code("lapa")
	if !ok {
		t.Fatal("lapa code missing")
	}
	return c
}

// lapaBar is the limit of the demo's Lapa bar: Art. 96, other areas, 65 dB
// by day (07:00–22:00) and 60 dB by night.
func lapaBar(c *codes.Code) LimitFunc {
	return func(t time.Time) (codes.Limit, bool) { return c.ActiveLimitFor("other", "bar", "sound_system", t) }
}

// minute is a full minute at a constant level, its histogram at that level.
func minute(start time.Time, db float64) Minute {
	m := Minute{Start: start}
	m.AddSecond(Second{T: start, DurMs: 60000, LAeq: db, LAFmax: db + 3, LAFmin: db - 3,
		Hist: &level.Histogram{Bins: map[int]float64{Bin(db): 60000}}})
	return m
}

// fill adds constant-level minutes over [from, to) with the level level(t).
func fill(t *testing.T, e *Engine, from, to time.Time, lv func(time.Time) (float64, bool)) {
	t.Helper()
	for m := from; m.Before(to); m = m.Add(time.Minute) {
		db, ok := lv(m)
		if !ok {
			continue
		}
		if err := e.AddMinute(minute(m, db)); err != nil {
			t.Fatal(err)
		}
	}
}

func near(t *testing.T, name string, got *float64, want, tol float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = nil, want %.4f", name, want)
		return
	}
	if math.Abs(*got-want) > tol {
		t.Errorf("%s = %.5f, want %.5f (±%g)", name, *got, want, tol)
	}
}

func TestEnergySums(t *testing.T) {
	cases := []struct {
		name   string
		levels []float64 // one minute each
		want   float64   // by hand
	}{
		{"one level", []float64{63.2}, 63.2},
		{"60 and 70 dB, equal time: 10·lg((10^6+10^7)/2)", []float64{60, 70}, 67.40363},
		{"doubling of energy is +3.01 dB", []float64{60, 60}, 60},
		{"ten at 50 and one at 80: 10·lg((10·10^5+10^8)/11)", []float64{50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 80}, 69.62929},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			from := at("2026-11-30 10:00")
			e := New(Options{From: from, To: from.Add(time.Hour)})
			for i, db := range tc.levels {
				if err := e.AddMinute(minute(from.Add(time.Duration(i)*time.Minute), db)); err != nil {
					t.Fatal(err)
				}
			}
			r := e.Result()
			near(t, "LAeq", r.LAeq, tc.want, 0.005)
			if r.MinutesPresent != len(tc.levels) {
				t.Errorf("minutes present %d, want %d", r.MinutesPresent, len(tc.levels))
			}
		})
	}
}

func TestLdenByHand(t *testing.T) {
	cases := []struct {
		name           string
		ld, le, ln     float64
		wantLden       float64
		wantDayLAeq24h float64
	}{
		// (12·10^6 + 4·10^6 + 8·10^6)/24 = 10^6 → 60 dB; LAeq,24h = 10·lg((12·10^6+4·10^5.5+8·10^5)/24) = 57.679 dB.
		{"60/55/50: penalties make it flat", 60, 55, 50, 60, 57.67926},
		// (12·10^7 + 4·10^6.5 + 8·10^6)/24 = 5 860 379.6 → 67.679 dB.
		{"70/60/50", 70, 60, 50, 67.67926, 67.16003},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			from, to := at("2026-11-30 00:00"), at("2026-12-01 00:00")
			e := New(Options{From: from, To: to})
			fill(t, e, from, to, func(m time.Time) (float64, bool) {
				switch PartOf(m.In(brt).Hour()) {
				case Day:
					return tc.ld, true
				case Evening:
					return tc.le, true
				}
				return tc.ln, true
			})
			r := e.Result()
			near(t, "Ld", r.Ld, tc.ld, 1e-9)
			near(t, "Le", r.Le, tc.le, 1e-9)
			near(t, "Ln", r.Ln, tc.ln, 1e-9)
			near(t, "Lden", r.Lden, tc.wantLden, 0.005)
			near(t, "LAeq,24h", r.LAeq, tc.wantDayLAeq24h, 0.005)
			if len(r.Days) != 1 || r.Days[0].Date != "2026-11-30" {
				t.Fatalf("days = %+v", r.Days)
			}
			near(t, "day Lden", r.Days[0].Lden, tc.wantLden, 0.005)
			if r.Coverage != 1 {
				t.Errorf("coverage %v, want 1", r.Coverage)
			}
		})
	}
	// A missing part leaves Lden undefined.
	from := at("2026-11-30 07:00")
	e := New(Options{From: from, To: from.Add(12 * time.Hour)})
	fill(t, e, from, from.Add(12*time.Hour), func(time.Time) (float64, bool) { return 60, true })
	if r := e.Result(); r.Lden != nil || r.Le != nil || r.Ld == nil {
		t.Errorf("day only: Ld %v Le %v Lden %v; want Ld only", r.Ld, r.Le, r.Lden)
	}
}

func TestLegalPeriodsLapa(t *testing.T) {
	c := lapa(t)
	from, to := at("2026-11-30 00:00"), at("2026-12-01 00:00") // a Monday, no holiday
	e := New(Options{From: from, To: to, Limit: lapaBar(c)})
	loud := map[string]bool{}
	for i := range 10 {
		loud[at("2026-11-30 10:00").Add(time.Duration(i)*time.Minute).Format(time.RFC3339)] = true
	}
	for _, s := range []string{"15:00", "15:02", "15:04"} {
		loud[at("2026-11-30 "+s).Format(time.RFC3339)] = true
	}
	fill(t, e, from, to, func(m time.Time) (float64, bool) {
		h := m.In(brt).Hour()
		switch {
		case h < 7:
			return 55, true // night, below 60
		case h >= 22:
			return 61, true // night, above 60: one episode of 120 min
		case loud[m.Format(time.RFC3339)]:
			return 66, true
		}
		return 64, true
	})
	r := e.Result()
	if len(r.Periods) != 2 {
		t.Fatalf("periods: %+v", r.Periods)
	}
	byPeriod := map[string]PeriodFigures{}
	for _, p := range r.Periods {
		byPeriod[p.Period] = p
	}
	day, night := byPeriod["diurno"], byPeriod["noturno"]
	if day.LimitDBA == nil || *day.LimitDBA != 65 || night.LimitDBA == nil || *night.LimitDBA != 60 {
		t.Fatalf("limits: day %v night %v", day.LimitDBA, night.LimitDBA)
	}
	if day.Article != "Art. 96" {
		t.Errorf("article %q", day.Article)
	}
	// By hand: 887 minutes at 64 and 13 at 66 → 10·lg((887·10^6.4 + 13·10^6.6)/900).
	near(t, "diurno LAeq", day.LAeq, 64.03654, 0.005)
	// 420 minutes at 55, 120 at 61 → 10·lg((420·10^5.5 + 120·10^6.1)/540).
	near(t, "noturno LAeq", night.LAeq, 10*math.Log10((420*math.Pow(10, 5.5)+120*math.Pow(10, 6.1))/540), 1e-9)
	near(t, "noturno LAeq by hand", night.LAeq, 57.20751, 0.005)
	if day.MinutesAbove != 13 || day.EpisodesAbove != 4 {
		t.Errorf("diurno: %d minutes above in %d episodes, want 13 in 4", day.MinutesAbove, day.EpisodesAbove)
	}
	if night.MinutesAbove != 120 || night.EpisodesAbove != 1 {
		t.Errorf("noturno: %d minutes above in %d episodes, want 120 in 1", night.MinutesAbove, night.EpisodesAbove)
	}
	if r.MinutesAbove != 133 || r.EpisodesAbove != 5 {
		t.Errorf("total: %d minutes in %d episodes, want 133 in 5", r.MinutesAbove, r.EpisodesAbove)
	}
	// Occurrences: the night from Sunday 22:00 (clipped at 00:00), the day,
	// the night from Monday 22:00 (clipped at 24:00).
	want := []struct {
		start, end, period string
	}{{"2026-11-30 00:00", "2026-11-30 07:00", "noturno"}, {"2026-11-30 07:00", "2026-11-30 22:00", "diurno"},
		{"2026-11-30 22:00", "2026-12-01 00:00", "noturno"}}
	if len(r.Occurrences) != len(want) {
		t.Fatalf("occurrences: %+v", r.Occurrences)
	}
	for i, w := range want {
		o := r.Occurrences[i]
		if !o.Start.Equal(at(w.start)) || !o.End.Equal(at(w.end)) || o.Period != w.period {
			t.Errorf("occurrence %d: %s–%s %s, want %s–%s %s", i, o.Start.In(brt), o.End.In(brt), o.Period, w.start, w.end, w.period)
		}
		if o.Coverage != 1 {
			t.Errorf("occurrence %d coverage %v", i, o.Coverage)
		}
	}
	if r.Occurrences[2].EpisodesAbove != 1 || r.Occurrences[0].MinutesAbove != 0 {
		t.Errorf("occurrence counts: %+v", r.Occurrences)
	}
}

func TestEpisodesEndOnMissingMinute(t *testing.T) {
	c := lapa(t)
	from := at("2026-11-30 23:00")
	e := New(Options{From: from, To: from.Add(time.Hour), Limit: lapaBar(c)})
	// Above, above, gap, above, below, above: 4 minutes in 3 episodes.
	for i, db := range []float64{70, 70, -1, 70, 50, 70} {
		if db < 0 {
			continue
		}
		if err := e.AddMinute(minute(from.Add(time.Duration(i)*time.Minute), db)); err != nil {
			t.Fatal(err)
		}
	}
	r := e.Result()
	if r.MinutesAbove != 4 || r.EpisodesAbove != 3 {
		t.Errorf("%d minutes in %d episodes, want 4 in 3", r.MinutesAbove, r.EpisodesAbove)
	}
	// A minute exactly at the limit is not above it.
	e = New(Options{From: from, To: from.Add(time.Hour), Limit: lapaBar(c)})
	if err := e.AddMinute(minute(from, 60)); err != nil {
		t.Fatal(err)
	}
	if r := e.Result(); r.MinutesAbove != 0 {
		t.Errorf("60 dB against 60 dB counted above")
	}
}

func TestPercentiles(t *testing.T) {
	// 10 % at 70.0, 40 % at 60.0, 40 % at 55.0, 10 % at 50.0 over four
	// minutes; walking down from the top, L10 = 70.0, L50 = 60.0,
	// L90 = 55.0, L95 = 50.0.
	from := at("2026-11-30 10:00")
	e := New(Options{From: from, To: from.Add(time.Hour)})
	hists := []map[int]float64{
		{700: 24000, 600: 36000},
		{600: 60000},
		{550: 60000},
		{550: 36000, 500: 24000},
	}
	for i, h := range hists {
		var m Minute
		m.Start = from.Add(time.Duration(i) * time.Minute)
		m.AddSecond(Second{T: m.Start, DurMs: 60000, LAeq: 60, LAFmax: 70, LAFmin: 50, Hist: &level.Histogram{Bins: h}})
		if err := e.AddMinute(m); err != nil {
			t.Fatal(err)
		}
	}
	r := e.Result()
	for _, p := range []struct {
		name string
		got  *float64
		want float64
	}{{"L10", r.L10, 70}, {"L50", r.L50, 60}, {"L90", r.L90, 55}, {"L95", r.L95, 50}} {
		near(t, p.name, p.got, p.want, 1e-9)
	}
	if r.PercentileBasis != "laf" {
		t.Errorf("basis %q", r.PercentileBasis)
	}
}

// TestPercentilesMatchLevel: the dense histogram reads the same Ln as
// internal/level's on the same data, to its 0.1 dB resolution.
func TestPercentilesMatchLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var d Hist
		var l level.Histogram
		for range 1 + rng.IntN(300) {
			db := 30 + rng.Float64()*60
			ms := float64(1 + rng.IntN(1000))
			d.AddLevel(db, ms)
			l.Add(db, ms)
		}
		for _, n := range []float64{1, 10, 50, 90, 95, 99} {
			a, oka := d.Percentile(n)
			b, okb := l.Percentile(n)
			if oka != okb || a != b {
				t.Fatalf("L%v: dense %v %v, level %v %v", n, a, oka, b, okb)
			}
		}
	}
}

func TestCoverageAndBasis(t *testing.T) {
	from := at("2026-11-30 10:00")
	e := New(Options{From: from, To: from.Add(time.Hour)})
	// 30 minutes of which one holds only 30 s; records without histograms.
	for i := range 30 {
		var m Minute
		m.Start = from.Add(time.Duration(i) * time.Minute)
		n := 60
		if i == 0 {
			n = 30
		}
		for s := range n {
			m.AddSecond(Second{T: m.Start.Add(time.Duration(s) * time.Second), DurMs: 1000, LAeq: 50, LAFmax: 52, LAFmin: 48})
		}
		if err := e.AddMinute(m); err != nil {
			t.Fatal(err)
		}
	}
	r := e.Result()
	if want := (29*60.0 + 30) / 3600; math.Abs(r.Coverage-want) > 1e-12 {
		t.Errorf("coverage %v, want %v", r.Coverage, want)
	}
	if r.PercentileBasis != "laeq_1s" {
		t.Errorf("basis %q, want laeq_1s", r.PercentileBasis)
	}
	near(t, "L90", r.L90, 50, 1e-9)
	near(t, "LAFmax", r.LAFmax, 52, 0)
	near(t, "LAFmin", r.LAFmin, 48, 0)
}

// TestHoursEqualMinutes: adding whole hours (with their minute levels) gives
// the report adding every minute gives; hours that span a change of
// period are refused.
func TestHoursEqualMinutes(t *testing.T) {
	c := lapa(t)
	from, to := at("2026-11-29 00:00"), at("2026-12-02 00:00")
	rng := rand.New(rand.NewPCG(3, 4))
	var mins []Minute
	for m := from; m.Before(to); m = m.Add(time.Minute) {
		if rng.IntN(20) == 0 {
			continue // a gap
		}
		var x Minute
		x.Start = m
		for s := range 60 {
			db := 50 + rng.Float64()*20
			x.AddSecond(Second{T: m.Add(time.Duration(s) * time.Second), DurMs: 1000, LAeq: db, LAFmax: db + 2, LAFmin: db - 2,
				Hist: &level.Histogram{Bins: map[int]float64{Bin(db - 1): 500, Bin(db + 1): 500}}})
		}
		mins = append(mins, x)
	}
	byMin := New(Options{From: from, To: to, Limit: lapaBar(c)})
	for _, m := range mins {
		if err := byMin.AddMinute(m); err != nil {
			t.Fatal(err)
		}
	}
	byHour := New(Options{From: from, To: to, Limit: lapaBar(c)})
	for h := from; h.Before(to); h = h.Add(time.Hour) {
		var hr Hour
		hr.Start = h
		for _, m := range mins {
			if !m.Start.Before(h) && m.Start.Before(h.Add(time.Hour)) {
				hr.Agg.Merge(&m.Agg)
				hr.Minutes = append(hr.Minutes, MinuteLevel{Start: m.Start, DurMs: m.DurMs, Energy: m.Energy})
			}
		}
		if !byHour.Whole(h, time.Hour) {
			t.Fatalf("Lapa hour %s not whole", h.In(brt))
		}
		if err := byHour.AddHour(hr); err != nil {
			t.Fatal(err)
		}
	}
	a, b := byMin.Result(), byHour.Result()
	near(t, "LAeq", b.LAeq, *a.LAeq, 1e-9)
	near(t, "L90", b.L90, *a.L90, 1e-9)
	near(t, "Lden", b.Lden, *a.Lden, 1e-9)
	if a.MinutesAbove != b.MinutesAbove || a.EpisodesAbove != b.EpisodesAbove || a.MinutesAbove == 0 {
		t.Errorf("above: minutes %d/%d episodes %d/%d", a.MinutesAbove, b.MinutesAbove, a.EpisodesAbove, b.EpisodesAbove)
	}
	if len(a.Occurrences) != len(b.Occurrences) || len(a.Days) != 3 {
		t.Errorf("occurrences %d/%d days %d", len(a.Occurrences), len(b.Occurrences), len(a.Days))
	}

	// A window ending at 20:01 (Conceição de Macabu's style) splits the hour.
	split := func(t time.Time) (codes.Limit, bool) {
		lt := t.In(brt)
		y, mo, d := lt.Date()
		if m := lt.Hour()*60 + lt.Minute(); m >= 6*60 && m < 20*60+1 {
			return codes.Limit{DBA: 55, Period: "diurno", RuleID: "x-dia", Start: time.Date(y, mo, d, 6, 0, 0, 0, brt), End: time.Date(y, mo, d, 20, 1, 0, 0, brt)}, true
		}
		return codes.Limit{}, false
	}
	e := New(Options{From: from, To: to, Limit: split})
	if e.Whole(at("2026-11-30 20:00"), time.Hour) {
		t.Error("20:00–21:00 whole across a 20:01 boundary")
	}
	if err := e.AddHour(Hour{Start: at("2026-11-30 20:00")}); !errors.Is(err, ErrSplit) {
		t.Errorf("AddHour across a boundary: %v", err)
	}
	if !e.Whole(at("2026-11-30 21:00"), time.Hour) {
		t.Error("21:00–22:00 (no limit) not whole")
	}
	// The no-limit stretch after 20:01 ends at the next 06:00.
	segs := LimitSeries(at("2026-11-30 19:00"), at("2026-12-01 08:00"), split, brt)
	if len(segs) != 3 || !segs[0].End.Equal(at("2026-11-30 20:01")) || segs[1].LimitDBA != nil || !segs[1].End.Equal(at("2026-12-01 06:00")) {
		t.Errorf("series: %+v", segs)
	}
}

// TestHolidaysAndServiceDays: the engine takes the periods from the limit
// function, whatever they are — a holiday with a limit of its own, or an
// occurrence running over a service day (06:00 to 06:00).
func TestHolidaysAndServiceDays(t *testing.T) {
	c := lapa(t)
	base := lapaBar(c)
	// A code that keeps its night limit all day on holidays (as "domingos
	// e feriados" rules do).
	holidays := func(t time.Time) (codes.Limit, bool) {
		lt := t.In(brt)
		y, mo, d := lt.Date()
		if name, ok := c.Holiday(codes.Date{Y: y, M: mo, D: d}); ok {
			return codes.Limit{DBA: 55, Period: "noturno", PeriodLabel: "feriado (" + name + ")", RuleID: "feriado",
				Start: time.Date(y, mo, d, 0, 0, 0, 0, brt), End: time.Date(y, mo, d+1, 0, 0, 0, 0, brt)}, true
		}
		l, ok := base(t)
		// The real night occurrence would run into the holiday: cut it there.
		if ok {
			if h := time.Date(y, mo, d+1, 0, 0, 0, 0, brt); l.End.After(h) {
				if _, hol := c.Holiday(codes.Date{Y: y, M: mo, D: d + 1}); hol {
					l.End = h
				}
			}
		}
		return l, ok
	}
	// Finados, Monday 2 November 2026.
	from, to := at("2026-11-01 12:00"), at("2026-11-03 12:00")
	e := New(Options{From: from, To: to, Limit: holidays})
	fill(t, e, from, to, func(time.Time) (float64, bool) { return 58, true })
	r := e.Result()
	var hol *PeriodFigures
	for i, o := range r.Occurrences {
		if o.RuleID == "feriado" {
			hol = &r.Occurrences[i]
		}
	}
	if hol == nil {
		t.Fatalf("no holiday occurrence: %+v", r.Occurrences)
	}
	if !hol.Start.Equal(at("2026-11-02 00:00")) || !hol.End.Equal(at("2026-11-03 00:00")) || hol.PeriodLabel != "feriado (Finados)" {
		t.Errorf("holiday occurrence %s–%s %q", hol.Start.In(brt), hol.End.In(brt), hol.PeriodLabel)
	}
	// 58 dB is above the holiday's 55 for the whole day, below 60/65 elsewhere.
	if hol.MinutesAbove != 1440 || hol.EpisodesAbove != 1 || r.MinutesAbove != 1440 {
		t.Errorf("holiday minutes above %d (%d episodes), total %d; want 1440, 1, 1440", hol.MinutesAbove, hol.EpisodesAbove, r.MinutesAbove)
	}
	// The real code's engine on the same days: Lapa's Art. 96 does not
	// change on holidays, so nothing is above 60/65.
	e = New(Options{From: from, To: to, Limit: base})
	fill(t, e, from, to, func(time.Time) (float64, bool) { return 58, true })
	if r := e.Result(); r.MinutesAbove != 0 {
		t.Errorf("Lapa on Finados: %d minutes above", r.MinutesAbove)
	}

	// A service day from 06:00: one occurrence 06:00 → 06:00 across midnight
	// and the parts of the day, while days stay calendar days.
	service := func(t time.Time) (codes.Limit, bool) {
		lt := t.In(brt).Add(-6 * time.Hour)
		y, mo, d := lt.Date()
		return codes.Limit{DBA: 50, Period: "integral", PeriodLabel: "dia de serviço", RuleID: "servico",
			Start: time.Date(y, mo, d, 6, 0, 0, 0, brt), End: time.Date(y, mo, d+1, 6, 0, 0, 0, brt)}, true
	}
	from, to = at("2026-11-30 00:00"), at("2026-12-02 00:00")
	e = New(Options{From: from, To: to, Limit: service})
	fill(t, e, from, to, func(time.Time) (float64, bool) { return 45, true })
	r = e.Result()
	if len(r.Occurrences) != 3 || !r.Occurrences[1].Start.Equal(at("2026-11-30 06:00")) || !r.Occurrences[1].End.Equal(at("2026-12-01 06:00")) {
		t.Errorf("service-day occurrences: %+v", r.Occurrences)
	}
	if len(r.Days) != 2 {
		t.Errorf("days: %d", len(r.Days))
	}
}

func TestIntegralAndNoLimit(t *testing.T) {
	integral := func(time.Time) (codes.Limit, bool) {
		return codes.Limit{DBA: 45, Period: "integral", PeriodLabel: "qualquer horário", RuleID: "int"}, true
	}
	from, to := at("2026-11-30 00:00"), at("2026-12-03 00:00")
	e := New(Options{From: from, To: to, Limit: integral})
	if len(e.Result().Occurrences) != 1 {
		t.Errorf("integral: %d occurrences, want 1", len(e.Result().Occurrences))
	}
	steps := LimitSeries(from, to, integral, brt)
	if len(steps) != 1 || *steps[0].LimitDBA != 45 || !steps[0].End.Equal(to) {
		t.Errorf("integral series: %+v", steps)
	}
	e = New(Options{From: from, To: to, Limit: func(time.Time) (codes.Limit, bool) { return codes.Limit{}, false }})
	r := e.Result()
	if len(r.Occurrences) != 1 || r.Occurrences[0].LimitDBA != nil || r.Occurrences[0].PeriodLabel != "sem limite numérico" {
		t.Errorf("no limit: %+v", r.Occurrences)
	}
}

func TestLimitSeriesLapa(t *testing.T) {
	c := lapa(t)
	steps := LimitSeries(at("2026-11-30 00:00"), at("2026-12-01 00:00"), lapaBar(c), brt)
	want := []struct {
		start string
		db    float64
	}{{"2026-11-30 00:00", 60}, {"2026-11-30 07:00", 65}, {"2026-11-30 22:00", 60}}
	if len(steps) != len(want) {
		t.Fatalf("steps: %+v", steps)
	}
	for i, w := range want {
		if !steps[i].Start.Equal(at(w.start)) || *steps[i].LimitDBA != w.db {
			t.Errorf("step %d: %s %v, want %s %v", i, steps[i].Start.In(brt), *steps[i].LimitDBA, w.start, w.db)
		}
	}
}

func TestOrderAndRange(t *testing.T) {
	from := at("2026-11-30 10:00")
	e := New(Options{From: from, To: from.Add(time.Hour)})
	if err := e.AddMinute(minute(from.Add(5*time.Minute), 60)); err != nil {
		t.Fatal(err)
	}
	if err := e.AddMinute(minute(from, 60)); !errors.Is(err, ErrOrder) {
		t.Errorf("out of order: %v", err)
	}
	if err := e.AddMinute(minute(from.Add(2*time.Hour), 90)); err != nil {
		t.Errorf("outside the range: %v", err)
	}
	if r := e.Result(); r.MinutesPresent != 1 {
		t.Errorf("minutes %d", r.MinutesPresent)
	}
}

func TestMinutesFold(t *testing.T) {
	from := at("2026-11-30 10:00")
	var secs []Second
	for i := range 120 {
		db := 60.0
		if i >= 60 {
			db = 70
		}
		secs = append(secs, Second{T: from.Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: db, LAFmax: db, LAFmin: db})
	}
	var got []Minute
	Minutes(secs, func(m Minute) { got = append(got, m) })
	if len(got) != 2 || got[0].DurMs != 60000 || !got[1].Start.Equal(from.Add(time.Minute)) {
		t.Fatalf("minutes: %+v", got)
	}
	if lv, _ := got[1].LAeq(); math.Abs(lv-70) > 1e-9 {
		t.Errorf("second minute %v", lv)
	}
}

func TestPercentilesAtOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ns := []float64{10, 50, 90, 95}
	for range 200 {
		var d Hist
		for range 1 + rng.IntN(200) {
			d.AddLevel(30+rng.Float64()*50, float64(1+rng.IntN(500)))
		}
		out := make([]float64, len(ns))
		if !d.Percentiles(ns, out) {
			t.Fatal("not ok")
		}
		for i, n := range ns {
			if want, _ := d.Percentile(n); out[i] != want {
				t.Fatalf("L%v: %v at once, %v alone", n, out[i], want)
			}
		}
		var r Hist
		copy(r.Reset(d.lo, len(d.ms)), d.ms)
		if a, _ := r.Percentile(90); a != out[2] {
			t.Fatalf("after Reset: %v, want %v", a, out[2])
		}
	}
	var empty Hist
	if empty.Percentiles(ns, make([]float64, 4)) {
		t.Error("empty histogram ok")
	}
}
