package nsrtmk4_test

import (
	"errors"
	"fmt"
	"log"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/nsrtmk4"
)

// A 1-s LAeq series from an NSRT_mk4 on USB.
func Example() {
	m, err := nsrtmk4.Open("/dev/ttyACM0", &nsrtmk4.Opts{Weighting: bridge.WeightingA})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Halt()
	dev := m.Device()
	fmt.Printf("%s %s, firmware %s, calibrated %s\n", dev.Model, dev.Serial, dev.Firmware, dev.CalibratedAt.Format("2006-01-02"))
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for range 10 {
		<-tick.C
		var s bridge.Sample
		switch err := m.Sense(&s); {
		case errors.Is(err, nsrtmk4.ErrNotReady):
			continue // integration restarted after an error
		case err != nil:
			log.Print(err)
			continue
		}
		fmt.Printf("LAeq,%v = %.1f dB\n", s.Duration.Round(time.Millisecond), s.Level)
	}
}
