package xl2_test

import (
	"errors"
	"fmt"
	"log"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/xl2"
)

// 1-s LAeq, LAFmax, LAFmin and LCpeak from an XL2 on USB; the calibration
// date comes from the verification certificate.
func Example() {
	cert := time.Date(2025, 8, 14, 0, 0, 0, 0, time.UTC)
	m, err := xl2.Open("/dev/ttyACM0", &xl2.Opts{CalibratedAt: cert})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Halt()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for range 10 {
		<-tick.C
		var s bridge.Sample
		switch err := m.Sense(&s); {
		case errors.Is(err, xl2.ErrNotReady):
			continue // settling
		case err != nil:
			log.Print(err)
			continue
		}
		fmt.Printf("LAeq %.1f  LAFmax %.1f  LAFmin %.1f  LCpeak %.1f dB\n", s.Level, s.Max, s.Min, s.PeakC)
	}
}
