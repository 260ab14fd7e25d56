package sim_test

import (
	"fmt"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/sim"
)

// The demo's bar: start at simulated 21:58 in Lapa, one simulated minute per
// clock second, and read once per clock second.
func Example() {
	loc := time.FixedZone("-03", -3*60*60)
	clock := time.Date(2026, 3, 6, 12, 0, 0, 0, time.UTC) // any wall clock
	m, err := sim.New(&sim.Opts{
		Scenario: sim.BarMusic,
		Seed:     1,
		Now:      func() time.Time { return clock },
		Start:    time.Date(2026, 3, 6, 21, 58, 0, 0, loc),
		Speed:    60,
		Location: loc,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Halt()
	for i := 0; i < 4; i++ {
		var s bridge.Sample
		if err := m.Sense(&s); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s over 60 dB: %v\n", s.At.In(loc).Format("15:04"), s.Level > 60)
		clock = clock.Add(time.Second)
	}
	// Output:
	// 21:58 over 60 dB: false
	// 21:59 over 60 dB: false
	// 22:00 over 60 dB: false
	// 22:01 over 60 dB: true
}

func ExampleScenarios() {
	for _, s := range sim.Scenarios() {
		fmt.Println(s.Name)
	}
	// Output:
	// bar_music
	// church_bells
	// construction
	// quiet_night
	// siren
}
