package notice

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/docid"
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

// Label is the pt-BR name of the state, in the masculine (a document, an
// auto); [State.LabelFor] agrees with the document's kind.
func (s State) Label() string { return s.LabelFor(KindAuto) }

// LabelFor is the pt-BR name of the state agreeing in gender with the
// kind's title: a Notificação or Intimação is "emitida", an Auto or a
// Relatório "emitido".
func (s State) LabelFor(k Kind) string {
	fem := k.Feminine()
	g := func(m, f string) string {
		if fem {
			return f
		}
		return m
	}
	switch s {
	case StateDraft:
		return "rascunho"
	case StateIssued:
		return g("emitido", "emitida")
	case StateAcknowledged:
		return g("ciente do autuado", "ciente do notificado")
	case StateRefused:
		return "recusa testemunhada"
	case StateRegularised:
		return g("regularizado", "regularizada")
	case StateEscalated:
		return "auto de infração lavrado"
	case StateCancelled:
		return g("cancelado", "cancelada")
	case StateDecided:
		return "julgado"
	}
	return string(s)
}

// StateLabel is the document's state in pt-BR, agreeing with its kind.
func (d *Document) StateLabel() string { return d.State.LabelFor(d.Draft.Kind) }

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
	// PDF is the act's last stored PDF: stored at issue, and again at the
	// ciente or recusa with what was recorded; served as stored.
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
		return refuse("%s %s já está %s; só um rascunho pode ser emitido", name, d.ID, d.StateLabel())
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
	if err := d.Draft.grounded(); err != nil {
		return err
	}
	if k.IsNotice() {
		days := a.PrazoDays
		if days == 0 {
			days = d.PrazoDays // set on the draft
		}
		if err := checkPrazo(&d.Draft, days); err != nil {
			return err
		}
		d.PrazoDays = days
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
		return refuse("%s %s já está %s; ciente ou recusa só se registram uma vez, depois da emissão", name, d.ID, d.StateLabel())
	}
	if a.At.Before(d.IssuedAt) {
		return refuse("a ciência (%s) não pode ser anterior à emissão (%s)", br(a.At), br(d.IssuedAt))
	}
	if len([]rune(a.Declaration)) > MaxText || len([]rune(a.Observation)) > MaxText {
		return refuse("declaração e observação têm no máximo %d caracteres cada", MaxText)
	}
	if a.Kind == ActAcknowledge {
		if strings.TrimSpace(a.SignedBy) == "" {
			return refuse("informe o nome de quem apôs o ciente")
		}
		d.State, d.SignedBy = StateAcknowledged, strings.TrimSpace(a.SignedBy)
	} else {
		if err := checkWitnesses(d, a.Witnesses); err != nil {
			return err
		}
		if strings.TrimSpace(a.Declaration) == "" {
			return refuse("descreva a recusa na declaração do fiscal (quem recusou, como, diante de quem); ela é impressa no documento")
		}
		d.State, d.Witnesses = StateRefused, cleanWitnesses(a.Witnesses)
	}
	d.Declaration, d.Observation = strings.TrimSpace(a.Declaration), strings.TrimSpace(a.Observation)
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
		return refuse("%s %s está %s: a regularização só se registra depois do ciente ou da recusa, enquanto o prazo corre", name, d.ID, d.StateLabel())
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
			return refuse("o Relatório de Constatação %s está %s: emita-o antes de lavrar o auto", d.ID, d.StateLabel())
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
		if err := d.checkFollowUp(a.FollowUp); err != nil {
			return err
		}
		d.FollowUp = a.FollowUp.ID
	case d.State == StateDraft:
		return refuse("%s %s ainda é rascunho: emita-a e registre o ciente ou a recusa; o auto vem depois do prazo", name, d.ID)
	case d.State == StateIssued:
		return refuse("%s %s foi emitida mas não entregue: registre o ciente ou a recusa com duas testemunhas", name, d.ID)
	default:
		return refuse("%s %s está %s: não cabe auto de infração a partir dela", name, d.ID, d.StateLabel())
	}
	d.State = StateEscalated
	return nil
}

// cancel discards a draft; an issued document is an administrative act and stays.
func (d *Document) cancel(a Action) error {
	name := d.Draft.Title
	if d.State != StateDraft {
		return refuse("%s %s está %s: só rascunhos podem ser cancelados; um documento emitido é ato administrativo", name, d.ID, d.StateLabel())
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
		return refuse("o auto %s está %s: o julgamento vem depois da intimação do autuado", d.ID, d.StateLabel())
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
	case days > MaxPrazoDays:
		return refuse("o prazo de %d dias passa de %d dias: informe um prazo razoável para a regularização", days, MaxPrazoDays)
	}
	return nil
}

// MaxPrazoDays bounds a prazo where the code fixes no maximum.
const MaxPrazoDays = 365

// grounded refuses a document with no constatação that grounds it.
func (d *Draft) grounded() error {
	if len(d.Constatacoes) == 0 {
		return refuse("o alerta é só um indício: registre antes a constatação do fiscal (fonte, local, data e hora, o que foi ouvido e a medição que confirma)")
	}
	if err := d.Constatacoes[0].Grounds(); err != nil {
		return fmt.Errorf("%w: %w", ErrTransition, err)
	}
	return nil
}

// checkFollowUp checks the constatação after the prazo on which the auto
// rests: it follows this notice up, it is later than the prazo, it names
// the same party and it shows the infraction went on.
func (d *Document) checkFollowUp(k *Constatacao) error {
	if k == nil {
		return refuse("registre a constatação após o prazo (nova medição ou declaração do fiscal com evidência) que mostra que a infração continuou; o auto a cita")
	}
	if k.FollowsUp != d.ID {
		return refuse("a constatação %s não é o acompanhamento da %s %s", k.ID, d.Draft.Title, d.ID)
	}
	if k.At.Before(d.PrazoEnd) {
		return refuse("a constatação %s (%s) é anterior ao fim do prazo (%s): registre uma constatação depois do prazo", k.ID, br(k.At), lastDay(d.PrazoEnd))
	}
	if docDigits(k.Source.Document) != docDigits(d.Draft.Party.Document) && k.Source.Kind != SourceUnidentified {
		return refuse("a constatação %s identifica outra fonte (%s) e não %s: o auto só cabe contra o notificado", k.ID, k.Source.Name, d.Draft.Party.Name)
	}
	if err := k.Grounds(); err != nil {
		return fmt.Errorf("%w: %w", ErrTransition, err)
	}
	return nil
}

func docDigits(s string) string {
	var b strings.Builder
	for _, r := range docid.Normalize(s) {
		b.WriteRune(r)
	}
	return b.String()
}

func checkWitnesses(d *Document, ws []Witness) error {
	need := d.Draft.Witnesses
	if len(ws) < need {
		return refuse("a recusa precisa de %d testemunhas (%s); foram informadas %d", need, d.Draft.Article, len(ws))
	}
	seen := map[string]bool{}
	for i, w := range ws {
		n := strings.ToLower(strings.Join(strings.Fields(w.Name), " "))
		if err := CheckWitness(w); err != nil {
			return refuse("testemunha %d: %s", i+1, err)
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

// CheckWitness checks a witness: a full name and a document that is
// checked — a CPF by its check digits, an RG as its number (with digits)
// and the issuing body. The error is pt-BR and says what to fix.
func CheckWitness(w Witness) error {
	name := strings.Fields(w.Name)
	if len(name) < 2 || len([]rune(w.Name)) > MaxLine {
		return fmt.Errorf("informe o nome completo (nome e sobrenome), não %q", w.Name)
	}
	for _, part := range name {
		if !strings.ContainsFunc(part, unicode.IsLetter) {
			return fmt.Errorf("o nome %q tem partes sem letras", w.Name)
		}
	}
	switch w.DocType {
	case WitnessCPF:
		if err := docid.CheckCPF(w.Document); err != nil {
			return fmt.Errorf("CPF %q inválido (%s)", w.Document, err)
		}
	case WitnessRG:
		digits := 0
		for _, r := range w.Document {
			if unicode.IsDigit(r) {
				digits++
			}
		}
		if digits < 5 || len([]rune(w.Document)) > 20 {
			return fmt.Errorf("RG %q inválido: informe o número do RG (ao menos 5 dígitos)", w.Document)
		}
		is := strings.TrimSpace(w.Issuer)
		if len([]rune(is)) < 2 || len([]rune(is)) > 20 || !strings.ContainsFunc(is, unicode.IsLetter) {
			return fmt.Errorf("RG %s: informe o órgão emissor (por exemplo SSP/PR)", w.Document)
		}
	case "":
		return fmt.Errorf("informe o tipo do documento (CPF ou RG) e o número; %q não foi aceito", w.Document)
	default:
		return fmt.Errorf("tipo de documento %q desconhecido: use cpf ou rg", w.DocType)
	}
	return nil
}

func cleanWitnesses(ws []Witness) []Witness {
	out := make([]Witness, len(ws))
	for i, w := range ws {
		out[i] = Witness{Name: strings.Join(strings.Fields(w.Name), " "), DocType: w.DocType, Document: strings.TrimSpace(w.Document),
			Issuer: strings.TrimSpace(w.Issuer)}
	}
	return out
}

// Text is the witness as printed: name and document.
func (w Witness) Text() string {
	switch w.DocType {
	case WitnessCPF:
		return w.Name + " (CPF " + w.Document + ")"
	case WitnessRG:
		return w.Name + " (RG " + w.Document + " " + w.Issuer + ")"
	}
	return w.Name + " (" + w.Document + ")"
}

// fillIssued records the lavratura, the agent and the prazo in the fields.
func (d *Document) fillIssued() {
	at := d.IssuedAt.In(saoPaulo)
	for i := range d.Draft.Fields {
		f := &d.Draft.Fields[i]
		switch f.ID {
		case "lavratura":
			f.Value = fmt.Sprintf("%s, às %s, em %s", at.Format("02/01/2006"), at.Format("15:04"), d.Draft.lavraturaPlace())
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
		ws = append(ws, w.Text())
	}
	words := ""
	if d.Declaration != "" {
		words += "; declaração do fiscal: " + d.Declaration
	}
	if d.Observation != "" {
		words += "; observação: " + d.Observation
	}
	for i := range d.Draft.Fields {
		f := &d.Draft.Fields[i]
		switch f.ID {
		case "ciente":
			if d.State == StateAcknowledged {
				f.Value, f.Pending = fmt.Sprintf("ciente de %s em %s%s", d.SignedBy, at.Format("02/01/2006 15:04"), words), false
			} else {
				f.Value, f.Pending = fmt.Sprintf("recusou-se a apor o ciente em %s%s", at.Format("02/01/2006 15:04"), words), false
			}
		case "testemunhas", "recusa":
			if d.State == StateRefused {
				f.Value, f.Pending = fmt.Sprintf("recusa em %s, testemunhada por %s%s", at.Format("02/01/2006 15:04"), strings.Join(ws, " e "), words), false
			} else {
				f.Value, f.Pending = "não houve recusa", false
			}
		case "assinaturas":
			if d.State == StateRefused {
				f.Value = fmt.Sprintf("autuado recusou-se a assinar em %s; testemunhas: %s%s (assinaturas no original)", at.Format("02/01/2006 15:04"), strings.Join(ws, " e "), words)
			} else {
				f.Value = fmt.Sprintf("assinado por %s em %s%s (assinaturas no original)", d.SignedBy, at.Format("02/01/2006 15:04"), words)
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
