package dashboard

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/docid"
)

// WorkflowUser is who is calling and their role (fiscal, operador, admin). The
// signing fiscal is the logged-in user: FullName and Matricula are printed
// on the acts and named in the audit trail.
type WorkflowUser struct {
	ID        string
	Name      string
	Role      string
	FullName  string
	Matricula string
	Email     string
	Phone     string
}

// WorkflowUserFunc tells who made the request; ok is false when nobody is
// logged in.
type WorkflowUserFunc func(r *http.Request) (WorkflowUser, bool)

// WorkflowAPI serves the workflow routes under /api/v1.
type WorkflowAPI struct {
	svc  *WorkflowService
	user WorkflowUserFunc
	mux  *http.ServeMux
}

var _ http.Handler = (*WorkflowAPI)(nil)

// NewWorkflowAPI returns the handler. Mount it at / (it only answers its own routes):
//
//	mux.Handle("/api/v1/notices/", h)
//	mux.Handle("/api/v1/alerts/{id}/notice", h) …
func NewWorkflowAPI(svc *WorkflowService, user WorkflowUserFunc) *WorkflowAPI {
	h := &WorkflowAPI{svc: svc, user: user, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /api/v1/alerts/{id}/notice", h.read(h.getAlertNotice))
	h.mux.HandleFunc("POST /api/v1/alerts/{id}/notice", h.act(h.createNotice))
	h.mux.HandleFunc("GET /api/v1/alerts/{id}/evidence", h.read(h.evidence))
	h.mux.HandleFunc("GET /api/v1/notices/{id}", h.read(h.getNotice))
	h.mux.HandleFunc("PATCH /api/v1/notices/{id}", h.act(h.editNotice))
	h.mux.HandleFunc("POST /api/v1/notices/{id}/correct", h.act(h.correct))
	h.mux.HandleFunc("POST /api/v1/alerts/{id}/constatacoes", h.act(h.postConstatacao))
	h.mux.HandleFunc("GET /api/v1/alerts/{id}/constatacoes", h.read(h.getConstatacoes))
	h.mux.HandleFunc("GET /api/v1/notices/{id}/pdf", h.read(h.pdf))
	h.mux.HandleFunc("GET /api/v1/notices/{id}/audit", h.read(h.audit))
	h.mux.HandleFunc("GET /api/v1/parties/{document}/history", h.read(h.history))
	for _, a := range []notice.ActionKind{notice.ActIssue, notice.ActAcknowledge, notice.ActRefuse, notice.ActRegularise,
		notice.ActEscalate, notice.ActCancel, notice.ActDecide} {
		h.mux.HandleFunc("POST /api/v1/notices/{id}/"+string(a), h.act(h.step(a)))
	}
	h.triageRoutes()
	return h
}

// ServeHTTP routes the request.
func (h *WorkflowAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Routes lists the patterns, for mounting on another mux.
func WorkflowRoutes() []string {
	return append([]string{"/api/v1/alerts/{id}/notice", "/api/v1/alerts/{id}/evidence", "/api/v1/alerts/{id}/constatacoes",
		"/api/v1/notices/", "/api/v1/parties/"}, triagePatterns...)
}

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
			var he *httpError
			switch {
			case errors.As(err, &he):
				apiError(w, he.status, he.msg)
			case errors.Is(err, notice.ErrForbidden):
				apiError(w, http.StatusForbidden, err.Error())
			case errors.Is(err, notice.ErrTransition), errors.Is(err, cases.ErrConflict), errors.Is(err, ErrNoNotice),
				errors.Is(err, notice.ErrNoGround):
				apiError(w, http.StatusConflict, err.Error())
			case errors.Is(err, notice.ErrInput):
				// notice.ErrInput's own words are for developers.
				apiError(w, http.StatusUnprocessableEntity, strings.Replace(err.Error(), notice.ErrInput.Error()+": ", "", 1))
			case errors.Is(err, cases.ErrNotFound), errors.Is(err, ErrNotFound):
				apiError(w, http.StatusNotFound, err.Error())
			default:
				serverError(w, h.svc.Log, "fiscalização "+r.Method+" "+r.URL.Path, err)
			}
		}
	}
}

// NoticeView is a document with its deadlines and the actions allowed now.
type NoticeView struct {
	notice.Document
	Stored    bool                  `json:"stored"`
	StateText string                `json:"state_label"`
	Deadlines []notice.DeadlineView `json:"deadlines"`
	Pending   []notice.Field        `json:"pending_fields"`
	Actions   []notice.ActionKind   `json:"actions"`
	Children  []string              `json:"children,omitempty"`
	// Constatacoes of the alert (a draft preview and the stored first
	// document), each with whether it grounds a notice.
	Constatacoes []ConstatacaoView `json:"alert_constatacoes,omitempty"`
	// Grounded is false for a preview no constatação grounds yet; Why
	// says what is needed (pt-BR).
	Grounded bool   `json:"grounded"`
	Why      string `json:"why,omitempty"`
	// Establishments of the register the alert's sensor watches, to name
	// the source of a constatação (id = CNPJ/CPF).
	Establishments []Establishment `json:"establishments,omitempty"`
	// Now is the service's clock, the default instant of a constatação.
	Now time.Time `json:"now"`
}

// Establishment is a register establishment a constatação may name.
type Establishment struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Document string `json:"document"`
	Address  string `json:"address"`
}

func (h *WorkflowAPI) view(r *http.Request, d notice.Document, stored bool) (NoticeView, error) {
	c, ok := h.svc.Codes.Code(d.Draft.CodeID)
	if !ok {
		return NoticeView{}, fmt.Errorf("o código %q do documento não está carregado", d.Draft.CodeID)
	}
	v := NoticeView{Document: d, Stored: stored, StateText: d.StateLabel(), Deadlines: notice.Deadlines(c, &d, h.svc.now()),
		Pending: d.Draft.Pending(), Actions: allowed(d, h.svc.now()), Grounded: len(d.Draft.Constatacoes) > 0}
	if v.Grounded {
		if err := d.Draft.Constatacoes[0].Grounds(); err != nil {
			v.Grounded, v.Why = false, err.Error()
		}
	} else if d.Draft.Kind != notice.KindAuto {
		v.Why = "o alerta é um indício, não uma infração: registre a constatação do fiscal antes de emitir"
	}
	v.Now = h.svc.now()
	if d.State == notice.StateDraft || d.Draft.Kind.IsNotice() {
		if sn, ok := h.svc.Registry.Sensor(d.Draft.Finding.Sensor); ok {
			for _, e := range sn.Establishments {
				v.Establishments = append(v.Establishments, Establishment{ID: docid.Normalize(e.Document), Name: e.Name, Document: e.Document, Address: e.Address})
			}
		}
	}
	if d.Draft.RefersTo == nil && d.Draft.Finding.AlertID != "" {
		ks, err := h.svc.Cases.Constatacoes(r.Context(), d.Draft.Finding.AlertID)
		if err != nil {
			return v, err
		}
		for _, k := range ks {
			v.Constatacoes = append(v.Constatacoes, constatacaoView(k))
		}
	}
	if v.Pending == nil {
		v.Pending = []notice.Field{}
	}
	if stored {
		kids, err := h.svc.Cases.Children(r.Context(), d.ID)
		if err != nil {
			return v, err
		}
		for _, k := range kids {
			v.Children = append(v.Children, k.ID)
		}
	}
	return v, nil
}

// allowed lists the actions whose state precondition holds at now
// (parameters are checked when the action is tried). The auto after a
// notice is offered only once its prazo ran out: before that it is
// certain to be refused.
func allowed(d notice.Document, now time.Time) []notice.ActionKind {
	k := d.Draft.Kind
	out := []notice.ActionKind{}
	switch d.State {
	case notice.StateDraft:
		out = append(out, notice.ActIssue, notice.ActCancel)
		if k.IsNotice() && d.Draft.NotWhen != "" {
			out = append(out, notice.ActEscalate)
		}
	case notice.StateIssued:
		if k == notice.KindRelatorio {
			out = append(out, notice.ActEscalate)
		} else {
			out = append(out, notice.ActAcknowledge, notice.ActRefuse)
		}
	case notice.StateAcknowledged, notice.StateRefused:
		if k.IsNotice() {
			out = append(out, notice.ActRegularise)
			if d.PrazoEnd.IsZero() || d.PrazoExpired(now) {
				out = append(out, notice.ActEscalate)
			}
		} else if k == notice.KindAuto {
			out = append(out, notice.ActDecide)
		}
	}
	return out
}

func (h *WorkflowAPI) getAlertNotice(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	id := r.PathValue("id")
	if d, err := h.svc.Cases.ForAlert(r.Context(), id); err == nil {
		v, err := h.view(r, d, true)
		if err != nil {
			return err
		}
		apiJSON(w, http.StatusOK, v)
		return nil
	} else if !errors.Is(err, cases.ErrNotFound) {
		return err
	}
	cs, err := h.svc.Load(r.Context(), id)
	if err != nil {
		return err
	}
	// The preview: from the constatação that grounds a notice when there
	// is one, else the automatic text of the indício with what is missing.
	var d notice.Draft
	k, gerr := h.grounding(r, id, "")
	if gerr == nil {
		d, err = h.svc.DraftFrom(r.Context(), cs, k)
	} else {
		d, err = h.svc.Draft(r.Context(), cs)
	}
	if err != nil {
		return err
	}
	v, err := h.view(r, notice.Document{Draft: d, State: notice.StateDraft}, false)
	if err != nil {
		return err
	}
	if gerr != nil {
		v.Grounded, v.Why = false, gerr.Error()
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
	id := r.PathValue("id")
	var b createBody
	if err := readJSON(w, r, 64<<10, optionalBody, &b); err != nil {
		return err
	}
	if d, err := h.svc.Cases.ForAlert(r.Context(), id); err == nil {
		v, err := h.view(r, d, true)
		if err != nil {
			return err
		}
		apiJSON(w, http.StatusOK, v) // idempotent
		return nil
	}
	cs, err := h.svc.Load(r.Context(), id)
	if err != nil {
		return err
	}
	k, err := h.grounding(r, id, b.ConstatacaoID)
	if err != nil {
		return err
	}
	d, err := h.svc.DraftFrom(r.Context(), cs, k)
	if err != nil {
		return err
	}
	doc, err := h.svc.Cases.Create(r.Context(), d, actor(u), h.svc.now())
	if err != nil {
		return err
	}
	h.docChanged("draft", doc, u, doc.Draft.Prepared)
	v, err := h.view(r, doc, true)
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusCreated, v)
	return nil
}

// actor is the user as the audit trail names them: the full name when the
// user register has it.
func actor(u WorkflowUser) notice.Actor {
	name := strings.TrimSpace(u.FullName)
	if name == "" {
		name = u.Name
	}
	return notice.Actor{ID: u.ID, Name: name, Role: u.Role, Matricula: strings.TrimSpace(u.Matricula)}
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

// document is the document of the request's {id} and its code.
func (h *WorkflowAPI) document(r *http.Request) (notice.Document, *codes.Code, error) {
	doc, err := h.svc.Cases.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return doc, nil, fmt.Errorf("documento %q: %w", r.PathValue("id"), err)
	}
	c, ok := h.svc.Codes.Code(doc.Draft.CodeID)
	if !ok {
		return doc, nil, fmt.Errorf("o código %q do documento não está carregado", doc.Draft.CodeID)
	}
	return doc, c, nil
}

func (h *WorkflowAPI) step(k notice.ActionKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
		var b stepBody
		if err := readJSON(w, r, 64<<10, optionalBody, &b); err != nil {
			return err
		}
		doc, c, err := h.document(r)
		if err != nil {
			return err
		}
		a := notice.Action{Kind: k, Actor: actor(u), At: h.svc.now(), PrazoDays: b.PrazoDays, ImminentRisk: b.ImminentRisk,
			SignedBy: b.SignedBy, Witnesses: b.Witnesses, Declaration: b.Declaration, Observation: b.Observation, Punished: b.Punished, Note: b.Note}
		if k == notice.ActIssue || (k == notice.ActEscalate && b.ImminentRisk) {
			// The signing fiscal is the logged-in user.
			ag, err := agentOf(u)
			if err != nil {
				return err
			}
			if (b.AgentName != "" && !strings.EqualFold(strings.Join(strings.Fields(b.AgentName), " "), ag.Name)) ||
				(b.Matricula != "" && b.Matricula != ag.Matricula) {
				return fail(http.StatusUnprocessableEntity, "quem assina é o usuário logado (%s, matrícula %s); não informe outro agente", ag.Name, ag.Matricula)
			}
			a.Agent = &ag
		}
		if b.FollowUp != "" {
			fu, err := h.svc.Cases.Constatacao(r.Context(), b.FollowUp)
			if err != nil {
				return err
			}
			a.FollowUp = &fu
		}
		var render cases.Render
		if k == notice.ActIssue || k == notice.ActAcknowledge || k == notice.ActRefuse {
			render = func(d notice.Document) ([]byte, error) { return h.svc.PDF(r.Context(), d) }
		}
		next, auto, err := h.svc.Cases.ApplyRender(r.Context(), c, doc.ID, a, render)
		if err != nil {
			return err
		}
		h.docChanged(string(k), next, u, a.At)
		if auto != nil {
			h.docChanged("draft", *auto, u, a.At)
		}
		v, err := h.view(r, next, true)
		if err != nil {
			return err
		}
		if auto != nil {
			av, err := h.view(r, *auto, true)
			if err != nil {
				return err
			}
			apiJSON(w, http.StatusCreated, map[string]any{"notice": v, "auto": av})
			return nil
		}
		apiJSON(w, http.StatusOK, v)
		return nil
	}
}

func (h *WorkflowAPI) getNotice(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	d, err := h.svc.Cases.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return fmt.Errorf("documento %q: %w", r.PathValue("id"), err)
	}
	v, err := h.view(r, d, true)
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusOK, v)
	return nil
}

func (h *WorkflowAPI) pdf(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	d, err := h.svc.Cases.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return fmt.Errorf("documento %q: %w", r.PathValue("id"), err)
	}
	var b []byte
	if v := r.URL.Query().Get("seq"); v != "" {
		// ?seq=1: the act as issued; ?seq=2: as delivered.
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fail(http.StatusBadRequest, "seq deve ser o número da via armazenada (1 = como emitido)")
		}
		var meta notice.StoredPDF
		if b, meta, err = h.svc.Cases.PDFVersion(r.Context(), d.ID, n); errors.Is(err, cases.ErrNoPDF) {
			return fail(http.StatusNotFound, "o documento %s não tem PDF armazenado nº %d", d.ID, n)
		} else if err != nil {
			return err
		}
		w.Header().Set("X-Sossego-SHA256", meta.SHA256)
	} else {
		if b, err = h.svc.StoredPDF(r.Context(), d); err != nil {
			return err
		}
		if d.PDF != nil {
			w.Header().Set("X-Sossego-SHA256", d.PDF.SHA256)
		}
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`inline; filename="%s.pdf"`, d.ID))
	_, err = w.Write(b)
	return err
}

func (h *WorkflowAPI) audit(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	id := r.PathValue("id")
	if _, err := h.svc.Cases.Get(r.Context(), id); err != nil {
		return fmt.Errorf("documento %q: %w", id, err)
	}
	es, err := h.svc.Cases.Audit(r.Context(), id)
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
	hs, err := h.svc.Cases.History(r.Context(), r.PathValue("document"), code)
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
	name := strings.TrimSuffix(strings.ReplaceAll(evidenceName(r.PathValue("id")), "\"", ""), ".zip") + ".zip"
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, name))
	_, err := w.Write(buf.Bytes())
	return err
}
