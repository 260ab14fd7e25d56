package central

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/tz"
	"github.com/sossego/sossego/internal/wire"
)

// TestReportsFromTier: readings stored before the service starts (as after
// a crash between the readings commit and the aggregation) are folded into
// the long-term tier by the follower, and the reports API answers from it
// in JSON, CSV and PDF.
func TestReportsFromTier(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	loc := tz.Brasilia()
	y, m, d := time.Now().In(loc).AddDate(0, 0, -1).Date()
	start := time.Date(y, m, d, 21, 0, 0, 0, loc) // yesterday 21:00–23:00: an hour of diurno, an hour of noturno
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var w store.Write
	for k := range 720 { // 7200 s in 10-record batches
		b := store.Batch{Gateway: "lapa-centro-01", Municipality: "lapa", Sensor: "lapa-bar-01", Kind: wire.KindLevels,
			Seq: uint64(k + 1), Topic: wire.LevelsTopic("lapa", "lapa-centro-01", "lapa-bar-01"), Body: []byte("{}"), Sig: []byte{1},
			Verified: true, ReceivedAt: start.Add(time.Duration(k) * 10 * time.Second), Device: wire.Device{Grade: "class1"}, Clock: wire.Clock{Synced: true}}
		for i := range 10 {
			b.Records = append(b.Records, wire.Record{T: start.Add(time.Duration(10*k+i) * time.Second), DurMs: 1000, LAeq: 62, LAFmax: 66, LAFmin: 58})
		}
		w.Batches = append(w.Batches, b)
	}
	if _, err := st.Apply(ctx, w); err != nil {
		t.Fatal(err)
	}
	st.Close()

	addrs := startCentral(t, Options{DataDir: dir, DisableAlerts: true})
	url := fmt.Sprintf("http://%s/api/v1/reports?sensor=lapa-bar-01&from=%s&to=%s", addrs.HTTP,
		start.Format(time.RFC3339), start.Add(2*time.Hour).Format(time.RFC3339))
	var out struct {
		Sensors []struct {
			SecondsPresent float64 `json:"seconds_present"`
			MinutesAbove   int     `json:"minutes_above"`
			LAeq           float64 `json:"laeq_db"`
			Periods        []struct {
				Period string `json:"period"`
			} `json:"periods"`
		} `json:"sensors"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code := getJSON(t, url, &out); code != http.StatusOK {
			t.Fatalf("report: HTTP %d", code)
		}
		if len(out.Sensors) == 1 && out.Sensors[0].SecondsPresent == 7200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tier never held the 7200 s: %+v", out.Sensors)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := out.Sensors[0]
	// 62 dB: below 65 by day, above 60 from 22:00: 60 minutes.
	if r.MinutesAbove != 60 || r.LAeq < 61.99 || r.LAeq > 62.01 || len(r.Periods) != 2 {
		t.Errorf("report %+v", r)
	}
	for format, want := range map[string]string{"csv": "text/csv", "pdf": "application/pdf"} {
		resp, err := apiClient(t, url).Get(url + "&format=" + format)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), want) || len(body) < 100 {
			t.Errorf("%s: HTTP %d %s, %d bytes", format, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
	}
	// A bad range is a pt-BR 400, not a hung request.
	resp, err := apiClient(t, url).Get(fmt.Sprintf("http://%s/api/v1/sensors/lapa-bar-01/export?res=1s&from=2016-01-01&to=2026-01-01", addrs.HTTP))
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]string
	json.NewDecoder(resp.Body).Decode(&e) //nolint:errcheck // checked below
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(e["erro"], "exportação de 1 s") {
		t.Errorf("10 years of 1 s: HTTP %d %q", resp.StatusCode, e["erro"])
	}
}
