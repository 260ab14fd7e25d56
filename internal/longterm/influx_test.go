package longterm

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/influxstore"
	"github.com/sossego/sossego/internal/testenv"
)

// countingSource counts the hour rows the mirror read.
type countingSource struct {
	*Store
	rows atomic.Int64
}

func (c *countingSource) TierChangesAfter(ctx context.Context, after int64, limit int) ([]store.TierHour, error) {
	h, err := c.Store.TierChangesAfter(ctx, after, limit)
	c.rows.Add(int64(len(h)))
	return h, err
}

// influxQuery runs an InfluxQL query and returns the first series' rows.
func influxQuery(t *testing.T, base, q string) [][]any {
	t.Helper()
	resp, err := http.PostForm(base+"/query", url.Values{"db": {"sossego"}, "q": {q}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Results []struct {
			Error  string `json:"error"`
			Series []struct {
				Values [][]any `json:"values"`
			} `json:"series"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) == 0 || out.Results[0].Error != "" {
		t.Fatalf("%s: %+v", q, out)
	}
	if len(out.Results[0].Series) == 0 {
		return nil
	}
	return out.Results[0].Series[0].Values
}

func runTierMirror(t *testing.T, m *influxstore.TierMirror) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("tier mirror: %v", err)
		}
	}
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func synthMinutes(rng *rand.Rand, from time.Time, n int) []stats.Minute {
	out := make([]stats.Minute, n)
	for i := range out {
		m := stats.Minute{Start: from.Add(time.Duration(i) * time.Minute)}
		m.AddSecond(stats.Second{T: m.Start, DurMs: 60000, LAeq: 50 + 10*rng.Float64(), LAFmax: 70, LAFmin: 40})
		out[i] = m
	}
	return out
}

// TestTierInfluxMirror: the tier's minutes and hours reach a real InfluxDB
// 1.8.10 as sossego_minute and sossego_hour in the infinite retention
// policy the mirror creates; across an outage (InfluxDB killed while the
// tier grows and an hour already sent changes) nothing is lost and the
// changed minute is overwritten, not doubled; a mirror started again reads
// nothing it already sent (its cursor is in the tier).
func TestTierInfluxMirror(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test (InfluxDB)")
	}
	in := testenv.StartInflux(t)
	in.CreateDatabase(t, "sossego")
	ctx := context.Background()
	tier := openTier(t, t.TempDir())
	src := &countingSource{Store: tier}
	opts := influxstore.TierMirrorOptions{MirrorOptions: influxstore.MirrorOptions{URL: in.URL, Bucket: "sossego/autogen",
		Log: slog.New(slog.DiscardHandler), MaxBackoff: 500 * time.Millisecond}, Poll: 50 * time.Millisecond, Rows: 2}
	rng := rand.New(rand.NewPCG(3, 3))
	if err := tier.AddMinutes(ctx, "s1", synthMinutes(rng, t0, 180)); err != nil {
		t.Fatal(err)
	}
	if err := tier.AddMinutes(ctx, "s2", synthMinutes(rng, t0, 30)); err != nil {
		t.Fatal(err)
	}
	m := influxstore.NewTierMirror(src, opts)
	defer m.Close()
	stop := runTierMirror(t, m)
	caughtUp := func() bool { n, err := m.Backlog(ctx); return err == nil && n == 0 }
	waitFor(t, "the mirror to catch up", 60*time.Second, caughtUp)

	rps := influxQuery(t, in.URL, `SHOW RETENTION POLICIES ON "sossego"`)
	found := false
	for _, r := range rps {
		if r[0] == influxstore.TierRetentionPolicy && r[1] == "0s" {
			found = true
		}
	}
	if !found {
		t.Errorf("retention policy %s with infinite duration missing: %v", influxstore.TierRetentionPolicy, rps)
	}
	count := func(meas, sensor string) int {
		v := influxQuery(t, in.URL, `SELECT count(laeq) FROM "sossego"."sossego_longo_prazo"."`+meas+`" WHERE sensor = '`+sensor+`'`)
		if len(v) == 0 {
			return 0
		}
		return int(v[0][1].(float64))
	}
	if a, b, c := count("sossego_minute", "s1"), count("sossego_hour", "s1"), count("sossego_minute", "s2"); a != 180 || b != 3 || c != 30 {
		t.Errorf("in InfluxDB: s1 %d minutes and %d hours, s2 %d minutes; want 180, 3, 30", a, b, c)
	}
	// Values: the tier's minute at 01:17 and its hour 01:00.
	var want stats.MinuteRow
	at := t0.Add(77 * time.Minute)
	if err := tier.EachMinuteRow(ctx, "s1", at, at.Add(time.Minute), func(r *stats.MinuteRow) error { want = *r; return nil }); err != nil {
		t.Fatal(err)
	}
	laeqAt := func(meas string, ts time.Time) float64 {
		v := influxQuery(t, in.URL, `SELECT laeq FROM "sossego"."sossego_longo_prazo"."`+meas+`" WHERE sensor = 's1' AND time = '`+
			ts.UTC().Format(time.RFC3339)+`'`)
		if len(v) != 1 {
			t.Fatalf("%s at %s: %v", meas, ts, v)
		}
		return v[0][1].(float64)
	}
	if got := laeqAt("sossego_minute", at); math.Abs(got-want.LAeq) > 1e-9 {
		t.Errorf("minute LAeq in InfluxDB %v, tier %v", got, want.LAeq)
	}
	var hourLAeq float64
	if err := tier.EachHour(ctx, "s1", t0.Add(time.Hour), t0.Add(2*time.Hour), func(h stats.Hour) error {
		hourLAeq, _ = h.LAeq()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := laeqAt("sossego_hour", t0.Add(time.Hour)); math.Abs(got-hourLAeq) > 1e-9 {
		t.Errorf("hour LAeq in InfluxDB %v, tier %v", got, hourLAeq)
	}

	// Outage: the tier grows by two hours and minute 01:17 gets a late
	// record while InfluxDB is down.
	in.Kill()
	if err := tier.AddMinutes(ctx, "s1", synthMinutes(rng, t0.Add(3*time.Hour), 120)); err != nil {
		t.Fatal(err)
	}
	late := stats.Minute{Start: at}
	late.AddSecond(stats.Second{T: at, DurMs: 1000, LAeq: 90, LAFmax: 95, LAFmin: 85})
	if err := tier.AddMinutes(ctx, "s1", []stats.Minute{late}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the mirror to notice the outage", 30*time.Second, m.Failing)
	if n, _ := m.Backlog(ctx); n == 0 {
		t.Error("backlog 0 during the outage")
	}
	in.Restart(t)
	waitFor(t, "the mirror to catch up after the outage", 60*time.Second, func() bool { return caughtUp() && !m.Failing() })
	if a, b := count("sossego_minute", "s1"), count("sossego_hour", "s1"); a != 300 || b != 5 {
		t.Errorf("after the outage: %d minutes and %d hours, want 300 and 5", a, b)
	}
	if err := tier.EachMinuteRow(ctx, "s1", at, at.Add(time.Minute), func(r *stats.MinuteRow) error { want = *r; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := laeqAt("sossego_minute", at); math.Abs(got-want.LAeq) > 1e-9 || want.DurMs != 61000 {
		t.Errorf("changed minute: LAeq in InfluxDB %v, tier %v (%d ms)", got, want.LAeq, want.DurMs)
	}
	stop()

	// Started again: nothing already sent is read again.
	read := src.rows.Load()
	m2 := influxstore.NewTierMirror(src, opts)
	defer m2.Close()
	stop2 := runTierMirror(t, m2)
	defer stop2()
	if err := tier.AddMinutes(ctx, "s2", synthMinutes(rng, t0.Add(30*time.Minute), 10)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second mirror to catch up", 60*time.Second, func() bool {
		n, err := m2.Backlog(ctx)
		return err == nil && n == 0
	})
	if got := src.rows.Load() - read; got != 1 {
		t.Errorf("the restarted mirror read %d hour rows, want 1 (the one changed since)", got)
	}
	if c := count("sossego_minute", "s2"); c != 40 {
		t.Errorf("s2: %d minutes, want 40", c)
	}
}
