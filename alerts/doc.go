// Package alerts turns a stream of 1-s noise records into alerts a fiscal can
// trust: a rolling LAeq window per sensor is evaluated against the municipal
// code's limit in force at each record's instant, and an Alertmanager-style
// lifecycle (pending → firing → resolved) with a minimum duration, hysteresis,
// a resolve time and an uncertainty margin per meter grade decides what is
// reported. A silent sensor or an offline gateway is its own alert (no_data),
// never a silent "ok".
//
// The package has a pure core and a thin shell:
//
//   - [Engine.Step] is pure: (state, input, now) → (new state, events). It does
//     no I/O, reads no clock and starts no goroutines. Every rule of the
//     lifecycle lives there and is documented on it.
//   - [Monitor] holds one [SensorState] per sensor, looks up the limit in force
//     through the consumer-side [Limits] interface, persists state and events
//     through [StateStore] (internal/alertstore implements it on SQLite) and
//     hands events to a [Notifier] (dashboard hub, MQTT).
//
// # Evaluation rules
//
//   - A record belongs to the period that contains its start instant T; the
//     limit looked up is the one in force at T. A record straddling 22:00 is
//     judged under the period in which it started.
//   - A window never mixes limits: when the limit in force changes (another
//     period, rule, code version or limit value), the window restarts with the
//     first record of the new period, and any open exceedance alert is closed
//     (pending → cancelled, firing → resolved with resolution "period_end" at
//     the instant the old period ended). An alert therefore always cites exactly
//     one rule, one limit and one period.
//   - A change of the sensor's meter grade (another instrument) likewise
//     restarts the window and closes the open alert (resolution
//     "meter_changed"): records and margins of two instruments never mix.
//   - The window LAeq is the energy mean over the records whose start lies in
//     [end − Window, end), end being the end of the newest record; LAFmax is the
//     maximum LAFmax of the same records. Partial windows (right after a period
//     change, after start-up) are evaluated on what they hold.
//   - A window exceeds when LAeq − margin > limit (strictly greater: a level
//     equal to the limit complies, codes-conventions.md), margin being the
//     uncertainty margin of the sensor's meter grade.
//   - pending starts at the start of the first record whose window exceeds; it
//     becomes firing when every window since has exceeded and the newest record
//     ends at least MinDuration after pending began. A window that does not
//     exceed while pending cancels the alert (it never fired).
//   - A firing alert resolves when the window LAeq (without margin) has stayed
//     below limit − Hysteresis for ResolveTime: from the start of the first such
//     record to the end of the newest one.
//   - No record received for NoDataTimeout (checked on Tick with the caller's
//     now), or the gateway reported offline (status topic or MQTT Will), opens a
//     no_data alert for the sensor; the next record closes it (DataBack). An
//     open pending alert is cancelled by a data gap; a firing alert stays firing
//     (absence of data is not evidence of quiet) and its resolve clock restarts.
//   - Records are processed in order per sensor: a record whose start is not
//     after the previous record's start is a duplicate or out of order and is
//     ignored (counted). Replaying readings already seen is therefore a no-op.
//   - Alert identifiers are deterministic: sensor + "/" + the pending instant
//     (exceedance) or sensor + "/nodata/" + the end of the last data (no_data),
//     both in UTC with millisecond precision. They are the idempotency keys of
//     the case store: replaying the same readings yields the same ids.
//
// Overview of its parts: pure alert engine (`Engine.Step`) + `Monitor` shell;
// `CodeLimits` adapts `codes`; `alerts/notice` (constatações and whether they
// ground a notice, drafts and their edits, penalties, workflow states, pure),
// `alerts/evidence` (BagIt export/verify: the bag carries the service key and
// its history, the gateway keys in force when each batch was received, the
// acts' stored PDFs, the meter's signed field checks; `Verify` takes a zip or
// a directory (a zip's local headers must agree with its central directory),
// re-checks every gateway signature (batches and field checks) with
// `internal/wire/signature`'s batch verifier — the batches while `batches.txt`
// is still being inflated and hashed, `verify_stream.go` — and readings.csv
// against the signed batches, and says íntegro only for a trusted service key).
package alerts
