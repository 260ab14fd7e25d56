package dashboard

// Case routes (docs/api.md, "Casos"):
//
//	GET /api/v1/cases          fiscal, operador: the case list with filters, sorted by next deadline, paged
//	GET /api/v1/parties/{doc}  fiscal, operador: every document of a CNPJ/CPF and the prior infractions the ladder counts

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/registry"
)

// CaseFilter selects cases; the fields are validated by the handler.
type CaseFilter struct {
	Municipality string   // code id
	States       []string // state ids
	Overdue      *bool
	Actor        string // "meus casos": documents this user created or issued
	Address      string
	AlertIDs     []string
	Sort         string // "deadline" or "recent"
	Offset       int
	Limit        int
}

// CaseSource answers the case routes (internal/cases.Index, adapted by the
// central service). Cases returns the total matching f and the page,
// encoded as the JSON array "cases"; Party the history of a CNPJ/CPF.
type CaseSource interface {
	Cases(ctx context.Context, f CaseFilter, now time.Time) (total int, page any, err error)
	Party(ctx context.Context, doc string) (any, error)
}

// CaseState is a state a case may be filtered by.
type CaseState struct {
	ID    string `json:"id"`
	Label string `json:"label"` // pt-BR
}

// CasesOptions configure the case routes.
type CasesOptions struct {
	Source CaseSource
	States []CaseState
	// Municipalities lists the code ids the municipality filter accepts.
	Municipalities func() []string
	Now            func() time.Time
	Log            *slog.Logger
}

// CasesAPI serves the case routes.
type CasesAPI struct{ o CasesOptions }

// NewCasesAPI returns the routes.
func NewCasesAPI(o CasesOptions) *CasesAPI {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Municipalities == nil {
		o.Municipalities = func() []string { return nil }
	}
	return &CasesAPI{o: o}
}

// Page sizes of the case list.
const (
	casesPageSize    = 50
	casesMaxPageSize = 200
	casesMaxAlerts   = 200
)

var caseParams = []string{"municipality", "state", "overdue", "mine", "address", "alert", "sort", "page", "page_size"}

// parseCaseQuery validates the list's query; the error says in pt-BR what
// to fix.
func (c *CasesAPI) parseCaseQuery(r *http.Request) (CaseFilter, int, int, error) {
	q := r.URL.Query()
	var f CaseFilter
	if err := checkCaseParams(q); err != nil {
		return f, 0, 0, err
	}
	var err error
	if f.Municipality, f.States, err = c.caseScope(q.Get("municipality"), q["state"]); err != nil {
		return f, 0, 0, err
	}
	if f.Overdue, err = caseBoolParam("overdue", q.Get("overdue")); err != nil {
		return f, 0, 0, err
	}
	mine, err := caseBoolParam("mine", q.Get("mine"))
	if err != nil {
		return f, 0, 0, err
	}
	if mine != nil && *mine {
		f.Actor = sessionUser(r).Name
	}
	f.Address = strings.TrimSpace(q.Get("address"))
	if n := len([]rune(f.Address)); n > 200 {
		return f, 0, 0, fmt.Errorf("endereço de busca com %d caracteres: use no máximo 200", n)
	}
	f.AlertIDs = splitList(q["alert"])
	if len(f.AlertIDs) > casesMaxAlerts {
		return f, 0, 0, fmt.Errorf("%d alertas pedidos de uma vez: peça no máximo %d", len(f.AlertIDs), casesMaxAlerts)
	}
	switch f.Sort = q.Get("sort"); f.Sort {
	case "", "deadline", "recent":
	default:
		return f, 0, 0, fmt.Errorf("sort=%q inválido: use deadline (próximo prazo) ou recent (último ato)", f.Sort)
	}
	page, err := caseIntParam("page", q.Get("page"), 1, 1, 1_000_000)
	if err != nil {
		return f, 0, 0, err
	}
	size, err := caseIntParam("page_size", q.Get("page_size"), casesPageSize, 1, casesMaxPageSize)
	if err != nil {
		return f, 0, 0, err
	}
	f.Offset, f.Limit = (page-1)*size, size
	return f, page, size, nil
}

// checkCaseParams refuses a parameter the list does not know, and one
// given more than once other than alert and state.
func checkCaseParams(q map[string][]string) error {
	for k := range q {
		if !slices.Contains(caseParams, k) {
			return fmt.Errorf("parâmetro desconhecido %q: use %s", k, strings.Join(caseParams, ", "))
		}
	}
	for k, v := range q {
		if len(v) > 1 && k != "alert" && k != "state" {
			return fmt.Errorf("o parâmetro %q aparece %d vezes: informe-o uma vez só", k, len(v))
		}
	}
	return nil
}

// caseScope checks the municipality and states the list is filtered by
// against the ones the service knows.
func (c *CasesAPI) caseScope(municipality string, states []string) (string, []string, error) {
	var out []string
	m := strings.TrimSpace(municipality)
	if m != "" {
		known := c.o.Municipalities()
		if !slices.Contains(known, m) {
			return "", nil, fmt.Errorf("município desconhecido %q: use o id do código municipal (%s)", m, strings.Join(known, ", "))
		}
	}
	for _, s := range splitList(states) {
		ok := slices.ContainsFunc(c.o.States, func(x CaseState) bool { return x.ID == s })
		if !ok {
			var ids []string
			for _, x := range c.o.States {
				ids = append(ids, fmt.Sprintf("%s (%s)", x.ID, x.Label))
			}
			return "", nil, fmt.Errorf("estado desconhecido %q: use um ou mais, separados por vírgula, de %s", s, strings.Join(ids, ", "))
		}
		out = append(out, s)
	}
	return m, out, nil
}

// caseBoolParam reads a yes/no parameter of the list: nil when absent.
func caseBoolParam(name, raw string) (*bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(raw)); v {
	case "":
		return nil, nil
	case "true", "1", "sim":
		t := true
		return &t, nil
	case "false", "0", "nao", "não":
		f := false
		return &f, nil
	default:
		return nil, fmt.Errorf("%s=%q inválido: use true ou false", name, v)
	}
}

// caseIntParam reads an integer parameter of the list in [lo, hi]: def
// when absent.
func caseIntParam(name, raw string, def, lo, hi int) (int, error) {
	v := strings.TrimSpace(raw)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s=%q inválido: use um número inteiro de %d a %d", name, v, lo, hi)
	}
	return n, nil
}

// splitList joins repeated and comma-separated values, dropping empty ones.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func (c *CasesAPI) list(w http.ResponseWriter, r *http.Request) {
	if c.o.Source == nil {
		apiError(w, http.StatusServiceUnavailable, "a lista de casos não está disponível neste servidor")
		return
	}
	f, page, size, err := c.parseCaseQuery(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	now := c.o.Now()
	total, cs, err := c.o.Source.Cases(r.Context(), f, now)
	if err != nil {
		serverError(w, c.o.Log, "casos", err)
		return
	}
	apiJSON(w, http.StatusOK, map[string]any{"now": now.UTC(), "total": total, "page": page, "page_size": size,
		"pages": (total + size - 1) / size, "cases": cs, "states": c.o.States})
}

func (c *CasesAPI) party(w http.ResponseWriter, r *http.Request) {
	if c.o.Source == nil {
		apiError(w, http.StatusServiceUnavailable, "o histórico de partes não está disponível neste servidor")
		return
	}
	doc := r.PathValue("doc")
	if err := registry.CheckDocument(doc); err != nil {
		apiError(w, http.StatusBadRequest, fmt.Sprintf("CNPJ/CPF %q inválido (%v): informe os 11 dígitos do CPF ou os 14 do CNPJ, com ou sem pontuação", doc, err))
		return
	}
	h, err := c.o.Source.Party(r.Context(), doc)
	if err != nil {
		serverError(w, c.o.Log, "casos", err)
		return
	}
	apiJSON(w, http.StatusOK, h)
}
