package pdf_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/pdf"
)

// BenchmarkRenderNotice is the issued Lapa notice with its chart: both
// copies, four pages, QR code and seal on each (goal: ≤ 300 ms).
func BenchmarkRenderNotice(b *testing.B) {
	doc := lapaNotice(b, true)
	sc := noticetest.Lapa(set)
	in := pdf.Input{Doc: doc, Deadlines: notice.Deadlines(sc.Code, &doc, at(3, 12, 0, 0)), Chart: chart(b, sc), Generated: at(3, 12, 8, 0)}
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := pdf.Render(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNoticeChart is the chart of the notice (and of the evidence
// bag's chart.png): 24 minutes of 1-s records.
func BenchmarkNoticeChart(b *testing.B) {
	sc := noticetest.Lapa(set)
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		chart(b, sc)
	}
}

// cpuPerOp reports the process's CPU time (user + system) per operation:
// on a machine shared with other work, wall time per op overstates what
// the render costs; the CPU time does not.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
