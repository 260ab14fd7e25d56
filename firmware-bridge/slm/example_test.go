package slm_test

import (
	"fmt"
	"math"

	"github.com/sossego/sossego/firmware-bridge/slm"
)

// A 1 kHz sine at -20 dBFS, through a meter calibrated so that full scale
// is 120 dB SPL, reads 100 dB(A).
func ExampleMeter() {
	const fs = 48000
	m, err := slm.NewMeter(slm.Options{SampleRate: fs, OffsetDB: 120})
	if err != nil {
		panic(err)
	}
	x := make([]float64, 2*fs)
	for i := range x {
		x[i] = 0.1 * math.Sin(2*math.Pi*1000*float64(i)/fs)
	}
	for _, r := range m.Process(x) {
		fmt.Printf("record at sample %d: LAeq %.1f dB, LCpeak %.1f dB\n", r.Start, r.LAeq, r.LCpeak)
	}
	m.Finish()
	s, _ := m.Summary()
	fmt.Printf("LAeq %.1f dB, L90 %.1f dB over %.0f s\n", s.LAeq, s.L90, s.DurationS)
	// Output:
	// record at sample 0: LAeq 100.0 dB, LCpeak 103.3 dB
	// record at sample 48000: LAeq 100.0 dB, LCpeak 103.0 dB
	// LAeq 100.0 dB, L90 100.0 dB over 2 s
}
