package pdf

import (
	"strings"
	"testing"
	"time"
)

func TestTimeTicks(t *testing.T) {
	bsb := func(d, h, m, s int) time.Time { return time.Date(2026, 3, d, h, m, s, 0, saoPaulo) }
	tests := []struct {
		name     string
		from, to time.Time
		labels   string // the major ticks' labels, space-separated
		minors   int    // unlabelled ticks
	}{
		// The notice chart: 10 min either side of a 4-min event.
		{"24 min", bsb(6, 23, 0, 0), bsb(6, 23, 24, 0), "23:00 23:05 23:10 23:15 23:20", 20},
		// An unround start: the first tick is the next round minute, not the start.
		{"unround start", bsb(6, 23, 3, 17), bsb(6, 23, 27, 41), "23:05 23:10 23:15 23:20 23:25", 19},
		{"90 s", bsb(6, 23, 10, 5), bsb(6, 23, 11, 35), "23:10:15 23:10:30 23:10:45 23:11:00 23:11:15 23:11:30", 13},
		{"6 min", bsb(6, 23, 10, 0), bsb(6, 23, 16, 0), "23:10 23:11 23:12 23:13 23:14 23:15 23:16", 18},
		{"40 min", bsb(6, 22, 50, 0), bsb(6, 23, 30, 0), "22:50 23:00 23:10 23:20 23:30", 16},
		{"100 min", bsb(6, 21, 55, 0), bsb(6, 23, 35, 0), "22:00 22:15 22:30 22:45 23:00 23:15 23:30", 14},
		{"3 h", bsb(6, 20, 10, 0), bsb(6, 23, 10, 0), "20:30 21:00 21:30 22:00 22:30 23:00", 13},
		{"7 h", bsb(6, 14, 0, 0), bsb(6, 21, 0, 0), "14:00 15:00 16:00 17:00 18:00 19:00 20:00 21:00", 21},
		{"12 h", bsb(6, 8, 0, 0), bsb(6, 20, 0, 0), "08:00 10:00 12:00 14:00 16:00 18:00 20:00", 18},
		// Across midnight: labels say the day too.
		{"overnight", bsb(6, 20, 0, 0), bsb(7, 6, 0, 0), "06/03 20:00 06/03 22:00 07/03 00:00 07/03 02:00 07/03 04:00 07/03 06:00", 15},
		{"18 h", bsb(6, 18, 0, 0), bsb(7, 12, 0, 0), "06/03 18:00 07/03 00:00 07/03 06:00 07/03 12:00", 15},
		{"36 h", bsb(6, 0, 0, 0), bsb(7, 12, 0, 0), "06/03 00:00 06/03 12:00 07/03 00:00 07/03 12:00", 9},
		{"5 days", bsb(2, 0, 0, 0), bsb(7, 0, 0, 0), "02/03 03/03 04/03 05/03 06/03 07/03", 15},
		{"9 days from noon", bsb(1, 12, 0, 0), bsb(10, 12, 0, 0), "02/03 04/03 06/03 08/03 10/03", 4},
		{"31 days", bsb(1, 0, 0, 0), time.Date(2026, 4, 1, 0, 0, 0, 0, saoPaulo), "01/03 08/03 15/03 22/03 29/03", 27},
		{"empty", bsb(6, 23, 0, 0), bsb(6, 23, 0, 0), "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Given in UTC, as the stores keep them: ticks are still Brasília's.
			ts := TimeTicks(tc.from.UTC(), tc.to.UTC())
			var labels []string
			minors := 0
			for i, tk := range ts {
				if tk.T.Before(tc.from) || tk.T.After(tc.to) {
					t.Errorf("tick %v outside [%v, %v]", tk.T, tc.from, tc.to)
				}
				if i > 0 && !tk.T.After(ts[i-1].T) {
					t.Errorf("ticks out of order at %v", tk.T)
				}
				if tk.Label == "" {
					minors++
					continue
				}
				labels = append(labels, tk.Label)
				// A label is the time the tick really is, in Brasília.
				if l := tk.T.In(saoPaulo); !strings.Contains(tk.Label, l.Format("15:04")) && !strings.Contains(tk.Label, l.Format("02/01")) {
					t.Errorf("tick at %v labelled %q", l, tk.Label)
				}
			}
			if got := strings.Join(labels, " "); got != tc.labels {
				t.Errorf("labels\n got %q\nwant %q", got, tc.labels)
			}
			if minors != tc.minors {
				t.Errorf("%d minor ticks, want %d", minors, tc.minors)
			}
			if len(labels) > maxMajorTicks {
				t.Errorf("%d labelled ticks: more than %d crowd the axis", len(labels), maxMajorTicks)
			}
		})
	}
}

// Ticks through gonum's ticker interface are the same instants, as Unix
// seconds.
func TestTimeTickerUnixSeconds(t *testing.T) {
	from := time.Date(2026, 3, 6, 23, 0, 0, 0, saoPaulo)
	ts := timeTicker{}.Ticks(float64(from.Unix()), float64(from.Add(24*time.Minute).Unix()))
	if len(ts) != 25 || ts[0].Label != "23:00" || ts[0].Value != float64(from.Unix()) || ts[5].Label != "23:05" || ts[5].Value != float64(from.Unix()+300) {
		t.Fatalf("ticks %+v", ts[:6])
	}
}

func TestLevelTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		labels string
		minors int
	}{
		{45, 85, "45 50 55 60 65 70 75 80 85", 32},
		{41.5, 63, "45 50 55 60", 18},
		{20, 110, "20 30 40 50 60 70 80 90 100 110", 36},
	}
	for _, tc := range tests {
		var labels []string
		minors := 0
		for _, tk := range (levelTicker{}).Ticks(tc.lo, tc.hi) {
			if tk.Value < tc.lo || tk.Value > tc.hi {
				t.Errorf("%v..%v: tick %v outside", tc.lo, tc.hi, tk.Value)
			}
			if tk.Label == "" {
				minors++
			} else {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tc.labels || minors != tc.minors {
			t.Errorf("%v..%v: labels %q (%d minor), want %q (%d)", tc.lo, tc.hi, got, minors, tc.labels, tc.minors)
		}
	}
}

func TestBRDates(t *testing.T) {
	for in, want := range map[string]string{
		"calibrado em 2026-02-05":                 "calibrado em 05/02/2026",
		"calibrado em 2026-02-05; fonte atestada": "calibrado em 05/02/2026; fonte atestada",
		"(2025-11-20)":                            "(20/11/2025)",
		"alerta lapa-bar-01/2026-03-07T02:10:00Z": "alerta lapa-bar-01/2026-03-07T02:10:00Z",
		"Constatação nº lapa-CT-2026-000001":      "Constatação nº lapa-CT-2026-000001",
		"evidencia-x_2026-03-07":                  "evidencia-x_2026-03-07",
	} {
		if got := brDates(in); got != want {
			t.Errorf("brDates(%q) = %q, want %q", in, got, want)
		}
	}
}
