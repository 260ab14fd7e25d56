package codes

import (
	"testing"
	"time"
)

func BenchmarkActiveLimit(b *testing.B) {
	s, err := Builtin()
	if err != nil {
		b.Fatal(err)
	}
	lapa, _ := s.Code("lapa")
	t0 := time.Date(2026, 3, 10, 21, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	b.ResetTimer()
	var sink float64
	for i := 0; b.Loop(); i++ {
		l, _ := lapa.ActiveLimit("other", "bar", t0.Add(time.Duration(i%86400)*time.Second))
		sink += l.DBA
	}
	_ = sink
}

func BenchmarkEvaluate(b *testing.B) {
	s, err := Builtin()
	if err != nil {
		b.Fatal(err)
	}
	lapa, _ := s.Code("lapa")
	lvl := 63.0
	o := Observation{At: time.Date(2026, 3, 11, 1, 30, 0, 0, time.UTC), Zone: "other", Source: "live_music", LAeq: &lvl,
		Facts: map[string]any{"establishment_type": "restaurant", "operating": true}}
	b.ReportAllocs()
	for b.Loop() {
		_ = Evaluate(lapa, o)
	}
}

func BenchmarkEvalLine(b *testing.B) {
	s, err := Builtin()
	if err != nil {
		b.Fatal(err)
	}
	line := []byte(`{"id":"a","code":"lapa","at":"2026-03-10T22:30:00-03:00","zone":"other","source":"amplified_music","laeq_dba":65.0,"facts":{"establishment_type":"bar"}}`)
	b.ReportAllocs()
	for b.Loop() {
		_ = s.EvalLine(line)
	}
}
