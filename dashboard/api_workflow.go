package dashboard

// The fiscal's workflow routes (docs/workflow-api.md): each handler reads
// the request, calls internal/workflow's Service and writes its answer.
// Anyone logged in reads; only a fiscal acts.
//
//	GET   /api/v1/alerts/{id}/notice          any: the alert's first document, or its preview
//	POST  /api/v1/alerts/{id}/notice          fiscal: store it ({"constatacao_id"})
//	GET   /api/v1/alerts/{id}/evidence        any: the signed evidence bag (zip)
//	POST  /api/v1/alerts/{id}/constatacoes    fiscal: record a constatação (body: constatacaoBody)
//	GET   /api/v1/alerts/{id}/constatacoes    any: the alert's constatações, each with whether it grounds a notice
//	GET   /api/v1/notices/{id}                any: a document
//	PATCH /api/v1/notices/{id}                fiscal: edit a draft ({"changes": [{"field": …, "value": …}]})
//	POST  /api/v1/notices/{id}/correct        fiscal: draft the act that corrects an issued one ({"reason"})
//	POST  /api/v1/notices/{id}/{step}         fiscal: issue, ciente, recusa, regularize, auto, cancel, decide (body: stepBody)
//	GET   /api/v1/notices/{id}/pdf            any: the act's PDF (?seq=n: the n-th stored)
//	GET   /api/v1/notices/{id}/audit          any: its audit trail
//	GET   /api/v1/parties/{document}/history  any: a party's prior infractions (?code=)
//	POST  /api/v1/alerts/{id}/ack             fiscal: "reconhecido" (idempotent: the first stands)
//	POST  /api/v1/alerts/{id}/assign          fiscal: {"assignee": "user"}
//	GET   /api/v1/alerts/{id}/case            any: triage + its audit trail + who may be assigned
//	GET   /api/v1/alert-cases                 any: triage of the alerts touched most recently

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/workflow"
)

// WorkflowUser is who is calling and their role (workflow.User).
type WorkflowUser = workflow.User

// WorkflowChange is one stored change of the fiscal's workflow
// (workflow.Change); internal/central turns it into a CaseUpdate.
type WorkflowChange = workflow.Change

// WorkflowUserFunc tells who made the request; ok is false when nobody is
// logged in.
type WorkflowUserFunc func(r *http.Request) (WorkflowUser, bool)

// WorkflowAPI serves the workflow routes under /api/v1.
type WorkflowAPI struct {
	svc  *workflow.Service
	user WorkflowUserFunc
	mux  *http.ServeMux
}

var _ http.Handler = (*WorkflowAPI)(nil)

// NewWorkflowAPI returns the handler. Its routes are in the route table
// (Routes with Deps.Workflow); as an http.Handler of its own it answers
// them alone, without the session (WorkflowUserFunc says who calls).
func NewWorkflowAPI(svc *workflow.Service, user WorkflowUserFunc) *WorkflowAPI {
	h := &WorkflowAPI{svc: svc, user: user, mux: http.NewServeMux()}
	Mount(h.mux, nil, h.routes())
	return h
}

// ServeHTTP routes the request.
func (h *WorkflowAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

type handlerFunc func(w http.ResponseWriter, r *http.Request, u WorkflowUser) error

func (h *WorkflowAPI) read(f handlerFunc) http.HandlerFunc { return h.wrap(f, false) }
func (h *WorkflowAPI) act(f handlerFunc) http.HandlerFunc  { return h.wrap(f, true) }

func (h *WorkflowAPI) wrap(f handlerFunc, fiscalOnly bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := h.user(r)
		if !ok {
			apiError(w, http.StatusUnauthorized, "faça login para continuar")
			return
		}
		if fiscalOnly && u.Role != notice.RoleFiscal {
			apiError(w, http.StatusForbidden, fmt.Sprintf("somente um fiscal pode fazer isto; seu perfil é %q", u.Role))
			return
		}
		if err := f(w, r, u); err != nil {
			h.fail(w, r, err)
		}
	}
}

// fail answers a workflow error with its status and pt-BR message.
func (h *WorkflowAPI) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	var we *workflow.Error
	switch {
	case errors.As(err, &he):
		apiError(w, he.status, he.msg)
	case errors.As(err, &we) && we.Kind == workflow.Invalid:
		apiError(w, http.StatusUnprocessableEntity, we.Msg)
	case errors.As(err, &we) && we.Kind == workflow.Conflict:
		apiError(w, http.StatusConflict, we.Msg)
	case errors.Is(err, notice.ErrForbidden):
		apiError(w, http.StatusForbidden, err.Error())
	case errors.Is(err, notice.ErrTransition), errors.Is(err, cases.ErrConflict), errors.Is(err, workflow.ErrNoNotice),
		errors.Is(err, notice.ErrNoGround):
		apiError(w, http.StatusConflict, err.Error())
	case errors.Is(err, notice.ErrInput):
		// notice.ErrInput's own words are for developers.
		apiError(w, http.StatusUnprocessableEntity, strings.Replace(err.Error(), notice.ErrInput.Error()+": ", "", 1))
	case errors.Is(err, cases.ErrNotFound), errors.Is(err, workflow.ErrNotFound):
		apiError(w, http.StatusNotFound, err.Error())
	default:
		serverError(w, h.svc.Logger(), "fiscalização "+r.Method+" "+r.URL.Path, err)
	}
}

func (h *WorkflowAPI) getAlertNotice(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	v, err := h.svc.AlertNotice(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, v)
	return nil
}

type createBody struct {
	// ConstatacaoID names the constatação the notice rests on (default:
	// the alert's latest).
	ConstatacaoID string `json:"constatacao_id"`
}

func (h *WorkflowAPI) createNotice(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
	var b createBody
	if err := readJSON(w, r, 64<<10, optionalBody, &b); err != nil {
		return err
	}
	v, created, err := h.svc.CreateNotice(r.Context(), r.PathValue("id"), b.ConstatacaoID, u)
	if err != nil {
		return err
	}
	status := http.StatusOK // idempotent
	if created {
		status = http.StatusCreated
	}
	apiJSON(w, status, v)
	return nil
}

// stepBody is the JSON body of a workflow step.
type stepBody struct {
	AgentName    string           `json:"agent_name"`
	Matricula    string           `json:"matricula"`
	PrazoDays    int              `json:"prazo_days"`
	ImminentRisk bool             `json:"imminent_risk"`
	SignedBy     string           `json:"signed_by"`
	Witnesses    []notice.Witness `json:"witnesses"`
	Declaration  string           `json:"declaration"`
	Observation  string           `json:"observation"`
	// FollowUp is the id of the constatação after the prazo (auto).
	FollowUp string `json:"follow_up"`
	Punished *bool  `json:"punished"`
	Note     string `json:"note"`
}

func (h *WorkflowAPI) step(k notice.ActionKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
		var b stepBody
		if err := readJSON(w, r, 64<<10, optionalBody, &b); err != nil {
			return err
		}
		next, auto, err := h.svc.Step(r.Context(), r.PathValue("id"), workflow.StepRequest{Kind: k, AgentName: b.AgentName,
			Matricula: b.Matricula, PrazoDays: b.PrazoDays, ImminentRisk: b.ImminentRisk, SignedBy: b.SignedBy, Witnesses: b.Witnesses,
			Declaration: b.Declaration, Observation: b.Observation, FollowUp: b.FollowUp, Punished: b.Punished, Note: b.Note}, u)
		if err != nil {
			return err
		}
		if auto != nil {
			apiJSON(w, http.StatusCreated, map[string]any{"notice": next, "auto": auto})
			return nil
		}
		apiJSON(w, http.StatusOK, next)
		return nil
	}
}

func (h *WorkflowAPI) getNotice(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	v, err := h.svc.Notice(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, v)
	return nil
}

type editBody struct {
	Changes []notice.FieldChange `json:"changes"`
}

func (h *WorkflowAPI) editNotice(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
	var b editBody
	if err := readJSON(w, r, 64<<10, optionalBody, &b); err != nil {
		return err
	}
	v, err := h.svc.Edit(r.Context(), r.PathValue("id"), b.Changes, u)
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, v)
	return nil
}

type correctBody struct {
	Reason string `json:"reason"`
}

// correct drafts the act that corrects an issued one:
// POST /api/v1/notices/{id}/correct {"reason"} → 201 {"old", "correction"}.
func (h *WorkflowAPI) correct(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
	var b correctBody
	if err := readJSON(w, r, 64<<10, optionalBody, &b); err != nil {
		return err
	}
	old, corr, err := h.svc.Correct(r.Context(), r.PathValue("id"), b.Reason, u)
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusCreated, map[string]any{"old": old, "correction": corr})
	return nil
}

func (h *WorkflowAPI) pdf(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	id := r.PathValue("id")
	var b []byte
	var sha string
	if v := r.URL.Query().Get("seq"); v != "" {
		// ?seq=1: the act as issued; ?seq=2: as delivered.
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			if _, err := h.svc.Audit(r.Context(), id); err != nil { // an unknown document is still a 404
				return err
			}
			return fail(http.StatusBadRequest, "seq deve ser o número da via armazenada (1 = como emitido)")
		}
		var meta notice.StoredPDF
		if b, meta, err = h.svc.PDFVersion(r.Context(), id, n); errors.Is(err, cases.ErrNoPDF) {
			return fail(http.StatusNotFound, "o documento %s não tem PDF armazenado nº %d", id, n)
		} else if err != nil {
			return err
		}
		sha = meta.SHA256
	} else {
		var err error
		if b, sha, err = h.svc.NoticePDF(r.Context(), id); err != nil {
			return err
		}
	}
	if sha != "" {
		w.Header().Set("X-Sossego-SHA256", sha)
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`inline; filename="%s.pdf"`, id))
	_, err := w.Write(b)
	return err
}

func (h *WorkflowAPI) audit(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	es, err := h.svc.Audit(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, es)
	return nil
}

func (h *WorkflowAPI) history(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	code := r.URL.Query().Get("code")
	if code == "" {
		return fail(http.StatusBadRequest, "informe o código municipal: ?code=lapa")
	}
	hs, err := h.svc.History(r.Context(), r.PathValue("document"), code)
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, hs)
	return nil
}

func (h *WorkflowAPI) evidence(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	// Build in memory first: a failure must not leave a half-written zip
	// with a 200 status.
	var buf bytes.Buffer
	if _, err := h.svc.Export(r.Context(), r.PathValue("id"), &buf, nil); err != nil {
		return err
	}
	name := strings.TrimSuffix(strings.ReplaceAll(evidence.BagName(r.PathValue("id"))+".zip", "\"", ""), ".zip") + ".zip"
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, name))
	_, err := w.Write(buf.Bytes())
	return err
}

// constatacaoBody is the JSON body of a constatação.
type constatacaoBody struct {
	FollowsUp string `json:"follows_up"`
	Source    struct {
		Kind            notice.SourceKind `json:"kind"`
		EstablishmentID string            `json:"establishment_id"`
		Name            string            `json:"name"`
		Document        string            `json:"document"`
		Address         string            `json:"address"`
	} `json:"source"`
	Position    notice.Position `json:"position"`
	At          time.Time       `json:"at"`
	Heard       string          `json:"heard"`
	Measurement struct {
		Kind           notice.MeasurementKind `json:"kind"`
		SourceAttested bool                   `json:"source_attested"`
		Meter          *notice.Meter          `json:"meter"`
		LAeqDB         *float64               `json:"laeq_db"`
		LAFmaxDB       *float64               `json:"lafmax_db"`
		DurationS      int                    `json:"duration_s"`
		ResidualDB     *float64               `json:"residual_db"`
		Evidence       string                 `json:"evidence"`
	} `json:"measurement"`
}

func (h *WorkflowAPI) postConstatacao(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
	var b constatacaoBody
	if err := readJSON(w, r, 64<<10, optionalBody, &b); err != nil {
		return err
	}
	m := b.Measurement
	v, err := h.svc.RecordConstatacao(r.Context(), r.PathValue("id"), workflow.ConstatacaoRequest{FollowsUp: b.FollowsUp,
		Source: workflow.SourceRequest(b.Source), Position: b.Position, At: b.At, Heard: b.Heard,
		Measurement: workflow.MeasurementRequest{Kind: m.Kind, SourceAttested: m.SourceAttested, Meter: m.Meter, LAeqDB: m.LAeqDB,
			LAFmaxDB: m.LAFmaxDB, DurationS: m.DurationS, ResidualDB: m.ResidualDB, Evidence: m.Evidence}}, u)
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusCreated, v)
	return nil
}

func (h *WorkflowAPI) getConstatacoes(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	out, err := h.svc.Constatacoes(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, out)
	return nil
}

func (h *WorkflowAPI) ack(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
	var body struct{}
	if err := readJSON(w, r, 16<<10, optionalBody, &body); err != nil {
		return err
	}
	v, err := h.svc.Ack(r.Context(), r.PathValue("id"), u)
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, v)
	return nil
}

func (h *WorkflowAPI) assign(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
	var body struct {
		Assignee string `json:"assignee"`
	}
	if err := readJSON(w, r, 16<<10, optionalBody, &body); err != nil {
		return err
	}
	v, err := h.svc.Assign(r.Context(), r.PathValue("id"), body.Assignee, u)
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, v)
	return nil
}

func (h *WorkflowAPI) alertCase(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	v, err := h.svc.AlertCase(r.Context(), r.PathValue("id"))
	if err != nil {
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
	out, err := h.svc.Recent(r.Context(), limit)
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, out)
	return nil
}
