package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sossego/sossego/alerts"
)

type oneAlert alerts.Alert

func (a oneAlert) GetAlert(_ context.Context, id string) (alerts.Alert, error) {
	if id != a.ID {
		return alerts.Alert{}, fmt.Errorf("%w: %s", alerts.ErrNotFound, id)
	}
	return alerts.Alert(a), nil
}

// TestRefusalsAreTyped: what the caller must change comes back as an
// *Error of its kind with the pt-BR message, an unknown alert as
// ErrNotFound, before any store is written.
func TestRefusalsAreTyped(t *testing.T) {
	s := New(Config{Alerts: oneAlert{ID: "s1/a"}, Assignees: func(context.Context) ([]string, error) { return []string{"ana"}, nil }})
	ana := User{ID: "ana", Role: "fiscal"}
	for _, tc := range []struct {
		name     string
		err      error
		kind     Kind
		notFound bool
		msg      string
	}{
		{"no assignee", func() error { _, err := s.Assign(context.Background(), "s1/a", "  ", ana); return err }(), Invalid, false,
			"informe a quem atribuir o alerta"},
		{"not an active fiscal", func() error { _, err := s.Assign(context.Background(), "s1/a", "bia", ana); return err }(), Invalid, false,
			`"bia" não é um fiscal ativo; fiscais: ana`},
		{"unknown alert", func() error { _, err := s.Assign(context.Background(), "s9/x", "ana", ana); return err }(), 0, true,
			`não encontrado: alerta "s9/x"`},
		{"signer without name and matrícula", func() error { _, err := agentOf(ana); return err }(), Invalid, false,
			"não tem nome completo e matrícula"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var we *Error
			switch {
			case tc.err == nil:
				t.Fatal("no error")
			case tc.notFound && !errors.Is(tc.err, ErrNotFound):
				t.Errorf("%v: want ErrNotFound", tc.err)
			case !tc.notFound && (!errors.As(tc.err, &we) || we.Kind != tc.kind):
				t.Errorf("%#v: want an *Error of kind %d", tc.err, tc.kind)
			}
			if !strings.Contains(tc.err.Error(), tc.msg) {
				t.Errorf("message %q, want it to say %q", tc.err, tc.msg)
			}
		})
	}
}
