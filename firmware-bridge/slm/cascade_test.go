package slm

import (
	"math"
	"math/rand/v2"
	"testing"

	bridge "github.com/sossego/sossego/firmware-bridge"
)

// cascade is a plain reference implementation: the biquads of design(),
// one section at a time, transposed direct form II. The meter's fused bank
// must produce the same samples.
type cascade struct {
	secs  []biquad
	state [][2]float64
}

func newCascade(secs []biquad) cascade {
	return cascade{secs: secs, state: make([][2]float64, len(secs))}
}

// prime sets every section to the steady state it would have reached had u
// been applied forever, so that a DC offset at the start of a recording does
// not ring through the high-pass sections (and fake an LCpeak).
func (c cascade) prime(u float64) {
	for i, q := range c.secs {
		g := (q.b0 + q.b1 + q.b2) / (1 + q.a1 + q.a2)
		y := g * u
		s2 := q.b2*u - q.a2*y
		s1 := q.b1*u - q.a1*y + s2
		c.state[i] = [2]float64{s1, s2}
		u = y
	}
}

// run filters buf in place.
func (c cascade) run(buf []float64) {
	for i := range c.secs {
		q := c.secs[i]
		b0, b1, b2, a1, a2 := q.b0, q.b1, q.b2, q.a1, q.a2
		s1, s2 := c.state[i][0], c.state[i][1]
		for j, x := range buf {
			y := b0*x + s1
			s1 = b1*x - a1*y + s2
			s2 = b2*x - a2*y
			buf[j] = y
		}
		c.state[i] = [2]float64{s1, s2}
	}
}

func TestBankMatchesReferenceCascade(t *testing.T) {
	for _, fs := range []float64{44100, 48000} {
		p, err := designParts(fs)
		if err != nil {
			t.Fatal(err)
		}
		da, _ := design(bridge.WeightingA, fs)
		dc, _ := design(bridge.WeightingC, fs)
		refA, refC := newCascade(da), newCascade(dc)
		b := newBank(p)
		rng := rand.New(rand.NewPCG(5, 5))
		x := make([]float64, 10000)
		for i := range x {
			x[i] = rng.NormFloat64() + 0.3 // noise with a DC offset
		}
		x[0] = 1 // and an impulse
		// Primed with the first sample, both must agree from the start.
		refA.prime(x[0])
		refC.prime(x[0])
		b.prime(x[0])
		a, c := make([]float64, len(x)), make([]float64, len(x))
		b.run(x, a, c)
		wantA, wantC := append([]float64{}, x...), append([]float64{}, x...)
		refA.run(wantA)
		refC.run(wantC)
		for i := range x {
			if math.Abs(a[i]-wantA[i]) > 1e-9 || math.Abs(c[i]-wantC[i]) > 1e-9 {
				t.Fatalf("fs %g, sample %d: bank A %v C %v, reference A %v C %v", fs, i, a[i], c[i], wantA[i], wantC[i])
			}
		}
	}
}
