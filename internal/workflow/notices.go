package workflow

// The notices and autos of an alert: the preview, the first document, its
// edits and correction, the workflow steps (issue, ciente, recusa with two
// witnesses, regularisation, auto de infração, decision), the PDFs and the
// audit trail.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/docid"
)

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

// view is a document as the API shows it.
func (s *Service) view(ctx context.Context, d notice.Document, stored bool) (NoticeView, error) {
	c, ok := s.codes.Code(d.Draft.CodeID)
	if !ok {
		return NoticeView{}, fmt.Errorf("o código %q do documento não está carregado", d.Draft.CodeID)
	}
	v := NoticeView{Document: d, Stored: stored, StateText: d.StateLabel(), Deadlines: notice.Deadlines(c, &d, s.now()),
		Pending: d.Draft.Pending(), Actions: allowed(d, s.now()), Grounded: len(d.Draft.Constatacoes) > 0}
	if v.Grounded {
		if err := d.Draft.Constatacoes[0].Grounds(); err != nil {
			v.Grounded, v.Why = false, err.Error()
		}
	} else if d.Draft.Kind != notice.KindAuto {
		v.Why = "o alerta é um indício, não uma infração: registre a constatação do fiscal antes de emitir"
	}
	v.Now = s.now()
	if d.State == notice.StateDraft || d.Draft.Kind.IsNotice() {
		if sn, ok := s.registry.Sensor(d.Draft.Finding.Sensor); ok {
			for _, e := range sn.Establishments {
				v.Establishments = append(v.Establishments, Establishment{ID: docid.Normalize(e.Document), Name: e.Name, Document: e.Document, Address: e.Address})
			}
		}
	}
	if d.Draft.RefersTo == nil && d.Draft.Finding.AlertID != "" {
		ks, err := s.cases.Constatacoes.Constatacoes(ctx, d.Draft.Finding.AlertID)
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
		kids, err := s.cases.Documents.Children(ctx, d.ID)
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

// AlertNotice is the alert's first document when stored, else its preview:
// from the constatação that grounds a notice when there is one, else the
// automatic text of the indício with what is missing.
func (s *Service) AlertNotice(ctx context.Context, alertID string) (NoticeView, error) {
	if d, err := s.cases.Documents.ForAlert(ctx, alertID); err == nil {
		return s.view(ctx, d, true)
	} else if !errors.Is(err, cases.ErrNotFound) {
		return NoticeView{}, err
	}
	cs, err := s.Load(ctx, alertID)
	if err != nil {
		return NoticeView{}, err
	}
	var d notice.Draft
	k, gerr := s.grounding(ctx, alertID, "")
	if gerr == nil {
		d, err = s.DraftFrom(ctx, cs, k)
	} else {
		d, err = s.Draft(ctx, cs)
	}
	if err != nil {
		return NoticeView{}, err
	}
	v, err := s.view(ctx, notice.Document{Draft: d, State: notice.StateDraft}, false)
	if err != nil {
		return v, err
	}
	if gerr != nil {
		v.Grounded, v.Why = false, gerr.Error()
	}
	return v, nil
}

// CreateNotice stores the alert's first document, resting on the
// constatação constatacaoID (default: the alert's latest); created is false
// when the alert had one already (returned as it is).
func (s *Service) CreateNotice(ctx context.Context, alertID, constatacaoID string, u User) (v NoticeView, created bool, err error) {
	if d, err := s.cases.Documents.ForAlert(ctx, alertID); err == nil {
		v, err := s.view(ctx, d, true)
		return v, false, err
	}
	cs, err := s.Load(ctx, alertID)
	if err != nil {
		return v, false, err
	}
	k, err := s.grounding(ctx, alertID, constatacaoID)
	if err != nil {
		return v, false, err
	}
	d, err := s.DraftFrom(ctx, cs, k)
	if err != nil {
		return v, false, err
	}
	doc, err := s.cases.Documents.Create(ctx, d, actor(u), s.now())
	if err != nil {
		return v, false, err
	}
	s.docChanged("draft", doc, u, doc.Draft.Prepared)
	v, err = s.view(ctx, doc, true)
	return v, true, err
}

// document is the stored document id and its code.
func (s *Service) document(ctx context.Context, id string) (notice.Document, *codes.Code, error) {
	doc, err := s.cases.Documents.Get(ctx, id)
	if err != nil {
		return doc, nil, fmt.Errorf("documento %q: %w", id, err)
	}
	c, ok := s.codes.Code(doc.Draft.CodeID)
	if !ok {
		return doc, nil, fmt.Errorf("o código %q do documento não está carregado", doc.Draft.CodeID)
	}
	return doc, c, nil
}

// Notice is the stored document id.
func (s *Service) Notice(ctx context.Context, id string) (NoticeView, error) {
	d, err := s.cases.Documents.Get(ctx, id)
	if err != nil {
		return NoticeView{}, fmt.Errorf("documento %q: %w", id, err)
	}
	return s.view(ctx, d, true)
}

// Edit changes fields of the draft id.
func (s *Service) Edit(ctx context.Context, id string, changes []notice.FieldChange, u User) (NoticeView, error) {
	doc, c, err := s.document(ctx, id)
	if err != nil {
		return NoticeView{}, err
	}
	at := s.now()
	next, edits, err := s.cases.Steps.Edit(ctx, c, doc.ID, actor(u), at, changes)
	if err != nil {
		return NoticeView{}, err
	}
	if len(edits) > 0 {
		s.docChanged("edit", next, u, at)
	}
	return s.view(ctx, next, true)
}

// Correct drafts the act that corrects the issued act id.
func (s *Service) Correct(ctx context.Context, id, reason string, u User) (old, correction NoticeView, err error) {
	doc, c, err := s.document(ctx, id)
	if err != nil {
		return old, correction, err
	}
	at := s.now()
	o, corr, err := s.cases.Steps.Correct(ctx, c, doc.ID, actor(u), at, reason)
	if err != nil {
		return old, correction, err
	}
	s.docChanged("correct", o, u, at)
	s.docChanged("draft", corr, u, at)
	if old, err = s.view(ctx, o, true); err != nil {
		return old, correction, err
	}
	correction, err = s.view(ctx, corr, true)
	return old, correction, err
}

// StepRequest is a workflow step on a document, with what the step needs.
type StepRequest struct {
	Kind notice.ActionKind
	// AgentName and Matricula, if given, must be the logged-in user's: the
	// signing fiscal is who acts.
	AgentName    string
	Matricula    string
	PrazoDays    int
	ImminentRisk bool
	SignedBy     string
	Witnesses    []notice.Witness
	Declaration  string
	Observation  string
	// FollowUp is the id of the constatação after the prazo (auto).
	FollowUp string
	Punished *bool
	Note     string
}

// Step applies a workflow step to the document id; auto is the auto de
// infração the step drafted, if any.
func (s *Service) Step(ctx context.Context, id string, req StepRequest, u User) (next NoticeView, auto *NoticeView, err error) {
	doc, c, err := s.document(ctx, id)
	if err != nil {
		return next, nil, err
	}
	a, err := s.action(ctx, req, u)
	if err != nil {
		return next, nil, err
	}
	var render cases.Render
	if k := req.Kind; k == notice.ActIssue || k == notice.ActAcknowledge || k == notice.ActRefuse {
		render = func(d notice.Document) ([]byte, error) { return s.render(ctx, d) }
	}
	nd, ad, err := s.cases.Steps.ApplyRender(ctx, c, doc.ID, a, render)
	if err != nil {
		return next, nil, err
	}
	s.docChanged(string(req.Kind), nd, u, a.At)
	if ad != nil {
		s.docChanged("draft", *ad, u, a.At)
	}
	if next, err = s.view(ctx, nd, true); err != nil || ad == nil {
		return next, nil, err
	}
	av, err := s.view(ctx, *ad, true)
	if err != nil {
		return next, nil, err
	}
	return next, &av, nil
}

// action is the step as notice's state machine takes it: the signing
// fiscal is the logged-in user; a follow-up constatação is read from the
// store.
func (s *Service) action(ctx context.Context, b StepRequest, u User) (notice.Action, error) {
	k := b.Kind
	a := notice.Action{Kind: k, Actor: actor(u), At: s.now(), PrazoDays: b.PrazoDays, ImminentRisk: b.ImminentRisk,
		SignedBy: b.SignedBy, Witnesses: b.Witnesses, Declaration: b.Declaration, Observation: b.Observation, Punished: b.Punished, Note: b.Note}
	if k == notice.ActIssue || (k == notice.ActEscalate && b.ImminentRisk) {
		ag, err := agentOf(u)
		if err != nil {
			return a, err
		}
		if (b.AgentName != "" && !strings.EqualFold(strings.Join(strings.Fields(b.AgentName), " "), ag.Name)) ||
			(b.Matricula != "" && b.Matricula != ag.Matricula) {
			return a, invalid("quem assina é o usuário logado (%s, matrícula %s); não informe outro agente", ag.Name, ag.Matricula)
		}
		a.Agent = &ag
	}
	if b.FollowUp != "" {
		fu, err := s.cases.Constatacoes.Constatacao(ctx, b.FollowUp)
		if err != nil {
			return a, err
		}
		a.FollowUp = &fu
	}
	return a, nil
}

// NoticePDF is the PDF of the document id: the bytes stored at issue for
// an issued act, a fresh rendering for a draft; sha is the stored PDF's
// SHA-256 ("" when none is stored).
func (s *Service) NoticePDF(ctx context.Context, id string) (b []byte, sha string, err error) {
	d, err := s.cases.Documents.Get(ctx, id)
	if err != nil {
		return nil, "", fmt.Errorf("documento %q: %w", id, err)
	}
	if b, err = s.storedPDF(ctx, d); err != nil {
		return nil, "", err
	}
	if d.PDF != nil {
		sha = d.PDF.SHA256
	}
	return b, sha, nil
}

// PDFVersion is the seq-th PDF stored of the document id (1: as issued; 2:
// as delivered); cases.ErrNoPDF when there is none.
func (s *Service) PDFVersion(ctx context.Context, id string, seq int) ([]byte, notice.StoredPDF, error) {
	d, err := s.cases.Documents.Get(ctx, id)
	if err != nil {
		return nil, notice.StoredPDF{}, fmt.Errorf("documento %q: %w", id, err)
	}
	return s.cases.PDFs.PDFVersion(ctx, d.ID, seq)
}

// Audit is the audit trail of the document id.
func (s *Service) Audit(ctx context.Context, id string) ([]cases.Entry, error) {
	if _, err := s.cases.Documents.Get(ctx, id); err != nil {
		return nil, fmt.Errorf("documento %q: %w", id, err)
	}
	return s.cases.Documents.Audit(ctx, id)
}

// History is the party's prior infractions under the code.
func (s *Service) History(ctx context.Context, document, codeID string) ([]codes.PriorInfraction, error) {
	return s.cases.Documents.History(ctx, document, codeID)
}
