package nsrtmk4

import (
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
)

func TestResolveOpts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        *Opts
		wantW       bridge.Weighting
		wantCode    byte
		wantTimeout time.Duration
		wantGrade   bridge.Grade
		wantErr     string
	}{
		{name: "nil", wantW: bridge.WeightingA, wantCode: 1, wantTimeout: time.Second, wantGrade: bridge.GradeClass2},
		{name: "C", opts: &Opts{Weighting: bridge.WeightingC, Timeout: 2 * time.Second}, wantW: bridge.WeightingC, wantCode: 0, wantTimeout: 2 * time.Second, wantGrade: bridge.GradeClass2},
		{name: "Z class1", opts: &Opts{Weighting: bridge.WeightingZ, Grade: bridge.GradeClass1, Tau: time.Second, Mode: ModeLevel}, wantW: bridge.WeightingZ, wantCode: 2, wantTimeout: time.Second, wantGrade: bridge.GradeClass1},
		{name: "longest tau", opts: &Opts{Tau: 10 * time.Second}, wantW: bridge.WeightingA, wantCode: 1, wantTimeout: time.Second, wantGrade: bridge.GradeClass2},
		{name: "weighting", opts: &Opts{Weighting: "B"}, wantErr: `nsrtmk4: weighting "B" not supported (A, C or Z)`},
		{name: "negative tau", opts: &Opts{Tau: -time.Second}, wantErr: "nsrtmk4: tau -1s out of range"},
		{name: "tau too long", opts: &Opts{Tau: 11 * time.Second}, wantErr: "nsrtmk4: tau 11s out of range"},
		{name: "mode", opts: &Opts{Mode: 7}, wantErr: "nsrtmk4: unknown mode 7"},
		{name: "grade", opts: &Opts{Grade: "classe0"}, wantErr: `nsrtmk4: unknown grade "classe0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, w, err := resolveOpts(tc.opts)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Weighting != tc.wantW || w != tc.wantCode || o.Timeout != tc.wantTimeout || o.Grade != tc.wantGrade || o.Now == nil {
				t.Errorf("got %q code %d, timeout %v, grade %q, now set %v", o.Weighting, w, o.Timeout, o.Grade, o.Now != nil)
			}
		})
	}
}
