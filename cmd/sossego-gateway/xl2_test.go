package main

import (
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/xl2"
)

func TestXL2Opts(t *testing.T) {
	tests := []struct {
		cal     string
		want    xl2.Opts
		wantErr bool
	}{
		{"", xl2.Opts{Grade: bridge.GradeClass1}, false},
		{"2026-08-20", xl2.Opts{Grade: bridge.GradeClass1, CalibratedAt: time.Date(2026, 8, 20, 0, 0, 0, 0, time.UTC)}, false},
		{"2026-02-30", xl2.Opts{}, true},
		{"ontem", xl2.Opts{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.cal, func(t *testing.T) {
			o, err := xl2Opts(MeterConfig{Type: "xl2", SerialPort: "/dev/ttyACM0", CalibratedAt: tc.cal})
			if tc.wantErr {
				if err == nil {
					t.Fatalf("accepted: %+v", o)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Grade != tc.want.Grade || !o.CalibratedAt.Equal(tc.want.CalibratedAt) || o.Weighting != "" || o.Now != nil {
				t.Fatalf("opts %+v, want %+v", *o, tc.want)
			}
		})
	}
}
