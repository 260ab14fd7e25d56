// Package notify is the delivery shell around the pure engine of
// alerts/notify: it takes the alert monitor's transitions and the fiscais'
// acknowledgements (never blocking them), steps the engine, and delivers
// what it decides — e-mail (SMTP with STARTTLS/TLS and auth, or .eml files
// in a folder), signed JSON webhooks and Web Push — from a durable SQLite
// outbox, one worker per receiver, with per-receiver timeouts, retries with
// exponential backoff, and every outcome in the alert's notification
// history and in /metrics. Settings come from the database (edited in the
// dashboard) or from a YAML file (docs/notifications.md).
//
// Durability: the engine's state, the outbox rows and the history lines
// of one step are written in one transaction; a delivery is marked sent
// only after the receiver accepted it, so a restart loses nothing pending
// (a delivery cut short by a crash is sent again: at least once). Inputs
// received but not yet stepped when the process dies are rebuilt at start
// from the case store (open alerts, acknowledgements).
package notify

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
)

// AlertSource is the case store as reconciliation needs it.
type AlertSource interface {
	// OpenAlerts returns the firing exceedances and the open no_data alerts.
	OpenAlerts(ctx context.Context) ([]alerts.Alert, error)
	// Alert returns one alert; ok is false if unknown.
	Alert(ctx context.Context, id string) (a alerts.Alert, ok bool, err error)
}

// Options configure a Service.
type Options struct {
	Path string // the database file (FileName in the data dir)
	// ConfigFile, if set, is the settings' source (YAML, reloaded when it
	// changes); the dashboard then shows them read-only.
	ConfigFile string
	// Defaults are the settings used while none are stored (the demo's).
	Defaults *notify.Settings

	Users   func(ctx context.Context) ([]notify.UserRef, error)                          // required
	Alerts  AlertSource                                                                  // nil: no reconciliation at start
	Acks    func(ctx context.Context, alertID string) (by string, acked bool, err error) // nil: none
	Sensors func(sensor string) (notify.SensorDetails, bool)                             // nil: no addresses in messages
	// Municipalities lists the register's municipalities, so that the
	// on-duty view shows those without a schedule too.
	Municipalities func() []string

	Registerer prometheus.Registerer // nil: metrics not exported
	Log        *slog.Logger
	Now        func() time.Time
	// Poll is how often the loops look at the clock besides being woken;
	// default 1 s (the engine's instants are honoured to within Poll).
	Poll time.Duration
	// Retries: MaxAttempts per delivery (default 10), backoff from
	// BackoffBase doubling to BackoffMax (2 s, 10 min).
	MaxAttempts             int
	BackoffBase, BackoffMax time.Duration
	// Transport for webhooks and push; nil: http.DefaultTransport (for
	// push, refusing internal addresses; guard.go).
	Transport http.RoundTripper
	// MaxPushDevices is how many push subscriptions a user may have
	// (default DefaultMaxPushDevices).
	MaxPushDevices int
	// AllowInternalPush accepts push endpoints on internal addresses:
	// only for tests and labs whose push service runs on the LAN.
	AllowInternalPush bool

	// passed, if set (tests), is told each time the engine's loop
	// ("loop") or a receiver's worker ("worker:<receiver>") has done a
	// pass that started at now: what was due at now has been handled.
	passed func(what string, now time.Time)
}

// Service runs the notifications. Create it with Open, run it with Run.
type Service struct {
	o   Options
	st  *store
	log *slog.Logger
	m   *metrics

	qmu   sync.Mutex
	queue []notify.Input
	wake  chan struct{}

	policy   atomic.Pointer[notify.Policy]
	setMu    sync.Mutex // serialises settings changes
	settings notify.Settings
	fileMod  time.Time

	silMu sync.Mutex
	sil   []notify.Silence

	state     *notify.State // the loop's alone after Open
	stateJSON []byte
	next      time.Time

	vapidPub, vapidPriv string

	// sent, if set (benchmarks), is told of every accepted delivery.
	sent func(receiver string, latency time.Duration)

	wmu     sync.Mutex
	workers map[string]*worker
	wctx    context.Context
	wwg     sync.WaitGroup
	running atomic.Bool
}

type worker struct {
	name   string
	poke   chan struct{}
	cancel context.CancelFunc
}

// Open opens the database, loads the settings, the engine's state and the
// silences. It does not start anything.
func Open(ctx context.Context, o Options) (*Service, error) {
	if o.Users == nil {
		return nil, errors.New("notify: Options.Users is required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.MaxPushDevices <= 0 {
		o.MaxPushDevices = DefaultMaxPushDevices
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 2 * time.Second
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 10 * time.Minute
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	st, err := openStore(ctx, o.Path)
	if err != nil {
		return nil, err
	}
	s := &Service{o: o, st: st, log: o.Log, wake: make(chan struct{}, 1), workers: map[string]*worker{}}
	s.m = newMetrics(s, o.Registerer)
	if err := s.loadSettings(ctx); err != nil {
		st.close()
		return nil, err
	}
	s.state = notify.NewState()
	if _, err := st.getKV(ctx, "state", s.state); err != nil {
		st.close()
		return nil, err
	}
	s.stateJSON, _ = json.Marshal(s.state)
	if err := s.refreshSilences(ctx); err != nil {
		st.close()
		return nil, err
	}
	var keys struct{ Public, Private string }
	ok, err := st.getKV(ctx, "vapid", &keys)
	if err != nil {
		st.close()
		return nil, err
	}
	if !ok {
		priv, pub, err := webpush.GenerateVAPIDKeys()
		if err != nil {
			st.close()
			return nil, fmt.Errorf("notify: VAPID keys: %w", err)
		}
		keys.Public, keys.Private = pub, priv
		if err := putKV(ctx, st.db, "vapid", keys, o.Now()); err != nil {
			st.close()
			return nil, err
		}
	}
	s.vapidPub, s.vapidPriv = keys.Public, keys.Private
	return s, nil
}

// Close closes the database (after Run returned).
func (s *Service) Close() error { return s.st.close() }

// Notify queues an alert transition for the engine. It never blocks and
// never fails: the alerts monitor and the ingest are not slowed.
func (s *Service) Notify(_ context.Context, e alerts.Event) error {
	switch e.Kind {
	case alerts.EventFiring, alerts.EventNoData, alerts.EventResolved, alerts.EventDataBack, alerts.EventCancelled:
	default:
		return nil // pending: nothing to tell anyone yet
	}
	s.enqueue(notify.Input{Event: &e, ReceivedAt: s.o.Now()})
	return nil
}

// Ack queues an acknowledgement (the dashboard's "Reconhecer").
func (s *Service) Ack(alertID, by string, at time.Time) {
	s.enqueue(notify.Input{Ack: &notify.Ack{AlertID: alertID, By: by, At: at}, ReceivedAt: s.o.Now()})
}

func (s *Service) enqueue(in notify.Input) {
	s.qmu.Lock()
	s.queue = append(s.queue, in)
	s.qmu.Unlock()
	s.m.queued.Inc()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Service) drain(max int) []notify.Input {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	n := min(len(s.queue), max)
	out := slices.Clone(s.queue[:n])
	s.queue = s.queue[n:]
	if len(s.queue) == 0 {
		s.queue = nil
	}
	return out
}

func (s *Service) requeue(ins []notify.Input) {
	s.qmu.Lock()
	s.queue = append(ins, s.queue...)
	s.qmu.Unlock()
}

// QueueLen is how many inputs wait for the engine.
func (s *Service) QueueLen() int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.queue)
}

// Run reconciles with the case store, then steps the engine and runs one
// delivery worker per receiver until ctx ends. It returns nil on
// cancellation.
func (s *Service) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("notify: Run called twice")
	}
	if err := s.reconcile(ctx); err != nil {
		s.log.Warn("notificações: reconciliação com os alertas falhou; segue com o estado salvo", "erro", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	s.wmu.Lock()
	s.wctx = gctx
	s.wmu.Unlock()
	s.syncWorkers()
	g.Go(func() error { return s.loop(gctx) })
	if s.o.ConfigFile != "" {
		g.Go(func() error { return s.watchFile(gctx) })
	}
	err := g.Wait()
	s.wwg.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// reconcile rebuilds the inputs lost in a crash: alerts that opened or
// closed, and acknowledgements, while the service was not listening.
func (s *Service) reconcile(ctx context.Context) error {
	if s.o.Alerts == nil {
		return nil
	}
	open, err := s.o.Alerts.OpenAlerts(ctx)
	if err != nil {
		return err
	}
	now := s.o.Now()
	isOpen := map[string]bool{}
	var ins []notify.Input
	for _, a := range open {
		isOpen[a.ID] = true
		if s.state.Alerts[a.ID] != nil {
			continue
		}
		k := alerts.EventFiring
		if a.Kind == alerts.KindNoData {
			k = alerts.EventNoData
		}
		ins = append(ins, notify.Input{Event: &alerts.Event{Kind: k, At: now, Alert: a}, ReceivedAt: now})
	}
	ids := make([]string, 0, len(s.state.Alerts))
	for id := range s.state.Alerts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if isOpen[id] {
			continue
		}
		a, ok, err := s.o.Alerts.Alert(ctx, id)
		if err != nil {
			return err
		}
		if !ok || (a.State != alerts.StateResolved && a.State != alerts.StateCancelled) {
			continue
		}
		k := alerts.EventResolved
		if a.Kind == alerts.KindNoData {
			k = alerts.EventDataBack
		}
		ins = append(ins, notify.Input{Event: &alerts.Event{Kind: k, At: now, Alert: a}, ReceivedAt: now})
	}
	if s.o.Acks != nil {
		for id := range isOpen {
			by, acked, err := s.o.Acks(ctx, id)
			if err != nil {
				return err
			}
			if acked {
				ins = append(ins, notify.Input{Ack: &notify.Ack{AlertID: id, By: by, At: now}, ReceivedAt: now})
			}
		}
	}
	if len(ins) > 0 {
		s.requeue(ins)
		s.log.Info("notificações: reconciliadas com os alertas", "entradas", len(ins))
	}
	return nil
}

func (s *Service) loop(ctx context.Context) error {
	for {
		start := s.o.Now()
		ins := s.drain(512)
		if err := s.process(ctx, ins); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.requeue(ins)
			s.log.Error("notificações: falha ao gravar; nova tentativa em instantes", "erro", err)
		} else {
			s.pass("loop", start)
		}
		if s.QueueLen() > 0 {
			continue
		}
		wait := s.o.Poll
		if !s.next.IsZero() {
			if d := s.next.Sub(s.o.Now()); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// pass tells Options.passed, if set, of a completed pass.
func (s *Service) pass(what string, now time.Time) {
	if s.o.passed != nil {
		s.o.passed(what, now)
	}
}

// process steps the engine over the inputs (or once, for time passing) and
// persists the outcome in one transaction. On failure the engine's state
// is restored, so the inputs can be stepped again.
func (s *Service) process(ctx context.Context, ins []notify.Input) error {
	pol := s.policy.Load()
	now := s.o.Now()
	results := s.step(notify.World{Policy: pol, Silences: s.silencesNow()}, ins, now)
	s.next = results[len(results)-1].Next
	stateJSON, err := json.Marshal(s.state)
	if err != nil {
		return fmt.Errorf("notify: encode state: %w", err)
	}
	if !hasOutcome(results) && string(stateJSON) == string(s.stateJSON) {
		return nil
	}
	receivers := map[string]bool{}
	err = s.st.tx(ctx, func(tx *sql.Tx) error {
		return s.persist(ctx, tx, pol, results, stateJSON, now, receivers)
	})
	if err != nil {
		// Roll the engine back to the stored state.
		back := notify.NewState()
		if uerr := json.Unmarshal(s.stateJSON, back); uerr == nil {
			s.state = back
		}
		return err
	}
	s.stateJSON = stateJSON
	for _, r := range results {
		for _, n := range r.Notifications {
			s.m.notifications.WithLabelValues(string(n.Type)).Inc()
		}
	}
	for r := range receivers {
		s.pokeWorker(r)
	}
	return nil
}

// step runs the engine over each input, or once with none when there are
// no inputs (time passing).
func (s *Service) step(w notify.World, ins []notify.Input, now time.Time) []notify.Result {
	var results []notify.Result
	for _, in := range ins {
		results = append(results, notify.Step(s.state, w, in, now))
	}
	if len(ins) == 0 {
		results = append(results, notify.Step(s.state, w, notify.Input{}, now))
	}
	return results
}

// hasOutcome reports whether any result has notifications, log entries or
// ended silences to store.
func hasOutcome(results []notify.Result) bool {
	for _, r := range results {
		if len(r.Notifications) > 0 || len(r.Log) > 0 || len(r.SilencesEnded) > 0 {
			return true
		}
	}
	return false
}

// persist stores, in tx, the engine's state, the deliveries of each
// notification (marking their receivers), the audit of each ended silence
// and the history.
func (s *Service) persist(ctx context.Context, tx *sql.Tx, pol *notify.Policy, results []notify.Result, stateJSON []byte, now time.Time, receivers map[string]bool) error {
	if err := putKV(ctx, tx, "state", json.RawMessage(stateJSON), now); err != nil {
		return err
	}
	var logs []notify.HistoryEntry
	for _, r := range results {
		for _, e := range r.Log {
			logs = append(logs, notify.HistoryEntry{Entry: e})
		}
		for _, n := range r.Notifications {
			ls, err := s.enqueueDeliveries(ctx, tx, pol, n, now, receivers)
			if err != nil {
				return err
			}
			logs = append(logs, ls...)
		}
		for _, sl := range r.SilencesEnded {
			if err := auditSilence(ctx, tx, silenceEnd(sl)); err != nil {
				return err
			}
		}
		s.m.undeliverable.Add(float64(r.Undeliverable))
	}
	for _, h := range logs {
		if err := insertLog(ctx, tx, h); err != nil {
			return err
		}
	}
	return nil
}

// silenceEnd is the audit entry of a silence that ended: expired at its
// end, or ended early by someone.
func silenceEnd(sl notify.Silence) notify.SilenceAudit {
	action, by, detail := "expired", "", "silêncio expirado"
	if !sl.EndedAt.IsZero() && sl.EndedAt.Before(sl.Ends) {
		action, by, detail = "ended", sl.EndedBy, "silêncio encerrado antes do fim previsto"
	}
	return notify.SilenceAudit{SilenceID: sl.ID, At: sl.End(), Action: action, By: by, Detail: detail}
}

// silencesNow returns the cached silences.
func (s *Service) silencesNow() []notify.Silence {
	s.silMu.Lock()
	defer s.silMu.Unlock()
	return slices.Clone(s.sil)
}

func (s *Service) refreshSilences(ctx context.Context) error {
	list, err := s.st.silences(ctx, s.o.Now().Add(-24*time.Hour))
	if err != nil {
		return err
	}
	s.silMu.Lock()
	s.sil = list
	s.silMu.Unlock()
	return nil
}

func randomID(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func envOr(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
