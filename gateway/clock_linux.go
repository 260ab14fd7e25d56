package gateway

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/sossego/sossego/internal/wire"
)

var _ SyncSource = KernelSync{}

// KernelSync reads the kernel's clock discipline state with adjtimex(2) in
// read-only mode (modes = 0, no privileges needed). The clock counts as
// synchronised when adjtimex returns TIME_OK (or a leap-second state) and
// STA_UNSYNC is clear — true when chrony (with rtcsync), ntpd or
// systemd-timesyncd has disciplined it. OffsetMs is the kernel's estimated
// error (esterror) when synchronised and its maximum error bound (maxerror)
// when not.
type KernelSync struct {
	// Source names the reference when synchronised ("ntp" when empty;
	// "gps" for a PPS/GPS-disciplined Pi).
	Source string
}

// SyncState implements SyncSource.
func (k KernelSync) SyncState() (wire.Clock, error) {
	var tx unix.Timex
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return unsyncedClock, fmt.Errorf("gateway: adjtimex: %w", err)
	}
	return clockFromTimex(state, int64(tx.Status), int64(tx.Maxerror), int64(tx.Esterror), k.Source), nil
}

// clockFromTimex is the pure interpretation of an adjtimex result.
func clockFromTimex(state int, status, maxerrUs, esterrUs int64, source string) wire.Clock {
	synced := state != unix.TIME_ERROR && status&unix.STA_UNSYNC == 0
	if !synced {
		return wire.Clock{Synced: false, OffsetMs: float64(maxerrUs) / 1000, Source: "none"}
	}
	if source == "" {
		source = "ntp"
	}
	return wire.Clock{Synced: true, OffsetMs: float64(esterrUs) / 1000, Source: source}
}
