// Package alertstest holds reusable test doubles for package alerts: a
// Lapa-like limits source (Art. 96: 60 dB at night [22:00, 07:00), 65 dB by
// day, America/Sao_Paulo), a recording Notifier and an in-memory StateStore.
package alertstest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/internal/tz"
)

// Zones with special behaviour in Limits.
const (
	ZoneNoLimit  = "sem-limite"   // the code sets no numeric limit there (ok=false)
	ZoneUnknown  = "desconhecida" // the lookup fails
	ZoneHospital = "entorno_hospital"
)

// Limits is a Lapa-like limits source: night [22:00, 07:00) and day
// [07:00, 22:00) in America/Sao_Paulo, every day of the week alike. It counts
// its calls so tests can check the monitor's cache.
type Limits struct {
	Loc            *time.Location
	NightDB, DayDB float64 // other areas: 60 and 65
	HospitalNight  float64 // 40
	HospitalDay    float64 // 45
	CodeVersion    string

	mu    sync.Mutex
	calls int
}

// NewLimits returns Lapa's Art. 96 numbers, in Brasília time.
func NewLimits() *Limits {
	return &Limits{Loc: tz.Brasilia(), NightDB: 60, DayDB: 65, HospitalNight: 40, HospitalDay: 45, CodeVersion: "2025-01-01"}
}

// Quotes of Lapa Art. 96 (seed 004).
const (
	QuoteNight = "para o período noturno, compreendido entre as 22:00 e 07:00 horas : nas áreas de entorno de hospitais : 40 db (quarenta decibéis) ; outras áreas : 60 db (sessenta decibéis) ."
	QuoteDay   = "para o período diurno, compreendido entre as 07:00 e 22:00 horas : nas áreas de entorno de hospitais : 45 db (quarenta e cinco decibéis) ; outras áreas : 65 db (sessenta e cinco decibéis) ."
)

// Calls is how many lookups were made.
func (l *Limits) Calls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// LimitAt implements alerts.Limits.
func (l *Limits) LimitAt(code, zone, establishment, _ string, t time.Time) (alerts.Limit, bool, error) {
	l.mu.Lock()
	l.calls++
	l.mu.Unlock()
	switch zone {
	case ZoneUnknown:
		return alerts.Limit{}, false, fmt.Errorf("zona %q desconhecida no código %s", zone, code)
	case ZoneNoLimit:
		return alerts.Limit{}, false, nil
	}
	lt := t.In(l.Loc)
	y, m, d := lt.Date()
	at := func(day, h int) time.Time { return time.Date(y, m, day, h, 0, 0, 0, l.Loc) }
	lim := alerts.Limit{Article: "Art. 96", CodeID: code, CodeVersion: l.CodeVersion}
	hosp := zone == ZoneHospital
	switch h := lt.Hour(); {
	case h >= 22 || h < 7:
		lim.Period, lim.PeriodLabel, lim.Quote = "noturno", "período noturno (22:00–07:00)", QuoteNight
		lim.DB, lim.RuleID = l.NightDB, code+".art96.noturno.outras"
		if hosp {
			lim.DB, lim.RuleID = l.HospitalNight, code+".art96.noturno.hospital"
		}
		if h >= 22 {
			lim.PeriodStart, lim.PeriodEnd = at(d, 22), at(d+1, 7)
		} else {
			lim.PeriodStart, lim.PeriodEnd = at(d-1, 22), at(d, 7)
		}
	default:
		lim.Period, lim.PeriodLabel, lim.Quote = "diurno", "período diurno (07:00–22:00)", QuoteDay
		lim.DB, lim.RuleID = l.DayDB, code+".art96.diurno.outras"
		if hosp {
			lim.DB, lim.RuleID = l.HospitalDay, code+".art96.diurno.hospital"
		}
		lim.PeriodStart, lim.PeriodEnd = at(d, 7), at(d, 22)
	}
	return lim, true, nil
}

var _ alerts.Limits = (*Limits)(nil)

// Recorder is a Notifier that keeps every event.
type Recorder struct {
	mu     sync.Mutex
	events []alerts.Event
}

// Notify implements alerts.Notifier.
func (r *Recorder) Notify(_ context.Context, e alerts.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return nil
}

// Events returns a copy of what was notified.
func (r *Recorder) Events() []alerts.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]alerts.Event(nil), r.events...)
}

var _ alerts.Notifier = (*Recorder)(nil)

// ErrStoreDown is what MemStore returns while Fail is set.
var ErrStoreDown = errors.New("alertstest: store down")

// MemStore is an in-memory StateStore with the same idempotency rules as
// the case store: newer Seq wins, one event per (alert, kind).
type MemStore struct {
	mu     sync.Mutex
	Fail   bool
	states map[string]alerts.SensorState
	events []alerts.Event
	seen   map[string]bool
}

// LoadStates implements alerts.StateStore.
func (s *MemStore) LoadStates(context.Context) ([]alerts.SensorState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]alerts.SensorState, 0, len(s.states))
	for _, st := range s.states {
		out = append(out, st.Clone())
	}
	return out, nil
}

// SaveStates implements alerts.StateStore.
func (s *MemStore) SaveStates(_ context.Context, cs []alerts.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Fail {
		return ErrStoreDown
	}
	if s.states == nil {
		s.states = make(map[string]alerts.SensorState)
		s.seen = make(map[string]bool)
	}
	for _, c := range cs {
		if old, ok := s.states[c.State.Sensor]; !ok || c.State.Seq >= old.Seq {
			s.states[c.State.Sensor] = c.State.Clone()
		}
		for _, e := range c.Events {
			k := e.Alert.ID + "\x00" + string(e.Kind)
			if !s.seen[k] {
				s.seen[k] = true
				s.events = append(s.events, e)
			}
		}
	}
	return nil
}

// Events returns the stored events in order.
func (s *MemStore) Events() []alerts.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]alerts.Event(nil), s.events...)
}

var _ alerts.StateStore = (*MemStore)(nil)
