package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/firmware-bridge/sim"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
)

// TestDemoCalibration: the demo seeds a clearly fictitious certificate for
// each class meter, for the meter its simulated gateway reports, so that
// the workflow's decision and the evidence bag come from the calibration
// register; the screening meter gets none; --keep adds no revision.
func TestDemoCalibration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	for _, keep := range []bool{false, true} {
		if err := prepareDemo(ctx, dir, keep); err != nil {
			t.Fatal(err)
		}
	}
	r, err := calibrationdb.Open(ctx, filepath.Join(dir, calibration.FileName), calibrationdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	now := time.Now()
	for _, d := range demoGateways {
		h, err := r.History(ctx, d.Sensor)
		if err != nil {
			t.Fatal(err)
		}
		if d.Grade == "screening" {
			if len(h) != 0 {
				t.Errorf("%s (screening) has certificates: %+v", d.Sensor, h)
			}
			continue
		}
		if len(h) != 1 || !strings.HasPrefix(h[0].Number, "DEMO-") || h[0].Laboratory != "Laboratório de demonstração" {
			t.Fatalf("%s: certificates %+v, want one DEMO-… of the demo laboratory", d.Sensor, h)
		}
		dev, err := sim.New(demoSimOpts(d))
		if err != nil {
			t.Fatal(err)
		}
		// The simulated gateway's batches report this meter: the register
		// then decides, and the readings ground an act.
		if _, err := r.Saw(ctx, calibration.Sighting{Sensor: d.Sensor, Model: dev.Device().Model, Serial: dev.Device().Serial, At: now.Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
		dec := r.Decide(ctx, d.Sensor, calibration.SensorMeter{Grade: d.Grade}, now)
		if !dec.OK || dec.Source != calibration.SourceRegister || !strings.Contains(dec.Why, h[0].Number) {
			t.Errorf("%s: decision %+v, want ok from the register naming %s", d.Sensor, dec, h[0].Number)
		}
	}
}
