package alertstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/google/go-cmp/cmp"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/alertstest"
	"github.com/sossego/sossego/internal/alertstore"
)

var loc = alertstest.NewLimits().Loc

func open(t *testing.T, path string) *alertstore.Store {
	t.Helper()
	s, err := alertstore.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sampleAlert(id string, state alerts.State) alerts.Alert {
	t0 := time.Date(2025, 3, 14, 22, 0, 0, 0, loc)
	a := alerts.Alert{
		ID: id, Kind: alerts.KindExceedance, State: state,
		SensorInfo: alerts.SensorInfo{Sensor: "lapa-bar-01", Gateway: "gw-1", Municipality: "lapa", Code: "lapa",
			Zone: "outras", EstablishmentType: "bar", Establishment: "Bar do Zé", Grade: "class1"},
		CodeID: "lapa", CodeVersion: "2025-01-01", RuleID: "lapa.art96.noturno.outras", Article: "Art. 96",
		Quote: alertstest.QuoteNight, Period: "noturno", PeriodLabel: "período noturno", LimitDB: 60, MarginDB: 1.1,
		LAeqDB: 62.5, LAFmaxDB: 71.2, WindowStart: t0, WindowEnd: t0.Add(time.Minute),
		PeakLAeqDB: 63, PeakLAFmaxDB: 75, PendingAt: t0,
	}
	if state.Rank() >= alerts.StateFiring.Rank() {
		a.FiringAt = t0.Add(2 * time.Minute)
		a.DetectedAt = t0.Add(47*time.Minute + 123*time.Millisecond) // replayed after an outage
		a.UnsyncedRecords = 7
	}
	if state.Rank() >= alerts.StateResolved.Rank() {
		a.ResolvedAt, a.Resolution = t0.Add(10*time.Minute), alerts.ResolutionQuiet
	}
	return a
}

// utc normalises times the way the store returns them.
func utc(a alerts.Alert) alerts.Alert {
	for _, p := range []*time.Time{&a.WindowStart, &a.WindowEnd, &a.PendingAt, &a.FiringAt, &a.ResolvedAt, &a.DetectedAt} {
		if !p.IsZero() {
			*p = p.UTC()
		}
	}
	return a
}

func TestSaveGetListIdempotent(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "cases.db"))
	defer s.Close()

	pending := sampleAlert("lapa-bar-01/A", alerts.StatePending)
	firing := sampleAlert("lapa-bar-01/A", alerts.StateFiring)
	other := sampleAlert("lapa-bar-02/B", alerts.StatePending)
	other.Sensor, other.Municipality = "lapa-bar-02", "macabu"
	ch := []alerts.Change{{Events: []alerts.Event{
		{Kind: alerts.EventPending, At: pending.PendingAt, Alert: pending},
		{Kind: alerts.EventFiring, At: firing.FiringAt, Alert: firing},
	}}, {Events: []alerts.Event{{Kind: alerts.EventPending, At: other.PendingAt, Alert: other}}}}
	for range 3 { // replays store nothing new
		if err := s.SaveStates(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	// A late copy of the pending transition must not move the alert back.
	if err := s.SaveStates(ctx, []alerts.Change{{Events: ch[0].Events[:1]}}); err != nil {
		t.Fatal(err)
	}

	got, err := s.GetAlert(ctx, firing.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(utc(firing), got); d != "" {
		t.Errorf("GetAlert (-want +got):\n%s", d)
	}
	evs, err := s.AlertEvents(ctx, firing.ID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []alerts.EventKind
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	if fmt.Sprint(kinds) != "[pending firing]" {
		t.Errorf("events %v, want [pending firing] once each", kinds)
	}
	if _, err := s.GetAlert(ctx, "nope"); !errors.Is(err, alertstore.ErrNotFound) {
		t.Errorf("GetAlert(nope) = %v, want ErrNotFound", err)
	}

	tests := []struct {
		f    alertstore.Filter
		want []string
	}{
		{alertstore.Filter{}, []string{"lapa-bar-01/A", "lapa-bar-02/B"}},
		{alertstore.Filter{State: alerts.StateFiring}, []string{"lapa-bar-01/A"}},
		{alertstore.Filter{State: alerts.StatePending}, []string{"lapa-bar-02/B"}},
		{alertstore.Filter{Municipality: "macabu"}, []string{"lapa-bar-02/B"}},
		{alertstore.Filter{Sensor: "lapa-bar-01", State: alerts.StateFiring}, []string{"lapa-bar-01/A"}},
		{alertstore.Filter{Sensor: "lapa-bar-01", State: alerts.StateResolved}, nil},
		{alertstore.Filter{Kind: alerts.KindNoData}, nil},
		{alertstore.Filter{Limit: 1}, []string{"lapa-bar-01/A"}},
	}
	for _, tc := range tests {
		as, err := s.ListAlerts(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range as {
			ids = append(ids, a.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(tc.want) {
			t.Errorf("ListAlerts(%+v) = %v, want %v", tc.f, ids, tc.want)
		}
	}
	counts, err := s.CountAlerts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts[alerts.StateFiring] != 1 || counts[alerts.StatePending] != 1 {
		t.Errorf("counts %v", counts)
	}
}

func TestSnapshotSeq(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "cases.db"))
	defer s.Close()
	st := alerts.SensorState{Sensor: "s1", Seq: 5, LAeq: 50}
	older := alerts.SensorState{Sensor: "s1", Seq: 4, LAeq: 40}
	for _, c := range []alerts.SensorState{st, older} {
		if err := s.SaveStates(ctx, []alerts.Change{{State: c}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.LoadStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Seq != 5 || got[0].LAeq != 50 {
		t.Fatalf("loaded %+v, want the Seq 5 snapshot only", got)
	}
}

// harness drives a Monitor backed by a case store with a scripted clock: a
// record arrives at its end.
type harness struct {
	t     *testing.T
	path  string
	cfg   alerts.Config
	store *alertstore.Store
	mon   *alerts.Monitor
	rec   *alertstest.Recorder
	mu    sync.Mutex
	now   time.Time
}

func newHarness(t *testing.T, path string) *harness {
	cfg := alerts.DefaultConfig()
	cfg.Window = 10 * time.Second
	cfg.MinDuration = 20 * time.Second
	cfg.ResolveTime = 15 * time.Second
	cfg.NoDataTimeout = 30 * time.Second
	h := &harness{t: t, path: path, cfg: cfg}
	h.start()
	return h
}

func (h *harness) clock() time.Time { h.mu.Lock(); defer h.mu.Unlock(); return h.now }

func (h *harness) start() {
	h.t.Helper()
	h.store = open(h.t, h.path)
	h.rec = &alertstest.Recorder{}
	m, err := alerts.NewMonitor(h.cfg, alertstest.NewLimits(), alerts.Options{Store: h.store, Notifier: h.rec, Now: h.clock})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := m.Restore(h.t.Context()); err != nil {
		h.t.Fatal(err)
	}
	h.mon = m
}

// stop closes the store; flush=false models kill -9 (only what was already
// committed survives).
func (h *harness) stop(flush bool) {
	h.t.Helper()
	if flush {
		if err := h.mon.Flush(h.t.Context()); err != nil {
			h.t.Fatal(err)
		}
	}
	if err := h.store.Close(); err != nil {
		h.t.Fatal(err)
	}
}

// readings: n 1-s records at db from local time hh:mm:ss on 2025-03-14.
func readings(from string, n int, db float64) []alerts.Reading {
	t0, err := time.ParseInLocation("2006-01-02 15:04:05", "2025-03-14 "+from, loc)
	if err != nil {
		panic(err)
	}
	out := make([]alerts.Reading, n)
	for i := range out {
		out[i] = alerts.Reading{
			SensorInfo: alerts.SensorInfo{Sensor: "lapa-bar-01", Gateway: "gw-lapa-1", Municipality: "lapa",
				Zone: "outras", EstablishmentType: "bar", Establishment: "Bar do Zé", Grade: "class1"},
			T: t0.Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: db + float64(i%3)*0.4, LAFmax: db + 9, LAFmin: db - 4,
		}
	}
	return out
}

func (h *harness) feed(rs []alerts.Reading) {
	h.t.Helper()
	for _, r := range rs {
		h.mu.Lock()
		h.now = r.End()
		h.mu.Unlock()
		if err := h.mon.Observe(h.t.Context(), r); err != nil {
			h.t.Fatal(err)
		}
		if err := h.mon.Tick(h.t.Context(), r.End()); err != nil {
			h.t.Fatal(err)
		}
	}
}

type dump struct {
	Alerts []alerts.Alert
	Events map[string][]alerts.Event
}

func (h *harness) dump() dump {
	h.t.Helper()
	as, err := h.store.ListAlerts(h.t.Context(), alertstore.Filter{Limit: 1000})
	if err != nil {
		h.t.Fatal(err)
	}
	d := dump{Alerts: as, Events: map[string][]alerts.Event{}}
	for _, a := range as {
		evs, err := h.store.AlertEvents(h.t.Context(), a.ID)
		if err != nil {
			h.t.Fatal(err)
		}
		d.Events[a.ID] = evs
	}
	return d
}

// script: quiet evening, a night exceedance from 22:00 (62 dB against 60),
// then quiet again.
func script() []alerts.Reading {
	var rs []alerts.Reading
	rs = append(rs, readings("21:59:30", 30, 62)...) // compliant by day
	rs = append(rs, readings("22:00:00", 60, 62)...) // exceeding at night: pending 22:00:00, firing 22:00:20
	rs = append(rs, readings("22:01:00", 60, 50)...) // quiet: resolved
	return rs
}

// TestRestartIsInvisible: a monitor restarted at any cut point — cleanly or
// as after kill -9 with the ingest replaying every stored reading — ends
// with exactly the alerts and transitions of an uninterrupted run.
func TestRestartIsInvisible(t *testing.T) {
	rs := script()
	ref := newHarness(t, filepath.Join(t.TempDir(), "ref.db"))
	ref.feed(rs)
	want := ref.dump()
	ref.stop(true)
	if len(want.Alerts) != 1 || want.Alerts[0].State != alerts.StateResolved || len(want.Events[want.Alerts[0].ID]) != 3 {
		t.Fatalf("reference run: %+v", want)
	}

	cuts := []struct {
		name string
		at   int // readings fed before the restart
	}{
		{"before the night", 20},
		{"at 22:00:00", 30},
		{"mid-pending", 40},
		{"just after firing", 51},
		{"mid-firing", 70},
		{"mid-resolving", 100},
		{"after resolution", 140},
	}
	for _, cut := range cuts {
		for _, mode := range []string{"clean", "kill-9"} {
			t.Run(cut.name+"/"+mode, func(t *testing.T) {
				h := newHarness(t, filepath.Join(t.TempDir(), "cases.db"))
				h.feed(rs[:cut.at])
				h.stop(mode == "clean")
				h.start()
				defer h.stop(true)
				// The ingest replays from what the monitor last saw; after a
				// kill it may replay everything: both are fine.
				from := cut.at
				if mode == "kill-9" {
					from = 0
				}
				h.feed(rs[from:])
				got := h.dump()
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("after restart (-uninterrupted +restarted):\n%s", d)
				}
			})
		}
	}
}

// TestRestartKeepsFiringAlert: a firing alert restored after a restart keeps
// its id and resolves as the same alert.
func TestRestartKeepsFiringAlert(t *testing.T) {
	rs := script()
	h := newHarness(t, filepath.Join(t.TempDir(), "cases.db"))
	h.feed(rs[:70]) // firing
	st, ok := h.mon.Status("lapa-bar-01")
	if !ok || st.Status != alerts.StatusFiring {
		t.Fatalf("before restart: %+v", st)
	}
	id := st.Open.ID
	h.stop(false)
	h.start()
	defer h.stop(true)
	st, _ = h.mon.Status("lapa-bar-01")
	if st.Status != alerts.StatusFiring || st.Open == nil || st.Open.ID != id {
		t.Fatalf("after restart: %+v, want firing %s", st, id)
	}
	h.feed(rs[70:])
	evs := h.rec.Events()
	if len(evs) != 1 || evs[0].Kind != alerts.EventResolved || evs[0].Alert.ID != id {
		t.Fatalf("after restart notified %+v, want one resolved for %s", evs, id)
	}
	all, err := h.store.ListAlerts(t.Context(), alertstore.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].ID != id || all[0].State != alerts.StateResolved {
		t.Fatalf("stored %+v", all)
	}
}

// TestNoDataSurvivesRestart: an open data gap stays open across a restart
// and closes once when data comes back.
func TestNoDataSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	rs := readings("10:00:00", 5, 50)
	h := newHarness(t, filepath.Join(t.TempDir(), "cases.db"))
	h.feed(rs)
	if err := h.mon.GatewayStatus(ctx, "gw-lapa-1", false); err != nil {
		t.Fatal(err)
	}
	h.stop(false)
	h.start()
	defer h.stop(true)
	if st, _ := h.mon.Status("lapa-bar-01"); st.Status != alerts.StatusNoData || st.Gap.Reason != alerts.ReasonGatewayOffline {
		t.Fatalf("after restart: %+v", st)
	}
	h.feed(readings("10:05:00", 1, 50))
	gaps, err := h.store.ListAlerts(ctx, alertstore.Filter{Kind: alerts.KindNoData})
	if err != nil {
		t.Fatal(err)
	}
	if len(gaps) != 1 || gaps[0].State != alerts.StateResolved || gaps[0].Resolution != alerts.ResolutionDataBack {
		t.Fatalf("gaps %+v", gaps)
	}
}

func openStore(tb testing.TB, path string) (*alertstore.Store, error) {
	return alertstore.Open(tb.Context(), path)
}
