package gateway

import "github.com/sossego/sossego/internal/wire"

// SyncSource reports whether the system clock is synchronised and how far
// off it may be. The kernel implementation reads adjtimex(2); tests inject
// states.
type SyncSource interface {
	SyncState() (wire.Clock, error)
}

// SyncFunc adapts a function to SyncSource.
type SyncFunc func() (wire.Clock, error)

// SyncState calls f.
func (f SyncFunc) SyncState() (wire.Clock, error) { return f() }

// FixedSync is a SyncSource that always reports the same state.
type FixedSync wire.Clock

// SyncState returns the fixed state.
func (f FixedSync) SyncState() (wire.Clock, error) { return wire.Clock(f), nil }

// unsyncedClock is what the gateway reports when it cannot read the state.
var unsyncedClock = wire.Clock{Synced: false, Source: "none"}
