package central

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

// TestRetentionKeepsAlertEvidence: a data dir with 100 days of the Lapa
// bar sensor (one 10-record batch a day) and an Art. 96 alert 60 days ago;
// `--retain-days 40` deletes the 60 batches older than 40 days except the
// three around the alert (a day of margin each side): its readings and
// signed batches stay, so its evidence can still be exported.
func TestRetentionKeepsAlertEvidence(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	day := func(k int) time.Time { return now.Add(-time.Duration(k) * 24 * time.Hour) }
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for k := 100; k >= 1; k-- {
		b := store.Batch{Gateway: "lapa-centro-01", Municipality: "lapa", Sensor: "lapa-bar-01", Kind: wire.KindLevels,
			Seq: uint64(101 - k), Topic: wire.LevelsTopic("lapa", "lapa-centro-01", "lapa-bar-01"), Sig: []byte{1},
			Verified: true, ReceivedAt: day(k).Add(time.Minute), Device: wire.Device{Grade: "class1"}, Clock: wire.Clock{Synced: true}}
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
	cases, err := alertstore.Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	a := alerts.Alert{ID: "lapa-bar-01/old", Kind: alerts.KindExceedance, State: alerts.StateResolved,
		SensorInfo:  alerts.SensorInfo{Sensor: "lapa-bar-01", Gateway: "lapa-centro-01", Municipality: "lapa", Code: "lapa"},
		WindowStart: day(60), WindowEnd: day(60).Add(5 * time.Second), PendingAt: day(60), FiringAt: day(60).Add(5 * time.Second),
		ResolvedAt: day(60).Add(10 * time.Second), LimitDB: 60, Article: "Art. 96"}
	if err := cases.SaveStates(ctx, []alerts.Change{{Events: []alerts.Event{{Kind: alerts.EventResolved, At: a.ResolvedAt, Alert: a}}}}); err != nil {
		t.Fatal(err)
	}
	cases.Close()

	addrs := startCentral(t, Options{DataDir: dir, Retain: 40 * 24 * time.Hour, RetainDelay: 10 * time.Millisecond})
	deadline := time.Now().Add(30 * time.Second)
	for deleted := 0.0; deleted != 57; {
		if time.Now().After(deadline) {
			t.Fatalf("retention deleted %v batches, want 57", deleted)
		}
		time.Sleep(50 * time.Millisecond)
		deleted = retentionDeleted(t, addrs.HTTP, "batches")
	}
	if n := retentionDeleted(t, addrs.HTTP, "levels"); n != 570 {
		t.Errorf("%v level records deleted, want 570", n)
	}
	for _, tc := range []struct {
		k    int
		want int
	}{{100, 0}, {62, 0}, {61, 10}, {60, 10}, {59, 10}, {58, 0}, {41, 0}, {40, 10}, {1, 10}} {
		var out struct {
			Records []store.Record `json:"records"`
		}
		url := fmt.Sprintf("http://%s/api/v1/readings?sensor=lapa-bar-01&from=%s&to=%s", addrs.HTTP,
			day(tc.k).Format(time.RFC3339), day(tc.k).Add(time.Minute).Format(time.RFC3339))
		if code := getJSON(t, url, &out); code != http.StatusOK || len(out.Records) != tc.want {
			t.Errorf("day −%d: HTTP %d, %d records, want %d", tc.k, code, len(out.Records), tc.want)
		}
	}
}

// retentionDeleted reads sossego_retention_deleted_total{kind} from /metrics
// (0 while the series does not exist yet).
func retentionDeleted(t *testing.T, httpAddr, kind string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range fams["sossego_retention_deleted_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "kind" && l.GetValue() == kind {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
