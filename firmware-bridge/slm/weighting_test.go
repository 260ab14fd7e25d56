package slm

import (
	"fmt"
	"math"
	"testing"

	bridge "github.com/sossego/sossego/firmware-bridge"
)

// iecTable is IEC 61672-1:2002 Table 2 (identical in GOST 17187-2010 Table 2)
// from 31.5 Hz to 16 kHz: nominal frequency, A and C weightings (dB) and the
// class 1 tolerance limits (dB, including the maximum expanded measurement
// uncertainty). The weightings are specified at the exact base-10
// frequencies 1000·10^(n/10), for which the nominal value is a label.
var iecTable = []struct {
	nominal  string
	n        int // exact frequency = 1000·10^(n/10)
	a, c     float64
	tolPlus  float64
	tolMinus float64 // as a positive number
}{
	{"31.5", -15, -39.4, -3.0, 2.0, 2.0},
	{"40", -14, -34.6, -2.0, 1.5, 1.5},
	{"50", -13, -30.2, -1.3, 1.5, 1.5},
	{"63", -12, -26.2, -0.8, 1.5, 1.5},
	{"80", -11, -22.5, -0.5, 1.5, 1.5},
	{"100", -10, -19.1, -0.3, 1.5, 1.5},
	{"125", -9, -16.1, -0.2, 1.5, 1.5},
	{"160", -8, -13.4, -0.1, 1.5, 1.5},
	{"200", -7, -10.9, 0.0, 1.5, 1.5},
	{"250", -6, -8.6, 0.0, 1.4, 1.4},
	{"315", -5, -6.6, 0.0, 1.4, 1.4},
	{"400", -4, -4.8, 0.0, 1.4, 1.4},
	{"500", -3, -3.2, 0.0, 1.4, 1.4},
	{"630", -2, -1.9, 0.0, 1.4, 1.4},
	{"800", -1, -0.8, 0.0, 1.4, 1.4},
	{"1000", 0, 0.0, 0.0, 1.1, 1.1},
	{"1250", 1, 0.6, 0.0, 1.4, 1.4},
	{"1600", 2, 1.0, -0.1, 1.6, 1.6},
	{"2000", 3, 1.2, -0.2, 1.6, 1.6},
	{"2500", 4, 1.3, -0.3, 1.6, 1.6},
	{"3150", 5, 1.2, -0.5, 1.6, 1.6},
	{"4000", 6, 1.0, -0.8, 1.6, 1.6},
	{"5000", 7, 0.5, -1.3, 2.1, 2.1},
	{"6300", 8, -0.1, -2.0, 2.1, 2.6},
	{"8000", 9, -1.1, -3.0, 2.1, 3.1},
	{"10000", 10, -2.5, -4.4, 2.6, 3.6},
	{"12500", 11, -4.3, -6.2, 3.0, 6.0},
	{"16000", 12, -6.6, -8.5, 3.5, 17.0},
}

// designTol is how far the digital filters may stray from the exact IEC
// formula anywhere from 31.5 Hz to 16 kHz at 44.1 and 48 kHz.
const designTol = 0.15

// TestAnalogResponseMatchesTable checks our reference formula against the
// standard's rounded table, so that the formula can be trusted as the
// tighter yardstick below.
func TestAnalogResponseMatchesTable(t *testing.T) {
	for _, row := range iecTable {
		f := 1000 * math.Pow(10, float64(row.n)/10)
		if got := AnalogResponse(bridge.WeightingA, f); !near(got, row.a, 0.05+1e-9) {
			t.Errorf("A(%s Hz) = %.3f dB, table %.1f", row.nominal, got, row.a)
		}
		if got := AnalogResponse(bridge.WeightingC, f); !near(got, row.c, 0.05+1e-9) {
			t.Errorf("C(%s Hz) = %.3f dB, table %.1f", row.nominal, got, row.c)
		}
	}
}

// TestWeightingWithTones measures LAeq and LCeq of steady sine tones at
// -20 dBFS at every nominal one-third-octave frequency: the level minus
// -20 dB is the weighting the meter applies. It must lie inside the class 1
// limits of the table and within designTol of the exact formula.
func TestWeightingWithTones(t *testing.T) {
	for _, fs := range []int{44100, 48000} {
		for _, row := range iecTable {
			t.Run(fmt.Sprintf("%d/%sHz", fs, row.nominal), func(t *testing.T) {
				t.Parallel()
				f := 1000 * math.Pow(10, float64(row.n)/10)
				recs, _ := run(t, Options{SampleRate: fs}, sine(fs, f, ampFor(-20), 2), 4096)
				r := recs[1] // the second second: filters settled
				for _, w := range []struct {
					name       string
					got, table float64
					exact      float64
				}{
					{"A", r.LAeq + 20, row.a, AnalogResponse(bridge.WeightingA, f)},
					{"C", r.LCeq + 20, row.c, AnalogResponse(bridge.WeightingC, f)},
				} {
					if w.got > w.table+row.tolPlus || w.got < w.table-row.tolMinus {
						t.Errorf("%s weighting %.2f dB outside class 1 limits %.1f +%.1f/-%.1f", w.name, w.got, w.table, row.tolPlus, row.tolMinus)
					}
					if !near(w.got, w.exact, designTol) {
						t.Errorf("%s weighting %.3f dB, exact IEC formula %.3f dB (tolerance %.2f)", w.name, w.got, w.exact, designTol)
					}
				}
			})
		}
	}
}

// TestDesignOtherRates checks the computed frequency response at the rates
// the meter accepts beyond the two validated ones, up to 0.4·fs.
func TestDesignOtherRates(t *testing.T) {
	for _, fs := range []float64{32000, 88200, 96000, 192000} {
		for _, w := range []bridge.Weighting{bridge.WeightingA, bridge.WeightingC} {
			secs, err := design(w, fs)
			if err != nil {
				t.Fatalf("%v at %g Hz: %v", w, fs, err)
			}
			for n := -15; n <= 12; n++ {
				f := 1000 * math.Pow(10, float64(n)/10)
				if f > 0.4*fs {
					break
				}
				got, want := cascadeResponse(secs, f, fs), AnalogResponse(w, f)
				if !near(got, want, designTol) {
					t.Errorf("%v at %g Hz, %.0f Hz: %.3f dB, exact %.3f dB", w, fs, f, got, want)
				}
			}
		}
	}
}

// TestBilinearDroopIsCorrected documents the problem the design solves: the
// plain bilinear f4 section would be more than 1 dB low at 10 kHz.
func TestBilinearDroopIsCorrected(t *testing.T) {
	const fs = 48000.0
	lp := bilinearLowPass1(poleF4, fs)
	plain := []biquad{}
	hp := highPass1(poleF1, fs)
	plain = append(plain, hp.times(hp), highPass1(poleF2, fs).times(highPass1(poleF3, fs)), lp.times(lp))
	k := math.Pow(10, -cascadeResponse(plain, 1000, fs)/20)
	plain[0].b0 *= k
	plain[0].b1 *= k
	plain[0].b2 *= k
	ours, err := design(bridge.WeightingA, fs)
	if err != nil {
		t.Fatal(err)
	}
	exact := AnalogResponse(bridge.WeightingA, 10000)
	if d := cascadeResponse(plain, 10000, fs) - exact; d > -0.5 {
		t.Errorf("bilinear reference design: error at 10 kHz %.2f dB, expected a droop below -0.5 dB", d)
	}
	if d := cascadeResponse(ours, 10000, fs) - exact; math.Abs(d) > designTol {
		t.Errorf("corrected design: error at 10 kHz %.3f dB", d)
	}
}

// bilinearLowPass1 is ω/(s+ω) through the plain bilinear transform, the
// textbook design the package replaces.
func bilinearLowPass1(fc, fs float64) firstOrder {
	k, w := 2*fs, 2*math.Pi*fc
	return firstOrder{b0: w / (k + w), b1: w / (k + w), a1: (w - k) / (k + w)}
}

func TestDesignRejects(t *testing.T) {
	for _, tc := range []struct {
		w  bridge.Weighting
		fs float64
	}{
		{bridge.WeightingA, 4000},
		{bridge.WeightingA, math.NaN()},
		{bridge.WeightingA, 1e6},
		{"B", 48000},
	} {
		if _, err := design(tc.w, tc.fs); err == nil {
			t.Errorf("design(%q, %g) succeeded", tc.w, tc.fs)
		}
	}
}
