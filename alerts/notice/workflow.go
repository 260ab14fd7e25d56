package notice

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
)

// State is where a document is in the fiscal's workflow.
type State string

// Workflow states.
const (
	StateDraft        State = "draft"        // prepared by the system, not yet a legal act
	StateIssued       State = "issued"       // lavrada by a fiscal, awaiting delivery
	StateAcknowledged State = "acknowledged" // delivered with the party's "ciente"
	StateRefused      State = "refused"      // the party refused to sign; witnessed
	StateRegularised  State = "regularised"  // notice complied with within the prazo
	StateEscalated    State = "escalated"    // an auto de infração was drafted from it
	StateCancelled    State = "cancelled"    // draft discarded
	StateDecided      State = "decided"      // auto judged (punished or not)
)

// Label is the pt-BR name of the state.
func (s State) Label() string {
	switch s {
	case StateDraft:
		return "rascunho"
	case StateIssued:
		return "emitido"
	case StateAcknowledged:
		return "ciente do notificado"
	case StateRefused:
		return "recusa testemunhada"
	case StateRegularised:
		return "regularizado"
	case StateEscalated:
		return "auto de infração lavrado"
	case StateCancelled:
		return "cancelado"
	case StateDecided:
		return "julgado"
	}
	return string(s)
}

// ActionKind names a workflow step.
type ActionKind string

// Workflow actions.
const (
	ActIssue       ActionKind = "issue"
	ActAcknowledge ActionKind = "ciente"
	ActRefuse      ActionKind = "recusa"
	ActRegularise  ActionKind = "regularize"
	ActEscalate    ActionKind = "auto"
	ActCancel      ActionKind = "cancel"
	ActDecide      ActionKind = "decide"
)

// Roles.
const (
	RoleFiscal   = "fiscal"
	RoleOperator = "operador"
	RoleAdmin    = "admin"
)

// Actor is who acts.
type Actor struct {
	ID   string `json:"id"`
	Name string `json:"name"` // full name when the user register has it
	Role string `json:"role"`
	// Matricula is the fiscal's registration number, when known.
	Matricula string `json:"matricula,omitempty"`
}

// Agent is the fiscal who draws a document up.
type Agent struct {
	Name      string `json:"name"`
	Matricula string `json:"matricula"`
}

// Witness is a person who witnessed a refusal.
type Witness struct {
	Name string `json:"name"`
	// DocType is WitnessCPF (check digits verified) or WitnessRG (free
	// text with its Issuer, e.g. "SSP/PR").
	DocType  string `json:"doc_type"`
	Document string `json:"document"`
	Issuer   string `json:"issuer,omitempty"`
}

// Action is one workflow step with its parameters.
type Action struct {
	Kind  ActionKind `json:"kind"`
	Actor Actor      `json:"actor"`
	At    time.Time  `json:"at"`
	// Issue.
	Agent     *Agent `json:"agent,omitempty"`
	PrazoDays int    `json:"prazo_days,omitempty"`
	// ImminentRisk (issue, auto): the fiscal declares the condition under
	// which the code forbids the preliminary notice (Conceição de Macabu
	// Art. 171); the auto is then drawn up directly.
	ImminentRisk bool `json:"imminent_risk,omitempty"`
	// Ciente: name of who signed; recusa: the witnesses.
	SignedBy  string    `json:"signed_by,omitempty"`
	Witnesses []Witness `json:"witnesses,omitempty"`
	// Ciente and recusa: the fiscal's declaration (what happened at the
	// delivery) and observation, printed as recorded.
	Declaration string `json:"declaration,omitempty"`
	Observation string `json:"observation,omitempty"`
	// Auto: the constatação recorded after the prazo that shows the
	// infraction went on.
	FollowUp *Constatacao `json:"follow_up,omitempty"`
	// Decide: whether the penalty was confirmed ("autuado e punido").
	Punished *bool  `json:"punished,omitempty"`
	Note     string `json:"note,omitempty"`
}

// Document is a stored document and its workflow state.
type Document struct {
	ID    string `json:"id"`
	Draft Draft  `json:"draft"`
	State State  `json:"state"`

	Agent        *Agent    `json:"agent,omitempty"`
	PrazoDays    int       `json:"prazo_days,omitempty"`
	ImminentRisk bool      `json:"imminent_risk,omitempty"`
	IssuedAt     time.Time `json:"issued_at,omitzero"`
	CienciaAt    time.Time `json:"ciencia_at,omitzero"` // ciente or refusal instant
	SignedBy     string    `json:"signed_by,omitempty"`
	Witnesses    []Witness `json:"witnesses,omitempty"`
	// PrazoEnd is the exclusive end of the regularisation prazo (the start
	// of the day after the last day, in America/Sao_Paulo).
	PrazoEnd      time.Time `json:"prazo_end,omitzero"`
	RegularisedAt time.Time `json:"regularised_at,omitzero"`
	EscalatedTo   string    `json:"escalated_to,omitempty"` // the auto's id
	DecidedAt     time.Time `json:"decided_at,omitzero"`
	Punished      *bool     `json:"punished,omitempty"`
	Note          string    `json:"note,omitempty"`

	// Declaration and Observation are the fiscal's words at the ciente or
	// the recusa, kept and printed exactly as recorded.
	Declaration string `json:"declaration,omitempty"`
	Observation string `json:"observation,omitempty"`
	// FollowUp is the id of the constatação after the prazo on which the
	// auto de infração rests (on the notice it escalated).
	FollowUp string `json:"follow_up,omitempty"`
	// Edits are the fiscal's changes to the draft, oldest first.
	Edits []Edit `json:"edits,omitempty"`
	// PDF is the act as issued: its bytes are stored once, at issue, and
	// served as they are.
	PDF *StoredPDF `json:"pdf,omitempty"`
	// CorrectedBy is the id of the act that corrects this one after issue.
	CorrectedBy string `json:"corrected_by,omitempty"`
}

// ErrTransition is wrapped by every refused transition; the message is pt-BR
// and says what to do instead.
var ErrTransition = errors.New("transição recusada")

// ErrForbidden is wrapped when the actor's role may not act.
var ErrForbidden = errors.New("ação não permitida para este perfil")

func refuse(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrTransition, fmt.Sprintf(format, a...))
}

// PrazoExpired reports whether the regularisation prazo of an issued notice
// has run out at now.
func (d *Document) PrazoExpired(now time.Time) bool {
	return !d.PrazoEnd.IsZero() && !now.Before(d.PrazoEnd)
}

// Apply performs a on d and returns the new document. It is pure: it
// checks the role, the state, the parameters and the deadlines against a.At,
// and refuses anything else with a pt-BR message. Creating the auto de
// infração itself (BuildAuto) is the caller's job after ActEscalate.
func (d Document) Apply(c *codes.Code, a Action) (Document, error) {
	if a.Actor.Role != RoleFiscal {
		return d, fmt.Errorf("%w: somente um fiscal pode %s (perfil atual: %q)", ErrForbidden, verb(a.Kind), a.Actor.Role)
	}
	if a.At.IsZero() {
		return d, refuse("ação sem data e hora")
	}
	step := steps[a.Kind]
	if step == nil {
		return d, refuse("ação %q desconhecida", a.Kind)
	}
	next := d
	if err := step(&next, a); err != nil {
		return d, err
	}
	return next, nil
}

// steps are the actions' own checks and changes; each changes the document
// only once every check passed.
var steps = map[ActionKind]func(*Document, Action) error{
	ActIssue: (*Document).issue, ActAcknowledge: (*Document).ciente, ActRefuse: (*Document).ciente,
	ActRegularise: (*Document).regularise, ActEscalate: (*Document).escalate, ActCancel: (*Document).cancel,
	ActDecide: (*Document).decide,
}

// issue signs the draft: the agent, the prazo and the issue date are fixed.
func (d *Document) issue(a Action) error {
	k, name := d.Draft.Kind, d.Draft.Title
	if d.State != StateDraft {
		return refuse("%s %s já está %s; só um rascunho pode ser emitido", name, d.ID, d.State.Label())
	}
	if a.Agent == nil || strings.TrimSpace(a.Agent.Name) == "" || strings.TrimSpace(a.Agent.Matricula) == "" {
		return refuse("informe o nome e a matrícula do agente fiscal que lavra o documento")
	}
	if a.ImminentRisk && k.IsNotice() {
		if d.Draft.NotWhen == "" {
			return refuse("%s não prevê exceção por risco iminente; emita a notificação ou lavre o auto após o prazo", d.Draft.CodeTitle)
		}
		return refuse("com %s não cabe %s (%s): use a ação “auto” para lavrar diretamente o auto de infração", d.Draft.NotWhen, name, d.Draft.Article)
	}
	if k.IsNotice() {
		if err := checkPrazo(&d.Draft, a.PrazoDays); err != nil {
			return err
		}
		d.PrazoDays = a.PrazoDays
	} else if a.PrazoDays != 0 {
		return refuse("%s não tem prazo de regularização; não informe prazo_days", name)
	}
	d.State, d.IssuedAt = StateIssued, a.At
	ag := *a.Agent
	d.Agent = &ag
	d.fillIssued()
	return nil
}

// ciente records the infractor's ciente, or the recusa with its witnesses, and starts the prazo.
func (d *Document) ciente(a Action) error {
	k, name := d.Draft.Kind, d.Draft.Title
	if k == KindRelatorio {
		return refuse("o Relatório de Constatação não é entregue ao infrator: a ciência ou a recusa se registram no auto de infração")
	}
	if d.State != StateIssued {
		if d.State == StateDraft {
			return refuse("%s %s ainda é rascunho: emita-o antes de %s", name, d.ID, verb(a.Kind))
		}
		return refuse("%s %s já está %s; ciente ou recusa só se registram uma vez, depois da emissão", name, d.ID, d.State.Label())
	}
	if a.At.Before(d.IssuedAt) {
		return refuse("a ciência (%s) não pode ser anterior à emissão (%s)", br(a.At), br(d.IssuedAt))
	}
	if a.Kind == ActAcknowledge {
		if strings.TrimSpace(a.SignedBy) == "" {
			return refuse("informe o nome de quem apôs o ciente")
		}
		d.State, d.SignedBy = StateAcknowledged, a.SignedBy
	} else {
		if err := checkWitnesses(d, a.Witnesses); err != nil {
			return err
		}
		d.State, d.Witnesses = StateRefused, append([]Witness(nil), a.Witnesses...)
	}
	d.CienciaAt = a.At
	if k.IsNotice() && d.PrazoDays > 0 {
		d.PrazoEnd = PrazoEnd(a.At, d.PrazoDays)
	}
	d.fillCiencia()
	return nil
}

// regularise closes a notice whose infraction ended within the prazo.
func (d *Document) regularise(a Action) error {
	k, name := d.Draft.Kind, d.Draft.Title
	if !k.IsNotice() {
		return refuse("só uma notificação ou intimação preliminar pode ser regularizada")
	}
	if d.State != StateAcknowledged && d.State != StateRefused {
		return refuse("%s %s está %s: a regularização só se registra depois do ciente ou da recusa, enquanto o prazo corre", name, d.ID, d.State.Label())
	}
	if d.PrazoExpired(a.At) {
		return refuse("o prazo para regularização venceu em %s: lavre o auto de infração (ação “auto”)", lastDay(d.PrazoEnd))
	}
	d.State, d.RegularisedAt, d.Note = StateRegularised, a.At, a.Note
	return nil
}

// escalate marks a notice (after its prazo ran out, or at once on imminent risk) or a
// relatório as the ground of an auto de infração.
func (d *Document) escalate(a Action) error {
	k, name := d.Draft.Kind, d.Draft.Title
	switch {
	case k == KindAuto:
		return refuse("este documento já é um auto de infração")
	case k == KindRelatorio:
		if d.State != StateIssued {
			return refuse("o Relatório de Constatação %s está %s: emita-o antes de lavrar o auto", d.ID, d.State.Label())
		}
	case d.State == StateDraft && a.ImminentRisk:
		if d.Draft.NotWhen == "" {
			return refuse("%s não prevê exceção por risco iminente: emita a %s primeiro", d.Draft.CodeTitle, name)
		}
		if a.Agent == nil || strings.TrimSpace(a.Agent.Name) == "" || strings.TrimSpace(a.Agent.Matricula) == "" {
			return refuse("informe o nome e a matrícula do agente fiscal que declara o risco iminente")
		}
		ag := *a.Agent
		d.Agent, d.ImminentRisk = &ag, true
	case d.State == StateAcknowledged || d.State == StateRefused:
		if d.PrazoEnd.IsZero() {
			if d.Draft.PrazoDaysMax > 0 || d.Draft.Field("prazo") != nil {
				return refuse("a %s %s não tem prazo registrado", name, d.ID)
			}
		} else if !d.PrazoExpired(a.At) {
			return refuse("o prazo para regularização corre até %s (inclusive): o auto de infração só pode ser lavrado depois", lastDay(d.PrazoEnd))
		}
	case d.State == StateDraft:
		return refuse("%s %s ainda é rascunho: emita-a e registre o ciente ou a recusa; o auto vem depois do prazo", name, d.ID)
	case d.State == StateIssued:
		return refuse("%s %s foi emitida mas não entregue: registre o ciente ou a recusa com duas testemunhas", name, d.ID)
	default:
		return refuse("%s %s está %s: não cabe auto de infração a partir dela", name, d.ID, d.State.Label())
	}
	d.State = StateEscalated
	return nil
}

// cancel discards a draft; an issued document is an administrative act and stays.
func (d *Document) cancel(a Action) error {
	name := d.Draft.Title
	if d.State != StateDraft {
		return refuse("%s %s está %s: só rascunhos podem ser cancelados; um documento emitido é ato administrativo", name, d.ID, d.State.Label())
	}
	d.State, d.Note = StateCancelled, a.Note
	return nil
}

// decide records the judgement of an auto de infração.
func (d *Document) decide(a Action) error {
	k := d.Draft.Kind
	if k != KindAuto {
		return refuse("só um auto de infração é julgado")
	}
	if d.State != StateAcknowledged && d.State != StateRefused {
		return refuse("o auto %s está %s: o julgamento vem depois da intimação do autuado", d.ID, d.State.Label())
	}
	if a.Punished == nil {
		return refuse("informe se a penalidade foi confirmada (punished: true) ou o auto julgado improcedente (false)")
	}
	p := *a.Punished
	d.State, d.DecidedAt, d.Punished, d.Note = StateDecided, a.At, &p, a.Note
	return nil
}

func checkPrazo(d *Draft, days int) error {
	f := d.Field("prazo")
	switch {
	case days < 0:
		return refuse("prazo_days não pode ser negativo")
	case f != nil && f.ByHand && days == 0:
		return refuse("informe o prazo para regularização em dias (%s: %s)", f.Article, f.Label)
	case d.PrazoDaysMax > 0 && days > d.PrazoDaysMax:
		return refuse("o prazo de %d dias excede o máximo de %d dias do %s", days, d.PrazoDaysMax, d.Article)
	}
	return nil
}

func checkWitnesses(d *Document, ws []Witness) error {
	need := d.Draft.Witnesses
	if len(ws) < need {
		return refuse("a recusa precisa de %d testemunhas (%s); foram informadas %d", need, d.Draft.Article, len(ws))
	}
	seen := map[string]bool{}
	for i, w := range ws {
		n := strings.ToLower(strings.Join(strings.Fields(w.Name), " "))
		if n == "" || strings.TrimSpace(w.Document) == "" {
			return refuse("testemunha %d: informe nome e documento (CPF ou RG)", i+1)
		}
		if seen[n] {
			return refuse("testemunha %d repete %q: são necessárias pessoas distintas", i+1, w.Name)
		}
		seen[n] = true
		if d.Agent != nil && n == strings.ToLower(strings.Join(strings.Fields(d.Agent.Name), " ")) {
			return refuse("testemunha %d: o agente fiscal não pode testemunhar a própria notificação", i+1)
		}
		if n == strings.ToLower(strings.Join(strings.Fields(d.Draft.Party.Name), " ")) {
			return refuse("testemunha %d: o notificado não pode ser testemunha", i+1)
		}
	}
	return nil
}

// fillIssued records the lavratura, the agent and the prazo in the fields.
func (d *Document) fillIssued() {
	at := d.IssuedAt.In(saoPaulo)
	for i := range d.Draft.Fields {
		f := &d.Draft.Fields[i]
		switch f.ID {
		case "lavratura":
			f.Value = fmt.Sprintf("%s, às %s, em %s", at.Format("02/01/2006"), at.Format("15:04"), d.Draft.Party.Address)
			f.Pending = false
		case "agente", "autoridade", "autuante":
			f.Value = fmt.Sprintf("%s, matrícula %s (assinatura no original)", d.Agent.Name, d.Agent.Matricula)
			f.Pending = false
		case "prazo":
			if f.ByHand && d.PrazoDays > 0 {
				f.Value = fmt.Sprintf("%d (%s) dias corridos, contados da ciência do notificado", d.PrazoDays, extenso(d.PrazoDays))
				f.Pending = false
			}
		}
	}
}

// fillCiencia records the ciente or the refusal in the fields.
func (d *Document) fillCiencia() {
	at := d.CienciaAt.In(saoPaulo)
	var ws []string
	for _, w := range d.Witnesses {
		ws = append(ws, w.Name+" ("+w.Document+")")
	}
	for i := range d.Draft.Fields {
		f := &d.Draft.Fields[i]
		switch f.ID {
		case "ciente":
			if d.State == StateAcknowledged {
				f.Value, f.Pending = fmt.Sprintf("ciente de %s em %s", d.SignedBy, at.Format("02/01/2006 15:04")), false
			} else {
				f.Value, f.Pending = fmt.Sprintf("recusou-se a apor o ciente em %s", at.Format("02/01/2006 15:04")), false
			}
		case "testemunhas", "recusa":
			if d.State == StateRefused {
				f.Value, f.Pending = fmt.Sprintf("recusa em %s, testemunhada por %s", at.Format("02/01/2006 15:04"), strings.Join(ws, " e ")), false
			} else {
				f.Value, f.Pending = "não houve recusa", false
			}
		case "assinaturas":
			if d.State == StateRefused {
				f.Value = fmt.Sprintf("autuado recusou-se a assinar em %s; testemunhas: %s (assinaturas no original)", at.Format("02/01/2006 15:04"), strings.Join(ws, " e "))
			} else {
				f.Value = fmt.Sprintf("assinado por %s em %s (assinaturas no original)", d.SignedBy, at.Format("02/01/2006 15:04"))
			}
			f.Pending = false
		case "prazo":
			if f.ByHand && !d.PrazoEnd.IsZero() {
				f.Value = fmt.Sprintf("%d (%s) dias corridos a contar da ciência em %s: até %s", d.PrazoDays, extenso(d.PrazoDays), at.Format("02/01/2006"), lastDay(d.PrazoEnd))
			}
		}
	}
}

// PrazoEnd is the exclusive end of a prazo of days calendar days counted
// from the day after the ciência (the day of the ciência is excluded): the
// start of the day after the last day, in America/Sao_Paulo.
func PrazoEnd(ciencia time.Time, days int) time.Time {
	t := ciencia.In(saoPaulo)
	return time.Date(t.Year(), t.Month(), t.Day()+days+1, 0, 0, 0, 0, saoPaulo)
}

func lastDay(end time.Time) string {
	return end.Add(-time.Nanosecond).In(saoPaulo).Format("02/01/2006")
}

func br(t time.Time) string { return t.In(saoPaulo).Format("02/01/2006 15:04") }

func verb(k ActionKind) string {
	switch k {
	case ActIssue:
		return "emitir o documento"
	case ActAcknowledge:
		return "registrar o ciente"
	case ActRefuse:
		return "registrar a recusa"
	case ActRegularise:
		return "registrar a regularização"
	case ActEscalate:
		return "lavrar o auto de infração"
	case ActCancel:
		return "cancelar o rascunho"
	case ActDecide:
		return "registrar o julgamento"
	}
	return "agir"
}

func extenso(n int) string {
	w := []string{"zero", "um", "dois", "três", "quatro", "cinco", "seis", "sete", "oito", "nove", "dez",
		"onze", "doze", "treze", "quatorze", "quinze", "dezesseis", "dezessete", "dezoito", "dezenove", "vinte"}
	if n >= 0 && n < len(w) {
		return w[n]
	}
	if n == 30 {
		return "trinta"
	}
	tens := map[int]string{2: "vinte", 3: "trinta"}
	if t, ok := tens[n/10]; ok && n%10 != 0 {
		return t + " e " + w[n%10]
	}
	return fmt.Sprint(n)
}
