package central

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
)

// TestUnsyncedGatewayAlertNoNotice (the unsynchronised-clock goal, whole
// service): a Lapa night exceedance from a gateway whose clock is not
// synchronised fires its Art. 96 alert — operators must know — with the
// unsynchronised records counted, and the alert grounds no notice.
func TestUnsyncedGatewayAlertNoNotice(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	a := startCentral(t, Options{})
	lapa := lapaBar(t)
	st, err := loadgen.Run(context.Background(), loadgen.Options{URL: a.MQTT, Gateways: []loadgen.Gateway{lapa},
		Batches: 60, RecordsPerBatch: 10, Start: lastNight(), Window: 100, Unsynced: true,
		Level: func(_, _ string, _ time.Time) float64 { return 72 }})
	if err != nil {
		t.Fatal(err)
	}
	if st.Acked != 60 {
		t.Fatalf("acked %d of 60 batches", st.Acked)
	}
	base := "http://" + a.HTTP + "/api/v1"
	var al struct {
		Alerts []struct {
			ID              string `json:"id"`
			Kind            string `json:"kind"`
			State           string `json:"state"`
			Article         string `json:"article"`
			UnsyncedRecords int    `json:"unsynced_records"`
		} `json:"alerts"`
	}
	var id string
	deadline := time.Now().Add(20 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		getJSON(t, base+"/alerts?sensor=lapa-bar-01", &al)
		for _, x := range al.Alerts {
			if x.Kind == "exceedance" && x.State == "firing" && x.Article == "Art. 96" && x.UnsyncedRecords > 0 {
				id = x.ID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if id == "" {
		t.Fatalf("no firing Art. 96 alert counting unsynchronised records: %+v", al.Alerts)
	}
	c := apiClient(t, base)
	resp, err := c.Get(base + "/alerts/" + url.PathEscape(id) + "/notice")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "não sincronizado") {
		t.Errorf("notice for the unsynced alert: %d %s, want 409 saying the clock was not synchronised", resp.StatusCode, body)
	}
}
