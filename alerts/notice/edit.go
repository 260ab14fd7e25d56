package notice

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/docid"
)

// Editable draft fields besides the code's own ("field.<id>").
const (
	EditPartyName      = "party.name"
	EditPartyDocument  = "party.document"
	EditPartyAddress   = "party.address"
	EditLavraturaPlace = "lavratura_place"
	EditCircumstances  = "circumstances"
	EditPrazoDays      = "prazo_days"
	EditFieldPrefix    = "field."
)

// EditableFields are the draft's own editable fields.
var EditableFields = []string{EditPartyName, EditPartyDocument, EditPartyAddress, EditLavraturaPlace, EditCircumstances, EditPrazoDays}

// stepFields are filled by the workflow steps (issue, ciente, recusa), not
// typed into the draft.
var stepFields = map[string]string{
	"agente": "emissão", "autoridade": "emissão", "autuante": "emissão", "ciente": "ciente ou recusa",
	"testemunhas": "recusa", "recusa": "recusa", "assinaturas": "ciente ou recusa",
}

// Edit applies the fiscal's changes to a draft, with the automatic text as
// the starting point: the fields computed from the party, the place of
// lavratura and the circumstances are recomputed unless the fiscal wrote
// them. It returns the new document and the edits made (who, when, field,
// before and after), also appended to Document.Edits. Only a fiscal edits,
// only a draft is edited (an issued act is corrected by a new act citing
// it); every change is checked before any is made, and a change that keeps
// the value is no edit.
func (d Document) Edit(c *codes.Code, actor Actor, at time.Time, changes []FieldChange) (Document, []Edit, error) {
	if actor.Role != RoleFiscal {
		return d, nil, fmt.Errorf("%w: somente um fiscal pode editar o rascunho (perfil atual: %q)", ErrForbidden, actor.Role)
	}
	if at.IsZero() {
		return d, nil, refuse("edição sem data e hora")
	}
	if d.State != StateDraft {
		return d, nil, refuse("%s %s está %s: um ato emitido não se altera; para corrigi-lo, lavre um novo ato que cite este", d.Draft.Title, d.ID, d.StateLabel())
	}
	if len(changes) == 0 {
		return d, nil, fmt.Errorf("%w: nenhuma alteração informada", ErrInput)
	}
	next := d
	next.Draft.Fields = append([]Field(nil), d.Draft.Fields...)
	next.Edits = append([]Edit(nil), d.Edits...)
	var edits []Edit
	var errs []string
	seen := map[string]bool{}
	for _, ch := range changes {
		v := strings.TrimSpace(ch.Value)
		if seen[ch.Field] {
			errs = append(errs, fmt.Sprintf("%s: alterado duas vezes no mesmo pedido", ch.Field))
			continue
		}
		seen[ch.Field] = true
		before, err := next.set(ch.Field, v)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if before != v {
			edits = append(edits, Edit{At: at, Actor: actor, Field: ch.Field, Before: before, After: v})
		}
	}
	if len(errs) > 0 {
		return d, nil, fmt.Errorf("%w: %s", ErrInput, strings.Join(errs, "; "))
	}
	next.refill(c)
	next.Edits = append(next.Edits, edits...)
	return next, edits, nil
}

// set changes one field and returns its previous value.
func (d *Document) set(field, v string) (string, error) {
	dr := &d.Draft
	switch field {
	case EditPartyName, EditPartyAddress:
		if v == "" {
			return "", fmt.Errorf("%s: não pode ficar vazio", field)
		}
		if err := checkLength(field, v, MaxLine); err != nil {
			return "", err
		}
		p := &dr.Party.Name
		if field == EditPartyAddress {
			p = &dr.Party.Address
		}
		before := *p
		*p = v
		return before, nil
	case EditPartyDocument:
		if err := docid.Check(v); err != nil {
			return "", fmt.Errorf("CNPJ/CPF %q do notificado inválido (%s)", v, err)
		}
		before := dr.Party.Document
		dr.Party.Document = v
		return before, nil
	case EditLavraturaPlace:
		if v == "" {
			return "", fmt.Errorf("informe o local da lavratura")
		}
		if err := checkLength(field, v, MaxLine); err != nil {
			return "", err
		}
		before := dr.LavraturaPlace
		dr.LavraturaPlace = v
		return before, nil
	case EditCircumstances:
		if err := checkLength(field, v, MaxText); err != nil {
			return "", err
		}
		before := dr.Circumstances
		dr.Circumstances = v
		return before, nil
	case EditPrazoDays:
		return d.setPrazo(v)
	}
	return d.setCodeField(field, v)
}

// checkLength refuses a value of field longer than max characters.
func checkLength(field, v string, max int) error {
	if len([]rune(v)) > max {
		return fmt.Errorf("%s: no máximo %d caracteres", field, max)
	}
	return nil
}

// setPrazo changes a notice's days to regularize (prazo_days) and returns
// the previous number, empty when none was set.
func (d *Document) setPrazo(v string) (string, error) {
	dr := &d.Draft
	if !dr.Kind.IsNotice() {
		return "", fmt.Errorf("%s não tem prazo de regularização", dr.Title)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return "", fmt.Errorf("prazo em dias deve ser um número inteiro, não %q", v)
	}
	if n <= 0 {
		return "", fmt.Errorf("o prazo para regularização deve ser de ao menos 1 dia")
	}
	if err := checkPrazo(dr, n); err != nil {
		return "", err
	}
	before := ""
	if d.PrazoDays > 0 {
		before = strconv.Itoa(d.PrazoDays)
	}
	d.PrazoDays = n
	return before, nil
}

// setCodeField changes one of the code's own fields ("field.<id>"), unless
// a workflow step or another edit fills it, and marks it written by hand.
func (d *Document) setCodeField(field, v string) (string, error) {
	dr := &d.Draft
	id, ok := strings.CutPrefix(field, EditFieldPrefix)
	if !ok {
		return "", fmt.Errorf("campo %q não é editável: use %s ou field.<id> de um campo do documento", field, strings.Join(EditableFields, ", "))
	}
	f := dr.Field(id)
	if f == nil {
		return "", fmt.Errorf("o documento não tem o campo %q", id)
	}
	if step, ok := stepFields[id]; ok {
		return "", fmt.Errorf("o campo %q (%s) é preenchido na %s", id, f.Label, step)
	}
	if id == "prazo" && dr.Kind.IsNotice() {
		return "", fmt.Errorf("o prazo se altera em prazo_days (número de dias)")
	}
	if id == "lavratura" {
		return "", fmt.Errorf("o dia e a hora da lavratura são os da emissão; o local se altera em lavratura_place")
	}
	if v == "" {
		return "", fmt.Errorf("o campo %q (%s) não pode ficar vazio", id, f.Label)
	}
	if err := checkLength(field, v, MaxText); err != nil {
		return "", err
	}
	before := f.Value
	f.Value, f.Pending, f.Edited = v, false, true
	return before, nil
}

// refill recomputes the automatic fields the fiscal did not write.
func (d *Document) refill(c *codes.Code) {
	dr := &d.Draft
	var fields []codes.Field
	switch {
	case dr.Kind.IsNotice() && c.Procedure.Notice != nil:
		fields = c.Procedure.Notice.Fields
	case c.Procedure.Auto != nil:
		fields = c.Procedure.Auto.Fields
	}
	dr.labels = fields
	r := c.Rule(dr.Finding.RuleID)
	for i := range dr.Fields {
		f := &dr.Fields[i]
		if f.ByHand || f.Edited {
			continue
		}
		if v := autoValue(f.ID, dr, r, saoPaulo); v != "" {
			f.Value, f.Pending = v, false
		}
	}
}

// Correct prepares the act that corrects an issued one: a draft of the same
// kind with the old act's content as its starting point, citing it
// (Draft.Corrects) with the reason; what a step records (agent, lavratura,
// ciente, witnesses, signatures) starts over. The old act is immutable: it
// only learns, from the caller, who corrects it (Document.CorrectedBy).
func Correct(c *codes.Code, old *Document, actor Actor, at time.Time, reason string) (Document, error) {
	if actor.Role != RoleFiscal {
		return Document{}, fmt.Errorf("%w: somente um fiscal pode corrigir um ato (perfil atual: %q)", ErrForbidden, actor.Role)
	}
	reason = strings.TrimSpace(reason)
	switch {
	case old.State == StateDraft:
		return Document{}, refuse("%s %s ainda é rascunho: corrija-o editando a minuta", old.Draft.Title, old.ID)
	case old.State == StateCancelled:
		return Document{}, refuse("%s %s foi cancelada: não há ato a corrigir", old.Draft.Title, old.ID)
	case old.CorrectedBy != "":
		return Document{}, refuse("%s %s já foi corrigido pelo ato %s: corrija aquele", old.Draft.Title, old.ID, old.CorrectedBy)
	case reason == "":
		return Document{}, fmt.Errorf("%w: informe o motivo da correção (impresso no novo ato)", ErrInput)
	case len([]rune(reason)) > MaxText:
		return Document{}, fmt.Errorf("%w: o motivo da correção passa de %d caracteres", ErrInput, MaxText)
	}
	d := old.Draft
	d.Fields = append([]Field(nil), old.Draft.Fields...)
	d.Notes = append(append([]string(nil), old.Draft.Notes...), fmt.Sprintf("este ato corrige %s nº %s, lavrado em %s: %s", old.Draft.Title, old.ID, br(old.IssuedAt), reason))
	d.Corrects = &Reference{ID: old.ID, Kind: old.Draft.Kind, Title: old.Draft.Title, IssuedAt: old.IssuedAt, CienciaAt: old.CienciaAt,
		Refused: old.State == StateRefused, PrazoEnd: old.PrazoEnd}
	d.Prepared = at
	for i := range d.Fields {
		f := &d.Fields[i]
		if _, ok := stepFields[f.ID]; ok || f.ID == "lavratura" || (f.ID == "prazo" && f.ByHand) {
			f.Edited = false
			if f.ByHand {
				f.Value, f.Pending = "", true
			}
		}
	}
	next := Document{Draft: d, State: StateDraft, PrazoDays: old.PrazoDays}
	next.refill(c)
	return next, nil
}
