package store

import "time"

// Prune says which old data PruneOldest may delete.
type Prune struct {
	// Before: batches received before it, and dead letters received before
	// it, are candidates. Rows are walked in insertion order and the walk
	// stops at the first one received at or after Before.
	Before time.Time
	// Keep reports whether a sensor's records spanning [from, to) must be
	// kept (they touch the window of an alert: the evidence a notice or an
	// auto de infração may need). A batch is kept or deleted whole: its
	// signed body and every record stored from it.
	Keep func(sensor string, from, to time.Time) bool
	// Mirror says an InfluxDB mirror drains this store (it is the
	// mirror's spool): a batch with a level record above MirroredLevelID
	// (the mirror's cursor), or an env record above MirroredEnvID, is kept
	// until the mirror has written it.
	Mirror                         bool
	MirroredLevelID, MirroredEnvID int64
	// Limit is how many batches (and dead letters) one call examines;
	// default 500. Each call is one short transaction, so ingest waits at
	// most for one of them.
	Limit int
	// After resumes a pass: examine only batches with rowid > After
	// (PruneResult.Next of the previous call); dead letters likewise with
	// AfterDeadLetter.
	After, AfterDeadLetter int64
	// AfterConflict resumes the walk of record conflicts likewise.
	AfterConflict int64
}

// PruneResult counts what one PruneOldest call deleted.
type PruneResult struct {
	Batches, Levels, Env, DeadLetters int64
	// Conflicts counts deleted record conflicts (received before Before and
	// outside what Keep protects).
	Conflicts int64
	// Kept counts examined batches left in place (an alert's window, or not
	// yet mirrored to InfluxDB).
	Kept int64
	// Next and NextDeadLetter resume the pass (Prune.After,
	// Prune.AfterDeadLetter); Done is true when both walks reached Before
	// or the end of their table.
	Next, NextDeadLetter int64
	NextConflict         int64 // resumes the conflicts walk (Prune.AfterConflict)
	Done                 bool
	// Decided: every batch with rowid <= Decided (and > Prune.After) was
	// deleted or is kept for good — an alert's window (alerts are never
	// deleted and their spans only grow) or a body with nothing to go by —
	// so a later pass may start after it instead of reading them again.
	// A batch kept only until the mirror writes it stops Decided before it.
	// Every dead letter up to NextDeadLetter is decided likewise (deleted,
	// or kept for good because it settled a seq).
	Decided int64
}
