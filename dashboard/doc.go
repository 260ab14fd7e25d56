// Package dashboard is the central service's web face: the HTTP JSON API
// under /api/v1 (api.go, documented in docs/api.md), the live websocket hub
// (hub.go), authentication and roles, and the embedded pt-BR web UI.
//
// The API reads through small consumer-side interfaces (APIRegistry,
// APIStore, APIReadings, LimitFunc, AlertLister), so it is tested with
// fakes and wired to the real store, registry, codes engine and case store
// by internal/central. Errors are JSON objects {"erro": "…"} in Portuguese.
package dashboard
