package dashboard

// Alert triage routes (acknowledge, assign) and the change feed.
//
//	POST /api/v1/alerts/{id}/ack              fiscal: "reconhecido" (idempotent: the first stands)
//	POST /api/v1/alerts/{id}/assign           fiscal: {"assignee": "user"}
//	GET  /api/v1/alerts/{id}/case             any: triage + its audit trail + who may be assigned
//	GET  /api/v1/alert-cases                  any: triage of the alerts touched most recently

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/cases"
)

// WorkflowChange is one stored change of the fiscal's workflow, for live feeds:
// Action is ack | assign | draft (a document stored) | one of the
// notice.ActionKind steps (issue, ciente, recusa, regularize, auto, cancel,
// decide). internal/central turns it into a dashboard.CaseUpdate.
type WorkflowChange struct {
	AlertID  string
	NoticeID string
	Action   string
	State    string // the document's state after the change
	By       string // user id of who acted
	Assignee string
	Title    string // the document's title
	At       time.Time
}

// triagePatterns are the mux patterns of the triage routes.
var triagePatterns = []string{"/api/v1/alerts/{id}/ack", "/api/v1/alerts/{id}/assign", "/api/v1/alerts/{id}/case", "/api/v1/alert-cases"}

func (h *WorkflowAPI) triageRoutes() {
	h.mux.HandleFunc("POST /api/v1/alerts/{id}/ack", h.act(h.ack))
	h.mux.HandleFunc("POST /api/v1/alerts/{id}/assign", h.act(h.assign))
	h.mux.HandleFunc("GET /api/v1/alerts/{id}/case", h.read(h.alertCase))
	h.mux.HandleFunc("GET /api/v1/alert-cases", h.read(h.alertCases))
}

func (h *WorkflowAPI) changed(c WorkflowChange) {
	if h.svc.OnChange != nil {
		h.svc.OnChange(c)
	}
}

// docChanged reports a stored document change.
func (h *WorkflowAPI) docChanged(action string, d notice.Document, u WorkflowUser, at time.Time) {
	h.changed(WorkflowChange{AlertID: d.Draft.Finding.AlertID, NoticeID: d.ID, Action: action, State: string(d.State), By: u.ID,
		Title: d.Draft.Title, At: at})
}

// TriageView is the triage of an alert as the API returns it.
type TriageView struct {
	cases.Triage
	Acked bool `json:"acked"`
	// Audit (GET …/case only): the ack and assign entries of the alert.
	Audit []cases.Entry `json:"audit,omitempty"`
	// Assignees (GET …/case only): who may be assigned; absent when any
	// user name is accepted.
	Assignees []string `json:"assignees,omitempty"`
}

func triageView(t cases.Triage) TriageView { return TriageView{Triage: t, Acked: t.Acked()} }

// decodeBody decodes an optional JSON body strictly into v.
// knownAlert refuses an alert id the alerts store does not know.
func (h *WorkflowAPI) knownAlert(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if _, err := h.svc.alert(r.Context(), id); err != nil {
		return id, err
	}
	return id, nil
}

func (h *WorkflowAPI) assignees(r *http.Request) ([]string, bool, error) {
	if h.svc.Assignees == nil {
		return nil, false, nil
	}
	list, err := h.svc.Assignees(r.Context())
	if err != nil {
		return nil, true, fmt.Errorf("lista de fiscais: %w", err)
	}
	if list == nil {
		list = []string{}
	}
	return list, true, nil
}

func (h *WorkflowAPI) ack(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
	var body struct{}
	if err := readJSON(w, r, 16<<10, optionalBody, &body); err != nil {
		return err
	}
	id, err := h.knownAlert(r)
	if err != nil {
		return err
	}
	at := h.svc.now()
	t, changed, err := h.svc.Cases.Ack(r.Context(), id, actor(u), at)
	if err != nil {
		return err
	}
	if changed {
		h.changed(WorkflowChange{AlertID: id, Action: "ack", By: u.ID, Assignee: t.Assignee, At: at})
	}
	apiJSON(w, http.StatusOK, triageView(t))
	return nil
}

func (h *WorkflowAPI) assign(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
	var body struct {
		Assignee string `json:"assignee"`
	}
	if err := readJSON(w, r, 16<<10, optionalBody, &body); err != nil {
		return err
	}
	id, err := h.knownAlert(r)
	if err != nil {
		return err
	}
	who := strings.TrimSpace(body.Assignee)
	if who == "" {
		return fail(http.StatusUnprocessableEntity, "informe a quem atribuir o alerta: {\"assignee\": \"usuário do fiscal\"}")
	}
	list, checked, err := h.assignees(r)
	if err != nil {
		return err
	}
	if checked && !slices.Contains(list, who) {
		return fail(http.StatusUnprocessableEntity, "%q não é um fiscal ativo; fiscais: %s", who, strings.Join(list, ", "))
	}
	at := h.svc.now()
	t, changed, err := h.svc.Cases.Assign(r.Context(), id, who, actor(u), at)
	if err != nil {
		return err
	}
	if changed {
		h.changed(WorkflowChange{AlertID: id, Action: "assign", By: u.ID, Assignee: t.Assignee, At: at})
	}
	apiJSON(w, http.StatusOK, triageView(t))
	return nil
}

func (h *WorkflowAPI) alertCase(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	id, err := h.knownAlert(r)
	if err != nil {
		return err
	}
	t, err := h.svc.Cases.Triage(r.Context(), id)
	if err != nil {
		return err
	}
	v := triageView(t)
	if v.Audit, err = h.svc.Cases.Audit(r.Context(), id); err != nil {
		return err
	}
	if v.Assignees, _, err = h.assignees(r); err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, v)
	return nil
}

func (h *WorkflowAPI) alertCases(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	limit := 0
	if s := r.URL.Query().Get("limit"); s != "" {
		if _, err := fmt.Sscanf(s, "%d", &limit); err != nil || limit < 1 || limit > 1000 {
			return fail(http.StatusBadRequest, "limit deve ser um número entre 1 e 1000")
		}
	}
	ts, err := h.svc.Cases.Triages(r.Context(), limit)
	if err != nil {
		return err
	}
	out := struct {
		Cases     []TriageView `json:"cases"`
		Assignees []string     `json:"assignees,omitempty"`
	}{Cases: make([]TriageView, len(ts))}
	for i, t := range ts {
		out.Cases[i] = triageView(t)
	}
	if out.Assignees, _, err = h.assignees(r); err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, out)
	return nil
}
