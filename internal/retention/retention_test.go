package retention

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

var day0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestProtect(t *testing.T) {
	at := func(h float64) time.Time { return day0.Add(time.Duration(h * float64(time.Hour))) }
	spans := []Span{
		{Sensor: "s1", From: at(10), To: at(11)},
		{Sensor: "s2", From: at(10)}, // open
		{Sensor: "s3", To: at(5)},    // no start recorded
	}
	keep := Protect(spans, time.Hour)
	for _, tc := range []struct {
		sensor   string
		from, to float64 // hours
		want     bool
	}{
		{"s1", 10.2, 10.3, true},
		{"s1", 8.5, 9.0, false},  // ends exactly at the margin
		{"s1", 8.5, 9.01, true},  // reaches into it
		{"s1", 11.9, 12.5, true}, // starts inside the margin after
		{"s1", 12.0, 12.5, false},
		{"s2", 9.5, 9.6, true}, // the margin before an open span
		{"s2", 500, 501, true}, // open: everything after
		{"s2", 8, 8.9, false},
		{"s3", -100, -99, true},
		{"s3", 6.5, 7, false},
		{"other", 10, 11, false},
	} {
		if got := keep(tc.sensor, at(tc.from), at(tc.to)); got != tc.want {
			t.Errorf("%s [%v h, %v h): keep %v, want %v", tc.sensor, tc.from, tc.to, got, tc.want)
		}
	}
}

// A pass over a real store: a year of one daily batch per sensor, a
// 90-day retention, one resolved alert in March and one still open; the
// InfluxDB mirror has written everything but the last week.
func TestPassKeepsEvidenceAndUnmirrored(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "r.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const days = 365
	for d := range days {
		for _, sensor := range []string{"s1", "s2"} {
			start := day0.Add(time.Duration(d)*24*time.Hour + 20*time.Hour)
			b := store.Batch{Gateway: "gw-" + sensor, Municipality: "lapa", Sensor: sensor, Kind: wire.KindLevels,
				Seq: uint64(d + 1), Topic: "t", Sig: []byte{1}, Verified: true, ReceivedAt: start.Add(time.Minute)}
			for i := range 10 {
				b.Records = append(b.Records, wire.Record{T: start.Add(time.Duration(i) * time.Second), DurMs: 1000, LAeq: 60})
			}
			body, err := json.Marshal(wire.Batch{V: 1, Kind: b.Kind, Gateway: b.Gateway, Sensor: sensor, Seq: b.Seq, Records: b.Records})
			if err != nil {
				t.Fatal(err)
			}
			b.Body = body
			if _, err := st.Apply(ctx, store.Write{Batches: []store.Batch{b}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	maxID, err := st.MaxLevelID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := day0.Add(days * 24 * time.Hour)
	march := day0.Add(70*24*time.Hour + 20*time.Hour) // day 70, 20:00–20:30
	spans := []Span{{Sensor: "s1", From: march, To: march.Add(30 * time.Minute)}, {Sensor: "s2", From: day0.Add(300 * 24 * time.Hour)}}
	deleted := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "d"}, []string{"kind"})
	p := New(Options{Store: st, Retain: 90 * 24 * time.Hour, Chunk: 37, Pause: time.Millisecond, Now: func() time.Time { return now },
		Spans:   func(context.Context) ([]Span, error) { return spans, nil },
		Mirror:  func(context.Context) (int64, int64, error) { return maxID - 7*2*10, 0, nil },
		Deleted: deleted})
	tot, err := p.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Days 0–274 are older than 90 days; s1 keeps days 69–71 (the alert
	// and a day each side), s2 keeps nothing before day 299.
	if tot.Batches != 275*2-3 || tot.Levels != (275*2-3)*10 || tot.Kept != 3 {
		t.Errorf("pass %+v, want %d batches (%d levels) deleted, 3 kept", tot, 275*2-3, (275*2-3)*10)
	}
	var m dto.Metric
	if err := deleted.WithLabelValues("levels").Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != float64(tot.Levels) {
		t.Errorf("levels counter %v, want %d", got, tot.Levels)
	}
	for _, tc := range []struct {
		sensor string
		day    int
		kept   bool
	}{{"s1", 68, false}, {"s1", 69, true}, {"s1", 70, true}, {"s1", 71, true}, {"s1", 72, false}, {"s2", 70, false},
		{"s1", 274, false}, {"s1", 275, true}, {"s2", 364, true}} {
		from := day0.Add(time.Duration(tc.day) * 24 * time.Hour)
		recs, err := st.Records(ctx, tc.sensor, from, from.Add(24*time.Hour), 0)
		if err != nil {
			t.Fatal(err)
		}
		if (len(recs) == 10) != tc.kept || (len(recs) != 0 && len(recs) != 10) {
			t.Errorf("%s day %d: %d records, want kept %v", tc.sensor, tc.day, len(recs), tc.kept)
		}
	}
	// Nothing the mirror has not written is deleted, whatever the age:
	// a retention of one day now deletes up to the mirror's cursor.
	p.o.Retain = 24 * time.Hour
	tot, err = p.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	left, err := st.CountLevels(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	// Kept: s1's 3 alert days, s2 from day 299 on (66 days, open alert),
	// s1's last 7 days (not mirrored).
	if want := int64(3+66+7) * 10; left != want {
		t.Errorf("%d level records left, want %d (pass %+v)", left, want, tot)
	}
}

// fakeStore answers PruneOldest with scripted results and records calls.
type fakeStore struct {
	mu    sync.Mutex
	calls []store.Prune
	res   []store.PruneResult
	err   error
}

func (f *fakeStore) PruneOldest(_ context.Context, p store.Prune) (store.PruneResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, p)
	if f.err != nil {
		return store.PruneResult{}, f.err
	}
	r := f.res[0]
	if len(f.res) > 1 {
		f.res = f.res[1:]
	}
	return r, nil
}

// Run waits Delay, then passes every Every; a pass walks chunks until Done,
// resuming where the previous chunk stopped; an error waits for the next pass.
func TestRunSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeStore{res: []store.PruneResult{{Batches: 1, Next: 10, NextDeadLetter: 3}, {Batches: 1, Next: 20, Done: true}}}
		start := time.Now()
		var spansErr atomic.Pointer[error]
		p := New(Options{Store: f, Retain: 48 * time.Hour, Delay: time.Minute, Every: time.Hour,
			Spans: func(context.Context) ([]Span, error) {
				if e := spansErr.Load(); e != nil {
					return nil, *e
				}
				return nil, nil
			}})
		calls := func() []store.Prune { f.mu.Lock(); defer f.mu.Unlock(); return append([]store.Prune(nil), f.calls...) }
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- p.Run(ctx) }()
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if n := len(calls()); n != 0 {
			t.Fatalf("%d calls before the delay", n)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		c := calls()
		if len(c) != 2 || c[1].After != 10 || c[1].AfterDeadLetter != 3 || c[0].After != 0 {
			t.Fatalf("first pass calls %+v", c)
		}
		if want := start.Add(time.Minute - 48*time.Hour); !c[0].Before.Equal(want) {
			t.Errorf("Before %v, want now − retention %v", c[0].Before, want)
		}
		e := errors.New("cases.db locked")
		spansErr.Store(&e)
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := len(calls()); n != 2 {
			t.Errorf("a pass without the alert spans deleted: %d calls", n)
		}
		spansErr.Store(nil)
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := len(calls()); n != 3 {
			t.Errorf("%d calls after the third pass, want 3", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestPassesResumeWhereDecided: a pass starts after the batches and dead
// letters an earlier pass decided for good, and a batch kept only for the
// InfluxDB mirror (Decided < Next) is read again by the next pass.
func TestPassesResumeWhereDecided(t *testing.T) {
	f := &fakeStore{res: []store.PruneResult{
		// Pass 1: the first chunk keeps rowid 6 for the mirror.
		{Next: 10, Decided: 5, NextDeadLetter: 3},
		{Next: 20, Decided: 20, NextDeadLetter: 4, Done: true},
		// Pass 2: everything decided.
		{Next: 30, Decided: 30, NextDeadLetter: 6, Done: true},
		// Pass 3.
		{Next: 30, Decided: 30, NextDeadLetter: 6, Done: true},
	}}
	p := New(Options{Store: f, Retain: 48 * time.Hour, Pause: time.Millisecond,
		Spans: func(context.Context) ([]Span, error) { return nil, nil }})
	for range 3 {
		if _, err := p.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	type from struct{ after, dead int64 }
	var got []from
	for _, c := range f.calls {
		got = append(got, from{c.After, c.AfterDeadLetter})
	}
	want := []from{{0, 0}, {10, 3}, {5, 4}, {30, 6}}
	if !slices.Equal(got, want) {
		t.Errorf("calls started at %v, want %v", got, want)
	}
}

// TestFollowersHoldBack: the long-term tier's cursor holds back the pass
// like the InfluxDB mirror's: the lowest cursor wins; without a mirror the
// env records go by age alone.
func TestFollowersHoldBack(t *testing.T) {
	for _, tc := range []struct {
		name             string
		mirror           func(context.Context) (int64, int64, error)
		tier             int64
		wantLevel, wantE int64
	}{
		{"tier only", nil, 500, 500, math.MaxInt64},
		{"tier behind the mirror", func(context.Context) (int64, int64, error) { return 900, 40, nil }, 500, 500, 40},
		{"mirror behind the tier", func(context.Context) (int64, int64, error) { return 300, 40, nil }, 500, 300, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeStore{res: []store.PruneResult{{Done: true}}}
			p := New(Options{Store: f, Retain: 48 * time.Hour, Mirror: tc.mirror,
				Followers: []func(context.Context) (int64, error){func(context.Context) (int64, error) { return tc.tier, nil }},
				Spans:     func(context.Context) ([]Span, error) { return nil, nil }})
			if _, err := p.Pass(context.Background()); err != nil {
				t.Fatal(err)
			}
			c := f.calls[0]
			if !c.Mirror || c.MirroredLevelID != tc.wantLevel || c.MirroredEnvID != tc.wantE {
				t.Errorf("prune %+v, want levels up to %d, env up to %d", c, tc.wantLevel, tc.wantE)
			}
		})
	}
	f := &fakeStore{}
	p := New(Options{Store: f, Retain: 48 * time.Hour,
		Followers: []func(context.Context) (int64, error){func(context.Context) (int64, error) { return 0, errors.New("longterm.db locked") }},
		Spans:     func(context.Context) ([]Span, error) { return nil, nil }})
	if _, err := p.Pass(context.Background()); err == nil || len(f.calls) != 0 {
		t.Errorf("a pass without the tier's cursor deleted: %v, %d calls", err, len(f.calls))
	}
}

func TestExpiry(t *testing.T) {
	end := day0.Add(10 * 24 * time.Hour)
	closed := end.Add(40 * 24 * time.Hour)
	legal := 5 * 365 * 24 * time.Hour
	for _, tc := range []struct {
		name string
		end  time.Time
		c    Case
		want time.Time
	}{
		{"open alert", time.Time{}, Case{}, time.Time{}},
		{"open alert with a closed case", time.Time{}, Case{Exists: true, ClosedAt: closed}, time.Time{}},
		{"no case: legal after the alert ended", end, Case{}, end.Add(legal)},
		{"open case: for good while open", end, Case{Exists: true, Open: true}, time.Time{}},
		{"closed case: legal after it closed", end, Case{Exists: true, ClosedAt: closed}, closed.Add(legal)},
		{"closed case without an instant: from the alert's end", end, Case{Exists: true}, end.Add(legal)},
	} {
		if got := Expiry(tc.end, tc.c, legal); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPassHonoursUntil: over a real store, a span kept while its case is
// open stays whatever the passes; one whose protection ended is pruned; one
// that ends between two passes is pruned by the next one even though an
// earlier pass had taken its batches as kept for good.
func TestPassHonoursUntil(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "r.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sensors := []string{"open-case", "expired", "expires-later", "no-alert"}
	for i, sensor := range sensors {
		start := day0.Add(20 * time.Hour)
		b := store.Batch{Gateway: "gw-" + sensor, Municipality: "lapa", Sensor: sensor, Kind: wire.KindLevels,
			Seq: uint64(i + 1), Topic: "t", Sig: []byte{1}, Verified: true, ReceivedAt: start.Add(time.Minute)}
		for k := range 10 {
			b.Records = append(b.Records, wire.Record{T: start.Add(time.Duration(k) * time.Second), DurMs: 1000, LAeq: 70})
		}
		if b.Body, err = json.Marshal(wire.Batch{V: 1, Kind: b.Kind, Gateway: b.Gateway, Sensor: sensor, Seq: b.Seq, Records: b.Records}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Apply(ctx, store.Write{Batches: []store.Batch{b}}); err != nil {
			t.Fatal(err)
		}
	}
	now := day0.Add(400 * 24 * time.Hour)
	span := func(sensor string, until time.Time) Span {
		return Span{Sensor: sensor, From: day0.Add(20 * time.Hour), To: day0.Add(20*time.Hour + 10*time.Second), Until: until}
	}
	spans := []Span{span("open-case", time.Time{}), span("expired", now.Add(-time.Hour)), span("expires-later", now.Add(48*time.Hour))}
	clock := now
	p := New(Options{Store: st, Retain: 90 * 24 * time.Hour, Pause: time.Millisecond, Now: func() time.Time { return clock },
		Spans: func(context.Context) ([]Span, error) { return spans, nil }})
	left := func() map[string]int64 {
		out := map[string]int64{}
		for _, s := range sensors {
			n, err := st.CountLevels(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			out[s] = n
		}
		return out
	}
	if _, err := p.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got := left(); got["open-case"] != 10 || got["expires-later"] != 10 || got["expired"] != 0 || got["no-alert"] != 0 {
		t.Fatalf("after the first pass: %v", got)
	}
	for range 3 { // passes that change nothing
		if _, err := p.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	clock = now.Add(72 * time.Hour) // "expires-later" ran out
	if _, err := p.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got := left(); got["open-case"] != 10 || got["expires-later"] != 0 {
		t.Errorf("after the protection ended: %v", got)
	}
	clock = now.Add(100 * 365 * 24 * time.Hour) // an open case is kept for good
	if _, err := p.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got := left(); got["open-case"] != 10 {
		t.Errorf("open case after a century: %v", got)
	}
}
