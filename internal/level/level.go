// Package level holds the energy-domain arithmetic every part of Sossego shares:
// converting sound levels (dB re 20 µPa) to relative energy and back, the
// equivalent continuous level over records of unequal duration, and a 0.1 dB
// histogram from which exceedance levels (L10, L50, L90) are read exactly.
//
// Decibels are never averaged: LAeq,T = 10·lg(Σ Tᵢ·10^(Lᵢ/10) / Σ Tᵢ).
//
// Overview of its parts: energy-domain maths: Leq, accumulators, 0.1 dB
// histograms.
package level

import (
	"fmt"
	"math"
)

// ToEnergy returns 10^(L/10), the energy of a level relative to the reference.
func ToEnergy(db float64) float64 { return math.Pow(10, db/10) }

// FromEnergy returns 10·lg(e). It returns -Inf for e == 0.
func FromEnergy(e float64) float64 { return 10 * math.Log10(e) }

// Accumulator combines timed levels in the energy domain. The zero value is
// empty and ready to use.
type Accumulator struct {
	energyMs float64 // Σ dur_ms · 10^(L/10)
	durMs    float64
	max      float64
	min      float64
	n        int
}

// Add records a level held for durMs milliseconds. Non-positive durations
// are ignored.
func (a *Accumulator) Add(db float64, durMs float64) {
	if durMs <= 0 || math.IsNaN(db) {
		return
	}
	a.energyMs += durMs * ToEnergy(db)
	a.durMs += durMs
	if a.n == 0 || db > a.max {
		a.max = db
	}
	if a.n == 0 || db < a.min {
		a.min = db
	}
	a.n++
}

// Merge adds everything b has seen into a.
func (a *Accumulator) Merge(b Accumulator) {
	if b.n == 0 {
		return
	}
	a.energyMs += b.energyMs
	a.durMs += b.durMs
	if a.n == 0 || b.max > a.max {
		a.max = b.max
	}
	if a.n == 0 || b.min < a.min {
		a.min = b.min
	}
	a.n += b.n
}

// Leq is the equivalent continuous level of everything added; ok is false
// when nothing was added.
func (a *Accumulator) Leq() (db float64, ok bool) {
	if a.durMs <= 0 {
		return 0, false
	}
	return FromEnergy(a.energyMs / a.durMs), true
}

// Max and Min are the extreme levels added (0 when empty).
func (a *Accumulator) Max() float64 { return a.max }

// Min is the lowest level added (0 when empty).
func (a *Accumulator) Min() float64 { return a.min }

// DurationMs is the total duration added, in milliseconds.
func (a *Accumulator) DurationMs() float64 { return a.durMs }

// Count is the number of levels added.
func (a *Accumulator) Count() int { return a.n }

// Leq returns the equivalent level of equally long levels; ok is false when
// levels is empty.
func Leq(levels ...float64) (db float64, ok bool) {
	var a Accumulator
	for _, l := range levels {
		a.Add(l, 1)
	}
	return a.Leq()
}

// Histogram bins levels in 0.1 dB steps from 0 to 200 dB, weighting each
// level by its duration, so that Ln (the level exceeded n% of the time) can be
// read exactly for any merged span. Levels outside the range are clamped to
// the first or last bin.
type Histogram struct {
	// Bins maps the bin index (round(L·10)) to milliseconds spent there.
	Bins map[int]float64 `json:"bins"`
}

const histMaxBin = 2000

// Add records durMs milliseconds at level db.
func (h *Histogram) Add(db, durMs float64) {
	if durMs <= 0 || math.IsNaN(db) {
		return
	}
	if h.Bins == nil {
		h.Bins = make(map[int]float64)
	}
	h.Bins[binOf(db)] += durMs
}

func binOf(db float64) int {
	b := int(math.Round(db * 10))
	if b < 0 {
		return 0
	}
	if b > histMaxBin {
		return histMaxBin
	}
	return b
}

// Merge adds o's time into h.
func (h *Histogram) Merge(o Histogram) {
	for b, ms := range o.Bins {
		if h.Bins == nil {
			h.Bins = make(map[int]float64)
		}
		h.Bins[b] += ms
	}
}

// Total returns the time recorded, in milliseconds.
func (h *Histogram) Total() float64 {
	var t float64
	for _, ms := range h.Bins {
		t += ms
	}
	return t
}

// Percentile returns Ln: the lowest bin level that is exceeded no more than n
// percent of the time (n in (0, 100)). ok is false for an empty histogram or
// n outside (0, 100).
func (h *Histogram) Percentile(n float64) (db float64, ok bool) {
	total := h.Total()
	if total <= 0 || n <= 0 || n >= 100 {
		return 0, false
	}
	limit := total * n / 100
	var above float64
	for b := histMaxBin; b >= 0; b-- {
		ms, has := h.Bins[b]
		if !has {
			continue
		}
		above += ms
		if above >= limit-1e-9 {
			return float64(b) / 10, true
		}
	}
	return 0, false
}

// Validate reports a histogram that cannot have come from Add: bins out of
// range or negative times.
func (h *Histogram) Validate() error {
	for b, ms := range h.Bins {
		if b < 0 || b > histMaxBin {
			return fmt.Errorf("level: histogram bin %d outside 0..%d", b, histMaxBin)
		}
		if ms < 0 || math.IsNaN(ms) || math.IsInf(ms, 0) {
			return fmt.Errorf("level: histogram bin %d has invalid time %v", b, ms)
		}
	}
	return nil
}
