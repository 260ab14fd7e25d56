package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/tz"
)

// BenchmarkCasesList is the Casos API on 10,000 cases in a real SQLite
// case store (filled through the store's public API: drafts, issued
// notices and relatórios, running and overdue prazos, cancelled drafts in
// three municipalities) and 2,000 alerts that fired with no act yet (listed
// in state sem_ato; the alert source is an in-memory slice of every alert,
// those with documents too, as the central service lists them): one GET
// /api/v1/cases answer — query validation, the index's refresh, filters,
// sorting by next deadline, a page of 50 encoded as JSON. The goal is ≤ 200 ms (BENCHMARKS.md, "Casos").
func BenchmarkCasesList(b *testing.B) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, tz.Brasilia())
	cs := newCaseStore(b, func() time.Time { return now })
	start := time.Now()
	cs.fill(b, 10_000, now)
	b.Logf("filled 10,000 cases in %s", time.Since(start).Round(time.Millisecond))
	alerts := cs.fillAlerts(10_000, 2_000, now)
	cs.x.Alerts = func(context.Context) ([]cases.OpenAlert, error) { return alerts, nil }
	first := time.Now()
	if n, _, err := (caseIndex{cs.x}).Cases(context.Background(), casesFilterAll, now); err != nil || n != 12_000 {
		b.Fatalf("the list holds %d cases, want 12,000 (10,000 with documents, 2,000 sem ato): %v", n, err)
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

// fillAlerts is the alerts of caseStore.fill's first withDocs cases (the
// same scenarios, ids and instants) and bare more that fired in the 60
// days before now with no document.
func (c *caseStore) fillAlerts(withDocs, bare int, now time.Time) []cases.OpenAlert {
	scs := []noticetest.Scenario{noticetest.Lapa(c.set), noticetest.Macabu(c.set), noticetest.CamposAltos(c.set)}
	out := make([]cases.OpenAlert, 0, withDocs+bare)
	for i := range withDocs + bare {
		sc := scs[i%len(scs)]
		id := fmt.Sprintf("%s/fill-%06d", sc.Site.Sensor, i)
		if i >= withDocs {
			id = fmt.Sprintf("%s/bare-%06d", sc.Site.Sensor, i)
		}
		out = append(out, cases.OpenAlert{ID: id, CodeID: sc.Code.ID, Municipality: sc.Code.Municipality,
			Party:       cases.PartyRef{Document: fmt.Sprintf("%014d", 10_000_000+i), Name: fmt.Sprintf("Estabelecimento %014d", 10_000_000+i)},
			SiteAddress: fmt.Sprintf("Rua %d, %d, Centro", i%300, i),
			At:          now.Add(-time.Duration(60*24*(i%997)/997) * time.Hour)})
	}
	return out
}

// processCPU is the CPU time (user + system) the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
