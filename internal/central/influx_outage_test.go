package central

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/testenv"
)

// TestInfluxOutageAlertsKeepWorking: `sossego central --store influx`
// with InfluxDB killed while a night-time exceedance arrives at the Lapa
// bar sensor. Meanwhile every batch is still acknowledged, the health
// check reports InfluxDB down with the backlog, and the Art. 96 alert
// (limit 60) fires and resolves; after InfluxDB is restarted the backlog
// drains and the window queries, answered by InfluxDB, hold every record.
// (The 2-minute outage under load is internal/store's
// TestInfluxOutageLosesNothing; here the length does not matter.)
func TestInfluxOutageAlertsKeepWorking(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	in := testenv.StartInflux(t)
	in.CreateDatabase(t, "sossego")
	a := startCentral(t, Options{Store: "influx", InfluxURL: in.URL, InfluxBucket: "sossego/autogen"})
	lapa := lapaBar(t)
	base := "http://" + a.HTTP + "/api/v1"
	start := lastNight()
	send := func(first uint64, n int, from time.Time, level float64) {
		t.Helper()
		st, err := loadgen.Run(context.Background(), loadgen.Options{URL: a.MQTT, Gateways: []loadgen.Gateway{lapa},
			Batches: n, RecordsPerBatch: 10, StartSeq: first, Start: from, Window: 100,
			Level: func(_, _ string, _ time.Time) float64 { return level }})
		if err != nil {
			t.Fatal(err)
		}
		if st.Acked != uint64(n) {
			t.Fatalf("acked %d of %d batches", st.Acked, n)
		}
	}
	buckets := func(from, to time.Time) []store.Bucket {
		var rd struct {
			Buckets []store.Bucket `json:"buckets"`
		}
		getJSON(t, base+"/readings?sensor=lapa-bar-01&step=10m&from="+from.UTC().Format(time.RFC3339)+
			"&to="+to.UTC().Format(time.RFC3339), &rd)
		return rd.Buckets
	}

	// 10 quiet minutes reach InfluxDB.
	send(1, 60, start.Add(-10*time.Minute), 45)
	if !waitFor(30*time.Second, func() bool {
		b := buckets(start.Add(-10*time.Minute), start)
		return len(b) == 1 && b[0].Count == 600
	}) {
		t.Fatalf("InfluxDB never held the first 600 records: %+v", buckets(start.Add(-10*time.Minute), start))
	}

	// InfluxDB dies; 10 minutes at 72 dB, then 10 at 50 dB arrive.
	in.Kill()
	send(61, 60, start, 72)
	send(121, 60, start.Add(10*time.Minute), 50)
	type healthView struct {
		Status     string            `json:"status"`
		Components map[string]string `json:"components"`
	}
	var health healthView
	if !waitFor(20*time.Second, func() bool {
		health = healthView{}
		code := getJSON(t, base+"/health", &health) // degraded, not down: ingest goes on
		return health.Components["influxdb"] == "indisponível; 1200 registros aguardando" && health.Status == "degradado" && code == 200
	}) {
		t.Errorf("health during the outage: %+v, want InfluxDB down with 1200 records waiting", health)
	}
	if up, backlog := influxGauges(t, a.HTTP); up != 0 || backlog != 1200 {
		t.Errorf("/metrics during the outage: sossego_influx_up %v, sossego_influx_backlog_records %v; want 0 and 1200", up, backlog)
	}
	// The charts keep working: the windows come from the local store.
	if b := buckets(start, start.Add(20*time.Minute)); len(b) != 2 || b[0].Count != 600 || b[1].Count != 600 ||
		math.Abs(b[0].LAeq-72) > 1e-6 || math.Abs(b[1].LAeq-50) > 1e-6 {
		t.Errorf("readings during the outage: %+v", b)
	}
	var al struct {
		Alerts []struct {
			Kind    string  `json:"kind"`
			Article string  `json:"article"`
			LimitDB float64 `json:"limit_db"`
			LAeqDB  float64 `json:"laeq_db"`
		} `json:"alerts"`
	}
	if !waitFor(20*time.Second, func() bool {
		getJSON(t, base+"/alerts?sensor=lapa-bar-01&state=resolved", &al)
		for _, x := range al.Alerts {
			if x.Kind == "exceedance" && x.Article == "Art. 96" && x.LimitDB == 60 && math.Abs(x.LAeqDB-72) < 0.1 {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no Art. 96 alert while InfluxDB was down: %+v", al.Alerts)
	}
	t.Logf("during the outage: health %q %v", health.Status, health.Components)

	// InfluxDB returns: the backlog drains (counted in InfluxDB itself),
	// the health clears, and the windows InfluxDB answers are complete.
	in.Restart(t)
	if n := waitInfluxCount(t, in.URL, 1800, 90*time.Second); n != 1800 {
		t.Fatalf("InfluxDB holds %d of 1800 records after the outage", n)
	}
	if !waitFor(40*time.Second, func() bool {
		health = healthView{}
		getJSON(t, base+"/health", &health)
		return health.Components["influxdb"] == "" && health.Status == "ok"
	}) {
		t.Errorf("health still reports InfluxDB down: %+v", health)
	}
	if up, backlog := influxGauges(t, a.HTTP); up != 1 || backlog != 0 {
		t.Errorf("/metrics after the outage: sossego_influx_up %v, sossego_influx_backlog_records %v; want 1 and 0", up, backlog)
	}
	b := buckets(start.Add(-10*time.Minute), start.Add(20*time.Minute))
	if len(b) != 3 {
		t.Fatalf("InfluxDB windows after the outage: %+v", b)
	}
	for i, want := range []float64{45, 72, 50} {
		if math.Abs(b[i].LAeq-want) > 1e-6 || b[i].Count != 600 {
			t.Errorf("bucket %d: %+v, want 600 records at %v dB", i, b[i], want)
		}
	}
}

func waitFor(d time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if ok() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// influxGauges reads sossego_influx_up and sossego_influx_backlog_records
// from the service's /metrics.
func influxGauges(t *testing.T, httpAddr string) (up, backlog float64) {
	t.Helper()
	return scrapeMetric(t, httpAddr, "sossego_influx_up").GetGauge().GetValue(),
		scrapeMetric(t, httpAddr, "sossego_influx_backlog_records").GetGauge().GetValue()
}
