package alerts_test

import (
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/alertstest"
)

// FuzzStep drives the engine with arbitrary sequences of records (any gap,
// level, grade, zone), ticks and gateway statuses across day and night, and
// checks the lifecycle invariants after every step.
func FuzzStep(f *testing.F) {
	f.Add([]byte{0, 1, 70, 0, 1, 70, 1, 30, 0, 0, 1, 40})
	f.Add([]byte{0, 200, 65, 0, 1, 66, 0, 1, 67, 2, 0, 0, 0, 5, 80, 3, 0, 0})
	f.Add([]byte{0, 255, 90, 0, 255, 90, 0, 255, 90, 0, 255, 20, 0, 255, 20})
	cfg := alerts.DefaultConfig()
	cfg.Window = 5 * time.Second
	cfg.MinDuration = 3 * time.Second
	cfg.ResolveTime = 4 * time.Second
	cfg.NoDataTimeout = 10 * time.Second
	eng, err := alerts.NewEngine(cfg)
	if err != nil {
		f.Fatal(err)
	}
	lims := alertstest.NewLimits()
	grades := []string{"class1", "class2", "screening", "bogus"}
	zones := []string{"outras", alertstest.ZoneHospital, alertstest.ZoneNoLimit, alertstest.ZoneUnknown}
	f.Fuzz(func(t *testing.T, ops []byte) {
		var st alerts.SensorState
		clock := time.Date(2025, 3, 14, 21, 58, 0, 0, lims.Loc)
		seen := map[string][]alerts.EventKind{}
		for i := 0; i+2 < len(ops); i += 3 {
			op, a, b := ops[i]%4, ops[i+1], ops[i+2]
			var evs []alerts.Event
			switch op {
			case 0: // a record a·15 s after the previous start (0: a duplicate)
				clock = clock.Add(time.Duration(a) * 15 * time.Second / 16)
				r := alerts.Reading{
					SensorInfo: alerts.SensorInfo{Sensor: "s", Municipality: "lapa", Zone: zones[int(b>>6&1)|int(a>>7)<<1],
						Grade: grades[b>>6]},
					T: clock, DurMs: 1000, LAeq: 30 + float64(b&63), LAFmax: 35 + float64(b&63),
				}
				lim, ok, lerr := lims.LimitAt("lapa", r.Zone, "bar", "", r.T)
				in := alerts.RecordInput(r, lim, ok)
				if lerr != nil {
					in.LimitErr = lerr.Error()
				}
				st, evs = eng.Step(st, in, r.End())
			case 1:
				st, evs = eng.Step(st, alerts.TickInput(), clock.Add(time.Duration(a)*time.Second))
			default:
				st, evs = eng.Step(st, alerts.GatewayInput(op == 2), clock.Add(time.Duration(a)*time.Second))
			}
			for _, e := range evs {
				seen[e.Alert.ID] = append(seen[e.Alert.ID], e.Kind)
				checkEvent(t, e)
			}
			checkState(t, cfg, st)
		}
		for id, ks := range seen {
			checkOrder(t, id, ks)
		}
	})
}

func checkEvent(t *testing.T, e alerts.Event) {
	a := e.Alert
	switch e.Kind {
	case alerts.EventPending, alerts.EventFiring:
		if a.Kind != alerts.KindExceedance || a.LAeqDB-a.MarginDB <= a.LimitDB {
			t.Fatalf("%s alert does not exceed: LAeq %.2f margin %.2f limit %.2f", e.Kind, a.LAeqDB, a.MarginDB, a.LimitDB)
		}
		if a.RuleID == "" || a.Article == "" || a.Quote == "" || a.Period == "" {
			t.Fatalf("%s alert without citation: %+v", e.Kind, a)
		}
	case alerts.EventNoData, alerts.EventDataBack:
		if a.Kind != alerts.KindNoData {
			t.Fatalf("%s on a %s alert", e.Kind, a.Kind)
		}
	}
	if e.Kind == alerts.EventFiring && a.FiringAt.Sub(a.PendingAt) < 3*time.Second {
		t.Fatalf("fired after %v, before the min duration", a.FiringAt.Sub(a.PendingAt))
	}
}

func checkState(t *testing.T, cfg alerts.Config, st alerts.SensorState) {
	if st.Open != nil && st.Open.State != alerts.StatePending && st.Open.State != alerts.StateFiring {
		t.Fatalf("open alert in state %s", st.Open.State)
	}
	if st.Gap != nil && st.Gap.State != alerts.StateFiring {
		t.Fatalf("gap alert in state %s", st.Gap.State)
	}
	if !st.HasLimit && len(st.Window) > 0 {
		t.Fatalf("window of %d records without a limit", len(st.Window))
	}
	lo, hi := 1e9, -1e9
	for _, w := range st.Window {
		if w.T.Before(st.LastEnd.Add(-cfg.Window)) || w.T.Before(st.Limit.PeriodStart) || !w.T.Before(st.Limit.PeriodEnd) {
			t.Fatalf("window record %v outside the window or the period [%v, %v)", w.T, st.Limit.PeriodStart, st.Limit.PeriodEnd)
		}
		lo, hi = min(lo, w.LAeq), max(hi, w.LAeq)
	}
	if len(st.Window) > 0 && (st.LAeq < lo-1e-9 || st.LAeq > hi+1e-9) {
		t.Fatalf("window LAeq %.3f outside [%.1f, %.1f]", st.LAeq, lo, hi)
	}
}

// checkOrder: pending [firing [resolved]] | pending cancelled | no_data [data_back].
func checkOrder(t *testing.T, id string, ks []alerts.EventKind) {
	valid := [][]alerts.EventKind{
		{alerts.EventPending}, {alerts.EventPending, alerts.EventFiring},
		{alerts.EventPending, alerts.EventFiring, alerts.EventResolved},
		{alerts.EventPending, alerts.EventCancelled},
		{alerts.EventNoData}, {alerts.EventNoData, alerts.EventDataBack},
	}
	for _, v := range valid {
		if len(v) == len(ks) {
			ok := true
			for i := range v {
				ok = ok && v[i] == ks[i]
			}
			if ok {
				return
			}
		}
	}
	t.Fatalf("alert %s went through %v", id, ks)
}
