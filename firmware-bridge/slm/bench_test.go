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
// records) on one goroutine. One op is one second of 48 kHz audio.
// x_realtime_cpu is seconds of audio processed per second of process CPU
// time (user+system, getrusage), the real-time factor per core, which
// stays meaningful on a loaded machine; x_realtime_wall uses wall time.
func BenchmarkRealTime48k(b *testing.B) {
	const fs = 48000
	x := benchAudio(fs)
	m, err := NewMeter(Options{SampleRate: fs, OffsetDB: 120})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	for b.Loop() {
		for i := 0; i < fs; i += 4800 { // 100 ms blocks, like a capture loop
			m.Process(x[i : i+4800])
		}
	}
	wall := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/wall, "x_realtime_wall")
	if cpu1, ok := processCPU(); ok && cpuOK && cpu1 > cpu0 {
		cpu := (cpu1 - cpu0).Seconds()
		b.ReportMetric(float64(b.N)/cpu, "x_realtime_cpu")
		b.ReportMetric(cpu*1e9/float64(b.N*fs), "cpu_ns/sample")
	}
}

// BenchmarkAnalyzeS32Raw48k adds decoding of raw S32_LE (the arecord path
// of `sossego slm analyze --raw`) to the chain.
func BenchmarkAnalyzeS32Raw48k(b *testing.B) {
	const fs = 48000
	raw := encodePCM(b, S32LE, benchAudio(fs))
	b.SetBytes(int64(len(raw)))
	cpu0, cpuOK := processCPU()
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
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "x_realtime_wall")
	if cpu1, ok := processCPU(); ok && cpuOK && cpu1 > cpu0 {
		b.ReportMetric(float64(b.N)/(cpu1-cpu0).Seconds(), "x_realtime_cpu")
	}
}
