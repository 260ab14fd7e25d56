package workflow

import (
	"errors"
	"fmt"
	"time"
)

// ErrNotFound is wrapped when an alert, sensor or document is unknown.
var ErrNotFound = errors.New("não encontrado")

// ErrNoNotice is wrapped when an alert cannot ground a notice: it never
// fired, it is a no-data alert, or the time of its readings is not
// trustworthy.
var ErrNoNotice = errors.New("o alerta não sustenta uma notificação")

// Kind is what went wrong with a request, as its caller answers it (the
// dashboard: 422 and 409).
type Kind int

const (
	// Invalid: the request itself must change (a missing assignee, a
	// signing agent other than the logged-in user).
	Invalid Kind = iota + 1
	// Conflict: the request does not fit the case's state.
	Conflict
)

// Error is a refusal of the service with the pt-BR message a user reads.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func invalid(format string, a ...any) error { return &Error{Invalid, fmt.Sprintf(format, a...)} }

func conflict(format string, a ...any) error { return &Error{Conflict, fmt.Sprintf(format, a...)} }

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
