package central

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

// TestUpgradeRetentionCases: a data dir written by the stores as they are
// (200 days of the Lapa bar, one 10-record batch a day; three resolved
// alerts — one whose notice is still open, one whose draft was discarded,
// one without a case) opened by the service with a 40-day retention and a
// 30-day evidence retention. The tier folds in every record first (the
// report over the 200 days counts all 2,000 s); then retention deletes the
// old raw records except what the open case rests on, and also the
// evidence of the closed case and of the alert without one, whose 30 days
// ran out.
func TestUpgradeRetentionCases(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	day := func(k int) time.Time { return now.Add(-time.Duration(k) * 24 * time.Hour) }
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for k := 200; k >= 1; k-- {
		b := store.Batch{Gateway: "lapa-centro-01", Municipality: "lapa", Sensor: "lapa-bar-01", Kind: wire.KindLevels,
			Seq: uint64(201 - k), Topic: wire.LevelsTopic("lapa", "lapa-centro-01", "lapa-bar-01"), Sig: []byte{1},
			Verified: true, ReceivedAt: day(k).Add(time.Minute), Device: wire.Device{Grade: "class2"}, Clock: wire.Clock{Synced: true}}
		for i := range 10 {
			b.Records = append(b.Records, wire.Record{T: day(k).Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: 66, LAFmax: 70, LAFmin: 60})
		}
		if b.Body, err = json.Marshal(wire.Batch{V: 1, Kind: b.Kind, Municipality: "lapa", Gateway: b.Gateway, Sensor: b.Sensor,
			Seq: b.Seq, Records: b.Records}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Apply(ctx, store.Write{Batches: []store.Batch{b}}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	cs, err := alertstore.Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := casesdb.Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	set := noticetest.Codes()
	sc := noticetest.Lapa(set)
	fiscal := notice.Actor{ID: "ana", Name: "Ana", Role: notice.RoleFiscal}
	alert := func(k int, withCase, discard bool) {
		a := *sc.Alert
		a.ID, a.State = fmt.Sprintf("lapa-bar-01/old-%d", k), alerts.StateResolved
		a.WindowStart, a.WindowEnd, a.PendingAt = day(k), day(k).Add(5*time.Second), day(k)
		a.FiringAt, a.ResolvedAt = day(k).Add(5*time.Second), day(k).Add(10*time.Second)
		if err := cs.SaveStates(ctx, []alerts.Change{{Events: []alerts.Event{{Kind: alerts.EventResolved, At: a.ResolvedAt, Alert: a}}}}); err != nil {
			t.Fatal(err)
		}
		if !withCase {
			return
		}
		d, err := notice.Build(sc.Code, notice.FromAlert(a), sc.Party, sc.Site, nil, day(k).Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := docs.Create(ctx, d, fiscal, day(k).Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if discard {
			if _, _, err := docs.Apply(ctx, sc.Code, doc.ID, notice.Action{Kind: notice.ActCancel, Actor: fiscal, At: day(k).Add(2 * time.Hour), Note: "engano"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	alert(150, true, false) // open case: kept for good
	alert(120, true, true)  // discarded draft: closed; 30 days ran out
	alert(100, false, false)
	docs.Close()
	cs.Close()

	addrs := startCentral(t, Options{DataDir: dir, Retain: 40 * 24 * time.Hour, EvidenceRetention: 30 * 24 * time.Hour,
		RetainDelay: 10 * time.Millisecond})
	// Old batches: 160 (days 200…41); kept: days 149–151 around the open case.
	deadline := time.Now().Add(60 * time.Second)
	for deleted := 0.0; deleted != 157; {
		if time.Now().After(deadline) {
			t.Fatalf("retention deleted %v batches, want 157", deleted)
		}
		time.Sleep(50 * time.Millisecond)
		deleted = retentionDeleted(t, addrs.HTTP, "batches")
	}
	for _, tc := range []struct {
		k    int
		want int
	}{{200, 0}, {152, 0}, {151, 10}, {150, 10}, {149, 10}, {148, 0}, {121, 0}, {120, 0}, {100, 0}, {41, 0}, {40, 10}, {1, 10}} {
		var out struct {
			Records []store.Record `json:"records"`
		}
		url := fmt.Sprintf("http://%s/api/v1/readings?sensor=lapa-bar-01&from=%s&to=%s", addrs.HTTP,
			day(tc.k).Format(time.RFC3339), day(tc.k).Add(time.Minute).Format(time.RFC3339))
		if code := getJSON(t, url, &out); code != http.StatusOK || len(out.Records) != tc.want {
			t.Errorf("day −%d: HTTP %d, %d records, want %d", tc.k, code, len(out.Records), tc.want)
		}
	}
	// The tier kept every second of the 200 days.
	var rep struct {
		Sensors []struct {
			SecondsPresent float64 `json:"seconds_present"`
		} `json:"sensors"`
	}
	url := fmt.Sprintf("http://%s/api/v1/reports?sensor=lapa-bar-01&from=%s&to=%s", addrs.HTTP,
		day(201).Format(time.RFC3339), day(1).Add(time.Hour).Format(time.RFC3339))
	// The tier folds the records in on its own goroutine, so it may still be
	// catching up; what retention deleted before the tier had it would be
	// missing for good. The range ends an hour after the last record: the
	// tier answers in whole minutes, and the last day's ten seconds may
	// straddle a minute boundary (they start at the test's wall-clock second).
	deadline = time.Now().Add(2 * time.Minute)
	for {
		code := getJSON(t, url, &rep)
		if code == http.StatusOK && len(rep.Sensors) == 1 && rep.Sensors[0].SecondsPresent == 2000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("report over the 200 days and an hour: HTTP %d %+v, want 2000 s", code, rep.Sensors)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestRetentionText(t *testing.T) {
	for d, want := range map[time.Duration]string{90 * 24 * time.Hour: "90 dias", 24 * time.Hour: "1 dia",
		365 * 24 * time.Hour: "1 ano", 5 * 365 * 24 * time.Hour: "5 anos"} {
		if got := retentionText(d); got != want {
			t.Errorf("retentionText(%v) = %q, want %q", d, got, want)
		}
	}
}
