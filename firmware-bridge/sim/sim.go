package sim

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"

	"github.com/sossego/sossego/internal/tz"
)

// Scenario names a simulated acoustic environment.
type Scenario string

// The scenarios.
const (
	QuietNight   Scenario = "quiet_night"
	BarMusic     Scenario = "bar_music"
	Construction Scenario = "construction"
	ChurchBells  Scenario = "church_bells"
	Siren        Scenario = "siren"
)

// Info describes a scenario for operators (Description is pt-BR).
type Info struct {
	Name        Scenario
	Description string
}

// Scenarios lists the scenarios in a stable order.
func Scenarios() []Info {
	out := make([]Info, 0, len(models))
	for name, m := range models {
		out = append(out, Info{Name: name, Description: m.description})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ParseScenario returns the scenario called name.
func ParseScenario(name string) (Scenario, error) {
	if _, ok := models[Scenario(name)]; ok {
		return Scenario(name), nil
	}
	names := make([]string, 0, len(models))
	for _, i := range Scenarios() {
		names = append(names, string(i.Name))
	}
	return "", fmt.Errorf("sim: unknown scenario %q (known: %v)", name, names)
}

// ErrHalted is returned by Sense after Halt.
var ErrHalted = errors.New("sim: meter halted")

// Opts configures a simulated meter. The zero value is a quiet_night meter
// with seed 0 running at wall-clock speed from the current instant.
type Opts struct {
	Scenario Scenario // zero means QuietNight
	Seed     int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Start is the simulated instant at New; zero means Now().
	Start time.Time
	// Speed is simulated seconds per clock second; zero means 1.
	Speed float64
	// Location is the local time of the scenario (hours of music, bells,
	// work); nil means America/Sao_Paulo.
	Location *time.Location
	// Grade is reported in every sample; zero means screening.
	Grade bridge.Grade
}

// Dev is a simulated meter. It is safe for concurrent use.
type Dev struct {
	model  *model
	gen    gen
	loc    *time.Location
	now    func() time.Time
	speed  float64
	start  time.Time // simulated instant at clock0
	clock0 time.Time
	device bridge.Device
	name   Scenario
	seed   int64

	mu      sync.Mutex
	prev    time.Time
	hasPrev bool
	halted  bool
}

// New returns a simulated meter. It fails on an unknown scenario, a negative
// or non-finite speed, or an unknown grade.
func New(opts *Opts) (*Dev, error) {
	var o Opts
	if opts != nil {
		o = *opts
	}
	if o.Scenario == "" {
		o.Scenario = QuietNight
	}
	m, ok := models[o.Scenario]
	if !ok {
		_, err := ParseScenario(string(o.Scenario))
		return nil, err
	}
	if o.Speed == 0 {
		o.Speed = 1
	}
	if o.Speed < 0 || math.IsNaN(o.Speed) || math.IsInf(o.Speed, 0) {
		return nil, fmt.Errorf("sim: speed %v must be a positive number", o.Speed)
	}
	if o.Grade == "" {
		o.Grade = bridge.GradeScreening
	}
	if !o.Grade.Valid() {
		return nil, fmt.Errorf("sim: unknown grade %q", o.Grade)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = saoPaulo()
	}
	clock0 := o.Now()
	if o.Start.IsZero() {
		o.Start = clock0
	}
	d := &Dev{
		model:  m,
		gen:    gen{seed: mix(uint64(o.Seed)) ^ m.salt, loc: o.Location},
		loc:    o.Location,
		now:    o.Now,
		speed:  o.Speed,
		start:  o.Start,
		clock0: clock0,
		name:   o.Scenario,
		seed:   o.Seed,
		device: bridge.Device{
			Model:    "Sossego simulated meter (" + string(o.Scenario) + ")",
			Serial:   fmt.Sprintf("sim-%s-%d", o.Scenario, o.Seed),
			Firmware: "sim/1",
			Grade:    o.Grade,
		},
	}
	return d, nil
}

// saoPaulo is Brasília time, the zone the simulated day runs in.
func saoPaulo() *time.Location { return tz.Brasilia() }

// SimTime returns the current simulated instant.
func (d *Dev) SimTime() time.Time {
	elapsed := d.now().Sub(d.clock0)
	return d.start.Add(time.Duration(float64(elapsed) * d.speed))
}

// Sense measures the window that ends at the current simulated instant; see
// the package documentation for the window length.
func (d *Dev) Sense(s *bridge.Sample) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return ErrHalted
	}
	end := d.SimTime()
	dur := time.Second
	if d.hasPrev {
		if gap := end.Sub(d.prev); gap > 0 && gap < time.Second {
			dur = gap
		}
	}
	d.prev, d.hasPrev = end, true
	d.Measure(end, dur, s)
	return nil
}

// Measure fills s with the levels of the simulated window (end−dur, end]. It
// reads no clock and changes no state. A non-positive dur means one slot.
func (d *Dev) Measure(end time.Time, dur time.Duration, s *bridge.Sample) {
	if dur <= 0 {
		dur = slot
	}
	e0 := end.UnixNano() - int64(dur)
	e1 := end.UnixNano()
	var energy, weight float64
	lmax, lmin := math.Inf(-1), math.Inf(1)
	for k := floorDiv(e0, int64(slot)); k*int64(slot) < e1; k++ {
		s0, s1 := k*int64(slot), (k+1)*int64(slot)
		w := float64(min(s1, e1) - max(s0, e0))
		if w <= 0 {
			continue
		}
		l := d.slotLevel(k)
		energy += w * math.Pow(10, l/10)
		weight += w
		lmax = math.Max(lmax, l)
		lmin = math.Min(lmin, l)
	}
	leq := 10 * math.Log10(energy/weight)
	*s = bridge.Sample{
		At:            end,
		Duration:      dur,
		Weighting:     bridge.WeightingA,
		TimeWeighting: bridge.Leq,
		Level:         round2(leq),
		Max:           round2(lmax),
		Min:           round2(lmin),
		HasMax:        true,
		HasMin:        true,
		PeakC:         round2(lmax + d.model.crestC),
		HasPeakC:      true,
		Device:        d.device,
	}
}

// Halt stops the meter: Sense returns ErrHalted afterwards. It is idempotent.
func (d *Dev) Halt() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.halted = true
	return nil
}

// Device returns the metadata reported in every sample.
func (d *Dev) Device() bridge.Device { return d.device }

// String implements bridge.Meter.
func (d *Dev) String() string {
	return fmt.Sprintf("sim{%s seed=%d}", d.name, d.seed)
}

// slot is the resolution of the simulated fast-weighted level.
const slot = 125 * time.Millisecond

// slotLevel is the A-weighted fast level of slot k (k·125 ms since the Unix
// epoch), a pure function of the scenario, the seed and k.
func (d *Dev) slotLevel(k int64) float64 {
	mid := k*int64(slot) + int64(slot)/2
	t := time.Unix(0, mid).In(d.loc)
	in := instant{
		k:    k,
		t:    t,
		unix: float64(mid) / 1e9,
		hour: float64(t.Hour()) + float64(t.Minute())/60 + (float64(t.Second())+float64(t.Nanosecond())/1e9)/3600,
	}
	l := d.model.level(d.gen, in)
	// Keep the level inside what a meter can report.
	return math.Min(math.Max(l, 20), 140)
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

var _ bridge.Meter = (*Dev)(nil)
