// Package cases is what the fiscal's cases are, as types and without a
// driver: the audit trail's entries and their hash chain, an alert's triage
// (acknowledged by, assigned to), the errors the case store answers with,
// the fine valued again at issue, and the case list (Index: cases with
// their next deadlines, a party's history) over a consumer-side Source.
// The SQLite store of the parties, documents, constatações, PDFs and audit
// trail is internal/cases/casesdb; the dashboard imports this package only.
//
// The penalty history of a party comes from its documents: every issued
// preliminary notice and auto de infração counts as one infraction under its
// penalty provision; an auto judged with the penalty confirmed is "autuado e
// punido". A relatório de constatação does not count (its auto does).
//
// Overview of its parts: what the fiscal's cases are, as types and pure rules,
// without a driver — what the dashboard imports: the audit trail's entries and
// their SHA-256 chain (`EntryHash`, `VerifyChain`), an alert's triage
// (acknowledged by, assigned to: `Triage`, `CheckAssignee`), the errors the
// case store answers with (`ErrNotFound`, `ErrConflict`, `ErrNoPDF`), the fine
// valued again on the date of the act at issue (`Revalue`, `FineEntry`); the
// case list with next deadlines and a party's history (`list.go`: `Index`, an
// in-memory index refreshed on each call from a consumer-side `Source`,
// reading only the documents that changed; an alert that fired with no
// document yet is a case in state `sem_ato`, "alerta sem ato"), the states'
// pt-BR labels.
package cases

import (
	"errors"
	"strings"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/tz"
)

// ErrNotFound is returned for an unknown document.
var ErrNotFound = errors.New("cases: não encontrado")

// ErrConflict is returned when a document already exists for the alert.
var ErrConflict = errors.New("cases: já existe")

// ErrNoPDF is returned for a document with no stored PDF (a draft, or an
// act issued before PDFs were stored).
var ErrNoPDF = errors.New("cases: o ato não tem PDF armazenado")

// Digits returns the digits of a CNPJ/CPF: the party key.
func Digits(doc string) string {
	var b strings.Builder
	for _, r := range doc {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Render renders the PDF of an act as issued.
type Render func(notice.Document) ([]byte, error)

// Revalue values the fine of an act being issued on the date of the act
// (notice.RevalueFine): the draft was valued when it was prepared, and a
// unit's value may have changed since. Other actions leave the fine as it
// is. It returns the fine before and whether it changed.
func Revalue(next *notice.Document, c *codes.Code, a notice.Action, values []notice.UnitValue) (*notice.Fine, bool) {
	if a.Kind != notice.ActIssue {
		return nil, false
	}
	return notice.RevalueFine(&next.Draft, c, values, a.At)
}

var saoPaulo = tz.Brasilia()
