package gateway

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sossego/sossego/internal/wire"
)

func TestClockFromTimex(t *testing.T) {
	tests := []struct {
		name     string
		state    int
		status   int64
		max, est int64
		source   string
		want     wire.Clock
	}{
		{"synced ntp", unix.TIME_OK, unix.STA_PLL, 120000, 1500, "", wire.Clock{Synced: true, OffsetMs: 1.5, Source: "ntp"}},
		{"synced gps", unix.TIME_OK, 0, 1000, 2, "gps", wire.Clock{Synced: true, OffsetMs: 0.002, Source: "gps"}},
		{"leap pending still synced", unix.TIME_INS, 0, 1000, 250, "", wire.Clock{Synced: true, OffsetMs: 0.25, Source: "ntp"}},
		{"unsync flag", unix.TIME_OK, unix.STA_UNSYNC, 16000000, 16000000, "", wire.Clock{Synced: false, OffsetMs: 16000, Source: "none"}},
		{"time error (fresh boot)", unix.TIME_ERROR, unix.STA_UNSYNC, 16000000, 16000000, "gps", wire.Clock{Synced: false, OffsetMs: 16000, Source: "none"}},
		{"time error without flag", unix.TIME_ERROR, 0, 500000, 100, "", wire.Clock{Synced: false, OffsetMs: 500, Source: "none"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := clockFromTimex(tc.state, tc.status, tc.max, tc.est, tc.source); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestKernelSyncReads(t *testing.T) {
	c, err := KernelSync{}.SyncState()
	if err != nil {
		t.Fatalf("adjtimex: %v", err)
	}
	if c.Source == "" || c.OffsetMs < 0 {
		t.Errorf("implausible kernel clock state %+v", c)
	}
	t.Logf("this machine: %+v", c)
}
