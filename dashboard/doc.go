// Package dashboard is the central service's web face: the HTTP JSON API
// under /api/v1 (documented in docs/api.md), the live websocket hub,
// authentication and roles, and the embedded pt-BR web UI. Its handlers
// translate: a request is read, checked and handed to the part that
// decides (internal/workflow for the fiscal's workflow, internal/reports
// for reports and exports, the stores through small consumer-side
// interfaces), and the answer is written back.
//
// The API reads through small consumer-side interfaces (APIRegistry,
// APIStore, APIReadings, LimitFunc, AlertLister, …), so it is tested with
// fakes and wired to the real store, registry, codes engine and case store
// by internal/central. Errors are JSON objects {"erro": "…"} in
// Portuguese, written by api_json.go, which is also the one way a handler
// reads a request body.
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
// origins and trusted proxies in auth.go (the login throttle is
// internal/loginlimit); the live hub in hub.go (fan-out, roles, ticks),
// hub_client.go (one socket) and hub_messages.go (what a browser
// receives); the embedded UI in web.go and static/ (ES modules under
// static/js/, one per view, entry js/app.js, shared helpers js/lib.js).
package dashboard
