package alerts

import (
	"errors"
	"time"

	"github.com/sossego/sossego/internal/level"
)

// ErrInvalidReading marks a reading the monitor cannot evaluate (empty
// sensor, zero time, non-positive duration, non-finite level).
var ErrInvalidReading = errors.New("alerts: invalid reading")

// InputKind says what an Input carries.
type InputKind int

// Input kinds.
const (
	InputRecord  InputKind = iota + 1 // a new record and the limit in force at its start
	InputTick                         // time passes: check for silence
	InputGateway                      // the sensor's gateway reported online or offline
)

// Input is one thing that happens to a sensor.
type Input struct {
	Kind InputKind

	// InputRecord.
	Reading  Reading
	Limit    Limit
	HasLimit bool   // false: the code sets no numeric limit at Reading.T
	LimitErr string // non-empty: the limit lookup failed with this message

	// InputGateway.
	Online bool
}

// RecordInput is the input for a record evaluated against lim (ok=false: no
// numeric limit).
func RecordInput(r Reading, lim Limit, ok bool) Input {
	return Input{Kind: InputRecord, Reading: r, Limit: lim, HasLimit: ok}
}

// TickInput is the input for a clock tick.
func TickInput() Input { return Input{Kind: InputTick} }

// GatewayInput is the input for a gateway status change.
func GatewayInput(online bool) Input { return Input{Kind: InputGateway, Online: online} }

// Engine is the pure lifecycle core. Build it with NewEngine.
type Engine struct {
	cfg Config
}

// NewEngine validates cfg and returns the engine.
func NewEngine(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Engine{cfg: cfg}, nil
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Step applies one input to a sensor's state and returns the new state and
// the transitions it caused, oldest first. It does no I/O and reads no clock:
// now is the caller's wall clock, used only for receive-time bookkeeping and
// data gaps. Step takes ownership of s: the returned state may share memory
// with it (the window is reused), so the caller must keep only the result.
// The rules are in the package documentation.
func (e *Engine) Step(s SensorState, in Input, now time.Time) (SensorState, []Event) {
	switch in.Kind {
	case InputRecord:
		return e.record(s, in, now)
	case InputTick:
		return e.tick(s, now)
	case InputGateway:
		return e.gateway(s, in.Online, now)
	}
	return s, nil
}

func (e *Engine) record(s SensorState, in Input, now time.Time) (SensorState, []Event) {
	r := in.Reading
	if r.validate() != nil || (!s.LastStart.IsZero() && !r.T.After(s.LastStart)) {
		s.Ignored++
		return s, nil
	}
	s.Seq++
	s.Evaluated++
	if s.Sensor == "" {
		s.Sensor = r.Sensor
	}
	meterChanged := !s.LastStart.IsZero() && s.Info.Grade != r.Grade
	s.Info = r.SensorInfo
	evs := dataBack(&s, r, now)
	s.GatewayOffline = false
	s.LastStart, s.LastEnd, s.LastRecv = r.T, r.End(), now

	if meterChanged {
		// Another instrument (or grade): its records and margin do not mix
		// with the previous one's.
		evs = e.closeOpen(&s, ResolutionMeterChanged, r.T, evs)
		s.Window = s.Window[:0]
	}
	evs, judged := e.takeLimit(&s, in, evs)
	if !judged {
		return s, evs
	}
	laeq, lafmax, winStart := e.slide(&s, r)
	return s, e.advance(&s, r, now, laeq, lafmax, winStart, evs)
}

// dataBack resolves the sensor's no-data alert, if one is open, at the
// reading that ends the gap.
func dataBack(s *SensorState, r Reading, now time.Time) []Event {
	if s.Gap == nil {
		return nil
	}
	g := *s.Gap
	g.State = StateResolved
	g.ResolvedAt = now
	g.WindowEnd = r.T
	if g.WindowEnd.Before(g.WindowStart) {
		g.WindowEnd = g.WindowStart
	}
	g.Resolution = ResolutionDataBack
	s.Gap = nil
	return []Event{{Kind: EventDataBack, At: now, Alert: g}}
}

// takeLimit brings the limit in force for the reading into the state,
// closing what an error, the lack of a limit or a change of regime ends.
// judged is false when there is no limit to judge the reading by.
func (e *Engine) takeLimit(s *SensorState, in Input, evs []Event) (_ []Event, judged bool) {
	r := in.Reading
	switch {
	case in.LimitErr != "":
		evs = e.closeOpen(s, ResolutionLimitError, r.T, evs)
		s.Window, s.HasLimit, s.Limit, s.LimitErr = s.Window[:0], false, Limit{}, in.LimitErr
		return evs, false
	case !in.HasLimit:
		evs = e.closeOpen(s, ResolutionNoLimit, r.T, evs)
		s.Window, s.HasLimit, s.Limit, s.LimitErr = s.Window[:0], false, Limit{}, ""
		return evs, false
	case !s.HasLimit || !sameRegime(s.Limit, in.Limit):
		at := r.T
		if s.HasLimit && !s.Limit.PeriodEnd.IsZero() && !s.Limit.PeriodEnd.After(r.T) {
			at = s.Limit.PeriodEnd
		}
		evs = e.closeOpen(s, ResolutionPeriodEnd, at, evs)
		s.Window = s.Window[:0]
		s.Limit, s.HasLimit = in.Limit, true
	}
	s.LimitErr = ""
	return evs, true
}

// slide adds the reading to the rolling window, keeps the records starting
// in [end − Window, end), and returns the window's LAeq, LAFmax and start.
func (e *Engine) slide(s *SensorState, r Reading) (laeq, lafmax float64, start time.Time) {
	s.Window = append(s.Window, newSample(r.T, r.DurMs, r.LAeq, r.LAFmax))
	from := r.End().Add(-e.cfg.Window)
	drop := 0
	for drop < len(s.Window)-1 && s.Window[drop].T.Before(from) {
		drop++
	}
	if drop > 0 {
		n := copy(s.Window, s.Window[drop:])
		s.Window = s.Window[:n]
	}
	var energy, durMs float64
	lafmax = s.Window[0].LAFmax
	for _, w := range s.Window {
		energy += w.energy
		durMs += float64(w.DurMs)
		if w.LAFmax > lafmax {
			lafmax = w.LAFmax
		}
	}
	laeq = level.FromEnergy(energy / durMs)
	s.LAeq, s.LAFmax = laeq, lafmax
	return laeq, lafmax, s.Window[0].T
}

// advance moves the exceedance lifecycle (none → pending → firing →
// resolved, or pending → cancelled) by the window's new levels.
func (e *Engine) advance(s *SensorState, r Reading, now time.Time, laeq, lafmax float64, winStart time.Time, evs []Event) []Event {
	end := r.End()
	margin, _ := e.cfg.margin(r.Grade)
	exceeds := laeq-margin > s.Limit.DB
	quiet := laeq < s.Limit.DB-e.cfg.HysteresisDB

	if s.Open == nil {
		if !exceeds {
			return evs
		}
		a := e.newExceedance(*s, r, margin)
		a.LAeqDB, a.LAFmaxDB, a.WindowStart, a.WindowEnd = laeq, lafmax, winStart, end
		a.PeakLAeqDB, a.PeakLAFmaxDB = laeq, lafmax
		if r.ClockUnsynced {
			a.UnsyncedRecords = 1
		}
		s.Open = &a
		evs = append(evs, Event{Kind: EventPending, At: r.T, Alert: a})
	} else if r.ClockUnsynced {
		s.Open.UnsyncedRecords++
	}
	a := s.Open
	a.PeakLAeqDB = max(a.PeakLAeqDB, laeq)
	a.PeakLAFmaxDB = max(a.PeakLAFmaxDB, lafmax)
	switch a.State {
	case StatePending:
		if !exceeds {
			a.State, a.ResolvedAt, a.Resolution = StateCancelled, end, ResolutionBelowLimit
			evs = append(evs, Event{Kind: EventCancelled, At: end, Alert: *a})
			s.Open = nil
			return evs
		}
		a.LAeqDB, a.LAFmaxDB, a.WindowStart, a.WindowEnd = laeq, lafmax, winStart, end
		if end.Sub(a.PendingAt) >= e.cfg.MinDuration {
			a.State, a.FiringAt, a.DetectedAt = StateFiring, end, now
			s.BelowSince = time.Time{}
			evs = append(evs, Event{Kind: EventFiring, At: end, Alert: *a})
		}
	case StateFiring:
		if !quiet {
			s.BelowSince = time.Time{}
			return evs
		}
		if s.BelowSince.IsZero() {
			s.BelowSince = r.T
		}
		if end.Sub(s.BelowSince) >= e.cfg.ResolveTime {
			a.State, a.ResolvedAt, a.Resolution = StateResolved, end, ResolutionQuiet
			evs = append(evs, Event{Kind: EventResolved, At: end, Alert: *a})
			s.Open, s.BelowSince = nil, time.Time{}
		}
	}
	return evs
}

func (e *Engine) newExceedance(s SensorState, r Reading, margin float64) Alert {
	_, screening := e.cfg.margin(r.Grade)
	l := s.Limit
	return Alert{
		ID:          r.Sensor + "/" + stamp(r.T),
		Kind:        KindExceedance,
		State:       StatePending,
		SensorInfo:  r.SensorInfo,
		Screening:   screening,
		CodeID:      l.CodeID,
		CodeVersion: l.CodeVersion,
		RuleID:      l.RuleID,
		Article:     l.Article,
		Quote:       l.Quote,
		Period:      l.Period,
		PeriodLabel: l.PeriodLabel,
		LimitDB:     l.DB,
		MarginDB:    margin,
		PendingAt:   r.T,
	}
}

// closeOpen closes the open exceedance because its limit no longer applies
// (or, for a pending one, because a gap interrupted it) at instant at.
func (e *Engine) closeOpen(s *SensorState, resolution string, at time.Time, evs []Event) []Event {
	a := s.Open
	if a == nil {
		return evs
	}
	if at.Before(a.PendingAt) {
		at = a.PendingAt
	}
	if a.State == StatePending {
		a.State = StateCancelled
		a.ResolvedAt, a.Resolution = at, resolution
		evs = append(evs, Event{Kind: EventCancelled, At: at, Alert: *a})
	} else {
		a.State = StateResolved
		a.ResolvedAt, a.Resolution = at, resolution
		evs = append(evs, Event{Kind: EventResolved, At: at, Alert: *a})
	}
	s.Open, s.BelowSince = nil, time.Time{}
	return evs
}

func (e *Engine) tick(s SensorState, now time.Time) (SensorState, []Event) {
	if s.Gap != nil || s.LastRecv.IsZero() || now.Sub(s.LastRecv) < e.cfg.NoDataTimeout {
		return s, nil
	}
	return e.openGap(s, ReasonSilent, now)
}

func (e *Engine) gateway(s SensorState, online bool, now time.Time) (SensorState, []Event) {
	if online {
		if s.GatewayOffline {
			s.GatewayOffline = false
			s.Seq++
		}
		return s, nil // the gap, if any, stays open until a record arrives
	}
	if !s.GatewayOffline {
		s.GatewayOffline = true
		s.Seq++
	}
	if s.Gap != nil {
		return s, nil
	}
	return e.openGap(s, ReasonGatewayOffline, now)
}

func (e *Engine) openGap(s SensorState, reason string, now time.Time) (SensorState, []Event) {
	s.Seq++
	var evs []Event
	if s.Open != nil && s.Open.State == StatePending {
		evs = e.closeOpen(&s, ResolutionDataGap, s.LastEnd, evs)
	}
	s.BelowSince = time.Time{} // a firing alert needs fresh quiet data to resolve
	since := s.LastEnd
	if since.IsZero() {
		since = s.LastRecv
	}
	if since.IsZero() {
		since = now
	}
	margin, screening := e.cfg.margin(s.Info.Grade)
	g := Alert{
		ID:          s.Sensor + "/nodata/" + stamp(since),
		Kind:        KindNoData,
		State:       StateFiring,
		SensorInfo:  s.Info,
		Screening:   screening,
		MarginDB:    margin,
		WindowStart: since,
		PendingAt:   now,
		FiringAt:    now,
		Reason:      reason,
	}
	g.Sensor = s.Sensor
	s.Gap = &g
	evs = append(evs, Event{Kind: EventNoData, At: now, Alert: g})
	return s, evs
}

// stamp formats an instant for alert ids: UTC, millisecond precision.
func stamp(t time.Time) string { return t.UTC().Format("20060102T150405.000Z") }
