package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/tz"
)

// BenchmarkCasesList is the Casos API on 10,000 cases in a real SQLite
// case store (filled through the store's public API: drafts, issued
// notices and relatórios, running and overdue prazos, cancelled drafts in
// three municipalities): one GET /api/v1/cases answer — query validation,
// the index's refresh scan, filters, sorting by next deadline, a page of 50
// encoded as JSON. The goal is ≤ 200 ms (BENCHMARKS.md, "Casos").
func BenchmarkCasesList(b *testing.B) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, tz.Brasilia())
	cs := newCaseStore(b, func() time.Time { return now })
	start := time.Now()
	cs.fill(b, 10_000, now)
	b.Logf("filled 10,000 cases in %s", time.Since(start).Round(time.Millisecond))
	first := time.Now()
	if _, _, err := (caseIndex{cs.x}).Cases(context.Background(), casesFilterAll, now); err != nil {
		b.Fatal(err)
	}
	b.Logf("first list after start (reads and decodes every document): %s", time.Since(first).Round(time.Millisecond))
	for _, q := range []struct{ name, query string }{
		{"all", ""},
		{"municipality+overdue", "municipality=lapa&overdue=true"},
		{"state", "state=acknowledged,refused&page=3"},
		{"address", "address=rua%2012"},
		{"recent", "sort=recent&page_size=200"},
	} {
		b.Run(q.name, func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				w := httptest.NewRecorder()
				cs.api.list(w, httptest.NewRequest("GET", "/api/v1/cases?"+q.query, nil))
				if w.Code != http.StatusOK {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			// The machine is shared: CPU time per answer says what wall
			// time would be on an idle one (the list uses one core).
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

var casesFilterAll = CaseFilter{}

// processCPU is the CPU time (user + system) the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
