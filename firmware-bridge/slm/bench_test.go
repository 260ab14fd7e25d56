package slm

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// benchAudio is one second of white noise at about -20 dBFS.
func benchAudio(fs int) []float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, fs)
	for i := range x {
		x[i] = 0.1 * rng.NormFloat64()
	}
	return x
}

// BenchmarkRealTime48k measures the full chain (A and C filters, Fast and
// Slow detectors, LAeq/LCeq sums, C peak, 100 ms L_AF histogram, 1-s
// records) on one goroutine, i.e. per core. x_realtime is seconds of audio
// processed per second of CPU.
func BenchmarkRealTime48k(b *testing.B) {
	const fs = 48000
	x := benchAudio(fs)
	m, err := NewMeter(Options{SampleRate: fs, OffsetDB: 120})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i := 0; i < fs; i += 4800 { // 100 ms blocks, like a capture loop
			m.Process(x[i : i+4800])
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/sec, "x_realtime")
	b.ReportMetric(sec*1e9/float64(b.N*fs), "ns/sample")
	b.ReportMetric(100*sec/float64(b.N), "%core_per_channel")
}

// BenchmarkAnalyzeS32Raw48k adds decoding of raw S32_LE (the arecord path
// of `sossego slm analyze --raw`) to the chain.
func BenchmarkAnalyzeS32Raw48k(b *testing.B) {
	const fs = 48000
	raw := encodePCM(b, S32LE, benchAudio(fs))
	b.SetBytes(int64(len(raw)))
	b.ResetTimer()
	for b.Loop() {
		s, err := NewStream(bytes.NewReader(raw), S32LE, 1, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Analyze(s, Options{SampleRate: fs}); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/sec, "x_realtime")
}
