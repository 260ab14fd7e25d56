package sim

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/internal/clocktest"
	"github.com/sossego/sossego/internal/level"
)

var sp = saoPaulo()

func local(y int, m time.Month, d, h, min, s int) time.Time {
	return time.Date(y, m, d, h, min, s, 0, sp)
}

func newDev(t *testing.T, sc Scenario, seed int64) *Dev {
	t.Helper()
	d, err := New(&Opts{Scenario: sc, Seed: seed, Now: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// leq returns the LAeq, LAFmax and LAFmin of [from, to) measured in 1-s
// windows and combined in the energy domain.
func leq(d *Dev, from, to time.Time) (leq, lmax, lmin float64) {
	var acc level.Accumulator
	for end := from.Add(time.Second); !end.After(to); end = end.Add(time.Second) {
		var s bridge.Sample
		d.Measure(end, time.Second, &s)
		acc.Add(s.Level, 1000)
		lmax = math.Max(lmax, s.Max)
		if lmin == 0 || s.Min < lmin {
			lmin = s.Min
		}
	}
	l, _ := acc.Leq()
	return l, lmax, lmin
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		opts Opts
		want string
	}{
		{"unknown scenario", Opts{Scenario: "karaoke"}, `unknown scenario "karaoke"`},
		{"negative speed", Opts{Speed: -1}, "speed -1"},
		{"NaN speed", Opts{Speed: math.NaN()}, "speed NaN"},
		{"infinite speed", Opts{Speed: math.Inf(1)}, "speed +Inf"},
		{"bad grade", Opts{Grade: "class3"}, `unknown grade "class3"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(&tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "sim: ") {
				t.Fatalf("New(%+v) = %v, %v; want error containing %q", tc.opts, d, err, tc.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	var s bridge.Sample
	if err := d.Sense(&s); err != nil {
		t.Fatal(err)
	}
	if s.Device.Grade != bridge.GradeScreening || !strings.Contains(s.Device.Model, "quiet_night") || s.Device.Serial != "sim-quiet_night-0" {
		t.Fatalf("device = %+v", s.Device)
	}
	if got := d.String(); got != "sim{quiet_night seed=0}" {
		t.Fatalf("String() = %q", got)
	}
	g, err := New(&Opts{Grade: bridge.GradeClass1})
	if err != nil {
		t.Fatal(err)
	}
	if g.Device().Grade != bridge.GradeClass1 {
		t.Fatalf("grade = %q", g.Device().Grade)
	}
}

func TestScenarios(t *testing.T) {
	list := Scenarios()
	want := []Scenario{BarMusic, ChurchBells, Construction, QuietNight, Siren}
	if len(list) != len(want) {
		t.Fatalf("Scenarios() = %v", list)
	}
	for i, info := range list {
		if info.Name != want[i] {
			t.Errorf("Scenarios()[%d] = %q, want %q", i, info.Name, want[i])
		}
		if len(info.Description) < 40 {
			t.Errorf("%s: description too short: %q", info.Name, info.Description)
		}
		got, err := ParseScenario(string(info.Name))
		if err != nil || got != info.Name {
			t.Errorf("ParseScenario(%q) = %q, %v", info.Name, got, err)
		}
	}
	if _, err := ParseScenario("Bar_Music"); err == nil {
		t.Error("ParseScenario accepted a wrong spelling")
	}
}

func TestDeterministic(t *testing.T) {
	instants := []time.Time{
		local(2026, 3, 6, 21, 59, 59),
		local(2026, 3, 6, 22, 0, 30),
		local(2026, 3, 7, 1, 17, 3),
		local(2026, 3, 9, 9, 30, 0).Add(370 * time.Millisecond),
		local(2026, 3, 8, 18, 1, 20),
	}
	for _, info := range Scenarios() {
		t.Run(string(info.Name), func(t *testing.T) {
			a, b := newDev(t, info.Name, 42), newDev(t, info.Name, 42)
			other := newDev(t, info.Name, 43)
			differs := false
			for _, at := range instants {
				for _, dur := range []time.Duration{time.Second, 100 * time.Millisecond, 3 * time.Millisecond} {
					var sa, sb, so bridge.Sample
					a.Measure(at, dur, &sa)
					b.Measure(at, dur, &sb)
					other.Measure(at, dur, &so)
					if sa != sb {
						t.Fatalf("same seed, same instant %v: %+v != %+v", at, sa, sb)
					}
					if so.Level != sa.Level {
						differs = true
					}
				}
			}
			if !differs {
				t.Error("seeds 42 and 43 gave identical levels at every instant")
			}
			// Sense through a clock gives the same as Measure.
			clk := clocktest.New(time.Unix(1_000_000, 0))
			c, err := New(&Opts{Scenario: info.Name, Seed: 42, Now: clk.Now, Start: instants[0], Speed: 60})
			if err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			var sc, sm bridge.Sample
			if err := c.Sense(&sc); err != nil {
				t.Fatal(err)
			}
			a.Measure(instants[0].Add(time.Minute), time.Second, &sm)
			if sc != sm {
				t.Fatalf("Sense = %+v, Measure = %+v", sc, sm)
			}
		})
	}
}

func TestSenseClockAndWindow(t *testing.T) {
	start := local(2026, 3, 6, 21, 58, 0)
	tests := []struct {
		name     string
		speed    float64
		step     time.Duration // clock advance between Senses
		wantStep time.Duration // simulated advance
		wantDur  time.Duration
	}{
		{"wall clock 1 Hz", 1, time.Second, time.Second, time.Second},
		{"wall clock 10 Hz", 1, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond},
		{"accelerated 60x", 60, time.Second, time.Minute, time.Second},
		{"accelerated 4x at 10 Hz", 4, 100 * time.Millisecond, 400 * time.Millisecond, 400 * time.Millisecond},
		{"slow motion", 0.5, time.Second, 500 * time.Millisecond, 500 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktest.New(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
			d, err := New(&Opts{Scenario: BarMusic, Seed: 7, Now: clk.Now, Start: start, Speed: tc.speed})
			if err != nil {
				t.Fatal(err)
			}
			var s bridge.Sample
			if err := d.Sense(&s); err != nil {
				t.Fatal(err)
			}
			if !s.At.Equal(start) || s.Duration != time.Second {
				t.Fatalf("first sample at %v for %v, want %v for 1s", s.At, s.Duration, start)
			}
			for i := 1; i <= 5; i++ {
				clk.Advance(tc.step)
				if err := d.Sense(&s); err != nil {
					t.Fatal(err)
				}
				if want := start.Add(time.Duration(i) * tc.wantStep); !s.At.Equal(want) {
					t.Fatalf("sample %d at %v, want %v", i, s.At, want)
				}
				if s.Duration != tc.wantDur {
					t.Fatalf("sample %d duration %v, want %v", i, s.Duration, tc.wantDur)
				}
				if s.TimeWeighting != bridge.Leq || s.Weighting != bridge.WeightingA || !s.HasMax || !s.HasMin {
					t.Fatalf("sample %d = %+v", i, s)
				}
			}
			// A clock that does not move gives a full second again.
			if err := d.Sense(&s); err != nil || s.Duration != time.Second {
				t.Fatalf("repeated instant: %v, %v", s.Duration, err)
			}
		})
	}
}

// TestAnySamplingRate checks that fine samples combine, in the energy
// domain, into the 1-s values (up to the 0.01 dB rounding).
func TestAnySamplingRate(t *testing.T) {
	for _, info := range Scenarios() {
		for _, step := range []time.Duration{100 * time.Millisecond, 125 * time.Millisecond, 250 * time.Millisecond, 330 * time.Millisecond} {
			d := newDev(t, info.Name, 3)
			start := local(2026, 3, 9, 22, 0, 5) // Monday night
			for sec := 0; sec < 20; sec++ {
				end := start.Add(time.Duration(sec+1) * time.Second)
				var acc level.Accumulator
				lmax, lmin := math.Inf(-1), math.Inf(1)
				for from := end.Add(-time.Second); from.Before(end); from = from.Add(step) {
					to := from.Add(step)
					if to.After(end) {
						to = end
					}
					var s bridge.Sample
					d.Measure(to, to.Sub(from), &s)
					acc.Add(s.Level, float64(s.Duration)/1e6)
					lmax, lmin = math.Max(lmax, s.Max), math.Min(lmin, s.Min)
				}
				var one bridge.Sample
				d.Measure(end, time.Second, &one)
				got, _ := acc.Leq()
				if math.Abs(got-one.Level) > 0.011 || lmax != one.Max || lmin != one.Min {
					t.Fatalf("%s step %v second %d: combined %.3f/%.2f/%.2f, 1-s %.2f/%.2f/%.2f",
						info.Name, step, sec, got, lmax, lmin, one.Level, one.Max, one.Min)
				}
			}
		}
	}
}

// TestBarCrossesLapaNightLimit is what the demo relies on: the bar is under
// Lapa's 60 dB night limit before 22:00 and clearly over it right after.
func TestBarCrossesLapaNightLimit(t *testing.T) {
	const limit = 60.0
	for seed := int64(0); seed < 6; seed++ {
		for _, day := range []int{2, 7} { // Mon, Sat in March 2026
			d := newDev(t, BarMusic, seed)
			before, _, _ := leq(d, local(2026, 3, day, 21, 50, 0), local(2026, 3, day, 22, 0, 0))
			for m := 50; m < 60; m++ {
				if l, _, _ := leq(d, local(2026, 3, day, 21, m, 0), local(2026, 3, day, 21, m+1, 0)); l >= limit {
					t.Errorf("seed %d day %d: 21:%02d LAeq,1min %.1f not below %v", seed, day, m, l, limit)
				}
			}
			first, _, _ := leq(d, local(2026, 3, day, 22, 0, 30), local(2026, 3, day, 22, 1, 30))
			ten, _, _ := leq(d, local(2026, 3, day, 22, 0, 0), local(2026, 3, day, 22, 10, 0))
			late, _, _ := leq(d, local(2026, 3, day+1, 1, 30, 0), local(2026, 3, day+1, 1, 40, 0))
			after, _, _ := leq(d, local(2026, 3, day+1, 3, 0, 0), local(2026, 3, day+1, 3, 10, 0))
			if before >= limit-2 || first < limit+8 || ten < limit+8 || late < limit+8 || after >= limit-5 {
				t.Errorf("seed %d day %d: 21:50–22:00 %.1f, 22:00:30–22:01:30 %.1f, 22:00–22:10 %.1f, 01:30–01:40 %.1f, 03:00–03:10 %.1f",
					seed, day, before, first, ten, late, after)
			}
		}
	}
}

func TestQuietNight(t *testing.T) {
	for seed := int64(0); seed < 3; seed++ {
		d := newDev(t, QuietNight, seed)
		night, _, _ := leq(d, local(2026, 3, 10, 2, 0, 0), local(2026, 3, 10, 3, 0, 0))
		day, _, _ := leq(d, local(2026, 3, 10, 10, 0, 0), local(2026, 3, 10, 11, 0, 0))
		if night < 30 || night > 45 || day < night+5 || day > 60 {
			t.Errorf("seed %d: night LAeq %.1f, day LAeq %.1f", seed, night, day)
		}
	}
}

func TestConstruction(t *testing.T) {
	d := newDev(t, Construction, 5)
	tests := []struct {
		name     string
		from     time.Time
		min, max float64
	}{
		{"Monday 09:00", local(2026, 3, 9, 9, 0, 0), 70, 90},
		{"Monday lunch", local(2026, 3, 9, 12, 5, 0), 45, 65},
		{"Monday 15:00", local(2026, 3, 9, 15, 0, 0), 70, 90},
		{"Monday night", local(2026, 3, 9, 23, 0, 0), 35, 55},
		{"Saturday 09:00", local(2026, 3, 7, 9, 0, 0), 70, 90},
		{"Saturday 14:00", local(2026, 3, 7, 14, 0, 0), 45, 65},
		{"Sunday 10:00", local(2026, 3, 8, 10, 0, 0), 45, 65},
	}
	for _, tc := range tests {
		l, lmax, _ := leq(d, tc.from, tc.from.Add(30*time.Minute))
		if l < tc.min || l > tc.max {
			t.Errorf("%s: LAeq,30min %.1f outside [%v, %v] (LAFmax %.1f)", tc.name, l, tc.min, tc.max, lmax)
		}
	}
	_, lmax, _ := leq(d, local(2026, 3, 9, 8, 0, 0), local(2026, 3, 9, 9, 0, 0))
	if lmax < 84 {
		t.Errorf("no jackhammer burst in a working hour: LAFmax %.1f", lmax)
	}
}

// TestChurchBellsStrikeTheHour counts the strikes: a strike is a 125 ms slot
// at its nominal instant at least 6 dB above the slot before it (the
// previous strike has decayed by 12.5 dB).
func TestChurchBellsStrikeTheHour(t *testing.T) {
	d := newDev(t, ChurchBells, 9)
	for h := 0; h < 24; h++ {
		top := local(2026, 3, 10, h, 0, 0) // a Tuesday: no peal except 18:00
		strikes := 0
		for j := 0; j < 14; j++ {
			at := top.Add(time.Duration(j) * 2500 * time.Millisecond)
			var on, before bridge.Sample
			d.Measure(at.Add(slot), slot, &on)
			d.Measure(at, slot, &before)
			if on.Level > before.Level+6 {
				strikes++
			}
		}
		want := 0
		if h >= 6 && h <= 21 {
			want = h % 12
			if want == 0 {
				want = 12
			}
		}
		if strikes != want {
			t.Errorf("%02d:00: %d strikes, want %d", h, strikes, want)
		}
	}
	// The daily peal at 18:01 and none at 07:01 on a weekday; at 07:01 on Sunday.
	peal := func(at time.Time) float64 { l, _, _ := leq(d, at, at.Add(time.Minute)); return l }
	if l := peal(local(2026, 3, 10, 18, 1, 0)); l < 70 {
		t.Errorf("Tuesday 18:01 peal LAeq %.1f", l)
	}
	if l := peal(local(2026, 3, 10, 7, 1, 0)); l > 55 {
		t.Errorf("Tuesday 07:01 LAeq %.1f: no peal expected", l)
	}
	if l := peal(local(2026, 3, 8, 7, 1, 0)); l < 70 {
		t.Errorf("Sunday 07:01 peal LAeq %.1f", l)
	}
}

func TestSirenEvents(t *testing.T) {
	seeds := int64(2)
	if testing.Short() {
		seeds = 1
	}
	for seed := int64(0); seed < seeds; seed++ {
		d := newDev(t, Siren, seed)
		from := local(2026, 3, 10, 0, 0, 0)
		events, last := 0, time.Time{}
		for end := from.Add(time.Second); !end.After(from.Add(24 * time.Hour)); end = end.Add(time.Second) {
			var s bridge.Sample
			d.Measure(end, time.Second, &s)
			if s.Max > 85 {
				if last.IsZero() || end.Sub(last) > time.Minute {
					events++
				}
				last = end
			}
		}
		// About 80 a day are scheduled; a few overlap or stay under 85 dB.
		if events < 40 || events > 110 {
			t.Errorf("seed %d: %d siren events in 24 h", seed, events)
		}
	}
}

func TestHalt(t *testing.T) {
	d := newDev(t, Siren, 1)
	for i := 0; i < 2; i++ {
		if err := d.Halt(); err != nil {
			t.Fatalf("Halt #%d: %v", i+1, err)
		}
	}
	var s bridge.Sample
	if err := d.Sense(&s); !errors.Is(err, ErrHalted) {
		t.Fatalf("Sense after Halt = %v, want ErrHalted", err)
	}
}

func TestConcurrentSense(t *testing.T) {
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	d, err := New(&Opts{Scenario: Construction, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				clk.Advance(10 * time.Millisecond)
				var s bridge.Sample
				if err := d.Sense(&s); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// FuzzMeasure checks the invariants of every window: finite levels inside
// the meter's range and LAFmin ≤ LAeq ≤ LAFmax.
func FuzzMeasure(f *testing.F) {
	f.Add(uint8(1), int64(0), int64(1_772_845_200), int64(1000))
	f.Add(uint8(3), int64(-5), int64(1_772_859_600), int64(7))
	f.Add(uint8(4), int64(99), int64(-86_400), int64(-3))
	names := Scenarios()
	f.Fuzz(func(t *testing.T, sc uint8, seed, unixMs, durMs int64) {
		d := newDev(t, names[int(sc)%len(names)].Name, seed)
		// Keep the instant inside years 1900–2200 and the window ≤ 1 h.
		end := time.UnixMilli(unixMs % (200 * 365 * 86_400_000))
		dur := time.Duration(durMs%3_600_000) * time.Millisecond
		var s bridge.Sample
		d.Measure(end, dur, &s)
		for _, v := range []float64{s.Level, s.Max, s.Min, s.PeakC} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 20 || v > 160 {
				t.Fatalf("level out of range: %+v", s)
			}
		}
		if s.Min > s.Level+0.01 || s.Level > s.Max+0.01 {
			t.Fatalf("min %.2f ≤ leq %.2f ≤ max %.2f violated", s.Min, s.Level, s.Max)
		}
	})
}

func BenchmarkSense(b *testing.B) {
	clk := clocktest.New(time.Unix(1_772_845_200, 0))
	d, err := New(&Opts{Scenario: BarMusic, Now: clk.Now})
	if err != nil {
		b.Fatal(err)
	}
	var s bridge.Sample
	for b.Loop() {
		clk.Advance(100 * time.Millisecond)
		if err := d.Sense(&s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMeasureEnergyAverage: the simulated meter has no datasheet; its
// window level is the energy average of the 125 ms slots it covers,
// LAeq = 10·lg(Σ wᵢ·10^(Lᵢ/10) / Σ wᵢ). Worked by hand for two equal slots
// at 60 and 70 dB: 10·lg((10⁶ + 10⁷)/2) = 10·lg(5.5·10⁶) = 67.40 dB; the
// test checks that number against level.Leq, then Measure over two whole
// slots and over a slot and a half against the same formula applied to the
// slots' own levels.
func TestMeasureEnergyAverage(t *testing.T) {
	if got, _ := level.Leq(60, 70); math.Abs(got-67.40) > 0.005 {
		t.Fatalf("Leq(60, 70) = %.3f, worked by hand 67.40", got)
	}
	d := newDev(t, BarMusic, 3)
	end := local(2026, 3, 10, 22, 0, 0)
	var a, b, both, oneAndHalf bridge.Sample
	d.Measure(end.Add(-slot), slot, &a)
	d.Measure(end, slot, &b)
	d.Measure(end, 2*slot, &both)
	d.Measure(end, slot+slot/2, &oneAndHalf)
	want := 10 * math.Log10((math.Pow(10, a.Level/10)+math.Pow(10, b.Level/10))/2)
	if math.Abs(both.Level-want) > 0.011 || both.Max != math.Max(a.Max, b.Max) || both.Min != math.Min(a.Min, b.Min) {
		t.Errorf("two slots %v/%v (max %v %v min %v %v) → %v max %v min %v, want LAeq %.3f", a.Level, b.Level, a.Max, b.Max, a.Min, b.Min, both.Level, both.Max, both.Min, want)
	}
	want = 10 * math.Log10((0.5*math.Pow(10, a.Level/10)+math.Pow(10, b.Level/10))/1.5)
	if math.Abs(oneAndHalf.Level-want) > 0.011 { // inputs and result rounded to 0.01 dB
		t.Errorf("a slot and a half: %.2f, want %.2f", oneAndHalf.Level, want)
	}
}
