package alerts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// Options are the optional collaborators of a Monitor.
type Options struct {
	// Store persists states and transitions. nil keeps everything in memory
	// (state is then lost on restart).
	Store StateStore
	// Notifier receives every transition after it is stored. nil drops them.
	Notifier Notifier
	// Logger; nil discards.
	Logger *slog.Logger
	// Now is the wall clock; nil means time.Now.
	Now func() time.Time
	// NewTicker returns a tick channel and its stop function; nil means
	// time.NewTicker.
	NewTicker func(d time.Duration) (<-chan time.Time, func())
}

// Monitor is the stateful shell around Engine: one SensorState per sensor,
// the limit lookup, persistence and notification. It is safe for concurrent
// use; readings of one sensor must be observed in order (the ingest's
// per-sensor order).
type Monitor struct {
	eng       *Engine
	limits    Limits
	store     StateStore
	notifier  Notifier
	log       *slog.Logger
	now       func() time.Time
	newTicker func(time.Duration) (<-chan time.Time, func())

	mu        sync.RWMutex
	sensors   map[string]*entry
	byGateway map[string]map[string]*entry
}

type entry struct {
	mu      sync.Mutex
	st      SensorState
	dirty   bool      // state changed since the last save
	savedAt time.Time // wall time of the last save
	unsaved []Event   // transitions whose save failed; retried first

	// Cached limit: valid for the same code/zone/establishment while the
	// record start lies in [lim.PeriodStart, lim.PeriodEnd).
	cacheOK                        bool
	cacheCode, cacheZone, cacheEst string
	cacheLim                       Limit
	cacheHas                       bool
}

// NewMonitor validates cfg and builds a monitor over limits.
func NewMonitor(cfg Config, limits Limits, opts Options) (*Monitor, error) {
	eng, err := NewEngine(cfg)
	if err != nil {
		return nil, err
	}
	if limits == nil {
		return nil, errors.New("alerts: new monitor: nil limits")
	}
	m := &Monitor{
		eng:       eng,
		limits:    limits,
		store:     opts.Store,
		notifier:  opts.Notifier,
		log:       opts.Logger,
		now:       opts.Now,
		newTicker: opts.NewTicker,
		sensors:   make(map[string]*entry),
		byGateway: make(map[string]map[string]*entry),
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.newTicker == nil {
		m.newTicker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	return m, nil
}

// Restore loads the saved sensor states. Call it once, before the first
// Observe. Open alerts (pending, firing, no_data) continue with their ids.
// Every restored sensor gets a fresh NoDataTimeout from now before it can be
// declared silent, since the service itself was not receiving while down.
func (m *Monitor) Restore(ctx context.Context) error {
	if m.store == nil {
		return nil
	}
	states, err := m.store.LoadStates(ctx)
	if err != nil {
		return fmt.Errorf("alerts: restore: %w", err)
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range states {
		if st.Sensor == "" {
			continue
		}
		// The service itself was not listening while it was down: every
		// sensor gets a fresh NoDataTimeout to reconnect and replay.
		if !st.LastRecv.IsZero() && st.LastRecv.Before(now) {
			st.LastRecv = now
		}
		e := &entry{st: st, savedAt: now}
		m.sensors[st.Sensor] = e
		m.indexGateway(e, st.Info.Gateway)
	}
	m.log.Info("estado dos alertas restaurado", "sensores", len(states))
	return nil
}

// indexGateway must be called with m.mu held.
func (m *Monitor) indexGateway(e *entry, gw string) {
	if gw == "" {
		return
	}
	set := m.byGateway[gw]
	if set == nil {
		set = make(map[string]*entry)
		m.byGateway[gw] = set
	}
	set[e.st.Sensor] = e
}

func (m *Monitor) entry(info SensorInfo) *entry {
	m.mu.RLock()
	e := m.sensors[info.Sensor]
	m.mu.RUnlock()
	if e != nil {
		return e
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e = m.sensors[info.Sensor]; e == nil {
		e = &entry{st: SensorState{Sensor: info.Sensor, Info: info}}
		m.sensors[info.Sensor] = e
		m.indexGateway(e, info.Gateway)
	}
	return e
}

// Expect makes the monitor watch a sensor that has not reported yet (from the
// registry): if nothing arrives within NoDataTimeout of since, it gets a
// no_data alert like any silent sensor.
func (m *Monitor) Expect(info SensorInfo, since time.Time) {
	e := m.entry(info)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.LastRecv.IsZero() {
		e.st.LastRecv = since
		e.st.Info = info
		e.dirty = true
	}
}

// Observe evaluates one durable record. The ingest calls it after the record
// is stored, in record order per sensor. Duplicates and records older than the
// newest one seen are ignored without error. The error reports an invalid
// reading, a failed limit lookup (the sensor then shows status error) or a
// failed save (retried on the next transition or tick).
func (m *Monitor) Observe(ctx context.Context, r Reading) error {
	if err := r.validate(); err != nil {
		return err
	}
	e := m.entry(r.SensorInfo)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.st.LastStart.IsZero() && !r.T.After(e.st.LastStart) {
		e.st.Ignored++
		return nil
	}
	if r.Gateway != "" && r.Gateway != e.st.Info.Gateway {
		m.mu.Lock()
		if old := m.byGateway[e.st.Info.Gateway]; old != nil {
			delete(old, r.Sensor)
		}
		m.indexGateway(e, r.Gateway)
		m.mu.Unlock()
	}
	lim, ok, lerr := m.limitFor(e, r)
	in := RecordInput(r, lim, ok)
	if lerr != nil {
		in.LimitErr = lerr.Error()
	}
	now := m.now()
	var evs []Event
	e.st, evs = m.eng.Step(e.st, in, now)
	e.dirty = true
	var err error
	if len(evs) > 0 || len(e.unsaved) > 0 {
		err = m.commit(ctx, e, evs, now)
	}
	if lerr != nil {
		err = errors.Join(fmt.Errorf("alerts: limit for sensor %s at %s: %w", r.Sensor, r.T.Format(time.RFC3339), lerr), err)
	}
	return err
}

func (m *Monitor) limitFor(e *entry, r Reading) (Limit, bool, error) {
	code := r.code()
	if e.cacheOK && e.cacheCode == code && e.cacheZone == r.Zone && e.cacheEst == r.EstablishmentType &&
		!r.T.Before(e.cacheLim.PeriodStart) && r.T.Before(e.cacheLim.PeriodEnd) {
		return e.cacheLim, e.cacheHas, nil
	}
	lim, ok, err := m.limits.LimitAt(code, r.Zone, r.EstablishmentType, r.Mechanism, r.T)
	if err != nil {
		e.cacheOK = false
		return Limit{}, false, err
	}
	// Cache only a limit that says for how long it holds.
	e.cacheOK = !lim.PeriodStart.IsZero() && lim.PeriodEnd.After(lim.PeriodStart) &&
		!r.T.Before(lim.PeriodStart) && r.T.Before(lim.PeriodEnd)
	e.cacheCode, e.cacheZone, e.cacheEst, e.cacheLim, e.cacheHas = code, r.Zone, r.EstablishmentType, lim, ok
	return lim, ok, nil
}

// commit saves e's state with its pending transitions, then notifies. It must
// be called with e.mu held.
func (m *Monitor) commit(ctx context.Context, e *entry, evs []Event, now time.Time) error {
	all := append(e.unsaved, evs...)
	if m.store != nil {
		if err := m.store.SaveStates(ctx, []Change{{State: e.st, Events: all}}); err != nil {
			e.unsaved = all
			return fmt.Errorf("alerts: save sensor %s: %w", e.st.Sensor, err)
		}
	}
	e.unsaved, e.dirty, e.savedAt = nil, false, now
	m.notify(ctx, all)
	return nil
}

func (m *Monitor) notify(ctx context.Context, evs []Event) {
	for _, ev := range evs {
		m.log.Info("alerta mudou de estado", "sensor", ev.Alert.Sensor, "alerta", ev.Alert.ID, "evento", string(ev.Kind))
		if m.notifier == nil {
			continue
		}
		if err := m.notifier.Notify(ctx, ev); err != nil {
			m.log.Warn("falha ao notificar o alerta", "alerta", ev.Alert.ID, "evento", string(ev.Kind), "erro", err)
		}
	}
}

// GatewayStatus applies a gateway's reported state (status topic or Will) to
// all its sensors: offline opens a no_data alert (reason gateway_offline) for
// each sensor without one.
func (m *Monitor) GatewayStatus(ctx context.Context, gateway string, online bool) error {
	m.mu.RLock()
	es := sortedEntries(m.byGateway[gateway])
	m.mu.RUnlock()
	var errs []error
	for _, e := range es {
		e.mu.Lock()
		now := m.now()
		var evs []Event
		e.st, evs = m.eng.Step(e.st, GatewayInput(online), now)
		e.dirty = true
		if len(evs) > 0 || len(e.unsaved) > 0 {
			errs = append(errs, m.commit(ctx, e, evs, now))
		}
		e.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Tick checks every sensor for silence at now, retries failed saves, and
// saves the snapshots of sensors changed more than SnapshotEvery ago in one
// batch.
func (m *Monitor) Tick(ctx context.Context, now time.Time) error {
	m.mu.RLock()
	es := sortedEntries(m.sensors)
	m.mu.RUnlock()
	var errs []error
	var batch []Change
	var batched []*entry
	for _, e := range es {
		e.mu.Lock()
		var evs []Event
		e.st, evs = m.eng.Step(e.st, TickInput(), now)
		switch {
		case len(evs) > 0 || len(e.unsaved) > 0:
			e.dirty = true
			errs = append(errs, m.commit(ctx, e, evs, now))
		case e.dirty && now.Sub(e.savedAt) >= m.eng.cfg.SnapshotEvery:
			batch = append(batch, Change{State: e.st.Clone()})
			batched = append(batched, e)
		}
		e.mu.Unlock()
	}
	if len(batch) > 0 && m.store != nil {
		if err := m.store.SaveStates(ctx, batch); err != nil {
			errs = append(errs, fmt.Errorf("alerts: save %d snapshots: %w", len(batch), err))
			batched = nil
		}
	}
	for i, e := range batched {
		e.mu.Lock()
		if e.st.Seq == batch[i].State.Seq {
			e.dirty = false
		}
		e.savedAt = now
		e.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Flush saves every changed snapshot now, whatever its age (on shutdown).
func (m *Monitor) Flush(ctx context.Context) error {
	if m.store == nil {
		return nil
	}
	m.mu.RLock()
	es := sortedEntries(m.sensors)
	m.mu.RUnlock()
	var batch []Change
	var batched []*entry
	for _, e := range es {
		e.mu.Lock()
		if e.dirty || len(e.unsaved) > 0 {
			batch = append(batch, Change{State: e.st.Clone(), Events: append([]Event(nil), e.unsaved...)})
			batched = append(batched, e)
		}
		e.mu.Unlock()
	}
	if len(batch) == 0 {
		return nil
	}
	if err := m.store.SaveStates(ctx, batch); err != nil {
		return fmt.Errorf("alerts: flush %d snapshots: %w", len(batch), err)
	}
	now := m.now()
	for i, e := range batched {
		e.mu.Lock()
		if e.st.Seq == batch[i].State.Seq {
			e.dirty = false
		}
		e.savedAt = now
		if n := len(batch[i].Events); n > 0 && len(e.unsaved) >= n {
			sent := e.unsaved[:n]
			e.unsaved = e.unsaved[n:]
			m.notify(ctx, sent)
		}
		e.mu.Unlock()
	}
	return nil
}

// Run ticks every TickEvery until ctx ends, then flushes the snapshots. It
// returns nil on cancellation; tick errors are logged, not fatal.
func (m *Monitor) Run(ctx context.Context) error {
	c, stop := m.newTicker(m.eng.cfg.TickEvery)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := m.Flush(fctx); err != nil {
				return err
			}
			return nil
		case <-c:
			if err := m.Tick(ctx, m.now()); err != nil {
				m.log.Warn("falha na avaliação periódica dos alertas", "erro", err)
			}
		}
	}
}

// SensorStatus is a sensor's live view for the dashboard.
type SensorStatus struct {
	SensorInfo
	Status   Status    `json:"status"`
	LAeq     float64   `json:"laeq_db"`   // newest window LAeq
	LAFmax   float64   `json:"lafmax_db"` // newest window LAFmax
	Limit    *Limit    `json:"limit,omitempty"`
	LastEnd  time.Time `json:"last_end,omitzero"`
	LastRecv time.Time `json:"last_recv,omitzero"`
	Open     *Alert    `json:"open,omitempty"`
	Gap      *Alert    `json:"gap,omitempty"`
	Error    string    `json:"error,omitempty"`
}

func statusOf(st *SensorState) SensorStatus {
	c := st.Clone()
	s := SensorStatus{SensorInfo: c.Info, Status: c.Status(), LAeq: c.LAeq, LAFmax: c.LAFmax,
		LastEnd: c.LastEnd, LastRecv: c.LastRecv, Open: c.Open, Gap: c.Gap, Error: c.LimitErr}
	s.Sensor = c.Sensor
	if c.HasLimit {
		s.Limit = &c.Limit
	}
	return s
}

// Status returns a sensor's live status.
func (m *Monitor) Status(sensor string) (SensorStatus, bool) {
	m.mu.RLock()
	e := m.sensors[sensor]
	m.mu.RUnlock()
	if e == nil {
		return SensorStatus{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return statusOf(&e.st), true
}

// Statuses returns every sensor's live status, sorted by sensor id.
func (m *Monitor) Statuses() []SensorStatus {
	m.mu.RLock()
	es := sortedEntries(m.sensors)
	m.mu.RUnlock()
	out := make([]SensorStatus, 0, len(es))
	for _, e := range es {
		e.mu.Lock()
		out = append(out, statusOf(&e.st))
		e.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sensor < out[j].Sensor })
	return out
}

// LastSeen returns the end of the newest record evaluated for a sensor, so
// that after a restart the caller can replay stored readings from there.
func (m *Monitor) LastSeen(sensor string) (time.Time, bool) {
	m.mu.RLock()
	e := m.sensors[sensor]
	m.mu.RUnlock()
	if e == nil {
		return time.Time{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.st.LastEnd, !e.st.LastEnd.IsZero()
}

// sortedEntries returns the entries of set in sensor-id order, so that
// walks over many sensors (ticks, gateway status, flushes) emit their
// transitions in a deterministic order. The caller holds m.mu.
func sortedEntries(set map[string]*entry) []*entry {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	es := make([]*entry, len(keys))
	for i, k := range keys {
		es[i] = set[k]
	}
	return es
}
