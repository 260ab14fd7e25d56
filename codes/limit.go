package codes

import (
	"slices"
	"sync/atomic"
	"time"
)

// Limit is the numeric limit in force for a zone and establishment at an
// instant, with the period it belongs to. A level exceeds it only when
// strictly greater (docs/codes-conventions.md "Levels and durations").
type Limit struct {
	DBA         float64
	Period      string    // diurno | noturno | integral
	PeriodLabel string    // the rule's pt-BR label
	Start, End  time.Time // the period occurrence containing the instant; zero for integral
	RuleID      string
	Article     string
	Quote       string
	CodeID      string
	CodeVersion string
}

type compiledLevel struct {
	rule        *Rule
	zones       uint64 // bit per zone index; 0 = any
	ests        uint64 // bit per establishment index; 0 = any
	from, to    int
	fromExcl    bool
	hasWindow   bool
	crossesNite bool
	// last memoises the most recent period occurrence computed for this
	// rule, so that consecutive lookups inside one period need no time-zone
	// arithmetic. It is a cache of a pure function: safe to share.
	last *atomic.Pointer[occurrence]
	// overrides are special rules that displace this limit for a
	// mechanism (and, when zones is non-zero, only in those zones): e.g.
	// church bells in Conceição de Macabu are judged by Art. 57, not 45 dB.
	overrides []override
}

type override struct {
	mechs uint64
	zones uint64
}

type occurrence struct {
	start, end time.Time
	s, e       int64 // start and end in Unix seconds, for the fast comparison
}

var zoneIndex, estIndex, mechIndex = indexOf(knownZones), indexOf(knownEstablishments), indexOf(knownMechanisms)

func indexOf(m map[string]bool) map[string]uint {
	idx := map[string]uint{}
	var i uint
	for _, k := range sortedKeys(m) {
		idx[k] = i
		i++
	}
	return idx
}

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

func (c *Code) compile() {
	idx := make(map[string]int, len(c.Rules))
	for i := range c.Rules {
		idx[c.Rules[i].ID] = i
	}
	c.overrideIdx = make([][]int, len(c.Rules))
	for i := range c.Rules {
		for _, id := range c.Rules[i].Overrides {
			c.overrideIdx[i] = append(c.overrideIdx[i], idx[id])
		}
	}
	c.levels = c.levels[:0]
	for i := range c.Rules {
		r := &c.Rules[i]
		if r.Kind != KindLevelLimit || len(r.Match.Facts) > 0 || len(r.Match.AnyFacts) > 0 {
			continue
		}
		cl := compiledLevel{rule: r, last: new(atomic.Pointer[occurrence])}
		for _, z := range r.Match.Zones {
			cl.zones |= 1 << zoneIndex[z]
		}
		for _, e := range r.Match.Establishments {
			cl.ests |= 1 << estIndex[e]
		}
		if r.Window != nil {
			cl.hasWindow = true
			cl.from, cl.to = r.Window.bounds()
			cl.fromExcl = r.Window.FromExclusive
			cl.crossesNite = cl.from >= cl.to
		}
		for j := range c.Rules {
			sp := &c.Rules[j]
			if !slices.Contains(sp.Overrides, r.ID) || len(sp.Match.Mechanisms) == 0 {
				continue
			}
			var ov override
			for _, m := range sp.Match.Mechanisms {
				ov.mechs |= 1 << mechIndex[m]
			}
			for _, z := range sp.Match.Zones {
				ov.zones |= 1 << zoneIndex[z]
			}
			// A rule about the surroundings of protected places displaces the
			// limit in the zones that say the sensor is near such a place.
			for z := range knownZones {
				if len(sp.Match.Near) > 0 && zoneImplies(z, sp.Match.Near) {
					ov.zones |= 1 << zoneIndex[z]
				}
			}
			cl.overrides = append(cl.overrides, ov)
		}
		c.levels = append(c.levels, cl)
	}
}

// ActiveLimit is the alert engine's fast path: the numeric limit in force
// for a sensor in zone watching an establishment of the given type at t,
// or ok=false when the code sets none (or the law is not in force). It
// does not allocate.
func (c *Code) ActiveLimit(zone, establishment string, t time.Time) (Limit, bool) {
	return c.ActiveLimitFor(zone, establishment, "", t)
}

// ActiveLimitFor is ActiveLimit for an establishment whose noise comes from
// a known mechanism (docs/codes-eval.md: sound_system, bell, machinery, …): a
// special rule that displaces the level limit for that mechanism (bells,
// works near sensitive uses) leaves no numeric limit, since the hour rule
// of its own article decides.
func (c *Code) ActiveLimitFor(zone, establishment, mechanism string, t time.Time) (Limit, bool) {
	if !c.Status.InForce {
		return Limit{}, false
	}
	zi, zok := zoneIndex[zone]
	var ei, mi uint
	var eok, mok bool
	if establishment != "" {
		ei, eok = estIndex[establishment]
	}
	if mechanism != "" {
		mi, mok = mechIndex[mechanism]
	}
	// Fast path: an occurrence computed before still contains t (period
	// boundaries fall on whole minutes, so whole seconds compare exactly).
	ts := t.Unix()
	for i := range c.levels {
		cl := &c.levels[i]
		if !cl.hasWindow || !cl.matches(zi, zok, ei, eok, mi, mok) {
			continue
		}
		if o := cl.last.Load(); o != nil && ts >= o.s && ts < o.e {
			l := cl.limit(c)
			l.Start, l.End = o.start, o.end
			return l, true
		}
	}
	lt := t.In(c.loc)
	h, mn, _ := lt.Clock()
	m := h*60 + mn
	for i := range c.levels {
		cl := &c.levels[i]
		if !cl.matches(zi, zok, ei, eok, mi, mok) {
			continue
		}
		l := cl.limit(c)
		if !cl.hasWindow {
			return l, true
		}
		in := m >= cl.from
		if cl.fromExcl {
			in = m > cl.from
		}
		startDayOffset := 0
		if cl.crossesNite {
			if m < cl.to {
				in, startDayOffset = true, -1
			}
		} else {
			in = in && m < cl.to
		}
		if !in {
			continue
		}
		y, mo, d := lt.Date()
		dur := cl.to - cl.from
		if dur <= 0 {
			dur += 1440
		}
		l.Start = time.Date(y, mo, d+startDayOffset, 0, cl.from, 0, 0, c.loc)
		l.End = time.Date(y, mo, d+startDayOffset, 0, cl.from+dur, 0, 0, c.loc)
		cl.last.Store(&occurrence{start: l.Start, end: l.End, s: l.Start.Unix(), e: l.End.Unix()})
		return l, true
	}
	return Limit{}, false
}

func (cl *compiledLevel) matches(zi uint, zok bool, ei uint, eok bool, mi uint, mok bool) bool {
	if cl.zones != 0 && (!zok || cl.zones&(1<<zi) == 0) {
		return false
	}
	if cl.ests != 0 && (!eok || cl.ests&(1<<ei) == 0) {
		return false
	}
	if mok {
		for _, ov := range cl.overrides {
			if ov.mechs&(1<<mi) != 0 && (ov.zones == 0 || (zok && ov.zones&(1<<zi) != 0)) {
				return false
			}
		}
	}
	return true
}

func (cl *compiledLevel) limit(c *Code) Limit {
	return Limit{DBA: *cl.rule.LimitDBA, Period: cl.rule.Period, PeriodLabel: cl.rule.Label, RuleID: cl.rule.ID,
		Article: cl.rule.Article, Quote: cl.rule.Quote, CodeID: c.ID, CodeVersion: c.Version}
}
