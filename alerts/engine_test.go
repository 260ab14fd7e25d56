package alerts_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/alertstest"
)

// day is a Friday with no holiday; times in scripts are local (Sao Paulo).
const day = "2025-03-14"

var loc = alertstest.NewLimits().Loc

func at(hms string) time.Time {
	d := day
	if strings.HasPrefix(hms, "+") { // next day
		hms = hms[1:]
		d = "2025-03-15"
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05", d+" "+hms, loc)
	if err != nil {
		panic(err)
	}
	return t
}

func hms(t time.Time) string {
	lt := t.In(loc)
	s := lt.Format("15:04:05")
	if lt.Format("2006-01-02") != day {
		s = "+" + s
	}
	return s
}

// op is one scripted input: n 1-s records at db from t, a tick at t, or a
// gateway status at t.
type op struct {
	kind   string // rec | tick | offline | online
	t      string
	n      int
	db     float64
	lafmax float64 // 0: db + 8
	grade  string  // "": class1
	zone   string
}

func rec(t string, n int, db float64) op { return op{kind: "rec", t: t, n: n, db: db} }
func tick(t string) op                   { return op{kind: "tick", t: t} }
func offline(t string) op                { return op{kind: "offline", t: t} }
func online(t string) op                 { return op{kind: "online", t: t} }

func graded(o op, grade string) op { o.grade = grade; return o }
func zoned(o op, zone string) op   { o.zone = zone; return o }

// testConfig uses a 1-s window so that each record is judged alone, unless a
// case needs the window.
func testConfig() alerts.Config {
	c := alerts.DefaultConfig()
	c.Window = time.Second
	c.MinDuration = 20 * time.Second
	c.ResolveTime = 15 * time.Second
	c.HysteresisDB = 3
	c.NoDataTimeout = 5 * time.Second
	return c
}

// run feeds ops through the pure engine. A record arrives at its end
// (now = end).
func run(t *testing.T, cfg alerts.Config, ops []op) (alerts.SensorState, []alerts.Event) {
	t.Helper()
	eng, err := alerts.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lims := alertstest.NewLimits()
	var st alerts.SensorState
	var all []alerts.Event
	for _, o := range ops {
		start := at(o.t)
		var evs []alerts.Event
		switch o.kind {
		case "rec":
			for i := range o.n {
				r := reading(start.Add(time.Duration(i)*time.Second), o)
				lim, ok, lerr := lims.LimitAt(r.Code, r.Zone, r.EstablishmentType, r.Mechanism, r.T)
				in := alerts.RecordInput(r, lim, ok)
				if lerr != nil {
					in.LimitErr = lerr.Error()
				}
				st, evs = eng.Step(st, in, r.End())
				all = append(all, evs...)
			}
		case "tick":
			st, evs = eng.Step(st, alerts.TickInput(), start)
			all = append(all, evs...)
		case "offline", "online":
			st, evs = eng.Step(st, alerts.GatewayInput(o.kind == "online"), start)
			all = append(all, evs...)
		default:
			t.Fatalf("bad op %q", o.kind)
		}
	}
	return st, all
}

func reading(t time.Time, o op) alerts.Reading {
	g := o.grade
	if g == "" {
		g = alerts.GradeClass1
	}
	z := o.zone
	if z == "" {
		z = "outras"
	}
	lafmax := o.lafmax
	if lafmax == 0 {
		lafmax = o.db + 8
	}
	return alerts.Reading{
		SensorInfo: alerts.SensorInfo{Sensor: "lapa-bar-01", Gateway: "gw-lapa-1", Municipality: "lapa", Code: "lapa",
			Zone: z, EstablishmentType: "bar", Establishment: "Bar do Zé", Grade: g},
		T: t, DurMs: 1000, LAeq: o.db, LAFmax: lafmax, LAFmin: o.db - 5,
	}
}

// summary renders events as "kind@hh:mm:ss" (resolution/reason in brackets).
func summary(evs []alerts.Event) []string {
	var out []string
	for _, e := range evs {
		s := string(e.Kind) + "@" + hms(e.At)
		if e.Alert.Resolution != "" && (e.Kind == alerts.EventResolved || e.Kind == alerts.EventCancelled) {
			s += "[" + e.Alert.Resolution + "]"
		}
		if e.Kind == alerts.EventNoData {
			s += "[" + e.Alert.Reason + "]"
		}
		out = append(out, s)
	}
	return out
}

func TestLifecycle(t *testing.T) {
	zeroMargin := testConfig()
	zeroMargin.MarginDB = map[string]float64{alerts.GradeClass1: 0}
	window10 := testConfig()
	window10.Window = 10 * time.Second

	tests := []struct {
		name   string
		cfg    alerts.Config
		ops    []op
		want   []string
		status alerts.Status
		check  func(t *testing.T, st alerts.SensorState, evs []alerts.Event)
	}{
		{
			name:   "quiet day: nothing",
			ops:    []op{rec("10:00:00", 60, 55)},
			status: alerts.StatusOK,
		},
		{
			// 70 − 1.1 > 65 from 10:00:00; the 50 dB record 10:00:10 ends at 10:00:11.
			name:   "exceedance shorter than min duration: pending then cancelled, never firing",
			ops:    []op{rec("10:00:00", 10, 70), rec("10:00:10", 5, 50)},
			want:   []string{"pending@10:00:00", "cancelled@10:00:11[below_limit]"},
			status: alerts.StatusOK,
		},
		{
			// Pending at the start of the first exceeding record; firing when
			// the newest record ends MinDuration (20 s) later.
			name:   "fires after min duration",
			ops:    []op{rec("10:00:00", 30, 70)},
			want:   []string{"pending@10:00:00", "firing@10:00:20"},
			status: alerts.StatusFiring,
		},
		{
			// 63 dB does not exceed (63 − 1.1 ≤ 65) but is not under 65 − 3:
			// stays firing. Quiet (55) from 10:00:55; resolved 15 s later.
			name: "hysteresis band holds firing; resolve time from first quiet record",
			ops:  []op{rec("10:00:00", 25, 70), rec("10:00:25", 30, 63), rec("10:00:55", 20, 55)},
			want: []string{"pending@10:00:00", "firing@10:00:20", "resolved@10:01:10[quiet]"},
		},
		{
			// A 63 dB second (≥ 62) interrupts the quiet: the clock restarts at 10:00:36.
			name: "interrupted quiet restarts the resolve clock",
			ops:  []op{rec("10:00:00", 25, 70), rec("10:00:25", 10, 55), rec("10:00:35", 1, 63), rec("10:00:36", 20, 55)},
			want: []string{"pending@10:00:00", "firing@10:00:20", "resolved@10:00:51[quiet]"},
		},
		{
			name:   "level exactly equal to the limit does not exceed",
			cfg:    zeroMargin,
			ops:    []op{rec("10:00:00", 60, 65)},
			status: alerts.StatusOK,
		},
		{
			name: "level 0.1 dB above the limit exceeds",
			cfg:  zeroMargin,
			ops:  []op{rec("10:00:00", 30, 65.1)},
			want: []string{"pending@10:00:00", "firing@10:00:20"},
		},
		{
			// 62 − 1.1 = 60.9: complies by day (65), exceeds at night (60)
			// from 22:00:00 exactly, with the 10-s window restarted there.
			name: "21:59 -> 22:00: 62 dB starts exceeding exactly at 22:00",
			cfg:  window10,
			ops:  []op{rec("21:59:00", 90, 62)},
			want: []string{"pending@22:00:00", "firing@22:00:20"},
			check: func(t *testing.T, st alerts.SensorState, evs []alerts.Event) {
				a := evs[0].Alert
				if a.Period != "noturno" || a.LimitDB != 60 || a.Article != "Art. 96" || a.Quote != alertstest.QuoteNight ||
					a.RuleID != "lapa.art96.noturno.outras" || a.CodeID != "lapa" || a.CodeVersion == "" {
					t.Errorf("pending alert cites %+v", a)
				}
				if !a.WindowStart.Equal(at("22:00:00")) || !a.WindowEnd.Equal(at("22:00:01")) {
					t.Errorf("first night window [%s, %s), want [22:00:00, 22:00:01)", hms(a.WindowStart), hms(a.WindowEnd))
				}
				f := evs[1].Alert
				if !f.WindowStart.Equal(at("22:00:10")) || !f.WindowEnd.Equal(at("22:00:20")) {
					t.Errorf("firing window [%s, %s), want [22:00:10, 22:00:20)", hms(f.WindowStart), hms(f.WindowEnd))
				}
				if math.Abs(f.LAeqDB-62) > 1e-9 || f.LAFmaxDB != 70 {
					t.Errorf("firing LAeq %.3f LAFmax %.1f, want 62 and 70", f.LAeqDB, f.LAFmaxDB)
				}
				if a.ID != "lapa-bar-01/20250315T010000.000Z" {
					t.Errorf("id %q", a.ID)
				}
			},
		},
		{
			// Without the reset, 22:00:00's window would hold nine 64 dB day
			// records: LAeq ≈ 63.6 − 1.1 > 60 would be a false night alert.
			name:   "window does not carry day records into the night",
			cfg:    window10,
			ops:    []op{rec("21:59:51", 9, 64), rec("22:00:00", 60, 55)},
			status: alerts.StatusOK,
		},
		{
			// The night alert ends with the night: resolved at 07:00:00
			// (period_end); 62 complies with the day limit.
			name: "06:59 -> 07:00: night alert resolved by the period change",
			cfg:  window10,
			ops:  []op{rec("06:59:00", 90, 62)},
			want: []string{"pending@06:59:00", "firing@06:59:20", "resolved@07:00:00[period_end]"},
			check: func(t *testing.T, st alerts.SensorState, evs []alerts.Event) {
				if st.Limit.Period != "diurno" || st.LAeq != 62 {
					t.Errorf("after 07:00 state period %q LAeq %.2f", st.Limit.Period, st.LAeq)
				}
			},
		},
		{
			// A night exceedance that persists past 07:00 above the day limit
			// becomes a new alert citing the day rule.
			name: "exceedance across 07:00 continues as a new day alert",
			ops:  []op{rec("06:59:30", 60, 70)},
			want: []string{"pending@06:59:30", "firing@06:59:50", "resolved@07:00:00[period_end]", "pending@07:00:00", "firing@07:00:20"},
			check: func(t *testing.T, st alerts.SensorState, evs []alerts.Event) {
				if evs[0].Alert.ID == evs[3].Alert.ID || evs[3].Alert.Period != "diurno" || evs[3].Alert.LimitDB != 65 {
					t.Errorf("day alert %+v", evs[3].Alert)
				}
			},
		},
		{
			name:   "silent sensor: no_data after the timeout, data back closes it",
			ops:    []op{rec("10:00:00", 5, 50), tick("10:00:09"), tick("10:00:10"), tick("10:00:15"), rec("10:00:20", 1, 50)},
			want:   []string{"no_data@10:00:10[silent]", "data_back@10:00:21"},
			status: alerts.StatusOK,
			check: func(t *testing.T, st alerts.SensorState, evs []alerts.Event) {
				g := evs[1].Alert
				if !g.WindowStart.Equal(at("10:00:05")) || !g.WindowEnd.Equal(at("10:00:20")) || g.State != alerts.StateResolved {
					t.Errorf("gap alert %+v", g)
				}
			},
		},
		{
			name:   "sensor still silent stays no_data",
			ops:    []op{rec("10:00:00", 5, 50), tick("10:00:10"), tick("10:01:00")},
			want:   []string{"no_data@10:00:10[silent]"},
			status: alerts.StatusNoData,
		},
		{
			name:   "gateway offline: no_data at once; online alone does not close it",
			ops:    []op{rec("10:00:00", 5, 50), offline("10:00:06"), online("10:00:07"), tick("10:00:30")},
			want:   []string{"no_data@10:00:06[gateway_offline]"},
			status: alerts.StatusNoData,
		},
		{
			name: "gateway offline then a record: data back",
			ops:  []op{rec("10:00:00", 5, 50), offline("10:00:06"), rec("10:00:05", 1, 50)},
			want: []string{"no_data@10:00:06[gateway_offline]", "data_back@10:00:06"},
		},
		{
			name: "a gap cancels a pending alert",
			ops:  []op{rec("10:00:00", 10, 70), tick("10:00:20")},
			want: []string{"pending@10:00:00", "cancelled@10:00:10[data_gap]", "no_data@10:00:20[silent]"},
		},
		{
			// A gap is not evidence of quiet: the alert keeps firing and the
			// same alert continues when data returns.
			name:   "a gap does not resolve a firing alert",
			ops:    []op{rec("10:00:00", 25, 70), tick("10:00:40"), rec("10:00:45", 10, 70)},
			want:   []string{"pending@10:00:00", "firing@10:00:20", "no_data@10:00:40[silent]", "data_back@10:00:46"},
			status: alerts.StatusFiring,
		},
		{
			// 68 − 5 = 63 ≤ 65 for screening; 68 − 1.1 > 65 for class 1.
			name:   "screening margin: 68 dB by day does not exceed",
			ops:    []op{graded(rec("10:00:00", 30, 68), alerts.GradeScreening)},
			status: alerts.StatusOK,
		},
		{
			name: "class 1 margin: 68 dB by day exceeds",
			ops:  []op{rec("10:00:00", 30, 68)},
			want: []string{"pending@10:00:00", "firing@10:00:20"},
			check: func(t *testing.T, st alerts.SensorState, evs []alerts.Event) {
				if evs[1].Alert.Screening || evs[1].Alert.MarginDB != 1.1 || evs[1].Alert.Grade != "class1" {
					t.Errorf("class1 alert %+v", evs[1].Alert)
				}
			},
		},
		{
			name: "screening sensor far above the limit fires, flagged",
			ops:  []op{graded(rec("10:00:00", 30, 71), alerts.GradeScreening)},
			want: []string{"pending@10:00:00", "firing@10:00:20"},
			check: func(t *testing.T, st alerts.SensorState, evs []alerts.Event) {
				if !evs[1].Alert.Screening || evs[1].Alert.MarginDB != 5 {
					t.Errorf("screening alert %+v", evs[1].Alert)
				}
			},
		},
		{
			name: "unknown grade gets the unknown-grade margin and is flagged",
			ops:  []op{graded(rec("10:00:00", 30, 71), "class9")},
			want: []string{"pending@10:00:00", "firing@10:00:20"},
			check: func(t *testing.T, st alerts.SensorState, evs []alerts.Event) {
				if !evs[0].Alert.Screening || evs[0].Alert.MarginDB != 5 {
					t.Errorf("unknown-grade alert %+v", evs[0].Alert)
				}
			},
		},
		{
			// Another instrument: the class 1 alert closes; the screening
			// meter (71 − 5 > 65) starts its own alert.
			name: "meter grade change closes the open alert",
			ops:  []op{rec("10:00:00", 25, 70), graded(rec("10:00:25", 21, 71), alerts.GradeScreening)},
			want: []string{"pending@10:00:00", "firing@10:00:20", "resolved@10:00:25[meter_changed]", "pending@10:00:25", "firing@10:00:45"},
		},
		{
			name:   "no numeric limit: never exceeds, status no_limit",
			ops:    []op{zoned(rec("10:00:00", 30, 90), alertstest.ZoneNoLimit)},
			status: alerts.StatusNoLimit,
		},
		{
			name:   "limit lookup error: status error, open alert closed",
			ops:    []op{rec("10:00:00", 25, 70), zoned(rec("10:00:25", 1, 70), alertstest.ZoneUnknown)},
			want:   []string{"pending@10:00:00", "firing@10:00:20", "resolved@10:00:25[limit_error]"},
			status: alerts.StatusError,
		},
		{
			name: "duplicates and out-of-order records are ignored",
			ops:  []op{rec("10:00:00", 30, 70), rec("10:00:05", 10, 20), rec("10:00:29", 1, 20)},
			want: []string{"pending@10:00:00", "firing@10:00:20"},
			check: func(t *testing.T, st alerts.SensorState, evs []alerts.Event) {
				if st.Ignored != 11 || st.Evaluated != 30 {
					t.Errorf("ignored %d evaluated %d, want 11 and 30", st.Ignored, st.Evaluated)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.Window == 0 {
				cfg = testConfig()
			}
			st, evs := run(t, cfg, tc.ops)
			got := summary(evs)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("events\n got %v\nwant %v", got, tc.want)
			}
			if tc.status != "" && st.Status() != tc.status {
				t.Errorf("status %q, want %q", st.Status(), tc.status)
			}
			if tc.check != nil && len(got) == len(tc.want) {
				tc.check(t, st, evs)
			}
		})
	}
}

// TestWindowEnergyMean checks the window LAeq against the energy mean
// computed here by hand, and that records older than the window drop out.
func TestWindowEnergyMean(t *testing.T) {
	cfg := testConfig()
	cfg.Window = 4 * time.Second
	eng, err := alerts.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lims := alertstest.NewLimits()
	levels := []float64{50, 70, 60, 40, 80, 30}
	var st alerts.SensorState
	for i, db := range levels {
		r := reading(at("10:00:00").Add(time.Duration(i)*time.Second), op{db: db})
		lim, ok, _ := lims.LimitAt("lapa", "outras", "bar", "", r.T)
		st, _ = eng.Step(st, alerts.RecordInput(r, lim, ok), r.End())
		lo := max(0, i-3)
		var e float64
		for _, l := range levels[lo : i+1] {
			e += math.Pow(10, l/10)
		}
		want := 10 * math.Log10(e/float64(i+1-lo))
		if math.Abs(st.LAeq-want) > 1e-9 {
			t.Errorf("after record %d: LAeq %.6f, want %.6f", i, st.LAeq, want)
		}
		if len(st.Window) != i+1-lo {
			t.Errorf("after record %d: window holds %d records, want %d", i, len(st.Window), i+1-lo)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := alerts.DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	tests := []struct {
		name string
		mod  func(*alerts.Config)
		want string
	}{
		{"zero window", func(c *alerts.Config) { c.Window = 0 }, "window"},
		{"negative min duration", func(c *alerts.Config) { c.MinDuration = -time.Second }, "min duration"},
		{"zero resolve time", func(c *alerts.Config) { c.ResolveTime = 0 }, "resolve time"},
		{"zero no-data timeout", func(c *alerts.Config) { c.NoDataTimeout = 0 }, "no-data timeout"},
		{"NaN hysteresis", func(c *alerts.Config) { c.HysteresisDB = math.NaN() }, "hysteresis"},
		{"negative margin", func(c *alerts.Config) { c.MarginDB = map[string]float64{"class1": -1} }, "margin of grade class1"},
		{"zero tick", func(c *alerts.Config) { c.TickEvery = 0 }, "tick interval"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := alerts.DefaultConfig()
			tc.mod(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error about %q", err, tc.want)
			}
			if _, err := alerts.NewEngine(c); err == nil {
				t.Fatal("NewEngine accepted an invalid config")
			}
		})
	}
}

// TestDetectedAt: a live exceedance is detected when its firing record
// arrives (DetectedAt = FiringAt); the same readings replayed an hour later
// by a gateway back from an outage fire the same alert, at the same stream
// instants, but DetectedAt says when the service learnt of it.
func TestDetectedAt(t *testing.T) {
	cfg := testConfig()
	_, live := run(t, cfg, []op{rec("23:00:00", 30, 70)})
	var fired alerts.Event
	for _, e := range live {
		if e.Kind == alerts.EventFiring {
			fired = e
		}
	}
	if fired.Kind == "" || !fired.Alert.DetectedAt.Equal(fired.Alert.FiringAt) {
		t.Fatalf("live: firing %+v, want DetectedAt = FiringAt", fired.Alert)
	}

	eng, err := alerts.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lims := alertstest.NewLimits()
	var st alerts.SensorState
	back := at("+00:05:00") // the gateway reconnects and replays
	var replayed alerts.Event
	for i := range 30 {
		r := reading(at("23:00:00").Add(time.Duration(i)*time.Second), rec("23:00:00", 1, 70))
		lim, ok, _ := lims.LimitAt(r.Code, r.Zone, r.EstablishmentType, r.Mechanism, r.T)
		var evs []alerts.Event
		st, evs = eng.Step(st, alerts.RecordInput(r, lim, ok), back.Add(time.Duration(i)*time.Millisecond))
		for _, e := range evs {
			if e.Kind == alerts.EventFiring {
				replayed = e
			}
		}
	}
	if replayed.Alert.ID != fired.Alert.ID || !replayed.Alert.FiringAt.Equal(fired.Alert.FiringAt) {
		t.Fatalf("replayed alert %s firing %v, want %s at %v", replayed.Alert.ID, replayed.Alert.FiringAt, fired.Alert.ID, fired.Alert.FiringAt)
	}
	if d := replayed.Alert.DetectedAt.Sub(back); d < 0 || d > time.Second {
		t.Errorf("replayed: DetectedAt %v, want the replay's receive time %v", replayed.Alert.DetectedAt, back)
	}
}

// TestUnsyncedRecordsCounted: records stamped by an unsynchronised gateway
// clock are evaluated like any other, and the open alert counts them.
func TestUnsyncedRecordsCounted(t *testing.T) {
	eng, err := alerts.NewEngine(testConfig())
	if err != nil {
		t.Fatal(err)
	}
	lims := alertstest.NewLimits()
	var st alerts.SensorState
	var firing *alerts.Event
	for i := range 30 {
		r := reading(at("23:00:00").Add(time.Duration(i)*time.Second), rec("23:00:00", 1, 70))
		r.ClockUnsynced = i >= 10 // the gateway lost its time source after 10 s
		lim, ok, _ := lims.LimitAt(r.Code, r.Zone, r.EstablishmentType, r.Mechanism, r.T)
		var evs []alerts.Event
		st, evs = eng.Step(st, alerts.RecordInput(r, lim, ok), r.End())
		for _, e := range evs {
			if e.Kind == alerts.EventFiring {
				firing = &e
			}
		}
	}
	if firing == nil || st.Open == nil {
		t.Fatal("the exceedance did not fire")
	}
	// pending at the first record, firing at the record ending 20 s later
	// (records 0–19, of which 10–19 unsynced); 20 unsynced by the end.
	if firing.Alert.UnsyncedRecords != 10 || st.Open.UnsyncedRecords != 20 {
		t.Errorf("unsynced records: %d at firing, %d at the end; want 10 and 20", firing.Alert.UnsyncedRecords, st.Open.UnsyncedRecords)
	}
	_, synced := run(t, testConfig(), []op{rec("23:00:00", 30, 70)})
	for _, e := range synced {
		if e.Alert.UnsyncedRecords != 0 {
			t.Errorf("synced records counted as unsynced: %+v", e.Alert)
		}
	}
}
