package sim

import (
	"math"
	"time"
)

// gen is a stateless, random-access source of pseudo-random numbers: every
// value is a hash of (seed, stream, index), so any instant can be evaluated
// without replaying the past.
type gen struct {
	seed uint64
	loc  *time.Location
}

// mix is the SplitMix64 finaliser (Steele, Lea, Flood 2014).
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// u is uniform in [0, 1).
func (g gen) u(stream uint64, i int64) float64 {
	return float64(mix(g.seed^mix(stream^mix(uint64(i))))>>11) / (1 << 53)
}

// u2 is uniform in [0, 1) for a two-part index.
func (g gen) u2(stream uint64, i, j int64) float64 {
	return g.u(stream, int64(mix(uint64(i))^uint64(j)))
}

// gauss is standard normal (Box–Muller).
func (g gen) gauss(stream uint64, i int64) float64 {
	u1 := 1 - g.u(stream, i) // (0, 1]
	u2 := g.u(stream^0x5eed, i)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// gauss2 is standard normal for a two-part index.
func (g gen) gauss2(stream uint64, i, j int64) float64 {
	return g.gauss(stream, int64(mix(uint64(i))^uint64(j)))
}

// smooth is value noise: standard normal values at knots period seconds
// apart, joined by cosine interpolation.
func (g gen) smooth(stream uint64, t, period float64) float64 {
	x := t / period
	i := math.Floor(x)
	f := x - i
	a, b := g.gauss(stream, int64(i)), g.gauss(stream, int64(i)+1)
	w := (1 - math.Cos(math.Pi*f)) / 2
	return a + w*(b-a)
}

// eventSpec schedules random events: time is cut into buckets of bucket
// seconds, and each bucket holds up to maxN candidate events, each present
// with probability rate/maxN, starting anywhere in the bucket and lasting
// minDur…maxDur seconds (maxDur ≤ bucket, so an event overlaps at most the
// next bucket).
type eventSpec struct {
	stream         uint64
	bucket         float64
	maxN           int
	minDur, maxDur float64
}

// event is one scheduled event with three uniform parameters for its shape.
type event struct {
	start, dur float64
	r1, r2     float64
}

// events calls fn for every event of spec in progress at t; rate gives the
// expected number of events in the bucket starting at the given local time.
func (g gen) events(spec eventSpec, rate func(bucketStart time.Time) float64, t float64, fn func(event)) {
	b := int64(math.Floor(t / spec.bucket))
	for bi := b - 1; bi <= b; bi++ {
		start := float64(bi) * spec.bucket
		p := rate(time.Unix(int64(start), 0).In(g.loc)) / float64(spec.maxN)
		for j := 0; j < spec.maxN; j++ {
			idx := bi*64 + int64(j)
			if g.u(spec.stream<<8, idx) >= p {
				continue
			}
			e := event{
				start: start + spec.bucket*g.u(spec.stream<<8|1, idx),
				dur:   spec.minDur + (spec.maxDur-spec.minDur)*g.u(spec.stream<<8|2, idx),
				r1:    g.u(spec.stream<<8|3, idx),
				r2:    g.u(spec.stream<<8|4, idx),
			}
			if t >= e.start && t < e.start+e.dur {
				fn(e)
			}
		}
	}
}
