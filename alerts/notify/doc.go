// Package notify decides who is told about an alert, when and how often:
// routing by municipality and class, Alertmanager-style grouping, the
// per-municipality duty schedule (plantão), escalation when nobody
// acknowledges, and silences. It is a pure engine: [Step] takes the state,
// the validated settings and silences, one input (an alert transition, an
// acknowledgement, or nothing) and the current instant, and returns the
// messages to send and the lines of each alert's notification history. It
// does no I/O, reads no clock and starts no goroutines; internal/notify is
// its delivery shell (durable queue, e-mail, webhook, Web Push, retries).
//
// The rules are documented on [Step] and, for users, in
// docs/notifications.md. Messages are rendered here too ([Render], pt-BR)
// and so is the webhook payload and its HMAC-SHA256 signature
// ([BuildWebhook], [Sign], [Verify]), so that the shell only moves bytes.
//
// Where each concern lives: engine.go is Step itself (alert transitions,
// acknowledgements, silences, pruning, the next instant to call it);
// types.go its state, inputs and outputs; group.go grouping and paging a
// group's firing and resolved alerts; escalate.go escalation to the next
// fiscal on duty and the coordinator; schedule.go the plantão; silence.go
// silences; settings.go the settings and their validation; render.go the
// pt-BR messages; webhook.go the webhook payload and its signature;
// history.go the history lines and push subscriptions.
package notify
