package notify

import (
	"time"

	"github.com/sossego/sossego/alerts"
)

// Class is how alerts are grouped besides their municipality.
type Class string

// ClassOf returns the class of an alert.
func ClassOf(a alerts.Alert) Class {
	switch {
	case a.Kind == alerts.KindNoData:
		return ClassNoData
	case a.Kind == alerts.Kind(ClassClock) || a.UnsyncedRecords > 0:
		return ClassClock
	}
	return ClassLevel
}

// GroupKey is the routing key of an alert: municipality and class.
func GroupKey(a alerts.Alert) string { return a.Municipality + "/" + string(ClassOf(a)) }

// Phase is where a tracked alert is in the notification flow.
type Phase string

// Tracked is one alert the engine follows.
type Tracked struct {
	Alert      alerts.Alert `json:"alert"`
	Group      string       `json:"group"`
	Phase      Phase        `json:"phase"`
	ReceivedAt time.Time    `json:"received_at"` // when the service received its firing
	Acked      bool         `json:"acked,omitempty"`
	AckedBy    string       `json:"acked_by,omitempty"`
	Silence    string       `json:"silence,omitempty"` // id of the silence muting it
	Told       []string     `json:"told,omitempty"`    // users who received a message about it
}

// Group is the notification state of one (municipality, class).
type Group struct {
	Key          string               `json:"key"`
	Municipality string               `json:"municipality"`
	Class        Class                `json:"class"`
	LastSent     time.Time            `json:"last_sent,omitzero"`
	FlushAt      time.Time            `json:"flush_at,omitzero"` // zero: nothing due
	Paged        map[string]time.Time `json:"paged,omitempty"`   // sensor → last page about it
	PagedTo      map[string][]string  `json:"paged_to,omitempty"`
}

// Page is one open escalation step: Users were called about Alerts and
// have until Deadline to acknowledge before the next step.
type Page struct {
	Notification string    `json:"notification"`
	Group        string    `json:"group"`
	Step         int       `json:"step"` // 0 on duty, 1 next in the schedule, 2 coordinator
	Users        []string  `json:"users"`
	Called       []string  `json:"called"` // everyone called in this chain so far
	Alerts       []string  `json:"alerts"`
	Deadline     time.Time `json:"deadline"`
}

// State is everything the engine remembers; the delivery shell persists it
// (JSON) with the messages each step produced, so a restart continues.
type State struct {
	Seq          uint64              `json:"seq"`
	Alerts       map[string]*Tracked `json:"alerts"`
	Groups       map[string]*Group   `json:"groups"`
	Pages        []Page              `json:"pages"`
	SilencesDone map[string]bool     `json:"silences_done,omitempty"` // ended silences already reported
}

// NewState returns an empty state.
func NewState() *State {
	return &State{Alerts: map[string]*Tracked{}, Groups: map[string]*Group{}, SilencesDone: map[string]bool{}}
}

func (st *State) init() {
	if st.Alerts == nil {
		st.Alerts = map[string]*Tracked{}
	}
	if st.Groups == nil {
		st.Groups = map[string]*Group{}
	}
	if st.SilencesDone == nil {
		st.SilencesDone = map[string]bool{}
	}
}

// Ack says a user acknowledged an alert.
type Ack struct {
	AlertID string    `json:"alert_id"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
}

// Input is one thing that happened: an alert transition, an
// acknowledgement, or nothing (a tick: time passed).
type Input struct {
	Event      *alerts.Event
	Ack        *Ack
	ReceivedAt time.Time // when the service received it (wall clock); zero → now
}

// World is what the engine reads besides its state: the validated
// settings and the silences (active, future and recently ended).
type World struct {
	Policy   *Policy
	Silences []Silence
}

// Type is what a message is about.
type Type string

// Notification is one message to one user, to be delivered on every
// channel the user has.
type Notification struct {
	ID            string         `json:"id"`
	Type          Type           `json:"type"`
	Group         string         `json:"group"`
	Municipality  string         `json:"municipality"`
	Class         Class          `json:"class"`
	Step          int            `json:"step"`
	User          string         `json:"user"`
	Called        []string       `json:"called,omitempty"` // escalation: who was called before
	Alerts        []alerts.Alert `json:"alerts"`
	At            time.Time      `json:"at"`
	ReceivedAt    time.Time      `json:"received_at"` // earliest receipt of its alerts (latency)
	EscalateAfter time.Duration  `json:"escalate_after"`
}

// EntryKind names a line of an alert's notification history.
type EntryKind string

// Entry is one line of an alert's notification history.
type Entry struct {
	AlertID      string    `json:"alert_id"`
	At           time.Time `json:"at"`
	Kind         EntryKind `json:"kind"`
	Notification string    `json:"notification,omitempty"`
	User         string    `json:"user,omitempty"`
	Detail       string    `json:"detail"` // pt-BR
}

// Result is what one step decided.
type Result struct {
	Notifications []Notification
	Log           []Entry
	SilencesEnded []Silence // silences that ended (expired or ended early) since the last step
	Undeliverable int       // alerts nobody could be called about
	Next          time.Time // when to step again without input; zero: only on input
}
