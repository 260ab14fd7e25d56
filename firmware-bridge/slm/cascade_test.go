package slm

// cascade runs biquads in transposed direct form II, float64, one section
// at a time over a block (cache-friendly and easy for the compiler).
type cascade struct {
	secs  []biquad
	state [][2]float64
}

func newCascade(secs []biquad) cascade {
	return cascade{secs: secs, state: make([][2]float64, len(secs))}
}

// clone returns an independent copy with the same coefficients and state.
func (c cascade) clone() cascade {
	st := make([][2]float64, len(c.state))
	copy(st, c.state)
	return cascade{secs: c.secs, state: st}
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
