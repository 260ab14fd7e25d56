package dashboard

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestJSONProblem: every way a request body fails to decode is told in
// pt-BR with what to fix, never in encoding/json's English.
func TestJSONProblem(t *testing.T) {
	type body struct {
		Note      string    `json:"note"`
		PrazoDays int       `json:"prazo_days"`
		Punished  *bool     `json:"punished"`
		At        time.Time `json:"at"`
		Witnesses []string  `json:"witnesses"`
		BRL       brlField  `json:"brl"`
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"unknown field", `{"quem":"x"}`, `campo desconhecido "quem": confira o nome`},
		{"text for a number", `{"prazo_days":"dez"}`, `o campo "prazo_days" deveria ser um número inteiro, veio um texto`},
		{"number for a text", `{"note":5}`, `o campo "note" deveria ser um texto, veio um número`},
		{"text for a bool", `{"punished":"sim"}`, `o campo "punished" deveria ser true ou false, veio um texto`},
		{"object for a list", `{"witnesses":{}}`, `o campo "witnesses" deveria ser uma lista, veio um objeto`},
		{"bad date", `{"at":"ontem"}`, `data e hora "ontem" inválida: use RFC 3339`},
		{"a list for the body", `[1]`, "o corpo deveria ser um objeto, veio uma lista"},
		{"syntax", `{"note":"x",}`, "JSON malformado perto do byte 13"},
		{"cut short", `{"note":"x"`, "JSON incompleto"},
		{"a field's own decoder", `{"brl":"muito"}`, "valor em R$ deve ser um número"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(tc.in))
			dec.DisallowUnknownFields()
			var b body
			err := dec.Decode(&b)
			if err == nil {
				t.Fatal("decoded")
			}
			got := jsonProblem(err)
			if !strings.Contains(got, tc.want) || strings.Contains(got, "json:") || strings.Contains(got, "Go ") {
				t.Fatalf("jsonProblem(%v) = %q, want %q", err, got, tc.want)
			}
		})
	}
	// A body over the limit.
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat(" ", 100)+"{}"))
	var v map[string]any
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 10)).Decode(&v)
	if got := jsonProblem(err); got != "corpo maior que 10 bytes" {
		t.Fatalf("over the limit: %q", got)
	}
}

// brlField decodes only a JSON number and says so in pt-BR, as the
// monetary register's value does.
type brlField float64

func (b *brlField) UnmarshalJSON(p []byte) error {
	var f float64
	if err := json.Unmarshal(p, &f); err != nil {
		return errors.New("valor em R$ deve ser um número (ex.: 4938.24)")
	}
	*b = brlField(f)
	return nil
}
