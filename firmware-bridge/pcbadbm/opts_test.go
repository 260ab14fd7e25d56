package pcbadbm

import (
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
)

func TestResolveOpts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       *Opts
		wantAddr   uint16
		wantW      bridge.Weighting
		wantTW     bridge.TimeWeighting
		wantFilter byte
		wantTavg   time.Duration
		wantErr    string
	}{
		{name: "nil", wantAddr: DefaultAddr, wantW: bridge.WeightingA, wantTW: bridge.Fast, wantFilter: 0b01, wantTavg: 125 * time.Millisecond},
		{name: "C slow", opts: &Opts{Addr: 0x49, Weighting: bridge.WeightingC, TimeWeighting: bridge.Slow}, wantAddr: 0x49, wantW: bridge.WeightingC, wantTW: bridge.Slow, wantFilter: 0b10, wantTavg: time.Second},
		{name: "Z", opts: &Opts{Weighting: bridge.WeightingZ}, wantAddr: DefaultAddr, wantW: bridge.WeightingZ, wantTW: bridge.Fast, wantFilter: 0b00, wantTavg: 125 * time.Millisecond},
		{name: "lowest address", opts: &Opts{Addr: 0x08}, wantAddr: 0x08, wantW: bridge.WeightingA, wantTW: bridge.Fast, wantFilter: 0b01, wantTavg: 125 * time.Millisecond},
		{name: "reserved address", opts: &Opts{Addr: 0x07}, wantErr: "pcbadbm: address 0x7 is not a 7-bit I²C device address (0x08–0x77)"},
		{name: "address too high", opts: &Opts{Addr: 0x78}, wantErr: "pcbadbm: address 0x78 is not a 7-bit I²C device address (0x08–0x77)"},
		{name: "weighting", opts: &Opts{Weighting: "B"}, wantErr: `pcbadbm: weighting "B" not supported (A, C or Z)`},
		{name: "time weighting", opts: &Opts{TimeWeighting: "I"}, wantErr: `pcbadbm: time weighting "I" not supported (F or S)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, filter, tavg, err := resolveOpts(tc.opts)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Addr != tc.wantAddr || o.Weighting != tc.wantW || o.TimeWeighting != tc.wantTW || filter != tc.wantFilter || tavg != tc.wantTavg || o.Now == nil {
				t.Errorf("got addr %#x, %q, %q, filter %#b, tavg %v, now set %v", o.Addr, o.Weighting, o.TimeWeighting, filter, tavg, o.Now != nil)
			}
		})
	}
}
