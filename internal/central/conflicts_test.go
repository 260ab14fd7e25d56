package central

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
)

// TestRemeasuredSecondsVisible: a gateway that sends seconds the sensor
// already has, with other values and under new seqs (its clock stepped
// back), loses nothing and hides nothing: the stored records keep their
// values, both sides of each conflict are listed by GET /api/v1/conflicts,
// and every open dashboard gets the event at once.
func TestRemeasuredSecondsVisible(t *testing.T) {
	dir := t.TempDir()
	a := startCentral(t, Options{DataDir: dir})
	base := "http://" + a.HTTP
	ws := dialFeed(t, base, apiClient(t, base))
	defer ws.Close()
	events := make(chan map[string]any, 16)
	go func() {
		for {
			var m map[string]any
			if err := ws.ReadJSON(&m); err != nil {
				close(events)
				return
			}
			if m["type"] == "ingest" {
				events <- m["event"].(map[string]any)
			}
		}
	}()

	lapa := lapaBar(t)
	start := lastNight()
	run := func(firstSeq uint64, laeq float64) {
		t.Helper()
		st, err := loadgen.Run(context.Background(), loadgen.Options{URL: a.MQTT, Gateways: []loadgen.Gateway{lapa},
			Batches: 3, RecordsPerBatch: 2, Start: start, StartSeq: firstSeq, Window: 10, WaitAcks: 3 * time.Minute,
			Level: func(_, _ string, _ time.Time) float64 { return laeq }})
		if err != nil {
			t.Fatal(err)
		}
		if st.Acked != 3 {
			t.Fatalf("acked %d of 3 batches", st.Acked)
		}
	}
	run(1, 50)
	run(4, 58) // the same six seconds, measured again

	// One event per commit that kept conflicts (the six seconds may come in
	// one or several), each saying how many and which.
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("websocket closed before the ingest event")
		}
		if e["kind"] != "record_conflict" || e["sensor"] != "lapa-bar-01" || !strings.Contains(e["message"].(string), "registros do sensor lapa-bar-01") {
			t.Errorf("ingest event = %v", e)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("no ingest event on the dashboard feed")
	}

	var body struct {
		Conflicts []store.RecordConflict `json:"conflicts"`
	}
	if code := getJSON(t, base+"/api/v1/conflicts?sensor=lapa-bar-01", &body); code != 200 || len(body.Conflicts) != 6 {
		t.Fatalf("conflicts: HTTP %d, %d listed, want 6", code, len(body.Conflicts))
	}
	for _, c := range body.Conflicts {
		var kept, again struct {
			LAeq float64 `json:"laeq_db"`
		}
		if err := json.Unmarshal(c.Kept.Record, &kept); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c.New.Record, &again); err != nil {
			t.Fatal(err)
		}
		if kept.LAeq != 50 || again.LAeq != 58 || c.Kept.Seq > 3 || c.New.Seq < 4 {
			t.Errorf("conflict %d: kept %v (seq %d), new %v (seq %d)", c.ID, kept.LAeq, c.Kept.Seq, again.LAeq, c.New.Seq)
		}
	}
	for _, tc := range []struct{ url, want string }{
		{"/api/v1/conflicts?limit=0", "limit deve ser um inteiro entre 1 e 1000"},
		{"/api/v1/conflicts?before=x", "before deve ser o id"},
		{"/api/v1/conflicts?sensor=nada", "não está no cadastro"},
		{"/api/v1/seq-skips?gateway=nada", "não está no cadastro"},
	} {
		var e struct {
			Error string `json:"erro"`
		}
		if code := getJSON(t, base+tc.url, &e); code < 400 || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s: HTTP %d %q, want an error with %q", tc.url, code, e.Error, tc.want)
		}
	}
	var skips struct {
		SeqSkips []store.SeqSkipRecord `json:"seq_skips"`
	}
	if code := getJSON(t, base+"/api/v1/seq-skips?gateway=lapa-centro-01", &skips); code != 200 || skips.SeqSkips == nil || len(skips.SeqSkips) != 0 {
		t.Errorf("seq skips: HTTP %d %+v, want an empty list", code, skips)
	}
}
