package notify

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
)

var (
	saoPaulo = mustLoc("America/Sao_Paulo")
	// t0 is a Tuesday 20:00 local: fiscal-b is on the night shift.
	t0 = time.Date(2026, 11, 24, 20, 0, 0, 0, saoPaulo)
)

func mustLoc(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

var testUsers = []UserRef{
	{Name: "fiscal-a", Role: "fiscal"}, {Name: "fiscal-b", Role: "fiscal"}, {Name: "fiscal-c", Role: "fiscal"},
	{Name: "coord", Role: "admin"}, {Name: "oper", Role: "operador"}, {Name: "old", Role: "fiscal", Disabled: true},
}

func testSettings() Settings {
	all := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	return Settings{
		PublicURL: "https://sossego.lapa.pr.gov.br",
		Municipalities: []Municipality{{
			ID: "lapa", Coordinator: "coord", EscalateAfterMin: 15,
			Weekly: []Shift{
				{Days: all, From: "07:00", To: "19:00", User: "fiscal-a"},
				{Days: all, From: "19:00", To: "07:00", User: "fiscal-b"},
			},
		}},
		Contacts: []Contact{{User: "fiscal-a", Email: "a@lapa.pr.gov.br"}, {User: "fiscal-b", Email: "b@lapa.pr.gov.br"}},
	}
}

func testPolicy(t *testing.T, mod func(*Settings)) *Policy {
	t.Helper()
	s := testSettings()
	if mod != nil {
		mod(&s)
	}
	p, err := Validate(s, testUsers, time.LoadLocation)
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	return p
}

func exceed(sensor string, at time.Time) alerts.Event {
	id := sensor + "/" + at.UTC().Format("2006-01-02T15:04:05.000Z")
	return alerts.Event{Kind: alerts.EventFiring, At: at, Alert: alerts.Alert{ID: id, Kind: alerts.KindExceedance, State: alerts.StateFiring,
		SensorInfo: alerts.SensorInfo{Sensor: sensor, Gateway: "gw-1", Municipality: "lapa", Establishment: "Bar " + sensor},
		LAeqDB:     72.4, LimitDB: 60, Article: "Art. 96", PendingAt: at.Add(-2 * time.Minute), FiringAt: at}}
}

func noData(sensor string, at time.Time) alerts.Event {
	return alerts.Event{Kind: alerts.EventNoData, At: at, Alert: alerts.Alert{ID: sensor + "/nodata/" + at.UTC().Format(time.RFC3339),
		Kind: alerts.KindNoData, State: alerts.StateFiring, Reason: alerts.ReasonGatewayOffline,
		SensorInfo: alerts.SensorInfo{Sensor: sensor, Gateway: "gw-storm", Municipality: "lapa"}, PendingAt: at, FiringAt: at}}
}

func resolve(ev alerts.Event, at time.Time) alerts.Event {
	a := ev.Alert
	a.State, a.ResolvedAt = alerts.StateResolved, at
	k := alerts.EventResolved
	if a.Kind == alerts.KindNoData {
		k = alerts.EventDataBack
	}
	return alerts.Event{Kind: k, At: at, Alert: a}
}

// step is one input of a scenario at t0+at.
type step struct {
	at       time.Duration
	ev       *alerts.Event
	ack      *Ack
	silences []Silence // replaces the silences from this step on
	want     []string  // notifications: "type user step [alert ids…]"
	wantLog  []string  // entry kinds logged, "kind alert"
}

func ev(e alerts.Event) *alerts.Event { return &e }

func describe(n Notification) string {
	ids := make([]string, len(n.Alerts))
	for i, a := range n.Alerts {
		ids[i] = a.Sensor
	}
	return fmt.Sprintf("%s %s %d %v", n.Type, n.User, n.Step, ids)
}

// run plays a scenario; at each step it also plays every wake-up the
// engine asked for before the step's instant, collecting what they sent.
func run(t *testing.T, pol *Policy, steps []step) *State {
	t.Helper()
	st := NewState()
	var sil []Silence
	var next time.Time
	for i, s := range steps {
		now := t0.Add(s.at)
		var got []string
		var logs []string
		collect := func(r Result) {
			for _, n := range r.Notifications {
				got = append(got, describe(n))
			}
			for _, e := range r.Log {
				logs = append(logs, string(e.Kind)+" "+strings.SplitN(e.AlertID, "/", 2)[0])
			}
			next = r.Next
		}
		for !next.IsZero() && next.Before(now) {
			collect(Step(st, World{Policy: pol, Silences: sil}, Input{}, next))
		}
		if s.silences != nil {
			sil = s.silences
		}
		collect(Step(st, World{Policy: pol, Silences: sil}, Input{Event: s.ev, Ack: s.ack}, now))
		if !slices.Equal(got, s.want) {
			t.Fatalf("step %d (t0+%v): notifications\n got %q\nwant %q", i, s.at, got, s.want)
		}
		if s.wantLog != nil {
			for _, w := range s.wantLog {
				if !slices.Contains(logs, w) {
					t.Fatalf("step %d (t0+%v): log %q missing in %q", i, s.at, w, logs)
				}
			}
		}
	}
	return st
}

func TestStepRules(t *testing.T) {
	bar := exceed("bar", t0)
	bar2 := exceed("bar", t0.Add(90*time.Second))
	pub := exceed("pub", t0.Add(30*time.Second))
	min := time.Minute
	tests := []struct {
		name  string
		mod   func(*Settings)
		steps []step
	}{
		{name: "a level alert goes at once to the fiscal on duty", steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}, wantLog: []string{"notified bar"}},
		}},
		{name: "a replayed firing is not sent twice", steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}},
			{at: time.Second, ev: ev(bar), want: nil},
		}},
		{name: "two alerts of one group within the interval: the second waits and goes once", steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}},
			{at: 30 * time.Second, ev: ev(pub), want: nil, wantLog: []string{"queued pub"}},
			{at: 2*min + time.Second, want: []string{"firing fiscal-b 0 [pub]"}},
		}},
		{name: "fire, resolve and fire again within the interval does not page twice", steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}},
			{at: 60 * time.Second, ev: ev(resolve(bar, t0.Add(60*time.Second))), want: nil},
			{at: 90 * time.Second, ev: ev(bar2), want: nil},
			// the group's flush at t0+2m: neither the closing message nor a second page
			{at: 2*min + time.Second, want: nil, wantLog: []string{"dropped bar", "suppressed bar"}},
			// the re-fire still escalates if nobody acknowledges it
			{at: 17*min + 2*time.Second, want: []string{"escalation fiscal-a 1 [bar]"}},
		}},
		{name: "a no_data storm from one gateway is one message", steps: func() []step {
			var ss []step
			for i := range 40 {
				ss = append(ss, step{at: time.Duration(i) * 100 * time.Millisecond, ev: ev(noData(fmt.Sprintf("s%02d", i), t0.Add(time.Duration(i)*100*time.Millisecond)))})
			}
			var all []string
			for i := range 40 {
				all = append(all, fmt.Sprintf("s%02d", i))
			}
			ss = append(ss, step{at: 31 * time.Second, want: []string{fmt.Sprintf("firing fiscal-b 0 %v", all)}})
			return ss
		}()},
		{name: "not acknowledged: next in the schedule, then the coordinator, then the chain ends", steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}},
			{at: 14 * min, want: nil},
			{at: 15*min + time.Second, want: []string{"escalation fiscal-a 1 [bar]"}},
			{at: 30*min + 2*time.Second, want: []string{"escalation coord 2 [bar]"}},
			{at: 46 * min, want: nil, wantLog: []string{"exhausted bar"}},
		}},
		{name: "an acknowledgement stops the escalation", steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}},
			{at: 5 * min, ack: &Ack{AlertID: bar.Alert.ID, By: "fiscal-b"}, want: nil, wantLog: []string{"acked bar"}},
			{at: 60 * min, want: nil},
		}},
		{name: "an acknowledgement after the first escalation stops the rest", steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}},
			{at: 16 * min, want: []string{"escalation fiscal-a 1 [bar]"}},
			{at: 20 * min, ack: &Ack{AlertID: bar.Alert.ID, By: "fiscal-a"}},
			{at: 60 * min, want: nil},
		}},
		{name: "a resolution stops the escalation and tells who was called", steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}},
			{at: 16 * min, want: []string{"escalation fiscal-a 1 [bar]"}},
			{at: 20 * min, ev: ev(resolve(bar, t0.Add(20*min))), want: []string{"resolved fiscal-a 0 [bar]", "resolved fiscal-b 0 [bar]"}},
			{at: 60 * min, want: nil},
		}},
		{name: "an alert resolved before its group's message is never sent", steps: []step{
			{at: 0, ev: ev(noData("s1", t0))},
			{at: 10 * time.Second, ev: ev(resolve(noData("s1", t0), t0.Add(10*time.Second))), wantLog: []string{"dropped s1"}},
			{at: 40 * time.Second, want: nil},
		}},
		{name: "nobody on duty: the coordinator", mod: func(s *Settings) { s.Municipalities[0].Weekly = s.Municipalities[0].Weekly[:1] }, steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing coord 0 [bar]"}},
			// the next person in the schedule is fiscal-a at 07:00
			{at: 15*min + time.Second, want: []string{"escalation fiscal-a 1 [bar]"}},
			{at: 30*min + 2*time.Second, want: nil, wantLog: []string{"exhausted bar"}},
		}},
		{name: "nobody on duty and no coordinator: recorded as undeliverable", mod: func(s *Settings) {
			s.Municipalities[0].Weekly = s.Municipalities[0].Weekly[:1]
			s.Municipalities[0].Coordinator = ""
		}, steps: []step{
			{at: 0, ev: ev(bar), want: nil, wantLog: []string{"no_recipient bar"}},
		}},
		{name: "an exception for the date replaces the weekly schedule", mod: func(s *Settings) {
			s.Municipalities[0].Overrides = []Override{{Date: "2026-11-24", From: "18:00", To: "23:00", User: "fiscal-c", Reason: "troca"}}
		}, steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-c 0 [bar]"}},
			// next in the schedule after fiscal-c: fiscal-b from 23:00
			{at: 15*min + time.Second, want: []string{"escalation fiscal-b 1 [bar]"}},
		}},
		{name: "a silenced alert is recorded, not sent; still firing when the silence ends, it is sent", steps: []step{
			{at: 0, silences: []Silence{{ID: "s1", Sensor: "bar", Starts: t0.Add(-time.Hour), Ends: t0.Add(30 * min), Reason: "evento licenciado"}},
				ev: ev(bar), want: nil, wantLog: []string{"silenced bar"}},
			{at: 29 * min, want: nil},
			{at: 30*min + time.Second, want: []string{"firing fiscal-b 0 [bar]"}, wantLog: []string{"unsilenced bar"}},
		}},
		{name: "a silence by establishment covers the sensor watching it", steps: []step{
			{at: 0, silences: []Silence{{ID: "s1", Establishment: "Bar bar", Starts: t0.Add(-time.Hour), Ends: t0.Add(time.Hour), Reason: "alvará de obra"}},
				ev: ev(bar), want: nil},
			{at: 1 * min, ev: ev(pub), want: []string{"firing fiscal-b 0 [pub]"}},
		}},
		{name: "a silenced alert that resolves under the silence is never sent", steps: []step{
			{at: 0, silences: []Silence{{ID: "s1", Sensor: "bar", Starts: t0, Ends: t0.Add(time.Hour), Reason: "evento licenciado"}}, ev: ev(bar)},
			{at: 10 * min, ev: ev(resolve(bar, t0.Add(10*min)))},
			{at: 2 * time.Hour, want: nil},
		}},
		{name: "a silence created during the escalation stops it", steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}},
			{at: 5 * min, silences: []Silence{{ID: "s1", Sensor: "bar", Starts: t0.Add(5 * min), Ends: t0.Add(2 * time.Hour), Reason: "evento licenciado"}},
				wantLog: []string{"silenced bar"}},
			{at: 60 * min, want: nil},
		}},
		{name: "an acknowledgement before the group's message: nothing is sent", steps: []step{
			{at: 0, ev: ev(noData("s1", t0))},
			{at: 5 * time.Second, ack: &Ack{AlertID: noData("s1", t0).Alert.ID, By: "fiscal-b"}},
			{at: 40 * time.Second, want: nil},
		}},
		{name: "groups are per municipality and class", steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}},
			{at: 1 * time.Second, ev: ev(noData("s1", t0.Add(time.Second)))},
			{at: 2 * time.Second, ev: ev(func() alerts.Event { e := exceed("clk", t0.Add(2*time.Second)); e.Alert.UnsyncedRecords = 3; return e }())},
			{at: 33 * time.Second, want: []string{"firing fiscal-b 0 [s1]", "firing fiscal-b 0 [clk]"}},
		}},
		{name: "two fiscais on duty are both called", mod: func(s *Settings) {
			s.Municipalities[0].Weekly = append(s.Municipalities[0].Weekly, Shift{Days: []string{"tue"}, From: "18:00", To: "22:00", User: "fiscal-c"})
		}, steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]", "firing fiscal-c 0 [bar]"}},
			{at: 15*min + time.Second, want: []string{"escalation fiscal-a 1 [bar]"}},
		}},
		{name: "the municipality's escalation delay", mod: func(s *Settings) { s.Municipalities[0].EscalateAfterMin = 5 }, steps: []step{
			{at: 0, ev: ev(bar), want: []string{"firing fiscal-b 0 [bar]"}},
			{at: 5*min + time.Second, want: []string{"escalation fiscal-a 1 [bar]"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, testPolicy(t, tc.mod), tc.steps) })
	}
}

func TestSilenceEndReportedOnce(t *testing.T) {
	pol := testPolicy(t, nil)
	st := NewState()
	s := Silence{ID: "s1", Sensor: "bar", Starts: t0, Ends: t0.Add(time.Hour), Reason: "evento licenciado"}
	w := World{Policy: pol, Silences: []Silence{s}}
	if r := Step(st, w, Input{}, t0.Add(time.Minute)); len(r.SilencesEnded) != 0 || !r.Next.Equal(s.Ends) {
		t.Fatalf("active silence: ended %v next %v", r.SilencesEnded, r.Next)
	}
	if r := Step(st, w, Input{}, t0.Add(time.Hour)); len(r.SilencesEnded) != 1 {
		t.Fatalf("expired silence not reported: %v", r.SilencesEnded)
	}
	if r := Step(st, w, Input{}, t0.Add(2*time.Hour)); len(r.SilencesEnded) != 0 {
		t.Fatalf("expired silence reported twice: %v", r.SilencesEnded)
	}
}

func TestNotificationCarriesLatencyStart(t *testing.T) {
	st := NewState()
	recv := t0.Add(-300 * time.Millisecond)
	r := Step(st, World{Policy: testPolicy(t, nil)}, Input{Event: ev(exceed("bar", t0)), ReceivedAt: recv}, t0)
	if len(r.Notifications) != 1 || !r.Notifications[0].ReceivedAt.Equal(recv) || r.Notifications[0].EscalateAfter != 15*time.Minute {
		t.Fatalf("notification %+v", r.Notifications)
	}
	if !r.Next.Equal(t0.Add(15 * time.Minute)) {
		t.Fatalf("next wake-up %v, want the escalation deadline", r.Next)
	}
}

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		a    alerts.Alert
		want Class
	}{
		{alerts.Alert{Kind: alerts.KindExceedance}, ClassLevel},
		{alerts.Alert{Kind: alerts.KindNoData}, ClassNoData},
		{alerts.Alert{Kind: alerts.KindExceedance, UnsyncedRecords: 1}, ClassClock},
		{alerts.Alert{Kind: "clock"}, ClassClock},
	} {
		if got := ClassOf(tc.a); got != tc.want {
			t.Errorf("ClassOf(%+v) = %s, want %s", tc.a, got, tc.want)
		}
	}
}
