package alertstore_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/internal/alertstore"
)

// EvidenceSpans covers every exceedance alert (with its id), open-ended while it is
// open, from the earlier of window start and pending to the later of
// window end and resolve once closed; no_data alerts rest on no readings.
func TestEvidenceSpans(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "cases.db"))
	defer s.Close()
	firing := sampleAlert("lapa-bar-01/A", alerts.StateFiring)
	resolved := sampleAlert("lapa-bar-02/B", alerts.StateResolved)
	resolved.Sensor = "lapa-bar-02"
	resolved.WindowStart = resolved.PendingAt.Add(-30 * time.Second) // the window began before pending
	noData := sampleAlert("lapa-bar-03/C", alerts.StateFiring)
	noData.Sensor, noData.Kind = "lapa-bar-03", alerts.KindNoData
	var ch []alerts.Change
	for _, a := range []alerts.Alert{firing, resolved, noData} {
		ch = append(ch, alerts.Change{Events: []alerts.Event{{Kind: alerts.EventFiring, At: a.FiringAt, Alert: a}}})
	}
	if err := s.SaveStates(ctx, ch); err != nil {
		t.Fatal(err)
	}
	got, err := s.EvidenceSpans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b alertstore.Span) int { return strings.Compare(a.Sensor, b.Sensor) })
	want := []alertstore.Span{
		{AlertID: firing.ID, Sensor: "lapa-bar-01", From: firing.WindowStart.UTC()},
		{AlertID: resolved.ID, Sensor: "lapa-bar-02", From: resolved.WindowStart.UTC(), To: resolved.ResolvedAt.UTC()},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("EvidenceSpans (-want +got):\n%s", d)
	}
}
