package alerts_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/alertstest"
)

// BenchmarkObserve measures readings/s through Monitor.Observe (limit lookup
// cached per period, 60-s window, in-memory store) over 1000 sensors whose
// levels cross the night limit now and then, so transitions are included.
func BenchmarkObserve(b *testing.B) {
	const sensors = 1000
	m, err := alerts.NewMonitor(alerts.DefaultConfig(), alertstest.NewLimits(), alerts.Options{Store: &alertstest.MemStore{}})
	if err != nil {
		b.Fatal(err)
	}
	infos := make([]alerts.SensorInfo, sensors)
	for i := range infos {
		infos[i] = alerts.SensorInfo{Sensor: fmt.Sprintf("s%04d", i), Gateway: fmt.Sprintf("gw%03d", i/10),
			Municipality: "lapa", Zone: "outras", EstablishmentType: "bar", Grade: alerts.GradeClass1}
	}
	start := time.Date(2025, 3, 14, 21, 30, 0, 0, alertstest.NewLimits().Loc)
	ctx := b.Context()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s, sec := i%sensors, i/sensors
		// 58 dB with bursts of 66 dB for 3 of every 10 minutes.
		db := 58.0
		if (sec/60)%10 < 3 {
			db = 66
		}
		r := alerts.Reading{SensorInfo: infos[s], T: start.Add(time.Duration(sec) * time.Second), DurMs: 1000,
			LAeq: db, LAFmax: db + 8, LAFmin: db - 4}
		if err := m.Observe(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "readings/s")
}

// BenchmarkStep measures the pure engine alone on one sensor.
func BenchmarkStep(b *testing.B) {
	eng, err := alerts.NewEngine(alerts.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	lims := alertstest.NewLimits()
	info := alerts.SensorInfo{Sensor: "s", Municipality: "lapa", Zone: "outras", EstablishmentType: "bar", Grade: "class1"}
	start := time.Date(2025, 3, 14, 12, 0, 0, 0, lims.Loc)
	lim, ok, _ := lims.LimitAt("lapa", "outras", "bar", "", start)
	var st alerts.SensorState
	b.ReportAllocs()
	for i := range b.N {
		t := start.Add(time.Duration(i%30000) * time.Second)
		if i%30000 == 0 {
			st = alerts.SensorState{}
		}
		r := alerts.Reading{SensorInfo: info, T: t, DurMs: 1000, LAeq: 60, LAFmax: 68}
		st, _ = eng.Step(st, alerts.RecordInput(r, lim, ok), r.End())
	}
}
