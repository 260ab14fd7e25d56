package sqlitestore

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkFsync measures the disk under the SQLite file, not our code:
// 8 KiB written and fsynced every 2 ms for the benchmark's duration
// (-benchtime 20s is a good run), the write pattern of a WAL commit. Every
// durable group commit ends in such an fsync, so its tail bounds the
// service's ack and alert-evaluation latency tails (BENCHMARKS.md).
func BenchmarkFsync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "probe"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 8192)
	var lat []time.Duration
	for b.Loop() {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		t := time.Now()
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		time.Sleep(2 * time.Millisecond)
	}
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	over := 0
	for _, d := range lat {
		if d > 64*time.Millisecond {
			over++
		}
	}
	b.ReportMetric(q(0.5), "p50_ms")
	b.ReportMetric(q(0.99), "p99_ms")
	b.ReportMetric(q(0.999), "p99.9_ms")
	b.ReportMetric(q(1), "max_ms")
	b.ReportMetric(float64(over), "over_64ms")
}
