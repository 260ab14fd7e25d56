// Package reports is the report engine behind the dashboard's Relatórios
// page and its exports (docs/api.md, "Reports and exports"): a sensor's
// report over a range (internal/stats folded over the long-term tier under
// its code's limits and calendar: LAeq per legal period, Ld/Le/Ln/Lden,
// L10–L95, minutes and episodes above the limit, coverage), the limit in
// force as steps, the figures of a live window, and the writers of the
// report as CSV (';'-separated, decimal commas, a UTF-8 byte-order mark,
// as spreadsheets set to pt-BR open it) and of the exports (the tier's
// 1-min aggregates or the readings store's 1-s records, CSV or JSON,
// streamed one hour at a time). The ranges a request may ask for
// (Range: defaults to the local day so far, whole minutes, bounded) are
// here too. It does no HTTP: dashboard's Reports handler translates
// requests into calls on an Engine.
package reports
