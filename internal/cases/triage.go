package cases

// Alert handling: before (and besides) any document, a fiscal acknowledges
// an alert ("reconhecido": someone is on it) and assigns it to a fiscal.
// The case store keeps both per alert and appends every change to the
// audit trail of the documents, with the alert id as its document_id
// (alert ids, "sensor/instant", never collide with document numbers such as
// "lapa-NP-2026-000001").

import (
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
)

// Triage is how the fiscais are handling an alert.
type Triage struct {
	AlertID    string    `json:"alert_id"`
	AckedBy    string    `json:"acked_by,omitempty"` // user id
	AckedName  string    `json:"acked_name,omitempty"`
	AckedAt    time.Time `json:"acked_at,omitzero"`
	Assignee   string    `json:"assignee,omitempty"` // user id of the fiscal in charge
	AssignedBy string    `json:"assigned_by,omitempty"`
	AssignedAt time.Time `json:"assigned_at,omitzero"`
	UpdatedAt  time.Time `json:"updated_at,omitzero"`
}

// Acked reports whether someone acknowledged the alert.
func (t Triage) Acked() bool { return !t.AckedAt.IsZero() }

// MaxAssigneeLen bounds an assignee's user name.
const MaxAssigneeLen = 64

// CheckAssignee trims the user id an alert is to be assigned to and checks
// it (pt-BR errors wrapping notice.ErrInput).
func CheckAssignee(assignee string) (string, error) {
	assignee = strings.TrimSpace(assignee)
	switch {
	case assignee == "":
		return "", fmt.Errorf("%w: informe a quem atribuir o alerta (usuário de um fiscal)", notice.ErrInput)
	case len(assignee) > MaxAssigneeLen:
		return "", fmt.Errorf("%w: nome de usuário com mais de %d caracteres", notice.ErrInput, MaxAssigneeLen)
	}
	return assignee, nil
}

// WithAck is t acknowledged by actor at at, and whether that changed it:
// the first acknowledgement stands.
func (t Triage) WithAck(actor notice.Actor, at time.Time) (Triage, bool) {
	if t.Acked() {
		return t, false
	}
	t.AckedBy, t.AckedName, t.AckedAt, t.UpdatedAt = actor.ID, actor.Name, at, at
	return t, true
}

// WithAssignee is t assigned by actor at at to assignee (as CheckAssignee
// returns it), and whether that changed it: assigning the same person
// again changes nothing.
func (t Triage) WithAssignee(assignee string, actor notice.Actor, at time.Time) (Triage, bool) {
	if t.Assignee == assignee {
		return t, false
	}
	t.Assignee, t.AssignedBy, t.AssignedAt, t.UpdatedAt = assignee, actor.ID, at, at
	return t, true
}
