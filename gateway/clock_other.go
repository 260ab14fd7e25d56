//go:build !linux

package gateway

import "github.com/sossego/sossego/internal/wire"

// KernelSync reports an unsynchronised clock on systems without adjtimex(2):
// the gateway never claims a sync state it cannot read.
type KernelSync struct{ Source string }

// SyncState implements SyncSource.
func (KernelSync) SyncState() (wire.Clock, error) { return unsyncedClock, nil }
