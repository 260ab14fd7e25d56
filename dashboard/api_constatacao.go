package dashboard

// Constatações and draft edits.
//
//	POST  /api/v1/alerts/{id}/constatacoes   fiscal: record a constatação (body: constatacaoBody)
//	GET   /api/v1/alerts/{id}/constatacoes   any: the alert's constatações, each with whether it grounds a notice
//	PATCH /api/v1/notices/{id}               fiscal: edit a draft ({"changes": [{"field": …, "value": …}]})

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/docid"
	"github.com/sossego/sossego/internal/registry"
)

// Calibrations decides whether a sensor's readings at an instant may found
// a constatação (*calibrationdb.Register satisfies it): the one rule the
// alert card's metrology note shows too (calibration.Decide).
type Calibrations interface {
	Decide(ctx context.Context, sensor string, m calibration.SensorMeter, at time.Time) calibration.Decision
}

// calibration is the calibration decision of a sensor's meter at at: the
// calibration register's when wired, else calibration.Decide on the
// register of sensors' meter alone.
func (s *WorkflowService) calibration(sn registry.Sensor, at time.Time) (bool, string) {
	m := sn.Meter.Calibration()
	if s.Calibrations == nil {
		d := calibration.Decide(calibration.Facts{}, m, at)
		return d.OK, d.Why
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := s.Calibrations.Decide(ctx, sn.ID, m, at)
	return d.OK, d.Why
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

// ConstatacaoView is a stored constatação and whether it grounds a notice.
type ConstatacaoView struct {
	notice.Constatacao
	Grounds bool `json:"grounds"`
	// Why says, when it does not ground a notice, why and what is needed.
	Why string `json:"why,omitempty"`
}

func constatacaoView(k notice.Constatacao) ConstatacaoView {
	v := ConstatacaoView{Constatacao: k, Grounds: true}
	if err := k.Grounds(); err != nil {
		v.Grounds, v.Why = false, strings.TrimPrefix(err.Error(), notice.ErrNoGround.Error()+": ")
	}
	return v
}

// agentOf is the signing fiscal: the logged-in user's full name and
// matrícula.
func agentOf(u WorkflowUser) (notice.Agent, error) {
	if strings.TrimSpace(u.FullName) == "" || strings.TrimSpace(u.Matricula) == "" {
		return notice.Agent{}, fail(http.StatusUnprocessableEntity, "o seu cadastro de usuário (%s) não tem nome completo e matrícula: "+
			"peça ao administrador que os preencha (página de usuários ou sossego users edit); quem assina é o usuário logado", u.ID)
	}
	return notice.Agent{Name: strings.TrimSpace(u.FullName), Matricula: strings.TrimSpace(u.Matricula)}, nil
}

func (h *WorkflowAPI) postConstatacao(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
	var b constatacaoBody
	if err := readJSON(w, r, 64<<10, optionalBody, &b); err != nil {
		return err
	}
	cs, err := h.svc.Load(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	ag, err := agentOf(u)
	if err != nil {
		return err
	}
	now := h.svc.now()
	k, err := h.svc.Constatacao(cs, b, ag, actor(u), now)
	if err != nil {
		return err
	}
	if err := notice.CheckConstatacao(k, now); err != nil {
		return err
	}
	if k, err = h.svc.Cases.RecordConstatacao(r.Context(), k); err != nil {
		return err
	}
	h.changed(WorkflowChange{AlertID: cs.Alert.ID, NoticeID: k.FollowsUp, Action: "constatacao", By: u.ID, At: now})
	apiJSON(w, http.StatusCreated, constatacaoView(k))
	return nil
}

// Constatacao assembles a constatação from its body and the case: the
// register's establishment, the sensor's window and calibration verdict,
// the limit in force at its time.
func (s *WorkflowService) Constatacao(cs *AlertCase, b constatacaoBody, ag notice.Agent, by notice.Actor, now time.Time) (notice.Constatacao, error) {
	k := notice.Constatacao{AlertID: cs.Alert.ID, CodeID: cs.Code.ID, FollowsUp: strings.TrimSpace(b.FollowsUp),
		Position: b.Position, At: b.At, Heard: strings.TrimSpace(b.Heard), Agent: ag, RecordedBy: by, RecordedAt: now}
	k.Position.Address = strings.TrimSpace(k.Position.Address)
	k.Source = notice.Source{Kind: b.Source.Kind, Name: strings.TrimSpace(b.Source.Name), Document: strings.TrimSpace(b.Source.Document),
		Address: strings.TrimSpace(b.Source.Address)}
	estType := cs.Alert.EstablishmentType
	switch b.Source.Kind {
	case notice.SourceEstablishment:
		id := docid.Normalize(b.Source.EstablishmentID)
		k.Source.EstablishmentID = id
		if id != "" {
			e, ok := s.establishment(cs, id)
			if !ok {
				return k, fmt.Errorf("%w: fonte: o estabelecimento %q não está no cadastro; escolha um da lista ou informe a fonte como “outra”",
					notice.ErrInput, b.Source.EstablishmentID)
			}
			k.Source.Name, k.Source.Document, k.Source.Address, k.Source.Type = e.Name, e.Document, e.Address, e.Type
			if e.Type != "" {
				estType = e.Type
			}
		}
	case notice.SourceUnidentified:
		k.Source = notice.Source{Kind: notice.SourceUnidentified}
	}
	m := b.Measurement
	k.Measurement = notice.Measurement{Kind: m.Kind, Evidence: strings.TrimSpace(m.Evidence)}
	switch m.Kind {
	case notice.MeasureSensor:
		if k.FollowsUp != "" {
			return k, fmt.Errorf("%w: a constatação após o prazo precisa de nova medição no local ou da declaração do fiscal; a janela do alerta é anterior à notificação", notice.ErrInput)
		}
		a := cs.Alert
		laeq, lafmax := a.LAeqDB, a.LAFmaxDB
		k.Measurement.Sensor, k.Measurement.WindowStart, k.Measurement.WindowEnd = a.Sensor, a.WindowStart, a.WindowEnd
		k.Measurement.SensorGrade, k.Measurement.SourceAttested = cs.Site.Grade, m.SourceAttested
		k.Measurement.LAeqDB, k.Measurement.LAFmaxDB = &laeq, &lafmax
		if sn, ok := s.Registry.Sensor(a.Sensor); ok {
			k.Measurement.CalibrationOK, k.Measurement.CalibrationNote = s.calibration(sn, a.WindowStart)
		}
		if a.LimitDB > 0 {
			lim := a.LimitDB
			k.Measurement.LimitDB = &lim
		}
	case notice.MeasureOnSite:
		k.Measurement.Meter, k.Measurement.LAeqDB, k.Measurement.LAFmaxDB = m.Meter, m.LAeqDB, m.LAFmaxDB
		k.Measurement.DurationS, k.Measurement.ResidualDB = m.DurationS, m.ResidualDB
	}
	if m.Kind == notice.MeasureOnSite || m.Kind == notice.MeasureStatement {
		if !k.At.IsZero() {
			if l, ok := cs.Code.ActiveLimit(cs.Site.Zone, estType, k.At); ok && l.DBA > 0 {
				lim := l.DBA
				k.Measurement.LimitDB = &lim
			}
		}
	}
	return k, nil
}

// establishment finds an establishment of the register by its CNPJ/CPF:
// the alert's sensor's first, then any sensor's.
func (s *WorkflowService) establishment(cs *AlertCase, id string) (registry.Establishment, bool) {
	var sensors []registry.Sensor
	if sn, ok := s.Registry.Sensor(cs.Alert.Sensor); ok {
		sensors = append(sensors, sn)
	}
	if all, ok := s.Registry.(interface{ Sensors() []registry.Sensor }); ok {
		sensors = append(sensors, all.Sensors()...)
	}
	for _, sn := range sensors {
		for _, e := range sn.Establishments {
			if docid.Normalize(e.Document) == id {
				return e, true
			}
		}
	}
	return registry.Establishment{}, false
}

func (h *WorkflowAPI) getConstatacoes(w http.ResponseWriter, r *http.Request, _ WorkflowUser) error {
	id, err := h.knownAlert(r)
	if err != nil {
		return err
	}
	ks, err := h.svc.Cases.Constatacoes(r.Context(), id)
	if err != nil {
		return err
	}
	out := make([]ConstatacaoView, len(ks))
	for i, k := range ks {
		out[i] = constatacaoView(k)
	}
	apiJSON(w, http.StatusOK, out)
	return nil
}

// grounding picks the constatação a new notice rests on: the one named in
// the request, or the latest first-document constatação of the alert; the
// error says what is missing.
func (h *WorkflowAPI) grounding(r *http.Request, alertID, want string) (notice.Constatacao, error) {
	ks, err := h.svc.Cases.Constatacoes(r.Context(), alertID)
	if err != nil {
		return notice.Constatacao{}, err
	}
	var last *notice.Constatacao
	for i := range ks {
		k := ks[i]
		if want != "" && k.ID == want {
			if k.FollowsUp != "" {
				return k, fail(http.StatusConflict, "a constatação %s acompanha o prazo da %s: ela fundamenta o auto, não uma nova notificação", k.ID, k.FollowsUp)
			}
			return k, k.Grounds()
		}
		if want == "" && k.FollowsUp == "" {
			last = &ks[i]
		}
	}
	if want != "" {
		return notice.Constatacao{}, fmt.Errorf("constatação %q do alerta %s: %w", want, alertID, cases.ErrNotFound)
	}
	if last == nil {
		return notice.Constatacao{}, fmt.Errorf("%w: o alerta é um indício, não uma infração: antes da notificação, registre a constatação do fiscal "+
			"(fonte, onde o fiscal estava, data e hora, o que foi ouvido e a medição que confirma)", notice.ErrNoGround)
	}
	return *last, last.Grounds()
}

type editBody struct {
	Changes []notice.FieldChange `json:"changes"`
}

func (h *WorkflowAPI) editNotice(w http.ResponseWriter, r *http.Request, u WorkflowUser) error {
	var b editBody
	if err := readJSON(w, r, 64<<10, optionalBody, &b); err != nil {
		return err
	}
	doc, c, err := h.document(r)
	if err != nil {
		return err
	}
	at := h.svc.now()
	next, edits, err := h.svc.Cases.Edit(r.Context(), c, doc.ID, actor(u), at, b.Changes)
	if err != nil {
		return err
	}
	if len(edits) > 0 {
		h.docChanged("edit", next, u, at)
	}
	v, err := h.view(r, next, true)
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
	doc, c, err := h.document(r)
	if err != nil {
		return err
	}
	at := h.svc.now()
	old, corr, err := h.svc.Cases.Correct(r.Context(), c, doc.ID, actor(u), at, b.Reason)
	if err != nil {
		return err
	}
	h.docChanged("correct", old, u, at)
	h.docChanged("draft", corr, u, at)
	ov, err := h.view(r, old, true)
	if err != nil {
		return err
	}
	cv, err := h.view(r, corr, true)
	if err != nil {
		return err
	}
	apiJSON(w, http.StatusCreated, map[string]any{"old": ov, "correction": cv})
	return nil
}
