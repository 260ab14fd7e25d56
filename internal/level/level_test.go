package level

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestLeq(t *testing.T) {
	tests := []struct {
		name   string
		levels []float64
		want   float64
	}{
		{"50 60 70", []float64{50, 60, 70}, 65.68},
		{"single", []float64{42.3}, 42.3},
		{"equal levels", []float64{60, 60, 60, 60}, 60},
		{"half the time silent is -3 dB", []float64{60, 0}, 56.99},
		{"zero dB", []float64{0, 0}, 0},
		{"doubling energy", []float64{63.0103, 60}, 61.7609},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Leq(tc.levels...)
			if !ok {
				t.Fatal("ok = false")
			}
			if !near(got, tc.want, 0.005) {
				t.Errorf("Leq(%v) = %.4f, want %.2f", tc.levels, got, tc.want)
			}
		})
	}
	if _, ok := Leq(); ok {
		t.Error("Leq() of nothing reported ok")
	}
}

func TestEnergyRoundTrip(t *testing.T) {
	for _, db := range []float64{0, 0.1, 35, 94, 140, 160} {
		if got := FromEnergy(ToEnergy(db)); !near(got, db, 1e-9) {
			t.Errorf("FromEnergy(ToEnergy(%v)) = %v", db, got)
		}
	}
	if !math.IsInf(FromEnergy(0), -1) {
		t.Error("FromEnergy(0) is not -Inf")
	}
}

func TestAccumulatorWeightsByDuration(t *testing.T) {
	var a Accumulator
	a.Add(70, 100) // 0.1 s at 70
	a.Add(50, 900) // 0.9 s at 50
	a.Add(99, 0)   // ignored: no duration
	a.Add(99, -5)  // ignored
	a.Add(math.NaN(), 100)
	got, ok := a.Leq()
	want := 10 * math.Log10((100*1e7+900*1e5)/1000)
	if !ok || !near(got, want, 1e-9) {
		t.Errorf("Leq = %v, %v; want %v", got, ok, want)
	}
	if a.Max() != 70 || a.Min() != 50 || a.Count() != 2 || a.DurationMs() != 1000 {
		t.Errorf("max %v min %v n %d dur %v", a.Max(), a.Min(), a.Count(), a.DurationMs())
	}
	var empty Accumulator
	if _, ok := empty.Leq(); ok || empty.Max() != 0 || empty.Min() != 0 {
		t.Error("empty accumulator not empty")
	}
}

func TestMergeAssociativeAndEqualsSequential(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	parts := make([]Accumulator, 3)
	var all Accumulator
	for i := range 300 {
		db, dur := 30+r.Float64()*70, 1+r.Float64()*999
		parts[i%3].Add(db, dur)
		all.Add(db, dur)
	}
	a, b, c := parts[0], parts[1], parts[2]
	// (a+b)+c
	left := a
	left.Merge(b)
	left.Merge(c)
	// a+(b+c)
	bc := b
	bc.Merge(c)
	right := a
	right.Merge(bc)
	for _, m := range []Accumulator{left, right} {
		got, _ := m.Leq()
		want, _ := all.Leq()
		if !near(got, want, 1e-9) || m.Max() != all.Max() || m.Min() != all.Min() || m.Count() != all.Count() ||
			!near(m.DurationMs(), all.DurationMs(), 1e-6) {
			t.Errorf("merged %v/%v/%v/%d differs from sequential %v/%v/%v/%d",
				got, m.Max(), m.Min(), m.Count(), want, all.Max(), all.Min(), all.Count())
		}
	}
	// Merging an empty accumulator changes nothing; merging into an empty one copies.
	before := left
	left.Merge(Accumulator{})
	if left != before {
		t.Error("merge of empty changed the accumulator")
	}
	var into Accumulator
	into.Merge(c)
	if into != c {
		t.Error("merge into empty is not a copy")
	}
}

func TestHistogramPercentiles(t *testing.T) {
	// 100 one-second samples at 40.0, 40.1, …, 49.9 dB.
	var h Histogram
	for i := range 100 {
		h.Add(40+float64(i)/10, 1000)
	}
	tests := []struct {
		n, want float64
	}{
		{10, 49.0}, // exceeded (strictly above or at) 10 % of the time
		{50, 45.0},
		{90, 41.0},
		{1, 49.9},
		{99, 40.1},
	}
	for _, tc := range tests {
		got, ok := h.Percentile(tc.n)
		if !ok || !near(got, tc.want, 1e-9) {
			t.Errorf("L%v = %v, %v; want %v", tc.n, got, ok, tc.want)
		}
	}
	if h.Total() != 100000 {
		t.Errorf("Total = %v", h.Total())
	}
}

func TestHistogramEdges(t *testing.T) {
	var empty Histogram
	if _, ok := empty.Percentile(50); ok {
		t.Error("empty histogram has a percentile")
	}
	var h Histogram
	h.Add(60, 1000)
	for _, n := range []float64{0, 100, -1, 101} {
		if _, ok := h.Percentile(n); ok {
			t.Errorf("Percentile(%v) ok", n)
		}
	}
	// One level: every Ln is that level.
	for _, n := range []float64{1, 50, 99} {
		if got, _ := h.Percentile(n); got != 60 {
			t.Errorf("L%v of a constant = %v", n, got)
		}
	}
	// Clamping and ignored input.
	h.Add(-5, 10)
	h.Add(250, 10)
	h.Add(70, 0)
	h.Add(math.NaN(), 10)
	if h.Bins[0] != 10 || h.Bins[2000] != 10 || len(h.Bins) != 3 {
		t.Errorf("bins = %v", h.Bins)
	}
	// Rounding to 0.1 dB bins.
	var r Histogram
	r.Add(60.04, 1)
	r.Add(60.06, 1)
	if r.Bins[600] != 1 || r.Bins[601] != 1 {
		t.Errorf("rounding bins = %v", r.Bins)
	}
	if err := h.Validate(); err != nil {
		t.Errorf("Validate of a real histogram: %v", err)
	}
	for _, bad := range []Histogram{
		{Bins: map[int]float64{-1: 1}}, {Bins: map[int]float64{2001: 1}},
		{Bins: map[int]float64{5: -1}}, {Bins: map[int]float64{5: math.Inf(1)}}, {Bins: map[int]float64{5: math.NaN()}},
	} {
		if bad.Validate() == nil {
			t.Errorf("Validate(%v) accepted", bad.Bins)
		}
	}
}

func TestHistogramMergeEqualsSequential(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var a, b, all Histogram
	for i := range 600 {
		db := 35 + r.Float64()*40
		if i%2 == 0 {
			a.Add(db, 100)
		} else {
			b.Add(db, 100)
		}
		all.Add(db, 100)
	}
	var m Histogram
	m.Merge(a)
	m.Merge(b)
	for _, n := range []float64{10, 50, 90} {
		got, _ := m.Percentile(n)
		want, _ := all.Percentile(n)
		if got != want {
			t.Errorf("L%v merged %v, sequential %v", n, got, want)
		}
	}
	// JSON round trip keeps the bins.
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Histogram
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Bins) != len(m.Bins) || back.Total() != m.Total() {
		t.Errorf("JSON round trip changed the histogram")
	}
}

func ExampleLeq() {
	db, _ := Leq(50, 60, 70)
	fmt.Printf("%.2f dB\n", db)
	// Output: 65.68 dB
}
