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
package dashboard
