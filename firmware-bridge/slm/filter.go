package slm

import (
	"math"
	"math/cmplx"
)

// parts are the sections of both weightings at one sample rate. The
// weightings share their f1 high-pass and f4 low-pass, and linear filters
// commute, so the meter runs
//
//	x → hp1 → lp ──×gC──→ C-weighted
//	          └→ hp23 ─×gA─→ A-weighted
//
// three biquads per sample for both outputs instead of five.
type parts struct {
	hp1, lp, hp23 biquad // s²/(s+ω1)², 1/(1+s/ω4)², s²/((s+ω2)(s+ω3))
	gA, gC        float64
}

func designParts(fs float64) (parts, error) {
	var p parts
	var err error
	h1 := highPass1(poleF1, fs)
	p.hp1 = h1.times(h1)
	p.hp23 = highPass1(poleF2, fs).times(highPass1(poleF3, fs))
	if p.lp, err = lowPass2Matched(poleF4, fs, math.Min(matchFa, 0.31*fs), math.Min(matchFb, 0.437*fs)); err != nil {
		return parts{}, err
	}
	c := p.hp1.response(refHz, fs) * p.lp.response(refHz, fs)
	p.gC = 1 / cmplx.Abs(c)
	p.gA = 1 / cmplx.Abs(c*p.hp23.response(refHz, fs))
	return p, nil
}

// section is a biquad with its transposed-direct-form-II state.
type section struct {
	q      biquad
	s1, s2 float64
}

// prime sets the section to the steady state it would have reached had u
// been applied forever, and returns the steady output.
func (s *section) prime(u float64) float64 {
	q := s.q
	y := (q.b0 + q.b1 + q.b2) / (1 + q.a1 + q.a2) * u
	s.s2 = q.b2*u - q.a2*y
	s.s1 = q.b1*u - q.a1*y + s.s2
	return y
}

// bank runs both weightings, float64, transposed direct form II, all
// sections fused in one loop so that their recursions overlap in the CPU.
type bank struct {
	hp1, lp, hp23 section
	gA, gC        float64
}

func newBank(p parts) *bank {
	return &bank{hp1: section{q: p.hp1}, lp: section{q: p.lp}, hp23: section{q: p.hp23}, gA: p.gA, gC: p.gC}
}

// prime primes every section for a constant input u, so that a DC offset at
// the start of a recording does not ring through the high-pass sections
// (and fake an LCpeak).
func (b *bank) prime(u float64) {
	y := b.hp1.prime(u)
	b.hp23.prime(b.lp.prime(y))
}

// clone returns an independent copy.
func (b *bank) clone() *bank {
	c := *b
	return &c
}

// run filters x into a (A-weighted) and c (C-weighted); a and c must be at
// least as long as x.
func (b *bank) run(x, a, c []float64) {
	h, l, k := b.hp1.q, b.lp.q, b.hp23.q
	h1, h2 := b.hp1.s1, b.hp1.s2
	l1, l2 := b.lp.s1, b.lp.s2
	k1, k2 := b.hp23.s1, b.hp23.s2
	gA, gC := b.gA, b.gC
	a, c = a[:len(x)], c[:len(x)]
	for i, v := range x {
		y := h.b0*v + h1
		h1 = h.b1*v - h.a1*y + h2
		h2 = h.b2*v - h.a2*y
		z := l.b0*y + l1
		l1 = l.b1*y - l.a1*z + l2
		l2 = l.b2*y - l.a2*z
		c[i] = gC * z
		w := k.b0*z + k1
		k1 = k.b1*z - k.a1*w + k2
		k2 = k.b2*z - k.a2*w
		a[i] = gA * w
	}
	b.hp1.s1, b.hp1.s2 = h1, h2
	b.lp.s1, b.lp.s2 = l1, l2
	b.hp23.s1, b.hp23.s2 = k1, k2
}
