package alerts_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/alertstest"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time       { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time)      { c.mu.Lock(); c.now = t; c.mu.Unlock() }
func kinds(evs []alerts.Event) string { return fmt.Sprint(summary(evs)) }

func newMonitor(t *testing.T, cfg alerts.Config, store alerts.StateStore) (*alerts.Monitor, *alertstest.Recorder, *alertstest.Limits, *clock) {
	t.Helper()
	rec := &alertstest.Recorder{}
	lims := alertstest.NewLimits()
	clk := &clock{}
	m, err := alerts.NewMonitor(cfg, lims, alerts.Options{Store: store, Notifier: rec, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return m, rec, lims, clk
}

func observeAll(t *testing.T, m *alerts.Monitor, clk *clock, o op) {
	t.Helper()
	for i := range o.n {
		r := reading(at(o.t).Add(time.Duration(i)*time.Second), o)
		clk.Set(r.End())
		if err := m.Observe(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMonitorStoresThenNotifies(t *testing.T) {
	store := &alertstest.MemStore{}
	m, rec, lims, clk := newMonitor(t, testConfig(), store)
	observeAll(t, m, clk, rec0("21:59:00", 120, 62))
	want := "[pending@22:00:00 firing@22:00:20]"
	if got := kinds(rec.Events()); got != want {
		t.Errorf("notified %s, want %s", got, want)
	}
	if got := kinds(store.Events()); got != want {
		t.Errorf("stored %s, want %s", got, want)
	}
	// One lookup for the day period, one at 22:00: the limit is cached
	// for the rest of each period.
	if lims.Calls() != 2 {
		t.Errorf("limit lookups %d, want 2", lims.Calls())
	}
	st, ok := m.Status("lapa-bar-01")
	if !ok || st.Status != alerts.StatusFiring || st.Limit == nil || st.Limit.DB != 60 || st.LAeq != 62 {
		t.Errorf("status %+v", st)
	}
	if last, ok := m.LastSeen("lapa-bar-01"); !ok || !last.Equal(at("22:01:00")) {
		t.Errorf("LastSeen %v", last)
	}
}

func rec0(t string, n int, db float64) op { return rec(t, n, db) }

func TestMonitorRetriesFailedSaves(t *testing.T) {
	store := &alertstest.MemStore{Fail: true}
	m, rec, _, clk := newMonitor(t, testConfig(), store)
	r := reading(at("22:00:00"), op{db: 70})
	clk.Set(r.End())
	if err := m.Observe(t.Context(), r); !errors.Is(err, alertstest.ErrStoreDown) {
		t.Fatalf("Observe with the store down = %v, want ErrStoreDown", err)
	}
	if n := len(rec.Events()); n != 0 {
		t.Fatalf("notified %d events before they were stored", n)
	}
	store.Fail = false
	if err := m.Tick(t.Context(), r.End()); err != nil {
		t.Fatal(err)
	}
	if got := kinds(rec.Events()); got != "[pending@22:00:00]" {
		t.Errorf("after recovery notified %s", got)
	}
	if got := kinds(store.Events()); got != "[pending@22:00:00]" {
		t.Errorf("after recovery stored %s", got)
	}
}

func TestMonitorRejectsInvalidReadings(t *testing.T) {
	m, _, _, _ := newMonitor(t, testConfig(), nil)
	good := reading(at("10:00:00"), op{db: 50})
	tests := []struct {
		name string
		mod  func(*alerts.Reading)
	}{
		{"empty sensor", func(r *alerts.Reading) { r.Sensor = "" }},
		{"zero time", func(r *alerts.Reading) { r.T = time.Time{} }},
		{"zero duration", func(r *alerts.Reading) { r.DurMs = 0 }},
		{"NaN level", func(r *alerts.Reading) { r.LAeq = nan() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			tc.mod(&r)
			if err := m.Observe(t.Context(), r); !errors.Is(err, alerts.ErrInvalidReading) {
				t.Errorf("Observe = %v, want ErrInvalidReading", err)
			}
		})
	}
}

func nan() float64 { var z float64; return z / z }

func TestMonitorLimitError(t *testing.T) {
	m, _, _, clk := newMonitor(t, testConfig(), nil)
	r := reading(at("10:00:00"), op{db: 50, zone: alertstest.ZoneUnknown})
	clk.Set(r.End())
	if err := m.Observe(t.Context(), r); err == nil {
		t.Fatal("Observe hid a failed limit lookup")
	}
	if st, _ := m.Status("lapa-bar-01"); st.Status != alerts.StatusError || st.Error == "" {
		t.Errorf("status %+v, want error", st)
	}
}

func TestMonitorGatewayAndExpect(t *testing.T) {
	m, rec, _, clk := newMonitor(t, testConfig(), nil)
	ctx := t.Context()
	for _, s := range []struct{ sensor, gw string }{{"a", "gw1"}, {"b", "gw1"}, {"c", "gw2"}} {
		r := reading(at("10:00:00"), op{db: 50})
		r.Sensor, r.Gateway = s.sensor, s.gw
		clk.Set(r.End())
		if err := m.Observe(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	m.Expect(alerts.SensorInfo{Sensor: "d", Gateway: "gw3", Municipality: "lapa", Grade: "class2"}, at("10:00:00"))
	clk.Set(at("10:00:02"))
	if err := m.GatewayStatus(ctx, "gw1", false); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range rec.Events() {
		got[e.Alert.Sensor] = string(e.Kind) + "/" + e.Alert.Reason
	}
	if fmt.Sprint(got) != "map[a:no_data/gateway_offline b:no_data/gateway_offline]" {
		t.Errorf("after gw1 offline: %v", got)
	}
	// 10:00:06: c (last record ended 10:00:01) and d (expected since
	// 10:00:00) have been silent for ≥ 5 s.
	if err := m.Tick(ctx, at("10:00:06")); err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, s := range m.Statuses() {
		statuses = append(statuses, s.Sensor+"="+string(s.Status))
	}
	if fmt.Sprint(statuses) != "[a=no_data b=no_data c=no_data d=no_data]" {
		t.Errorf("statuses %v", statuses)
	}
}

// TestMonitorConcurrent exercises Observe, Tick, GatewayStatus and Status
// from several goroutines (run with -race).
func TestMonitorConcurrent(t *testing.T) {
	store := &alertstest.MemStore{}
	m, _, _, clk := newMonitor(t, testConfig(), store)
	clk.Set(at("22:00:00"))
	ctx := t.Context()
	var wg sync.WaitGroup
	for s := range 4 {
		wg.Go(func() {
			for i := range 200 {
				r := reading(at("21:59:00").Add(time.Duration(i)*time.Second), op{db: 62})
				r.Sensor = fmt.Sprintf("s%d", s)
				if err := m.Observe(ctx, r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			if err := m.Tick(ctx, at("22:00:00")); err != nil {
				t.Error(err)
			}
			_ = m.Statuses()
			_ = m.GatewayStatus(ctx, "gw-other", false)
		}
	})
	wg.Wait()
	for _, s := range m.Statuses() {
		if s.Status != alerts.StatusFiring {
			t.Errorf("%s: %s, want firing", s.Sensor, s.Status)
		}
	}
}

// TestRun checks the ticker loop with a fake clock: a sensor that goes quiet
// gets a no_data alert from Run alone, and Run saves the snapshots when it
// stops.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &alertstest.MemStore{}
		rec := &alertstest.Recorder{}
		cfg := testConfig()
		m, err := alerts.NewMonitor(cfg, alertstest.NewLimits(), alerts.Options{Store: store, Notifier: rec})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()

		r := reading(time.Now().Add(-time.Second), op{db: 50})
		if err := m.Observe(ctx, r); err != nil {
			t.Fatal(err)
		}
		time.Sleep(cfg.NoDataTimeout - cfg.TickEvery)
		synctest.Wait()
		if n := len(rec.Events()); n != 0 {
			t.Fatalf("%d events before the timeout", n)
		}
		time.Sleep(2 * cfg.TickEvery)
		synctest.Wait()
		if got := rec.Events(); len(got) != 1 || got[0].Kind != alerts.EventNoData {
			t.Fatalf("after the timeout: %+v", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
		states, _ := store.LoadStates(t.Context())
		if len(states) != 1 || states[0].Gap == nil || states[0].Evaluated != 1 {
			t.Fatalf("saved %+v", states)
		}
	})
}

// TestRestoreGrace: after a restart every sensor gets a fresh NoDataTimeout
// (the service was not listening), then silence is reported as usual.
func TestRestoreGrace(t *testing.T) {
	store := &alertstest.MemStore{}
	m, _, _, clk := newMonitor(t, testConfig(), store)
	observeAll(t, m, clk, rec("10:00:00", 3, 50))
	if err := m.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	m2, rec2, _, clk2 := newMonitor(t, testConfig(), store)
	clk2.Set(at("10:30:00")) // restarted half an hour later
	if err := m2.Restore(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := m2.Tick(t.Context(), at("10:30:04")); err != nil {
		t.Fatal(err)
	}
	if n := len(rec2.Events()); n != 0 {
		t.Fatalf("%d events within the grace after restart", n)
	}
	if err := m2.Tick(t.Context(), at("10:30:05")); err != nil {
		t.Fatal(err)
	}
	if got := kinds(rec2.Events()); got != "[no_data@10:30:05[silent]]" {
		t.Fatalf("after the grace: %s", got)
	}
	if g := rec2.Events()[0].Alert; !g.WindowStart.Equal(at("10:00:03")) {
		t.Errorf("gap starts %s, want the end of the last data 10:00:03", hms(g.WindowStart))
	}
}
