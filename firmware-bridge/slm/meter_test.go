package slm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/level"
)

// TestToneLevels: a 1 kHz sine at a known level reads that level (plus the
// offset) in every descriptor; its peak is 3.01 dB above its RMS level.
func TestToneLevels(t *testing.T) {
	for _, tc := range []struct {
		fs      int
		dbfs    float64
		offset  float64
		fBlocks int
	}{
		{48000, 0, 0, 4096},
		{48000, -20, 0, 1},
		{48000, -20, 94, 480},
		{44100, -20, 0, 4096},
		{44100, -60, 120, 1000},
		{48000, -100, 0, 48000},
	} {
		t.Run(fmt.Sprintf("%d/%gdBFS/+%g", tc.fs, tc.dbfs, tc.offset), func(t *testing.T) {
			recs, s := run(t, Options{SampleRate: tc.fs, OffsetDB: tc.offset}, sine(tc.fs, 1000, ampFor(tc.dbfs), 3), tc.fBlocks)
			want := tc.dbfs + tc.offset
			// The peak once the filters have settled; the abrupt start of
			// the tone adds a small, real overshoot to the whole-file peak.
			if got := recs[2].LCpeak; !near(got, want+3.0103, 0.03) {
				t.Errorf("LCpeak of the steady tone %.3f dB, want %.3f", got, want+3.0103)
			}
			if s.LCpeak < recs[2].LCpeak || s.LCpeak > recs[2].LCpeak+0.5 {
				t.Errorf("whole-file LCpeak %.3f dB, steady %.3f dB", s.LCpeak, recs[2].LCpeak)
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"LAeq", s.LAeq, want}, {"LCeq", s.LCeq, want},
				{"LAFmax", s.LAFmax, want}, {"LAFmin", s.LAFmin, want}, {"LASmax", s.LASmax, want},
				{"L10", s.L10, want}, {"L50", s.L50, want}, {"L90", s.L90, want},
			} {
				if !near(c.got, c.want, 0.06) {
					t.Errorf("%s = %.3f dB, want %.2f", c.name, c.got, c.want)
				}
			}
			if s.DurationS != 3 || s.Samples != int64(3*tc.fs) || s.Rate != tc.fs || s.OffsetDB != tc.offset {
				t.Errorf("duration %v s, %d samples, rate %d, offset %v", s.DurationS, s.Samples, s.Rate, s.OffsetDB)
			}
		})
	}
}

// enbw is the equivalent noise bandwidth of weighting w for white noise
// sampled at fs, as a power ratio, integrated from the exact IEC formula.
func enbw(w bridge.Weighting, fs float64) float64 {
	const steps = 200000
	var sum float64
	df := fs / 2 / steps
	for i := 0; i < steps; i++ {
		f := (float64(i) + 0.5) * df
		sum += math.Pow(10, AnalogResponse(w, f)/10) * df
	}
	return sum / (fs / 2)
}

// TestWhiteNoise: Gaussian white noise of RMS σ reads 10·lg(2σ²) plus the
// weighting's noise bandwidth (computed from the formula, not the filter).
func TestWhiteNoise(t *testing.T) {
	for _, fs := range []int{44100, 48000} {
		t.Run(fmt.Sprint(fs), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(fs)))
			const sigma = 0.05
			x := make([]float64, 10*fs)
			for i := range x {
				x[i] = sigma * rng.NormFloat64()
			}
			_, s := run(t, Options{SampleRate: fs}, x, 4096)
			base := 10 * math.Log10(2*sigma*sigma)
			if want := base + 10*math.Log10(enbw(bridge.WeightingA, float64(fs))); !near(s.LAeq, want, 0.1) {
				t.Errorf("LAeq %.3f dB, want %.3f", s.LAeq, want)
			}
			if want := base + 10*math.Log10(enbw(bridge.WeightingC, float64(fs))); !near(s.LCeq, want, 0.1) {
				t.Errorf("LCeq %.3f dB, want %.3f", s.LCeq, want)
			}
			// Steady noise: the Fast level stays within a few dB of LAeq.
			if s.LAFmax < s.LAeq || s.LAFmax > s.LAeq+2 || s.LAFmin > s.LAeq || s.LAFmin < s.LAeq-2 {
				t.Errorf("LAFmax %.2f / LAFmin %.2f not around LAeq %.2f", s.LAFmax, s.LAFmin, s.LAeq)
			}
			if !(s.L90 <= s.L50 && s.L50 <= s.L10) {
				t.Errorf("L90 %.1f, L50 %.1f, L10 %.1f not ordered", s.L90, s.L50, s.L10)
			}
		})
	}
}

// TestToneBurst is the IEC 61672-1:2002 Table 4 tone-burst test: 4 kHz
// bursts of duration Tb; LAFmax (LASmax) minus the steady level must equal
// the reference response within the class 1 limits, and our implementation
// should also be close to the exact 10·lg(1 - e^(-Tb/τ)).
func TestToneBurst(t *testing.T) {
	type row struct {
		ms              float64
		ref, plus, minu float64
	}
	fast := []row{
		{1000, 0.0, 0.8, 0.8}, {500, -0.1, 0.8, 0.8}, {200, -1.0, 0.8, 0.8},
		{100, -2.6, 1.3, 1.3}, {50, -4.8, 1.3, 1.3}, {20, -8.3, 1.3, 1.3},
		{10, -11.1, 1.3, 1.3}, {5, -14.1, 1.3, 1.3}, {2, -18.0, 1.3, 1.8},
		{1, -21.0, 1.3, 2.3}, {0.5, -24.0, 1.3, 2.8}, {0.25, -27.0, 1.3, 3.3},
	}
	slow := []row{
		{1000, -2.0, 0.8, 0.8}, {500, -4.1, 0.8, 0.8}, {200, -7.4, 0.8, 0.8},
		{100, -10.2, 1.3, 1.3}, {50, -13.1, 1.3, 1.3}, {20, -17.0, 1.3, 1.3},
		{10, -20.0, 1.3, 1.3}, {5, -23.0, 1.3, 1.3}, {2, -27.0, 1.3, 1.8},
	}
	const f, db = 4000.0, -10.0
	for _, fs := range []int{44100, 48000} {
		_, steady := run(t, Options{SampleRate: fs}, sine(fs, f, ampFor(db), 3), 4096)
		for _, tc := range []struct {
			name string
			tau  time.Duration
			rows []row
			get  func(Summary) float64
		}{
			{"F", TauFast, fast, func(s Summary) float64 { return s.LAFmax }},
			{"S", TauSlow, slow, func(s Summary) float64 { return s.LASmax }},
		} {
			for _, r := range tc.rows {
				t.Run(fmt.Sprintf("%d/%s/%gms", fs, tc.name, r.ms), func(t *testing.T) {
					t.Parallel()
					pre := make([]float64, fs) // 1 s of silence: detectors at rest
					burst := sine(fs, f, ampFor(db), r.ms/1000)
					x := append(append(pre, burst...), make([]float64, 2*fs)...)
					_, s := run(t, Options{SampleRate: fs}, x, 4096)
					got := tc.get(s) - steady.LAeq
					if got > r.ref+r.plus || got < r.ref-r.minu {
						t.Errorf("burst response %.2f dB outside %.1f +%.1f/-%.1f", got, r.ref, r.plus, r.minu)
					}
					exact := 10 * math.Log10(1-math.Exp(-r.ms/1000/tc.tau.Seconds()))
					if !near(got, exact, 0.3) {
						t.Errorf("burst response %.3f dB, theory %.3f dB", got, exact)
					}
				})
			}
		}
	}
}

// TestPercentiles: a tone alternating between -30 dBFS (3 s) and -50 dBFS
// (7 s) spends 30 % of the time loud: L10 is the loud level, L50 and L90
// the quiet one, and LAeq is their energy mean.
func TestPercentiles(t *testing.T) {
	for _, fs := range []int{44100, 48000} {
		t.Run(fmt.Sprint(fs), func(t *testing.T) {
			var x []float64
			for range 5 {
				x = append(x, sine(fs, 1000, ampFor(-30), 3)...)
				x = append(x, sine(fs, 1000, ampFor(-50), 7)...)
			}
			_, s := run(t, Options{SampleRate: fs, OffsetDB: 100}, x, 4096)
			want, _ := level.Leq(70, 70, 70, 50, 50, 50, 50, 50, 50, 50)
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"L10", s.L10, 70}, {"L50", s.L50, 50}, {"L90", s.L90, 50},
				{"LAeq", s.LAeq, want}, {"LAFmax", s.LAFmax, 70}, {"LAFmin", s.LAFmin, 50},
			} {
				if !near(c.got, c.want, 0.1) {
					t.Errorf("%s = %.3f dB, want %.2f", c.name, c.got, c.want)
				}
			}
		})
	}
}

// TestLCpeak: the peak of the C-weighted waveform of known signals, once
// the filters have settled (the second record).
func TestLCpeak(t *testing.T) {
	const fs = 48000
	f31 := 1000 * math.Pow(10, -1.5)
	for _, tc := range []struct {
		name string
		x    []float64
		want float64
	}{
		// A sine's peak is √2 times its RMS: +3.01 dB over its level.
		{"sine 1 kHz -6 dBFS", sine(fs, 1000, ampFor(-6), 2), -6 + 3.0103},
		{"sine 8 kHz -6 dBFS", sine(fs, 8000, ampFor(-6), 2), -6 + AnalogResponse(bridge.WeightingC, 8000) + 3.0103},
		// At 31.6 Hz C is -3.01 dB: the peak drops with the weighting.
		{"sine 31.6 Hz 0 dBFS", sine(fs, f31, 1, 2), AnalogResponse(bridge.WeightingC, f31) + 3.0103},
		// A 100 ms burst with 20 ms ramps, 1.5 s into the stream.
		{"burst", append(make([]float64, fs*3/2), ramp(sine(fs, 1000, ampFor(-10), 0.1), fs/50)...), -10 + 3.0103},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, _ := run(t, Options{SampleRate: fs}, tc.x, 4096)
			if !near(recs[1].LCpeak, tc.want, 0.1) {
				t.Errorf("LCpeak %.3f dB, want %.3f", recs[1].LCpeak, tc.want)
			}
		})
	}
}

// TestDCOffsetDoesNotRing: a capture with a large DC offset reads the same
// LCpeak as without it, because the filters start primed (without priming
// the 0.5 step would ring through the C high-pass far above the tone).
func TestDCOffsetDoesNotRing(t *testing.T) {
	const fs = 48000
	_, clean := run(t, Options{SampleRate: fs}, sine(fs, 1000, ampFor(-20), 1), 4096)
	_, dc := run(t, Options{SampleRate: fs}, addDC(sine(fs, 1000, ampFor(-20), 1), 0.5), 4096)
	if !near(dc.LCpeak, clean.LCpeak, 0.05) || !near(dc.LAFmax, clean.LAFmax, 0.05) {
		t.Errorf("with DC offset: LCpeak %.3f, LAFmax %.3f; without: %.3f, %.3f", dc.LCpeak, dc.LAFmax, clean.LCpeak, clean.LAFmax)
	}
}

// ramp applies raised-cosine fades of n samples at both ends of x.
func ramp(x []float64, n int) []float64 {
	for i := 0; i < n; i++ {
		g := 0.5 - 0.5*math.Cos(math.Pi*float64(i)/float64(n))
		x[i] *= g
		x[len(x)-1-i] *= g
	}
	return x
}

func addDC(x []float64, dc float64) []float64 {
	for i := range x {
		x[i] += dc
	}
	return x
}

// TestRecords: 1-s records tile the stream; the summary is their energy
// combination; block size does not change a single bit of the result.
func TestRecords(t *testing.T) {
	const fs = 44100
	rng := rand.New(rand.NewPCG(7, 7))
	x := make([]float64, fs*7/2) // 3.5 s of noise whose level changes every 0.5 s
	for i := range x {
		x[i] = 0.1 * float64(1+i/(fs/2)%3) * rng.NormFloat64()
	}
	ref, refSum := run(t, Options{SampleRate: fs, OffsetDB: 90}, x, 4096)
	if len(ref) != 4 {
		t.Fatalf("%d records, want 3 full + 1 partial", len(ref))
	}
	var acc level.Accumulator
	var hist level.Histogram
	for i, r := range ref {
		wantN := int64(fs)
		if i == 3 {
			wantN = fs / 2
		}
		if r.Start != int64(i*fs) || r.Samples != wantN || r.Duration != time.Duration(wantN)*time.Second/fs {
			t.Errorf("record %d: start %d, %d samples, %v", i, r.Start, r.Samples, r.Duration)
		}
		if got := r.Hist.Total(); !near(got, float64(r.Duration.Milliseconds()), 1e-6) {
			t.Errorf("record %d: histogram holds %v ms", i, got)
		}
		acc.Add(r.LAeq, float64(r.Samples))
		hist.Merge(r.Hist)
		if r.LAFmax > refSum.LAFmax || r.LAFmin < refSum.LAFmin || r.LCpeak > refSum.LCpeak {
			t.Errorf("record %d extremes outside the summary's", i)
		}
	}
	if leq, _ := acc.Leq(); !near(leq, refSum.LAeq, 1e-9) {
		t.Errorf("energy mean of records %.6f, summary LAeq %.6f", leq, refSum.LAeq)
	}
	if l90, _ := hist.Percentile(90); !near(l90, refSum.L90, 1e-9) {
		t.Errorf("L90 from merged record histograms %.1f, summary %.1f", l90, refSum.L90)
	}
	for _, block := range []int{1, 7, 1000, 44100, len(x)} {
		recs, sum := run(t, Options{SampleRate: fs, OffsetDB: 90}, x, block)
		if fmt.Sprint(recs) != fmt.Sprint(ref) || sum != refSum {
			t.Errorf("block size %d changes the result", block)
		}
	}
}

func TestSilenceAndShortInput(t *testing.T) {
	_, s := run(t, Options{SampleRate: 48000, OffsetDB: 30}, make([]float64, 48000), 4096)
	for _, v := range []float64{s.LAeq, s.LAFmax, s.LAFmin, s.LCpeak, s.L50} {
		if !near(v, FloorDBFS+30, 1e-9) {
			t.Errorf("silence reads %v, want the floor %v", v, FloorDBFS+30)
		}
	}
	// 10 ms: shorter than the warm-up and than one histogram tick.
	_, s = run(t, Options{SampleRate: 48000}, sine(48000, 1000, ampFor(-20), 0.01), 4096)
	if !near(s.LAeq, -20, 0.2) || !near(s.L50, -20, 0.2) || s.DurationS != 0.01 {
		t.Errorf("10 ms tone: LAeq %.2f, L50 %.2f, %v s", s.LAeq, s.L50, s.DurationS)
	}
	m, err := NewMeter(Options{SampleRate: 48000})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Finish(); ok {
		t.Error("Finish of an empty meter returned a record")
	}
	if _, err := m.Summary(); !errors.Is(err, ErrNoSamples) {
		t.Errorf("Summary of an empty meter: %v", err)
	}
}

func TestNewMeterRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   Options
		reason string // "" for a programmer error
	}{
		{"rate 8 kHz", Options{SampleRate: 8000}, ReasonRate},
		{"rate 0", Options{}, ReasonRate},
		{"rate 384 kHz", Options{SampleRate: 384000}, ReasonRate},
		{"NaN offset", Options{SampleRate: 48000, OffsetDB: math.NaN()}, ""},
		{"record not whole samples", Options{SampleRate: 44100, RecordInterval: time.Millisecond / 3}, ""},
		{"record not multiple of stats", Options{SampleRate: 48000, RecordInterval: 150 * time.Millisecond, StatsInterval: 100 * time.Millisecond}, ""},
		{"negative stats", Options{SampleRate: 48000, StatsInterval: -time.Second}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewMeter(tc.opts)
			if err == nil {
				t.Fatal("accepted")
			}
			var ie *InputError
			if got := errors.As(err, &ie); got != (tc.reason != "") || (got && ie.Reason != tc.reason) {
				t.Errorf("error %v, want reason %q", err, tc.reason)
			}
		})
	}
}
