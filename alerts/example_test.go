package alerts_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/alertstest"
)

// A bar in Lapa plays at 62 dB from 21:59 on. It complies with the day limit
// (65 dB) and exceeds the night limit (60 dB) from 22:00 exactly.
func ExampleMonitor() {
	cfg := alerts.DefaultConfig()
	cfg.MinDuration = 30 * time.Second

	var now time.Time
	m, err := alerts.NewMonitor(cfg, alertstest.NewLimits(), alerts.Options{
		Notifier: alerts.NotifierFunc(func(_ context.Context, e alerts.Event) error {
			a := e.Alert
			fmt.Printf("%s %s: %s %s, limite %.0f dB, LAeq %.1f dB, %s\n",
				e.At.In(alertstest.NewLimits().Loc).Format("15:04:05"), e.Kind, a.Article, a.Period, a.LimitDB, a.LAeqDB, a.ID)
			return nil
		}),
		Now: func() time.Time { return now },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	loc := alertstest.NewLimits().Loc
	start := time.Date(2025, 3, 14, 21, 59, 0, 0, loc)
	for i := range 120 {
		r := alerts.Reading{
			SensorInfo: alerts.SensorInfo{Sensor: "lapa-bar-01", Municipality: "lapa", Zone: "outras",
				EstablishmentType: "bar", Grade: alerts.GradeClass1},
			T: start.Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: 62, LAFmax: 70, LAFmin: 58,
		}
		now = r.End()
		if err := m.Observe(context.Background(), r); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// 22:00:00 pending: Art. 96 noturno, limite 60 dB, LAeq 62.0 dB, lapa-bar-01/20250315T010000.000Z
	// 22:00:30 firing: Art. 96 noturno, limite 60 dB, LAeq 62.0 dB, lapa-bar-01/20250315T010000.000Z
}
