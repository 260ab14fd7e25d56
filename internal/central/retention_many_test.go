package central

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/retention"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

// TestRetentionManyAlerts: with far more alerts than any list page (1,200
// resolved ones), every alert is matched to its case. The oldest alerts —
// behind 1,197 newer ones — decide like the newest: one with an open case
// keeps its records, one whose case closed and one without a case lose
// theirs once their evidence retention ran out, and every newer alert
// within its evidence retention keeps its records. A pass with a 40-day
// raw retention and a 100-day evidence retention, on real stores.
func TestRetentionManyAlerts(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	day := func(k int) time.Time { return now.Add(-time.Duration(k) * 24 * time.Hour) }
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seq := uint64(0)
	// batch stores 10 records from t on.
	batch := func(at time.Time) {
		seq++
		b := store.Batch{Gateway: "lapa-centro-01", Municipality: "lapa", Sensor: "lapa-bar-01", Kind: wire.KindLevels,
			Seq: seq, Topic: wire.LevelsTopic("lapa", "lapa-centro-01", "lapa-bar-01"), Sig: []byte{1},
			Verified: true, ReceivedAt: at.Add(time.Minute), Device: wire.Device{Grade: "class2"}, Clock: wire.Clock{Synced: true}}
		for i := range 10 {
			b.Records = append(b.Records, wire.Record{T: at.Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: 66, LAFmax: 70, LAFmin: 60})
		}
		if b.Body, err = json.Marshal(wire.Batch{V: 1, Kind: b.Kind, Municipality: "lapa", Gateway: b.Gateway, Sensor: b.Sensor,
			Seq: b.Seq, Records: b.Records}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Apply(ctx, store.Write{Batches: []store.Batch{b}}); err != nil {
			t.Fatal(err)
		}
	}

	cs, err := alertstore.Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	docs, err := casesdb.Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer docs.Close()
	set := noticetest.Codes()
	sc := noticetest.Lapa(set)
	fiscal := notice.Actor{ID: "ana", Name: "Ana", Role: notice.RoleFiscal}
	var events []alerts.Event
	// alert records a resolved alert over [at, at+10 s), with its batch.
	alert := func(id string, at time.Time) alerts.Alert {
		a := *sc.Alert
		a.ID, a.State = id, alerts.StateResolved
		a.WindowStart, a.WindowEnd, a.PendingAt = at, at.Add(5*time.Second), at
		a.FiringAt, a.ResolvedAt = at.Add(5*time.Second), at.Add(10*time.Second)
		events = append(events, alerts.Event{Kind: alerts.EventResolved, At: a.ResolvedAt, Alert: a})
		batch(at)
		return a
	}
	openCase := alert("lapa-bar-01/open-case", day(190))
	closedCase := alert("lapa-bar-01/closed-case", day(185))
	alert("lapa-bar-01/no-case", day(150))
	batch(day(120)) // no alert: goes by age
	// 1,197 newer alerts, 21 a day over days 99…43 (at 5-minute steps):
	// within the 100 days of evidence retention.
	var newer []time.Time
	for k := 99; k >= 43; k-- {
		for i := range 21 {
			at := day(k).Add(time.Duration(i) * 5 * time.Minute)
			alert(fmt.Sprintf("lapa-bar-01/newer-%d-%d", k, i), at)
			newer = append(newer, at)
		}
	}
	batch(day(10)) // within the raw retention
	if err := cs.SaveStates(ctx, []alerts.Change{{Events: events}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a       alerts.Alert
		discard bool
	}{{openCase, false}, {closedCase, true}} {
		at := c.a.ResolvedAt
		d, err := notice.Build(sc.Code, notice.FromAlert(c.a), sc.Party, sc.Site, nil, at.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := docs.Create(ctx, d, fiscal, at.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if c.discard {
			if _, _, err := docs.Apply(ctx, sc.Code, doc.ID, notice.Action{Kind: notice.ActCancel, Actor: fiscal,
				At: at.Add(2 * time.Hour), Note: "engano"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, err := cs.ListAlerts(ctx, alertstore.Filter{Kind: alerts.KindExceedance, Limit: 5000}); err != nil || len(n) >= 1200 {
		t.Fatalf("a list page holds %d alerts (%v): the test needs more alerts than a page", len(n), err)
	}

	p := retention.New(retention.Options{Store: st, Spans: caseSpans(cs, docs, 100*24*time.Hour), Retain: 40 * 24 * time.Hour,
		Pause: time.Millisecond, Chunk: 100, Now: func() time.Time { return now }})
	tot, err := p.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	count := func(at time.Time) int {
		recs, err := st.Records(ctx, "lapa-bar-01", at, at.Add(time.Minute), 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(recs)
	}
	for _, tc := range []struct {
		what string
		at   time.Time
		want int
	}{
		{"alert with an open case, behind 1,197 newer ones", day(190), 10},
		{"alert whose case closed 185 days ago", day(185), 0},
		{"alert without a case, ended 150 days ago", day(150), 0},
		{"records no alert rests on, 120 days old", day(120), 0},
		{"records within the raw retention", day(10), 10},
	} {
		if got := count(tc.at); got != tc.want {
			t.Errorf("%s: %d records, want %d", tc.what, got, tc.want)
		}
	}
	kept := 0
	for _, at := range newer {
		if count(at) == 10 {
			kept++
		}
	}
	if kept != len(newer) {
		t.Errorf("%d of the %d newer alerts' records kept, want all", kept, len(newer))
	}
	// Deleted: the closed case's, the case-less alert's and the unprotected
	// batch; everything else older than 40 days is kept.
	if tot.Batches != 3 {
		t.Errorf("pass deleted %d batches, want 3 (%+v)", tot.Batches, tot)
	}
}
