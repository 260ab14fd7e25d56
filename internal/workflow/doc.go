// Package workflow is the fiscal's workflow (docs/workflow-api.md): the
// constatações that ground a notice, the draft notice of an alert and its
// edits, the workflow steps (issue, ciente, recusa with two witnesses,
// regularisation, auto de infração, decision, correction), the acts' PDFs
// stored at issue, the audit trail, the alerts' triage (acknowledge,
// assign) and the signed evidence bag of an alert.
//
// It is the shell around the pure rules: alerts/notice (constatações,
// drafts, the state machine, penalties), internal/cases (triage, audit
// chain) and internal/calibration (whether a meter's readings may found a
// constatação, calibration.Decide). The stores are consumer-side
// interfaces (stores.go) that *casesdb.Store, *alertstore.Store,
// *sqlitestore.Store, *registry.Registry and *codes.Set satisfy; a Service
// keeps them as private fields (New). Inputs are the service's own request
// types (ConstatacaoRequest, StepRequest) and the caller's User; refusals
// are *Error values (Invalid, Conflict) or wrap ErrNotFound, ErrNoNotice,
// notice.ErrInput, notice.ErrNoGround, notice.ErrTransition,
// notice.ErrForbidden, cases.ErrNotFound or cases.ErrConflict, each with
// the pt-BR message a user reads. Every stored change is told to
// Config.OnChange (the live feed and the notifications' acknowledgements).
//
// The evidence export (export.go) streams the alert's window ± the margin
// from the readings store an hour at a time into alerts/evidence's BagIt
// package, with the signed batches (by seq range when the store offers
// BatchRange, so each carries when it was received and so which gateway
// key was in force), the gateway keys of the register with their validity,
// the meter as the calibration register knew it (Meters) with its signed
// field checks, the acts' stored PDFs and the constatações (Acts), the
// custody chain in Portuguese and the previous bag of the case (Ledger).
// The bag's date is the case's last act, so the same case state gives the
// same bytes. The dashboard's handlers and `sossego evidence export` call
// the same Service.
//
// The package does no HTTP: internal/central wires it and dashboard
// translates requests into calls on it.
package workflow
