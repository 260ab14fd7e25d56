package codes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"
)

// Request is one input line of `sossego codes eval` (docs/codes-eval.md).
type Request struct {
	ID               *string         `json:"id"`
	Code             string          `json:"code"`
	At               string          `json:"at"`
	Zone             string          `json:"zone"`
	Source           string          `json:"source"`
	LAeqDBA          *float64        `json:"laeq_dba"`
	DurationS        *float64        `json:"duration_s"`
	PriorInfractions *int            `json:"prior_infractions"`
	AssumeInForce    bool            `json:"assume_in_force"`
	Facts            json.RawMessage `json:"facts"`
}

// Response is one output line.
type Response struct {
	ID          *string  `json:"id,omitempty"`
	Violation   any      `json:"violation,omitempty"` // true, false or "undetermined"
	Article     *string  `json:"article,omitempty"`
	Articles    []string `json:"articles,omitempty"`
	LimitDBA    *float64 `json:"limit_dba"`
	PenaltyStep *string  `json:"penalty_step"`
	Reason      string   `json:"reason,omitempty"`
	Warnings    []string `json:"warnings"`
	Error       string   `json:"error,omitempty"`
}

// MarshalJSON keeps the verdict keys present (null where empty) and drops
// them on error lines.
func (r Response) MarshalJSON() ([]byte, error) {
	if r.Error != "" {
		return json.Marshal(struct {
			ID    *string `json:"id,omitempty"`
			Error string  `json:"error"`
		}{r.ID, r.Error})
	}
	return json.Marshal(struct {
		ID          *string  `json:"id,omitempty"`
		Violation   any      `json:"violation"`
		Article     *string  `json:"article"`
		Articles    []string `json:"articles"`
		LimitDBA    *float64 `json:"limit_dba"`
		PenaltyStep *string  `json:"penalty_step"`
		Reason      string   `json:"reason"`
		Warnings    []string `json:"warnings"`
	}{r.ID, r.Violation, r.Article, r.Articles, r.LimitDBA, r.PenaltyStep, r.Reason, r.Warnings})
}

// EvalLine decodes one JSON line, evaluates it under the set and returns
// the output line. It never panics on bad input: problems become an
// error response that says what to fix.
func (s *Set) EvalLine(line []byte) Response {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var id struct {
			ID *string `json:"id"`
		}
		_ = json.Unmarshal(line, &id)
		return Response{ID: id.ID, Error: "linha JSON inválida: " + jsonErrorPT(err, "")}
	}
	if dec.More() {
		return Response{ID: req.ID, Error: "linha com mais de um objeto JSON"}
	}
	fail := func(format string, a ...any) Response {
		return Response{ID: req.ID, Error: fmt.Sprintf(format, a...)}
	}
	c, err := s.Resolve(req.Code)
	if err != nil {
		return fail("%v", err)
	}
	at, err := time.Parse(time.RFC3339, req.At)
	if err != nil {
		return fail("at %q não é RFC 3339 com fuso (ex.: 2026-03-10T21:59:00-03:00)", req.At)
	}
	if !knownZones[req.Zone] {
		return fail("zone %q desconhecida; valores: %s", req.Zone, strings.Join(sortedKeys(knownZones), ", "))
	}
	if !knownSources[req.Source] {
		return fail("source %q desconhecida; valores: %s", req.Source, strings.Join(sortedKeys(knownSources), ", "))
	}
	if req.LAeqDBA != nil && (math.IsNaN(*req.LAeqDBA) || *req.LAeqDBA < 0 || *req.LAeqDBA > 200) {
		return fail("laeq_dba %v fora de 0–200", *req.LAeqDBA)
	}
	if req.DurationS != nil && *req.DurationS < 0 {
		return fail("duration_s %v negativo", *req.DurationS)
	}
	prior := 0
	if req.PriorInfractions != nil {
		if *req.PriorInfractions < 0 {
			return fail("prior_infractions deve ser um inteiro ≥ 0")
		}
		prior = *req.PriorInfractions
	}
	facts, warnings, err := parseFacts(req.Facts)
	if err != nil {
		return fail("%v", err)
	}
	v := Evaluate(c, Observation{At: at, Zone: req.Zone, Source: req.Source, LAeq: req.LAeqDBA, DurationS: req.DurationS,
		PriorInfractions: prior, AssumeInForce: req.AssumeInForce, Facts: facts})
	if c.ID != req.Code {
		warnings = append(warnings, fmt.Sprintf("code %q lido como %q", req.Code, c.ID))
	}
	resp := Response{ID: req.ID, LimitDBA: v.LimitDBA, Reason: v.Reason, Articles: v.Articles, Warnings: append(warnings, v.Warnings...)}
	if resp.Articles == nil {
		resp.Articles = []string{}
	}
	if resp.Warnings == nil {
		resp.Warnings = []string{}
	}
	if v.Article != "" {
		a := v.Article
		resp.Article = &a
	}
	switch v.Violation {
	case True:
		resp.Violation = true
		if v.PenaltyStep != "" {
			p := v.PenaltyStep
			resp.PenaltyStep = &p
		}
	case False:
		resp.Violation = false
	default:
		resp.Violation = "undetermined"
	}
	return resp
}

// parseFacts validates the facts object: known keys with the right type;
// unknown keys become warnings.
func parseFacts(raw json.RawMessage) (map[string]any, []string, error) {
	facts := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return facts, nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("facts deve ser um objeto JSON (ex.: {\"establishment_type\": \"bar\"}): %s", jsonErrorPT(err, "facts"))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var warnings []string
	for _, k := range keys {
		v := m[k]
		if v == nil {
			continue
		}
		switch {
		case knownBoolFacts[k]:
			b, ok := v.(bool)
			if !ok {
				return nil, nil, fmt.Errorf("facts.%s deve ser true ou false", k)
			}
			facts[k] = b
		case knownStringFacts[k]:
			s, ok := v.(string)
			if !ok {
				return nil, nil, fmt.Errorf("facts.%s deve ser texto", k)
			}
			if k == "establishment_type" && !knownEstablishments[s] {
				warnings = append(warnings, fmt.Sprintf("facts.establishment_type %q fora do vocabulário; tratado como não abrangido", s))
			}
			if k == "mechanism" && !knownMechanisms[s] {
				warnings = append(warnings, fmt.Sprintf("facts.mechanism %q fora do vocabulário", s))
			}
			if k == "poi_type" && !knownPOI[s] {
				warnings = append(warnings, fmt.Sprintf("facts.poi_type %q fora do vocabulário (%s); tratado como local não protegido",
					s, strings.Join(sortedKeys(knownPOI), ", ")))
			}
			facts[k] = s
		case knownNumberFacts[k]:
			f, ok := v.(float64)
			if !ok || f < 0 {
				return nil, nil, fmt.Errorf("facts.%s deve ser um número ≥ 0", k)
			}
			facts[k] = f
		default:
			warnings = append(warnings, fmt.Sprintf("facts.%s desconhecido, ignorado", k))
		}
	}
	return facts, warnings, nil
}

// requestFields are the keys of an input line, as docs/codes-eval.md names
// them.
const requestFields = "id, code, at, zone, source, laeq_dba, duration_s, prior_infractions, assume_in_force, facts"

// jsonErrorPT says in Portuguese what is wrong with a JSON line and what to
// fix; where names the object ("" for the line itself).
func jsonErrorPT(err error, where string) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "json: unknown field "):
		name := strings.TrimPrefix(msg, "json: unknown field ")
		return fmt.Sprintf("campo %s desconhecido; os campos de uma linha são %s (os fatos da observação vão dentro de \"facts\")",
			name, requestFields)
	case errors.As(err, &syn):
		return fmt.Sprintf("JSON malformado perto do caractere %d; confira aspas, vírgulas, dois-pontos e chaves", syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = where
		}
		if field == "" {
			return fmt.Sprintf("a linha deve ser um objeto JSON ({…}), não %s", jsonKindPT(typ.Value))
		}
		return fmt.Sprintf("o campo %q deve ser %s, não %s", field, goKindPT(typ.Type), jsonKindPT(typ.Value))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "JSON incompleto: a linha termina antes de fechar o objeto"
	}
	return "não é JSON válido; escreva um objeto JSON por linha"
}

// jsonKindPT names a JSON value's kind as encoding/json reports it.
func jsonKindPT(v string) string {
	switch {
	case v == "string":
		return "texto"
	case v == "number" || strings.HasPrefix(v, "number "):
		return "número"
	case v == "bool":
		return "true/false"
	case v == "array":
		return "lista"
	case v == "object":
		return "objeto"
	}
	return v
}

// goKindPT names the kind of value a field expects.
func goKindPT(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "texto"
	case reflect.Int, reflect.Int64:
		return "um número inteiro"
	case reflect.Float64:
		return "um número"
	case reflect.Bool:
		return "true ou false"
	case reflect.Map, reflect.Struct:
		return "um objeto"
	case reflect.Slice:
		return "um objeto JSON"
	}
	return t.Kind().String()
}
