package alertstore_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/alertstest"
)

// BenchmarkObserveAlertStore is BenchmarkObserve (package alerts) with the
// real SQLite case store behind the monitor: every transition is committed
// at once (synchronous=FULL) and a Tick per simulated second saves the
// snapshots older than SnapshotEvery (10 s) in one transaction.
func BenchmarkObserveAlertStore(b *testing.B) {
	const sensors = 1000
	s, err := openStore(b, filepath.Join(b.TempDir(), "cases.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var now time.Time
	m, err := alerts.NewMonitor(alerts.DefaultConfig(), alertstest.NewLimits(), alerts.Options{Store: s, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	infos := make([]alerts.SensorInfo, sensors)
	for i := range infos {
		infos[i] = alerts.SensorInfo{Sensor: fmt.Sprintf("s%04d", i), Gateway: fmt.Sprintf("gw%03d", i/10),
			Municipality: "lapa", Zone: "outras", EstablishmentType: "bar", Grade: alerts.GradeClass1}
	}
	start := time.Date(2025, 3, 14, 21, 30, 0, 0, loc)
	ctx := b.Context()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		sn, sec := i%sensors, i/sensors
		db := 58.0
		if (sec/60)%10 < 3 {
			db = 66
		}
		t := start.Add(time.Duration(sec) * time.Second)
		now = t.Add(time.Second)
		r := alerts.Reading{SensorInfo: infos[sn], T: t, DurMs: 1000, LAeq: db, LAFmax: db + 8, LAFmin: db - 4}
		if err := m.Observe(ctx, r); err != nil {
			b.Fatal(err)
		}
		if sn == sensors-1 {
			if err := m.Tick(ctx, now); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "readings/s")
}
