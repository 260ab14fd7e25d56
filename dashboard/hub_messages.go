package dashboard

// The live hub's messages: what a browser receives (hub.go lists the
// frames).

import (
	"math"
	"strconv"
	"time"
)

// DB is a level in decibels, encoded in JSON with one decimal.
type DB float64

// MarshalJSON writes one decimal; NaN and ±Inf (never valid levels) as null.
func (d DB) MarshalJSON() ([]byte, error) {
	f := float64(d)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'f', 1, 64), nil
}

// Level is the latest 1-s reading of a sensor judged against the limit in
// force.
type Level struct {
	Sensor       string    `json:"sensor"`
	Gateway      string    `json:"gateway,omitempty"`
	Municipality string    `json:"municipality,omitempty"`
	T            time.Time `json:"t"` // start of the 1-s record
	LAeq         DB        `json:"laeq_db"`
	LAFmax       DB        `json:"lafmax_db"`
	// Limit is nil when no numeric limit is in force (the code sets none now).
	Limit       *DB       `json:"limit_db,omitempty"`
	Period      string    `json:"period,omitempty"`       // e.g. "noturno"
	PeriodLabel string    `json:"period_label,omitempty"` // e.g. "período noturno (22:00–07:00)"
	PeriodEnd   time.Time `json:"period_end,omitzero"`    // when the limit in force changes
	Margin      *DB       `json:"margin_db,omitempty"`    // LAeq − limit (positive = above)
	Grade       string    `json:"grade,omitempty"`        // class1 | class2 | screening
	ClockSynced *bool     `json:"clock_synced,omitempty"`
	Status      string    `json:"status,omitempty"` // alerts.Status of the sensor, when known
	// ReceivedAt is when the service published the reading (set by
	// PublishLevel when zero): a reading received long after its own time
	// T was replayed or delayed, and the UI says so ("atrasado").
	ReceivedAt time.Time `json:"received_at,omitzero"`
}

// Env is the latest environment reading of a sensor.
type Env struct {
	Sensor      string    `json:"sensor"`
	T           time.Time `json:"t"`
	TempC       *float64  `json:"temp_c,omitempty"`
	RH          *float64  `json:"rh_pct,omitempty"`
	PressureHPa *float64  `json:"pressure_hpa,omitempty"`
	WindMS      *float64  `json:"wind_ms,omitempty"`
}

// GatewayStatus is a gateway's connectivity and clock state.
type GatewayStatus struct {
	Gateway      string    `json:"gateway"`
	Municipality string    `json:"municipality,omitempty"`
	State        string    `json:"state"` // online | offline
	At           time.Time `json:"at,omitzero"`
	LastSeen     time.Time `json:"last_seen,omitzero"`
	ClockSynced  *bool     `json:"clock_synced,omitempty"`
	ClockOffset  *float64  `json:"clock_offset_ms,omitempty"`
	ClockSource  string    `json:"clock_source,omitempty"`
}

// CaseUpdate is a change in the fiscal's workflow: an alert acknowledged or
// assigned, a notice drafted, issued, acknowledged (ciente) or refused.
type CaseUpdate struct {
	AlertID  string    `json:"alert_id,omitempty"`
	NoticeID string    `json:"notice_id,omitempty"`
	Action   string    `json:"action"` // ack | assign | draft | issue | ciente | recusa | …
	State    string    `json:"state,omitempty"`
	By       string    `json:"by,omitempty"`
	Assignee string    `json:"assignee,omitempty"`
	Title    string    `json:"title,omitempty"`
	At       time.Time `json:"at"`
}

// IngestEvent is something ingest kept instead of applying, for the
// operators to see at once (a second re-measured with other values, a
// batch under a stored seq with another body, seqs skipped, a gateway over
// its quota). The store keeps each one; GET /api/v1/conflicts,
// /api/v1/seq-skips and /api/v1/dead-letters list them.
type IngestEvent struct {
	Kind         string    `json:"kind"` // record_conflict | seq_conflict | seq_skip | quota
	Gateway      string    `json:"gateway"`
	Municipality string    `json:"municipality,omitempty"`
	Sensor       string    `json:"sensor,omitempty"`
	Seq          uint64    `json:"seq,omitempty"`
	T            time.Time `json:"t,omitzero"`
	At           time.Time `json:"at"`
	Message      string    `json:"message"` // pt-BR
}

type helloMsg struct {
	Type       string    `json:"type"`
	User       string    `json:"user"`
	Role       string    `json:"role"`
	TickMs     int64     `json:"tick_ms"`
	ServerTime time.Time `json:"server_time"`
}

type updateMsg struct {
	Type     string          `json:"type"`
	Levels   []Level         `json:"levels,omitempty"`
	Env      []Env           `json:"env,omitempty"`
	Gateways []GatewayStatus `json:"gateways,omitempty"`
}
