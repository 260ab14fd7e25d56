package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sossego/sossego/internal/level"
)

// Limit is the numeric limit in force at an instant, as the codes engine
// reports it. A level exceeds it only when strictly greater than DB.
type Limit struct {
	DB          float64   `json:"db"`
	Period      string    `json:"period"`       // e.g. "noturno"
	PeriodLabel string    `json:"period_label"` // e.g. "período noturno (22:00–07:00)"
	PeriodStart time.Time `json:"period_start,omitzero"`
	PeriodEnd   time.Time `json:"period_end,omitzero"` // exclusive
	RuleID      string    `json:"rule_id"`
	Article     string    `json:"article"`
	Quote       string    `json:"quote"` // verbatim text of the provision
	CodeID      string    `json:"code_id"`
	CodeVersion string    `json:"code_version"`
}

// sameRegime reports whether a and b are the same limit of the same period:
// the window restarts whenever this turns false.
func sameRegime(a, b Limit) bool {
	return a.DB == b.DB && a.Period == b.Period && a.RuleID == b.RuleID &&
		a.CodeID == b.CodeID && a.CodeVersion == b.CodeVersion &&
		a.PeriodStart.Equal(b.PeriodStart)
}

// Limits is the codes engine as the alerts need it: the numeric limit in force
// for a code, zone and establishment type at instant t. ok is false when the
// code sets no numeric limit there (then nothing can exceed); err is for
// lookups that cannot be answered (unknown code or zone).
type Limits interface {
	LimitAt(code, zone, establishment, mechanism string, t time.Time) (lim Limit, ok bool, err error)
}

// SensorInfo is what the registry says about a sensor; the ingest copies it
// into every Reading and the alerts keep it for notices.
type SensorInfo struct {
	Sensor            string `json:"sensor"`
	Gateway           string `json:"gateway,omitempty"`
	Municipality      string `json:"municipality"`
	Code              string `json:"code,omitempty"` // municipal code id; default Municipality
	Zone              string `json:"zone,omitempty"`
	EstablishmentType string `json:"establishment_type,omitempty"`
	Mechanism         string `json:"mechanism,omitempty"`     // codes-eval.md mechanism of the watched source
	Establishment     string `json:"establishment,omitempty"` // registry name or id of the watched establishment
	Grade             string `json:"grade"`                   // class1 | class2 | screening
}

func (s SensorInfo) code() string {
	if s.Code != "" {
		return s.Code
	}
	return s.Municipality
}

// Reading is one durable 1-s record of a sensor, as the ingest hands it over.
type Reading struct {
	SensorInfo
	T      time.Time `json:"t"` // start of the interval
	DurMs  int64     `json:"dur_ms"`
	LAeq   float64   `json:"laeq_db"`
	LAFmax float64   `json:"lafmax_db"`
	LAFmin float64   `json:"lafmin_db"`
	// ClockUnsynced: the gateway's clock was not synchronised when it
	// stamped the record, so T may be off (by hours, after a Pi boots
	// without network). The record is evaluated; the alert counts it.
	ClockUnsynced bool `json:"clock_unsynced,omitempty"`
}

// End is the end of the record's interval.
func (r Reading) End() time.Time { return r.T.Add(time.Duration(r.DurMs) * time.Millisecond) }

func (r Reading) validate() error {
	switch {
	case r.Sensor == "":
		return fmt.Errorf("%w: empty sensor id", ErrInvalidReading)
	case r.T.IsZero():
		return fmt.Errorf("%w: sensor %s: zero time", ErrInvalidReading, r.Sensor)
	case r.DurMs <= 0:
		return fmt.Errorf("%w: sensor %s: dur_ms %d not positive", ErrInvalidReading, r.Sensor, r.DurMs)
	case !finite(r.LAeq) || !finite(r.LAFmax):
		return fmt.Errorf("%w: sensor %s: non-finite level", ErrInvalidReading, r.Sensor)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Kind tells an exceedance alert from a data-gap alert.
type Kind string

// Alert kinds.
const (
	KindExceedance Kind = "exceedance"
	KindNoData     Kind = "no_data"
)

// State is where an alert is in its lifecycle.
type State string

// Alert states. An exceedance goes pending → firing → resolved, or
// pending → cancelled when it stops before MinDuration. A no_data alert is
// firing while the gap lasts and resolved when data comes back.
const (
	StatePending   State = "pending"
	StateFiring    State = "firing"
	StateResolved  State = "resolved"
	StateCancelled State = "cancelled"
)

// Rank orders states so that a store never moves an alert backwards.
func (s State) Rank() int {
	switch s {
	case StatePending:
		return 1
	case StateFiring:
		return 2
	case StateResolved, StateCancelled:
		return 3
	}
	return 0
}

// Resolutions say why an alert closed.
const (
	ResolutionQuiet        = "quiet"         // below limit − hysteresis for the resolve time
	ResolutionBelowLimit   = "below_limit"   // pending alert whose window stopped exceeding
	ResolutionPeriodEnd    = "period_end"    // the limit it cited is no longer in force
	ResolutionNoLimit      = "no_limit"      // the code sets no numeric limit any more
	ResolutionLimitError   = "limit_error"   // the limit could not be looked up
	ResolutionDataGap      = "data_gap"      // pending alert interrupted by missing data
	ResolutionMeterChanged = "meter_changed" // the sensor's meter grade changed (another instrument)
	ResolutionDataBack     = "data_back"     // no_data alert closed by a new record
)

// Reasons of a no_data alert.
const (
	ReasonSilent         = "silent"
	ReasonGatewayOffline = "gateway_offline"
)

// ErrNotFound is what an alert store wraps when it holds no alert of the
// id asked (and only then: any other failure is an error of the store).
var ErrNotFound = errors.New("alerta não encontrado")

// Alert is one exceedance (or one data gap) of one sensor. All instants of an
// exceedance are stream instants (record times); those of a no_data alert are
// receive instants (the caller's now).
type Alert struct {
	ID    string `json:"id"`
	Kind  Kind   `json:"kind"`
	State State  `json:"state"`
	SensorInfo
	Screening bool `json:"screening"` // screening-grade (or unknown-grade) sensor: indicative only

	CodeID      string  `json:"code_id,omitempty"`
	CodeVersion string  `json:"code_version,omitempty"`
	RuleID      string  `json:"rule_id,omitempty"`
	Article     string  `json:"article,omitempty"`
	Quote       string  `json:"quote,omitempty"`
	Period      string  `json:"period,omitempty"`
	PeriodLabel string  `json:"period_label,omitempty"`
	LimitDB     float64 `json:"limit_db,omitempty"`
	MarginDB    float64 `json:"margin_db,omitempty"`

	// LAeqDB and LAFmaxDB are measured over [WindowStart, WindowEnd): the
	// newest exceeding window while pending, frozen at the window that made
	// the alert fire. For no_data, the window is the gap: from the end of the
	// last data to the start of the first record after it.
	LAeqDB      float64   `json:"laeq_db,omitempty"`
	LAFmaxDB    float64   `json:"lafmax_db,omitempty"`
	WindowStart time.Time `json:"window_start,omitzero"`
	WindowEnd   time.Time `json:"window_end,omitzero"`
	// PeakLAeqDB and PeakLAFmaxDB are the highest window LAeq and LAFmax
	// seen while the alert was open.
	PeakLAeqDB   float64 `json:"peak_laeq_db,omitempty"`
	PeakLAFmaxDB float64 `json:"peak_lafmax_db,omitempty"`
	// UnsyncedRecords counts the records stamped by an unsynchronised
	// gateway clock since the alert opened: their period, and so their
	// limit, is uncertain, and no notice is drafted from such an alert.
	UnsyncedRecords int `json:"unsynced_records,omitempty"`

	PendingAt time.Time `json:"pending_at,omitzero"`
	FiringAt  time.Time `json:"firing_at,omitzero"`
	// DetectedAt is the wall-clock instant at which the service saw an
	// exceedance fire (the receive time of the record that made it fire;
	// PendingAt and FiringAt are stream time). Readings replayed by a
	// gateway after an outage make it later than FiringAt: the alert is
	// about the past and was known only then.
	DetectedAt time.Time `json:"detected_at,omitzero"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	Resolution string    `json:"resolution,omitempty"`
	Reason     string    `json:"reason,omitempty"` // no_data: silent | gateway_offline
}

// EventKind names a transition.
type EventKind string

// Transitions.
const (
	EventPending   EventKind = "pending"
	EventFiring    EventKind = "firing"
	EventResolved  EventKind = "resolved"
	EventCancelled EventKind = "cancelled"
	EventNoData    EventKind = "no_data"
	EventDataBack  EventKind = "data_back"
)

// Event is one transition with a copy of the alert right after it. At is the
// instant of the transition (stream time for exceedances, receive time for
// data gaps).
type Event struct {
	Kind  EventKind `json:"kind"`
	At    time.Time `json:"at"`
	Alert Alert     `json:"alert"`
}

// Status is the live state of a sensor.
type Status string

// Sensor statuses. no_data wins over everything else: a sensor whose data
// stopped is never shown as ok.
const (
	StatusUnknown Status = "unknown" // expected but nothing received yet
	StatusOK      Status = "ok"
	StatusPending Status = "pending"
	StatusFiring  Status = "firing"
	StatusNoData  Status = "no_data"
	StatusNoLimit Status = "no_limit" // the code sets no numeric limit now
	StatusError   Status = "error"    // the limit could not be looked up
)

// Sample is one record inside a window. It is stored compactly as
// [start unix ms, dur ms, laeq, lafmax].
type Sample struct {
	T      time.Time
	DurMs  int64
	LAeq   float64
	LAFmax float64
	energy float64 // DurMs · 10^(LAeq/10)
}

func newSample(t time.Time, durMs int64, laeq, lafmax float64) Sample {
	return Sample{T: t, DurMs: durMs, LAeq: laeq, LAFmax: lafmax, energy: float64(durMs) * level.ToEnergy(laeq)}
}

// MarshalJSON writes [unix ms, dur ms, laeq, lafmax].
func (s Sample) MarshalJSON() ([]byte, error) {
	return json.Marshal([4]float64{float64(s.T.UnixMilli()), float64(s.DurMs), s.LAeq, s.LAFmax})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Sample) UnmarshalJSON(b []byte) error {
	var a [4]float64
	if err := json.Unmarshal(b, &a); err != nil {
		return fmt.Errorf("alerts: sample: %w", err)
	}
	*s = newSample(time.UnixMilli(int64(a[0])).UTC(), int64(a[1]), a[2], a[3])
	return nil
}

// SensorState is everything the lifecycle remembers about one sensor. It is
// what StateStore snapshots; Seq grows with every change so that a store
// can refuse to overwrite a newer snapshot with an older one.
type SensorState struct {
	Sensor string     `json:"sensor"`
	Info   SensorInfo `json:"info"`
	Seq    uint64     `json:"seq"`

	Limit    Limit  `json:"limit"` // the limit the window is evaluated against
	HasLimit bool   `json:"has_limit"`
	LimitErr string `json:"limit_err,omitempty"`

	Window []Sample `json:"window"`  // records of the current period within Window, oldest first
	LAeq   float64  `json:"laeq_db"` // newest window LAeq
	LAFmax float64  `json:"lafmax_db"`

	Open       *Alert    `json:"open,omitempty"` // exceedance pending or firing
	Gap        *Alert    `json:"gap,omitempty"`  // no_data open
	BelowSince time.Time `json:"below_since,omitzero"`

	LastStart      time.Time `json:"last_start,omitzero"` // newest record accepted
	LastEnd        time.Time `json:"last_end,omitzero"`
	LastRecv       time.Time `json:"last_recv,omitzero"` // caller's now when it was accepted
	GatewayOffline bool      `json:"gateway_offline,omitempty"`

	Evaluated uint64 `json:"evaluated"`
	Ignored   uint64 `json:"ignored"` // duplicates and out-of-order records
}

// Status derives the live status.
func (s *SensorState) Status() Status {
	switch {
	case s.Gap != nil:
		return StatusNoData
	case s.Open != nil && s.Open.State == StateFiring:
		return StatusFiring
	case s.Open != nil:
		return StatusPending
	case s.LimitErr != "":
		return StatusError
	case s.LastStart.IsZero():
		return StatusUnknown
	case !s.HasLimit:
		return StatusNoLimit
	}
	return StatusOK
}

// Clone returns a deep copy (the window and the open alerts are not shared).
func (s SensorState) Clone() SensorState {
	c := s
	c.Window = append([]Sample(nil), s.Window...)
	if s.Open != nil {
		a := *s.Open
		c.Open = &a
	}
	if s.Gap != nil {
		a := *s.Gap
		c.Gap = &a
	}
	return c
}

// Notifier receives every transition after it is durably stored. It must not
// block (a dashboard hub drops slow clients; an MQTT publisher queues).
type Notifier interface {
	Notify(ctx context.Context, e Event) error
}

// NotifierFunc adapts a function to Notifier.
type NotifierFunc func(ctx context.Context, e Event) error

// Notify calls f.
func (f NotifierFunc) Notify(ctx context.Context, e Event) error { return f(ctx, e) }

// Change is one sensor's new state and the transitions that led to it; a
// StateStore saves both in one transaction.
type Change struct {
	State  SensorState
	Events []Event
}

// StateStore persists sensor states and alert transitions. SaveStates must be
// atomic per call, idempotent (an event already stored for the same alert and
// kind is not stored twice; a snapshot with a lower Seq than the stored one is
// ignored) and must not retain the states after it returns.
type StateStore interface {
	LoadStates(ctx context.Context) ([]SensorState, error)
	SaveStates(ctx context.Context, changes []Change) error
}
