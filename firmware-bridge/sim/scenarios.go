package sim

import (
	"math"
	"time"
)

// model is one scenario: level gives the A-weighted fast level (dB) at an
// instant; it must be a pure function of (g, in).
type model struct {
	salt        uint64
	description string  // pt-BR, for operators
	crestC      float64 // simulated LCpeak − LAFmax, dB
	level       func(g gen, in instant) float64
}

// instant is the midpoint of one 125 ms slot.
type instant struct {
	k    int64     // slot index since the Unix epoch
	t    time.Time // in the scenario's location
	unix float64   // seconds since the Unix epoch
	hour float64   // local hour of day, 0 ≤ hour < 24
}

// secondsOfDay is the local time of day in seconds.
func (in instant) secondsOfDay() float64 { return in.hour * 3600 }

// day is a compact local calendar date (yyyymmdd) shifted back by back
// hours, so that 01:00 belongs to the previous evening when back ≥ 1.
func (in instant) day(backHours int) int64 {
	t := in.t.Add(-time.Duration(backHours) * time.Hour)
	return int64(t.Year())*10000 + int64(t.Month())*100 + int64(t.Day())
}

var models = map[Scenario]*model{
	QuietNight: {
		salt:        0x71a1e7,
		description: "Rua residencial tranquila: cerca de 35 dB(A) de madrugada e 48 dB(A) de dia, com passagem ocasional de carros e um cachorro latindo.",
		crestC:      13,
		level:       quietNight,
	},
	BarMusic: {
		salt:        0xba2,
		description: "Bar com música amplificada: rua e conversa abaixo de 60 dB(A) até as 22:00; das 22:00 às 02:00, música a cerca de 72 dB(A), acima do limite noturno de Lapa (60 dB).",
		crestC:      16,
		level:       barMusic,
	},
	Construction: {
		salt:        0xc0257,
		description: "Obra de construção civil de dia (seg–sex 07:00–17:00 com almoço das 12:00 às 13:00; sáb 07:00–12:00): máquinas a cerca de 68 dB(A), rajadas de martelete de 82–90 dB(A), sirene de ré e impactos.",
		crestC:      18,
		level:       construction,
	},
	ChurchBells: {
		salt:        0xbe115,
		description: "Sinos de igreja em cidade pequena: badaladas das horas das 06:00 às 21:00, uma badalada na meia hora, repique diário às 18:00 e aos domingos às 07:00 e 10:00.",
		crestC:      12,
		level:       churchBells,
	},
	Siren: {
		salt:        0x5172e,
		description: "Avenida urbana com passagem de viaturas de emergência (3 a 4 por hora) com sirene, picos de 88–96 dB(A).",
		crestC:      9,
		level:       siren,
	},
}

// Hourly background profiles (dB(A) at hh:00, linear in between).
var (
	quietKnots = [24]float64{36, 35, 34, 34, 35, 38, 43, 47, 49, 48, 48, 48, 49, 48, 48, 48, 49, 50, 49, 47, 45, 43, 40, 38}
	barKnots   = [24]float64{50, 48, 47, 44, 43, 45, 49, 53, 55, 55, 55, 55, 56, 55, 55, 55, 56, 57, 56, 55, 54, 53, 52, 51}
	urbanKnots = [24]float64{46, 45, 44, 44, 45, 48, 53, 57, 58, 58, 58, 58, 58, 58, 58, 58, 58, 58, 57, 55, 53, 51, 49, 47}
	townKnots  = [24]float64{35, 35, 35, 35, 36, 37, 41, 44, 46, 46, 46, 46, 46, 46, 46, 46, 46, 46, 45, 43, 41, 39, 37, 36}
	cityKnots  = [24]float64{56, 54, 53, 53, 54, 57, 61, 64, 65, 65, 65, 65, 65, 65, 65, 65, 65, 65, 65, 63, 62, 61, 59, 57}
)

func diurnal(k *[24]float64, hour float64) float64 {
	h := int(hour) % 24
	f := hour - math.Floor(hour)
	return k[h] + f*(k[(h+1)%24]-k[h])
}

// background is a diurnal profile with slow and fast random variation.
func background(g gen, in instant, knots *[24]float64) float64 {
	return diurnal(knots, in.hour) +
		1.5*g.smooth(1, in.unix, 20) +
		0.8*g.smooth(2, in.unix, 3) +
		0.6*g.gauss(3, in.k)
}

// esum adds levels in the energy domain; −Inf terms contribute nothing.
func esum(levels ...float64) float64 {
	var e float64
	for _, l := range levels {
		if !math.IsInf(l, -1) {
			e += math.Pow(10, l/10)
		}
	}
	return 10 * math.Log10(e)
}

func quietNight(g gen, in instant) float64 {
	parts := []float64{background(g, in, &quietKnots)}
	// Cars passing: a line-source-like rise and fall, tapered at the ends.
	cars := eventSpec{stream: 10, bucket: 600, maxN: 12, minDur: 24, maxDur: 40}
	g.events(cars, func(b time.Time) float64 {
		switch h := b.Hour(); {
		case h < 5:
			return 0.5
		case h < 7, h >= 21:
			return 2
		default:
			return 9
		}
	}, in.unix, func(e event) {
		c := e.start + e.dur/2
		w := 1.2 + 1.5*e.r2
		x := (in.unix - c) / w
		edge := 2 * (in.unix - c) / e.dur
		peak := 56 + 10*e.r1
		if h := in.t.Hour(); h < 6 || h >= 22 {
			peak -= 4 // fewer, slower cars at night
		}
		parts = append(parts, peak-10*math.Log10(1+x*x)-20*edge*edge)
	})
	// A dog barking now and then.
	dog := eventSpec{stream: 11, bucket: 900, maxN: 1, minDur: 4, maxDur: 12}
	g.events(dog, func(time.Time) float64 { return 0.3 }, in.unix, func(e event) {
		period := 0.6 + 0.6*e.r1
		if ph := math.Mod(in.unix-e.start, period) / period; ph < 0.35 {
			parts = append(parts, 60+6*e.r2)
		}
	})
	return esum(parts...)
}

func barMusic(g gen, in instant) float64 {
	parts := []float64{background(g, in, &barKnots)}
	sod := in.secondsOfDay()
	open := sod >= 18*3600 || sod < 2.5*3600
	if open {
		parts = append(parts, 53+2*g.smooth(20, in.unix, 30)+0.8*g.gauss(21, in.k))
	}
	// Amplified music 22:00–02:00 local, every night.
	since := sod - 22*3600
	if sod < 2*3600 {
		since = sod + 2*3600
	}
	if since >= 0 && since < 4*3600 {
		day := in.day(3)
		song := int64(since / 240)
		pos := since - float64(song)*240
		gap := 4 + 4*g.u2(22, day, song)
		loud := 71 + 1.5*g.gauss2(23, day, song)
		if pos > 240-gap {
			loud -= 15 // between songs
		}
		beat := 60 / (96 + 32*g.u2(24, day, song))
		if ph := math.Mod(pos, beat) / beat; ph < 0.25 {
			loud += 3
		} else {
			loud -= 1
		}
		loud += 0.8 * g.gauss(25, in.k)
		// Fade in over 20 s from 22:00:00, out over the last 10 s.
		fade := math.Min(1, math.Min(since/20, (4*3600-since)/10))
		loud += 10 * math.Log10(math.Max(fade, 1e-3))
		parts = append(parts, loud)
		// Crowd cheering.
		cheer := eventSpec{stream: 26, bucket: 300, maxN: 2, minDur: 3, maxDur: 6}
		g.events(cheer, func(time.Time) float64 { return 0.6 }, in.unix, func(e event) {
			parts = append(parts, 74+6*e.r1+0.8*g.gauss(27, in.k))
		})
	}
	return esum(parts...)
}

// working reports whether the construction site works at t.
func working(t time.Time) bool {
	h := t.Hour()
	switch t.Weekday() {
	case time.Sunday:
		return false
	case time.Saturday:
		return h >= 7 && h < 12
	default:
		return h >= 7 && h < 17 && h != 12
	}
}

func construction(g gen, in instant) float64 {
	parts := []float64{background(g, in, &urbanKnots)}
	if working(in.t) {
		parts = append(parts, 67+3*g.smooth(30, in.unix, 45)+1.0*g.gauss(31, in.k))
		always := func(time.Time) float64 { return 1.5 }
		jack := eventSpec{stream: 32, bucket: 300, maxN: 3, minDur: 5, maxDur: 40}
		g.events(jack, always, in.unix, func(e event) {
			// Bursts with short pauses while the operator repositions.
			if g.smooth(33, in.unix, 2) > -0.8 {
				parts = append(parts, 84+4*e.r1+2*g.gauss(34, in.k))
			}
		})
		beeper := eventSpec{stream: 35, bucket: 600, maxN: 1, minDur: 15, maxDur: 30}
		g.events(beeper, func(time.Time) float64 { return 0.6 }, in.unix, func(e event) {
			if math.Mod(in.unix-e.start, 1) < 0.5 {
				parts = append(parts, 76+4*e.r1)
			}
		})
		impact := eventSpec{stream: 36, bucket: 60, maxN: 2, minDur: 0.25, maxDur: 0.25}
		g.events(impact, func(time.Time) float64 { return 1 }, in.unix, func(e event) {
			parts = append(parts, 86+6*e.r1)
		})
	}
	return esum(parts...)
}

// strike is the level of one bell strike τ seconds after it was struck.
func strike(peak, decay, tau float64) float64 {
	if tau < 0 || tau > 15 {
		return math.Inf(-1)
	}
	return peak - decay*tau
}

func churchBells(g gen, in instant) float64 {
	parts := []float64{background(g, in, &townKnots)}
	sod := in.secondsOfDay()
	h := int(in.hour)
	into := sod - float64(h)*3600 // seconds into the hour
	day := in.day(0)
	if h >= 6 && h <= 21 {
		// The hour, struck on a 12-hour dial, 2.5 s apart.
		n := h % 12
		if n == 0 {
			n = 12
		}
		for j := 0; j < n; j++ {
			peak := 80 + 1.5*g.gauss2(40, day*100+int64(h), int64(j))
			parts = append(parts, strike(peak, 5, into-2.5*float64(j)))
		}
		// One strike at half past.
		parts = append(parts, strike(79+1.5*g.gauss2(41, day, int64(h)), 5, into-1800))
	}
	// Peals: 18:01 daily for 90 s; 07:01 and 10:01 on Sundays for 120 s.
	peal := func(hour int, length float64) {
		if h != hour {
			return
		}
		tau := into - 60
		if tau < 0 || tau > length+15 {
			return
		}
		const every = 0.55
		last := math.Floor(math.Min(tau, length) / every)
		for j := math.Max(0, last-27); j <= last; j++ {
			bell := int64(j) % 4
			peak := 76 + 1.5*float64(bell) + g.gauss2(42, day*100+int64(hour), int64(j))
			parts = append(parts, strike(peak, 4, tau-j*every))
		}
	}
	peal(18, 90)
	if in.t.Weekday() == time.Sunday {
		peal(7, 120)
		peal(10, 120)
	}
	return esum(parts...)
}

func siren(g gen, in instant) float64 {
	parts := []float64{background(g, in, &cityKnots)}
	spec := eventSpec{stream: 50, bucket: 1200, maxN: 2, minDur: 30, maxDur: 90}
	g.events(spec, func(b time.Time) float64 {
		if h := b.Hour(); h >= 7 && h < 22 {
			return 1.3
		}
		return 0.8
	}, in.unix, func(e event) {
		c := e.start + e.dur/2
		tau := in.unix - e.start
		env := -25 * math.Pow(math.Abs(in.unix-c)/(e.dur/2), 1.5)
		var mod float64
		if e.r2 < 0.5 {
			mod = 4 * math.Sin(2*math.Pi*tau/4) // wail
		} else {
			mod = 3 * math.Sin(2*math.Pi*tau/0.35) // yelp
		}
		parts = append(parts, 84+8*e.r1+env+mod)
	})
	return esum(parts...)
}
