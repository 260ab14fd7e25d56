package notify

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
)

// clock is an injected wall clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var saoPaulo, _ = time.LoadLocation("America/Sao_Paulo")

// t0 is a Tuesday 20:00 in Lapa: fiscal-b is on the night shift.
var t0 = time.Date(2026, 11, 24, 20, 0, 0, 0, saoPaulo)

var testUsers = []notify.UserRef{{Name: "fiscal-a", Role: "fiscal"}, {Name: "fiscal-b", Role: "fiscal"}, {Name: "coord", Role: "admin"}}

func baseSettings() notify.Settings {
	all := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	return notify.Settings{
		PublicURL: "https://sossego.lapa.pr.gov.br",
		Municipalities: []notify.Municipality{{ID: "lapa", Coordinator: "coord", EscalateAfterMin: 15, Weekly: []notify.Shift{
			{Days: all, From: "07:00", To: "19:00", User: "fiscal-a"},
			{Days: all, From: "19:00", To: "07:00", User: "fiscal-b"},
		}}},
		Contacts: []notify.Contact{{User: "fiscal-a", Email: "fiscal-a@lapa.pr.gov.br", Phone: "+5541999990001"},
			{User: "fiscal-b", Email: "fiscal-b@lapa.pr.gov.br", Phone: "+5541999990002"},
			{User: "coord", Email: "coord@lapa.pr.gov.br"}},
	}
}

// fakeAlerts is a case store for reconciliation.
type fakeAlerts struct {
	mu   sync.Mutex
	all  map[string]alerts.Alert
	acks map[string]string
}

func (f *fakeAlerts) OpenAlerts(context.Context) ([]alerts.Alert, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []alerts.Alert
	for _, a := range f.all {
		if a.State == alerts.StateFiring {
			out = append(out, a)
		}
	}
	return out, nil
}

func (f *fakeAlerts) Alert(_ context.Context, id string) (alerts.Alert, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.all[id]
	return a, ok, nil
}

func (f *fakeAlerts) ack(_ context.Context, id string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	by, ok := f.acks[id]
	return by, ok, nil
}

type harness struct {
	passes *passes
	t      *testing.T
	svc    *Service
	clock  *clock
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan error
	path   string
}

func details(sensor string) (notify.SensorDetails, bool) {
	return notify.SensorDetails{Address: "Rua XV de Novembro, 100, Centro, Lapa - PR", Establishment: "Bar do Tropeiro Ltda",
		EstablishmentAddress: "Rua XV de Novembro, 98, Centro, Lapa - PR", Gateway: "lapa-centro-01"}, sensor != ""
}

// start opens and runs a service on path (a fresh one when "").
func start(t *testing.T, path string, clk *clock, mod func(*Options)) *harness {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), FileName)
	}
	if clk == nil {
		clk = &clock{t: t0}
	}
	reg := prometheus.NewRegistry()
	ps := &passes{n: map[string]int{}, last: map[string]time.Time{}}
	o := Options{Path: path, Users: func(context.Context) ([]notify.UserRef, error) { return testUsers, nil }, Sensors: details,
		Registerer: reg, Now: clk.Now, Poll: 5 * time.Millisecond, BackoffBase: time.Second, BackoffMax: time.Minute,
		passed: ps.record}
	if mod != nil {
		mod(&o)
	}
	svc, err := Open(context.Background(), o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	h := &harness{passes: ps, t: t, svc: svc, clock: clk, reg: reg, done: make(chan error, 1), path: path}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- svc.Run(ctx) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Errorf("run: %v", err)
	}
	h.svc.Close()
	h.cancel = nil
}

func (h *harness) put(set notify.Settings) {
	h.t.Helper()
	if _, err := h.svc.PutSettings(context.Background(), set, "admin"); err != nil {
		h.t.Fatalf("settings: %v", err)
	}
}

func firing(sensor string, at time.Time) alerts.Event {
	id := sensor + "/" + at.UTC().Format("2006-01-02T15:04:05.000Z")
	return alerts.Event{Kind: alerts.EventFiring, At: at, Alert: alerts.Alert{ID: id, Kind: alerts.KindExceedance, State: alerts.StateFiring,
		SensorInfo: alerts.SensorInfo{Sensor: sensor, Gateway: "lapa-centro-01", Municipality: "lapa", Code: "lapa",
			Establishment: "Bar do Tropeiro Ltda"},
		LAeqDB: 72.4, LimitDB: 60, MarginDB: 1.1, Article: "Art. 96", CodeID: "lapa", CodeVersion: "2004",
		PeriodLabel: "período noturno (22:00–07:00)", PendingAt: at.Add(-2 * time.Minute), FiringAt: at}}
}

// waitHistory polls the alert's history until it has an entry of kind
// (for user, if given) and returns the history.
func (h *harness) waitHistory(alertID string, kind notify.EntryKind, user string) []notify.HistoryEntry {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		hs, err := h.svc.History(context.Background(), alertID)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, e := range hs {
			if e.Kind == kind && (user == "" || e.User == user) {
				return hs
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no %s entry for %q in the history of %s:\n%s", kind, user, alertID, dump(hs))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func dump(hs []notify.HistoryEntry) string {
	var b strings.Builder
	for _, e := range hs {
		b.WriteString(string(e.Kind) + " " + e.User + " " + e.Receiver + " " + e.Detail + "\n")
	}
	return b.String()
}

func (h *harness) counter(name string, labels ...string) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
		}
	}
	return 0
}

// waitFor polls cond with a generous deadline.
// passes records the service's completed passes (Options.passed).
type passes struct {
	mu   sync.Mutex
	n    map[string]int       // passes done, by loop or worker
	last map[string]time.Time // the clock at the start of the latest
}

func (p *passes) record(what string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n[what]++
	p.last[what] = now
}

func (p *passes) get(what string) (int, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[what], p.last[what]
}

// settled waits until everything due at the clock's present time has been
// handled: the engine's loop has done a pass that started at it or later
// (what it queued is in the outbox), and then each receiver's worker has
// done a whole pass that started after that (what was due went out). A
// test asserting that nothing happened asserts it after this.
func (h *harness) settled(receivers ...string) {
	h.t.Helper()
	now := h.clock.Now()
	waitFor(h.t, "a pass of the engine's loop", func() bool {
		n, last := h.passes.get("loop")
		return n > 0 && !last.Before(now)
	})
	for _, r := range receivers {
		c, _ := h.passes.get("worker:" + r)
		waitFor(h.t, "a pass of the "+r+" worker", func() bool {
			n, _ := h.passes.get("worker:" + r)
			return n >= c+2
		})
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newTestLogger(w io.Writer, mu *sync.Mutex) *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{w, mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
