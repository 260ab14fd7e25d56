package evidence_test

import (
	"io"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
)

// BenchmarkExport24h packages a 24-hour window of 1-s records (86,400 rows,
// 8,640 signed batches of 10 records) and reports the peak Go heap while
// exporting (sampled every 5 ms, on top of the package held in memory).
func BenchmarkExport24h(b *testing.B) {
	p := package24h()
	key := testKey(1)
	var peak uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				metrics.Read(sample)
				peak = max(peak, sample[0].Value.Uint64())
			}
		}
	})
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	var n int64
	for b.Loop() {
		cw := &counter{}
		if _, err := evidence.Export(cw, p, key, nil); err != nil {
			b.Fatal(err)
		}
		n = cw.n
	}
	b.StopTimer()
	reportCPU(b, cpu)
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(n)/1e6, "zip-MB")
	b.ReportMetric(float64(peak-min(peak, base))/1e6, "peak-heap-over-input-MB")
	b.ReportMetric(float64(base)/1e6, "input-heap-MB")
}

// BenchmarkVerify24h verifies the 24-hour bag: hashes, the service
// signature, every gateway signature and every reading against its batch.
func BenchmarkVerify24h(b *testing.B) { benchVerify(b, package24h()) }

// benchVerify verifies p's bag, every check of it, b.N times.
func benchVerify(b *testing.B, p *evidence.Package) {
	bag, _ := export(b, p, testKey(1))
	b.ReportAllocs()
	runtime.GC()
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		if rep := verify(bag, pubOf(testKey(1))); !rep.OK || rep.ReadingsChecked != 86400 {
			b.Fatal(rep.Problems)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu)
	b.ReportMetric(float64(len(bag))/1e6, "zip-MB")
}

// cpuTime is the process's user + system CPU time so far. On a busy
// machine the CPU time per operation says more about the code than the
// wall time does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(cpuTime()-since)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// package24h is 24 h of 1-s records (86,400) in 8,640 signed batches.
func package24h() *evidence.Package {
	p := goodPackage(12*time.Hour - 2*time.Minute)
	p.Records = p.Records[:86400]
	p.Batches = p.Batches[:8640]
	return p
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*counter)(nil)

// BenchmarkVerify24hGateway is BenchmarkVerify24h with records shaped as
// a gateway writes them: values to two decimals, LCpeak, and the
// histogram of the second's ten LAF samples (the largest part of a
// gateway's body).
func BenchmarkVerify24hGateway(b *testing.B) { benchVerify(b, gatewayShaped(package24h())) }
