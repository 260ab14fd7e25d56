package central

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

// TestStartCatchesUpFieldChecks: a field check the readings store holds
// but the calibration register never observed (the service stopped
// between the two) is in the register once the service has started, once;
// a second start adds nothing.
func TestStartCatchesUpFieldChecks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	b := &wire.Batch{V: 1, Kind: wire.KindCheck, Municipality: "lapa", Gateway: "lapa-centro-01", Sensor: "lapa-bar-01", Seq: 1, SentAt: now,
		Device: wire.Device{Model: "PCB Artists PCBA-DBM-r3", Serial: "3f00a1c2", Grade: "class2"}, Clock: wire.Clock{Synced: true, Source: "ntp"},
		Check: &wire.Check{T: now.Add(-time.Minute), ReferenceDB: 94, MeasuredDB: 94.3, FrequencyHz: 1000, CalibratorModel: "B&K 4231",
			CalibratorSerial: "2671834"}}
	p, err := wire.Seal(b, loadgen.Key(seed, b.Gateway))
	if err != nil {
		t.Fatal(err)
	}
	env, _, err := wire.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(ctx, store.Write{Batches: []store.Batch{{Gateway: b.Gateway, Municipality: b.Municipality, Sensor: b.Sensor,
		Kind: b.Kind, Topic: wire.CheckTopic(b.Municipality, b.Gateway, b.Sensor), Seq: b.Seq, Body: env.Body, Sig: env.Sig,
		Verified: true, ReceivedAt: now, Device: b.Device, Clock: b.Clock}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	checks := func() []calibration.FieldCheck {
		t.Helper()
		r, err := calibrationdb.Open(ctx, filepath.Join(dir, calibration.FileName), calibrationdb.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ks, err := r.Checks(ctx, "lapa-bar-01", 0)
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	for start := 1; start <= 2; start++ {
		_, stop := startCentralStop(t, Options{DataDir: dir})
		stop()
		if ks := checks(); len(ks) != 1 || ks[0].Seq != 1 || ks[0].Drift() != 0.3 || !ks[0].Verified {
			t.Fatalf("after start %d: %+v, want the stored check once", start, ks)
		}
	}
}
