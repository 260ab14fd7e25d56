package stats

import (
	"testing"
	"time"
)

// TestLdenHandComputed: every expected value below is worked out by hand in
// its comment (energies 10^(L/10), their time-weighted mean, 10·lg, the
// +5 dB evening and +10 dB night penalties, the 12/4/8-hour part lengths)
// and written as a literal; none is computed by the code under test.
//
// Levels are held for whole hours of one local day (Monday 2026-11-30,
// Brasília), so the energies are exact multiples of hour counts.
func TestLdenHandComputed(t *testing.T) {
	type span struct {
		from, to int // local hours [from, to)
		db       float64
	}
	cases := []struct {
		name                    string
		spans                   []span
		ld, le, ln, lden, laeq  float64
		lapaDay, lapaNight      float64 // Lapa's Art. 96 periods: diurno 07–22, noturno 22–07
		lapaDayMin, lapaNightMn int     // minutes above 65 / 60
	}{
		{
			// Day 65, evening 60, night 50.
			//   Ld = 65, Le = 60, Ln = 50 (constant).
			//   Lden: 12·10^(65/10)       = 12·3 162 277.66 = 37 947 331.9
			//          4·10^((60+5)/10)   =  4·3 162 277.66 = 12 649 110.6
			//          8·10^((50+10)/10)  =  8·1 000 000    =  8 000 000
			//         sum 58 596 442.5 / 24 = 2 441 518.4 → 10·lg = 63.8766 dB
			//   LAeq,24h: (12·10^6.5 + 4·10^6 + 8·10^5)/24 = (37 947 331.9 + 4 000 000 + 800 000)/24
			//           = 1 781 138.8 → 62.5070 dB
			//   Lapa diurno 07–22: 12 h at 65 + 3 h at 60 → (12·10^6.5 + 3·10^6)/15 = 2 729 822.1 → 64.3613 dB
			//   Lapa noturno 22–07: 1 h at 60 + 8 h at 50 → (10^6 + 8·10^5)/9 = 200 000 → 53.0103 dB
			name:  "65/60/50",
			spans: []span{{0, 7, 50}, {7, 19, 65}, {19, 23, 60}, {23, 24, 50}},
			ld:    65, le: 60, ln: 50, lden: 63.8766, laeq: 62.5070,
			lapaDay: 64.3613, lapaNight: 53.0103,
		},
		{
			// Levels that change within each part.
			//   Ld: 6 h at 70 + 6 h at 60 → (6·10^7 + 6·10^6)/12 = 5 500 000 → 67.4036 dB
			//   Le: 2 h at 65 + 2 h at 55 → (2·10^6.5 + 2·10^5.5)/4 = 1 739 252.7 → 62.4036 dB
			//   Ln: 1 h at 60 + 7 h at 40 → (10^6 + 7·10^4)/8 = 133 750 → 51.2629 dB
			//   Lden: 12·5 500 000 = 66 000 000
			//          4·1 739 252.7·10^0.5 = 4·5 500 000 = 22 000 000 (the +5 dB penalty)
			//          8·133 750·10 = 10 700 000 (the +10 dB penalty)
			//         sum 98 700 000 / 24 = 4 112 500 → 66.1411 dB
			//   LAeq,24h: (66 000 000 + 6 957 010.9 + 1 070 000)/24 = 3 084 458.8 → 64.8918 dB
			//   Lapa diurno: 07–13 at 70, 13–19 at 60, 19–21 at 65, 21–22 at 55 (15 h):
			//     (6·10^7 + 6·10^6 + 2·10^6.5 + 10^5.5)/15 = 72 640 783.1/15 = 4 842 718.9 → 66.8509 dB;
			//     the six hours at 70 are above 65: 360 minutes.
			//   Lapa noturno: 22–23 at 55, 23–24 at 60, 00–07 at 40 (9 h):
			//     (10^5.5 + 10^6 + 7·10^4)/9 = 1 386 227.8/9 = 154 025.3 → 51.8759 dB; nothing above 60.
			name:  "varying within the parts",
			spans: []span{{0, 7, 40}, {7, 13, 70}, {13, 19, 60}, {19, 21, 65}, {21, 23, 55}, {23, 24, 60}},
			ld:    67.4036, le: 62.4036, ln: 51.2629, lden: 66.1411, laeq: 64.8918,
			lapaDay: 66.8509, lapaNight: 51.8759, lapaDayMin: 360,
		},
		{
			// The hour 22–23 is END evening but Lapa night: the two
			// groupings differ.
			//   Ld: 60. Le: 3 h at 60 + 1 h at 70 → (3·10^6 + 10^7)/4 = 3 250 000 → 65.1188 dB.
			//   Ln: 50.
			//   Lden: 12·10^6 = 12 000 000; 4·3 250 000·10^0.5 = 41 109 609.6; 8·10^5·10 = 8 000 000;
			//         sum 61 109 609.6 / 24 = 2 546 233.7 → 64.0590 dB
			//   LAeq,24h: (15·10^6 + 10^7 + 8·10^5)/24 = 25 800 000/24 = 1 075 000 → 60.3141 dB
			//   Lapa noturno: 1 h at 70 + 8 h at 50 → (10^7 + 8·10^5)/9 = 1 200 000 → 60.7918 dB,
			//     its 60 minutes at 70 above the night's 60 dB.
			name:  "22–23 loud: evening for Lden, night for Lapa",
			spans: []span{{0, 7, 50}, {7, 22, 60}, {22, 23, 70}, {23, 24, 50}},
			ld:    60, le: 65.1188, ln: 50, lden: 64.0590, laeq: 60.3141,
			lapaDay: 60, lapaNight: 60.7918, lapaNightMn: 60,
		},
	}
	c := lapa(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			from, to := at("2026-11-30 00:00"), at("2026-12-01 00:00")
			e := New(Options{From: from, To: to, Limit: lapaBar(c)})
			fill(t, e, from, to, func(m time.Time) (float64, bool) {
				h := m.In(brt).Hour()
				for _, s := range tc.spans {
					if h >= s.from && h < s.to {
						return s.db, true
					}
				}
				t.Fatalf("hour %d not covered", h)
				return 0, false
			})
			r := e.Result()
			near(t, "Ld", r.Ld, tc.ld, 5e-5)
			near(t, "Le", r.Le, tc.le, 5e-5)
			near(t, "Ln", r.Ln, tc.ln, 5e-5)
			near(t, "Lden", r.Lden, tc.lden, 5e-5)
			near(t, "LAeq,24h", r.LAeq, tc.laeq, 5e-5)
			near(t, "day's Lden", r.Days[0].Lden, tc.lden, 5e-5)
			// The exported formula on the hand-computed parts.
			if got := Lden(tc.ld, tc.le, tc.ln); got < tc.lden-1e-4 || got > tc.lden+1e-4 {
				t.Errorf("Lden(%v, %v, %v) = %.5f, want %.4f", tc.ld, tc.le, tc.ln, got, tc.lden)
			}
			by := map[string]PeriodFigures{}
			for _, p := range r.Periods {
				by[p.Period] = p
			}
			near(t, "Lapa diurno", by["diurno"].LAeq, tc.lapaDay, 5e-5)
			near(t, "Lapa noturno", by["noturno"].LAeq, tc.lapaNight, 5e-5)
			if by["diurno"].MinutesAbove != tc.lapaDayMin || by["noturno"].MinutesAbove != tc.lapaNightMn {
				t.Errorf("minutes above: diurno %d noturno %d, want %d and %d", by["diurno"].MinutesAbove,
					by["noturno"].MinutesAbove, tc.lapaDayMin, tc.lapaNightMn)
			}
		})
	}
}

// TestLdenTwoDaysAndGaps: a report's Ld/Le/Ln are energy means over the
// time present in the part, across days; a part with a gap is the mean of
// what is there (the coverage says how much).
func TestLdenTwoDaysAndGaps(t *testing.T) {
	from, to := at("2026-11-30 00:00"), at("2026-12-02 00:00")
	e := New(Options{From: from, To: to})
	fill(t, e, from, to, func(m time.Time) (float64, bool) {
		lt := m.In(brt)
		if lt.Day() == 1 { // second day: 50 dB throughout
			return 50, true
		}
		switch PartOf(lt.Hour()) { // first day as "65/60/50" above
		case Day:
			return 65, true
		case Evening:
			return 60, true
		}
		return 50, true
	})
	r := e.Result()
	// Ld: 12 h at 65 + 12 h at 50 → (10^6.5 + 10^5)/2 = 1 631 138.8 → 62.1249 dB
	// Le: 4 h at 60 + 4 h at 50 → (10^6 + 10^5)/2 = 550 000 → 57.4036 dB
	// Ln: 50 dB
	// Lden: 12·1 631 138.8 = 19 573 666.0; 4·550 000·10^0.5 = 6 957 010.9; 8·10^6 = 8 000 000;
	//       sum 34 530 676.9 / 24 = 1 438 778.2 → 61.5799 dB
	near(t, "Ld", r.Ld, 62.1249, 5e-5)
	near(t, "Le", r.Le, 57.4036, 5e-5)
	near(t, "Ln", r.Ln, 50, 5e-5)
	near(t, "Lden", r.Lden, 61.5799, 5e-5)
	// Second day alone: 50 everywhere → 12·10^5 + 4·10^5.5 + 8·10^6 = 1 200 000 + 1 264 911.1 + 8 000 000
	// = 10 464 911.1 / 24 = 436 038.0 → 56.3952 dB.
	near(t, "second day's Lden", r.Days[1].Lden, 56.3952, 5e-5)

	// Gaps: 6 of the 12 day hours at 70, nothing else of the day part →
	// Ld = 70 (mean over the 6 h present), coverage of the day part 0.5;
	// no evening or night: Lden undefined.
	from, to = at("2026-11-30 07:00"), at("2026-11-30 19:00")
	e = New(Options{From: from, To: to})
	fill(t, e, from, to, func(m time.Time) (float64, bool) { return 70, m.In(brt).Hour() < 13 })
	r = e.Result()
	near(t, "Ld with a gap", r.Ld, 70, 1e-9)
	if r.Lden != nil || r.Coverage != 0.5 {
		t.Errorf("Lden %v (want nil), coverage %v (want 0.5)", r.Lden, r.Coverage)
	}
}
