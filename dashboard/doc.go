// Package dashboard is the central service's web face: the HTTP JSON API
// under /api/v1 (api.go, documented in docs/api.md), the live websocket hub
// (hub.go), authentication and roles, and the embedded pt-BR web UI.
//
// The API reads through small consumer-side interfaces (APIRegistry,
// APIStore, APIReadings, LimitFunc, AlertLister), so it is tested with
// fakes and wired to the real store, registry, codes engine and case store
// by internal/central. Every /api/v1 handler lives here: the fiscal's
// workflow's (api_workflow.go, translating requests into calls on
// internal/workflow's Service) and the register's (api_registry.go)
// included. Errors are JSON objects
// {"erro": "…"} in Portuguese, written by api_json.go, which is also the one
// way a handler reads a request body.
//
// Where things are: routes.go lists every /api/v1 route (method, path,
// roles, handler) and Mount puts them on a mux behind Auth; the handlers
// are api*.go (notifications in api_notify.go, users and monetary units in
// api_admin.go, the calibration register in api_calibration.go, the
// municipal holidays in api_holidays.go, the register in api_registry.go,
// the case list and party history in api_cases.go, reports and exports in
// api_reports.go, the fiscal's workflow in api_workflow.go); one JSON
// writer and one request-body reader in api_json.go (size cap, unknown
// fields refused, pt-BR errors saying what to fix; WriteError is the
// central service's way to the same writer); sessions, roles, CSRF,
// origins, trusted proxies and the login limiter in auth.go; the live hub
// in hub.go (fan-out, roles, ticks), hub_client.go (one socket) and
// hub_messages.go (what a browser receives); the embedded UI in web.go and
// static/ (ES modules under static/js/, one per view, entry js/app.js,
// shared helpers js/lib.js).
package dashboard
