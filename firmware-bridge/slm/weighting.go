package slm

import (
	"fmt"
	"math"
	"math/cmplx"

	bridge "github.com/sossego/sossego/firmware-bridge"
)

// Pole frequencies of the IEC 61672-1 weightings (Annex E, exact values).
const (
	poleF1 = 20.598997 // Hz, double pole (A and C)
	poleF2 = 107.65265 // Hz (A)
	poleF3 = 737.86223 // Hz (A)
	poleF4 = 12194.217 // Hz, double pole (A and C)
	refHz  = 1000.0    // reference frequency: every weighting is 0 dB here
	minFs  = 8000.0    // below this the weightings make no sense
	maxFs  = 384000.0  // above this float64 poles near z = 1 lose accuracy

	// Matching frequencies of the f4 low-pass (see lowPass2Matched), found
	// by a grid search minimising the worst error from 1 kHz to
	// min(20 kHz, 0.46·fs): 0.06 dB at 48 kHz, 0.13 dB at 44.1 kHz.
	matchFa = 14000.0
	matchFb = 19250.0
)

// AnalogResponse returns the exact IEC 61672-1 weighting (A, C or Z) at
// frequency f in dB, normalised to 0 dB at 1 kHz: the design goal the
// digital filters are tested against.
func AnalogResponse(w bridge.Weighting, f float64) float64 {
	g := func(f float64) float64 {
		f2 := f * f
		switch w {
		case bridge.WeightingA:
			return poleF4 * poleF4 * f2 * f2 /
				((f2 + poleF1*poleF1) * math.Sqrt(f2+poleF2*poleF2) * math.Sqrt(f2+poleF3*poleF3) * (f2 + poleF4*poleF4))
		case bridge.WeightingC:
			return poleF4 * poleF4 * f2 / ((f2 + poleF1*poleF1) * (f2 + poleF4*poleF4))
		}
		return 1
	}
	return 20 * math.Log10(g(f)/g(refHz))
}

// biquad is one second-order section, a0 = 1:
// H(z) = (b0 + b1 z⁻¹ + b2 z⁻²) / (1 + a1 z⁻¹ + a2 z⁻²).
type biquad struct {
	b0, b1, b2, a1, a2 float64
}

// response is the complex response of the section at f Hz for rate fs.
func (q biquad) response(f, fs float64) complex128 {
	z1 := cmplx.Exp(complex(0, -2*math.Pi*f/fs)) // z⁻¹
	z2 := z1 * z1
	num := complex(q.b0, 0) + complex(q.b1, 0)*z1 + complex(q.b2, 0)*z2
	den := 1 + complex(q.a1, 0)*z1 + complex(q.a2, 0)*z2
	return num / den
}

// firstOrder is a first-order section (b0 + b1 z⁻¹)/(1 + a1 z⁻¹).
type firstOrder struct{ b0, b1, a1 float64 }

// times multiplies two first-order sections into one biquad.
func (p firstOrder) times(q firstOrder) biquad {
	return biquad{
		b0: p.b0 * q.b0,
		b1: p.b0*q.b1 + p.b1*q.b0,
		b2: p.b1 * q.b1,
		a1: p.a1 + q.a1,
		a2: p.a1 * q.a1,
	}
}

// highPass1 is s/(s+ω) through the bilinear transform, with the corner
// pre-warped so that the digital -3 dB point stays at fc.
func highPass1(fc, fs float64) firstOrder {
	k := 2 * fs
	w := k * math.Tan(math.Pi*fc/fs)
	return firstOrder{b0: k / (k + w), b1: -k / (k + w), a1: (w - k) / (k + w)}
}

// lowPass2Matched is the critically damped low-pass 1/(1+s/ω)² (the
// double pole at f4 that shapes both weightings above 5 kHz) designed by
// magnitude matching instead of the bilinear transform. The poles are
// placed exactly (z = e^{-ωT}, as in the matched-z transform) and the
// numerator is chosen so that the digital magnitude equals the analog one at
// DC and at the two frequencies fa and fb. The bilinear transform instead maps
// the analog ∞ onto Nyquist, which forces a double zero there and produces
// the well-known droop (-1.2 dB at 10 kHz for A at 48 kHz, -6.5 dB at 16 kHz).
//
// The squared magnitude of b0 + b1 z⁻¹ + b2 z⁻² is B0·φ0 + B1·φ1 + B2·φ2
// with φ1 = sin²(ω/2), φ0 = 1-φ1, φ2 = 4φ0φ1, B0 = (b0+b1+b2)²,
// B1 = (b0-b1+b2)², B2 = -4·b0·b2 (the denominator likewise with A0, A1,
// A2). The three matching conditions are linear in B0, B1, B2; the
// coefficients follow by taking square roots and solving one quadratic.
func lowPass2Matched(fc, fs, fa, fb float64) (biquad, error) {
	p := math.Exp(-2 * math.Pi * fc / fs)
	q := biquad{a1: -2 * p, a2: p * p}
	analog := func(f float64) float64 { // |H|² of 1/(1+s/ω)²
		r := 1 + (f/fc)*(f/fc)
		return 1 / (r * r)
	}
	phis := func(f float64) [3]float64 {
		s := math.Sin(math.Pi * f / fs)
		p1 := s * s
		return [3]float64{1 - p1, p1, 4 * (1 - p1) * p1}
	}
	A := [3]float64{(1 + q.a1 + q.a2) * (1 + q.a1 + q.a2), (1 - q.a1 + q.a2) * (1 - q.a1 + q.a2), -4 * q.a2}
	den := func(ph [3]float64) float64 { return A[0]*ph[0] + A[1]*ph[1] + A[2]*ph[2] }
	b0sq := A[0] * analog(0)
	pa, pb := phis(fa), phis(fb)
	ra := analog(fa)*den(pa) - b0sq*pa[0]
	rb := analog(fb)*den(pb) - b0sq*pb[0]
	det := pa[1]*pb[2] - pa[2]*pb[1]
	b1sq := (ra*pb[2] - pa[2]*rb) / det
	b2c := (pa[1]*rb - pb[1]*ra) / det
	sum := (math.Sqrt(b0sq) + math.Sqrt(b1sq)) / 2 // b0 + b2
	prod := -b2c / 4                               // b0·b2
	disc := sum*sum - 4*prod
	if !(b1sq >= 0) || !(disc >= 0) || det == 0 {
		return biquad{}, fmt.Errorf("slm: no real low-pass numerator at fs=%g Hz", fs)
	}
	q.b1 = (math.Sqrt(b0sq) - math.Sqrt(b1sq)) / 2
	q.b0 = (sum + math.Sqrt(disc)) / 2
	q.b2 = sum - q.b0
	return q, nil
}

// design returns the cascade of biquads that realises weighting w at rate
// fs, normalised to exactly 0 dB at 1 kHz (the meter runs the same
// sections through a bank; design serves the response tests).
func design(w bridge.Weighting, fs float64) ([]biquad, error) {
	if !(fs >= minFs && fs <= maxFs) {
		return nil, fmt.Errorf("slm: sample rate %g Hz outside %g..%g Hz", fs, minFs, maxFs)
	}
	if w == bridge.WeightingZ {
		return []biquad{{b0: 1}}, nil
	}
	if w != bridge.WeightingA && w != bridge.WeightingC {
		return nil, fmt.Errorf("slm: unknown weighting %q", w)
	}
	p, err := designParts(fs)
	if err != nil {
		return nil, err
	}
	secs, g := []biquad{p.hp1, p.lp}, p.gC
	if w == bridge.WeightingA {
		secs, g = append(secs, p.hp23), p.gA
	}
	secs[0].b0 *= g
	secs[0].b1 *= g
	secs[0].b2 *= g
	return secs, nil
}

// cascadeResponse is the magnitude of a cascade at f in dB.
func cascadeResponse(secs []biquad, f, fs float64) float64 {
	g := complex(1, 0)
	for _, s := range secs {
		g *= s.response(f, fs)
	}
	return 20 * math.Log10(cmplx.Abs(g))
}
