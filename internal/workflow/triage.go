package workflow

// Alert triage: acknowledge, assign, the triage of an alert with its audit
// trail, and the change feed.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/cases"
)

// User is who is calling and their role (fiscal, operador, admin). The
// signing fiscal is the logged-in user: FullName and Matricula are printed
// on the acts and named in the audit trail.
type User struct {
	ID        string
	Name      string
	Role      string
	FullName  string
	Matricula string
	Email     string
	Phone     string
}

// actor is the user as the audit trail names them: the full name when the
// user register has it.
func actor(u User) notice.Actor {
	name := strings.TrimSpace(u.FullName)
	if name == "" {
		name = u.Name
	}
	return notice.Actor{ID: u.ID, Name: name, Role: u.Role, Matricula: strings.TrimSpace(u.Matricula)}
}

// agentOf is the signing fiscal: the logged-in user's full name and
// matrícula.
func agentOf(u User) (notice.Agent, error) {
	if strings.TrimSpace(u.FullName) == "" || strings.TrimSpace(u.Matricula) == "" {
		return notice.Agent{}, invalid("o seu cadastro de usuário (%s) não tem nome completo e matrícula: "+
			"peça ao administrador que os preencha (página de usuários ou sossego users edit); quem assina é o usuário logado", u.ID)
	}
	return notice.Agent{Name: strings.TrimSpace(u.FullName), Matricula: strings.TrimSpace(u.Matricula)}, nil
}

// Change is one stored change of the fiscal's workflow, for live feeds:
// Action is ack | assign | draft (a document stored) | constatacao | edit |
// correct | one of the notice.ActionKind steps (issue, ciente, recusa,
// regularize, auto, cancel, decide).
type Change struct {
	AlertID  string
	NoticeID string
	Action   string
	State    string // the document's state after the change
	By       string // user id of who acted
	Assignee string
	Title    string // the document's title
	At       time.Time
}

func (s *Service) changed(c Change) {
	if s.onChange != nil {
		s.onChange(c)
	}
}

// docChanged reports a stored document change.
func (s *Service) docChanged(action string, d notice.Document, u User, at time.Time) {
	s.changed(Change{AlertID: d.Draft.Finding.AlertID, NoticeID: d.ID, Action: action, State: string(d.State), By: u.ID,
		Title: d.Draft.Title, At: at})
}

// TriageView is the triage of an alert as the API returns it.
type TriageView struct {
	cases.Triage
	Acked bool `json:"acked"`
	// Audit (AlertCase only): the ack and assign entries of the alert.
	Audit []cases.Entry `json:"audit,omitempty"`
	// Assignees (AlertCase only): who may be assigned; absent when any
	// user name is accepted.
	Assignees []string `json:"assignees,omitempty"`
}

func triageView(t cases.Triage) TriageView { return TriageView{Triage: t, Acked: t.Acked()} }

// knownAlert refuses an alert id the alerts store does not know.
func (s *Service) knownAlert(ctx context.Context, id string) error {
	_, err := s.alert(ctx, id)
	return err
}

// Assignees lists who an alert may be assigned to; checked is false when
// any user name is accepted.
func (s *Service) Assignees(ctx context.Context) (list []string, checked bool, err error) {
	if s.assignees == nil {
		return nil, false, nil
	}
	list, err = s.assignees(ctx)
	if err != nil {
		return nil, true, fmt.Errorf("lista de fiscais: %w", err)
	}
	if list == nil {
		list = []string{}
	}
	return list, true, nil
}

// Ack records that u acknowledged the alert ("reconhecido"; the first
// stands).
func (s *Service) Ack(ctx context.Context, alertID string, u User) (TriageView, error) {
	if err := s.knownAlert(ctx, alertID); err != nil {
		return TriageView{}, err
	}
	at := s.now()
	t, changed, err := s.cases.Triage.Ack(ctx, alertID, actor(u), at)
	if err != nil {
		return TriageView{}, err
	}
	if changed {
		s.changed(Change{AlertID: alertID, Action: "ack", By: u.ID, Assignee: t.Assignee, At: at})
	}
	return triageView(t), nil
}

// Assign assigns the alert to the fiscal named assignee.
func (s *Service) Assign(ctx context.Context, alertID, assignee string, u User) (TriageView, error) {
	if err := s.knownAlert(ctx, alertID); err != nil {
		return TriageView{}, err
	}
	who := strings.TrimSpace(assignee)
	if who == "" {
		return TriageView{}, invalid("informe a quem atribuir o alerta: {\"assignee\": \"usuário do fiscal\"}")
	}
	list, checked, err := s.Assignees(ctx)
	if err != nil {
		return TriageView{}, err
	}
	if checked && !slices.Contains(list, who) {
		return TriageView{}, invalid("%q não é um fiscal ativo; fiscais: %s", who, strings.Join(list, ", "))
	}
	at := s.now()
	t, changed, err := s.cases.Triage.Assign(ctx, alertID, who, actor(u), at)
	if err != nil {
		return TriageView{}, err
	}
	if changed {
		s.changed(Change{AlertID: alertID, Action: "assign", By: u.ID, Assignee: t.Assignee, At: at})
	}
	return triageView(t), nil
}

// AlertCase is the triage of an alert with its audit trail and who may be
// assigned.
func (s *Service) AlertCase(ctx context.Context, alertID string) (TriageView, error) {
	if err := s.knownAlert(ctx, alertID); err != nil {
		return TriageView{}, err
	}
	t, err := s.cases.Triage.Triage(ctx, alertID)
	if err != nil {
		return TriageView{}, err
	}
	v := triageView(t)
	if v.Audit, err = s.cases.Documents.Audit(ctx, alertID); err != nil {
		return v, err
	}
	if v.Assignees, _, err = s.Assignees(ctx); err != nil {
		return v, err
	}
	return v, nil
}

// RecentCases is the triage of the alerts touched most recently.
type RecentCases struct {
	Cases     []TriageView `json:"cases"`
	Assignees []string     `json:"assignees,omitempty"`
}

// Recent lists the triage of the limit alerts touched most recently (0:
// the store's default).
func (s *Service) Recent(ctx context.Context, limit int) (RecentCases, error) {
	ts, err := s.cases.Triage.Triages(ctx, limit)
	if err != nil {
		return RecentCases{}, err
	}
	out := RecentCases{Cases: make([]TriageView, len(ts))}
	for i, t := range ts {
		out.Cases[i] = triageView(t)
	}
	if out.Assignees, _, err = s.Assignees(ctx); err != nil {
		return out, err
	}
	return out, nil
}
