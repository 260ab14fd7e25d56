package ingest

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// downAcks fails every ack, as Subscriber does while the broker is away.
type downAcks struct{}

func (downAcks) Ack(string, string, uint64) error { return errors.New("not connected to the broker") }

// linesWith returns the lines of b that contain substr.
func linesWith(b *testenv.SyncBuffer, substr string) []string {
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}

// TestAckFailuresLoggedAtIntervals: while acks cannot be published, the
// log gets one line per 10 s with how many failed, not one per gateway and
// commit (a broker restart under load wrote ten thousand lines); every
// failure is counted in sossego_ingest_acks_failed_total.
func TestAckFailuresLoggedAtIntervals(t *testing.T) {
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var clock atomic.Int64 // seconds after now
	logs := &testenv.SyncBuffer{}
	reg := prometheus.NewRegistry()
	in := New(Options{Store: st, Registry: testRegistry(t, "gw-a"), Acks: downAcks{}, Workers: 1,
		Metrics: NewMetrics(reg), Log: slog.New(slog.NewTextHandler(logs, nil)),
		Now: func() time.Time { return now.Add(time.Duration(clock.Load()) * time.Second) }})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- in.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	seq := uint64(0)
	// commitOne stores one batch (its own commit) at clock second s.
	commitOne := func(s int64) {
		t.Helper()
		clock.Store(s)
		seq++
		done := make(chan struct{})
		p := seal(t, mkBatch("gw-a", "gw-a-s1", seq, now.Add(-time.Hour+time.Duration(seq)*time.Second), 60), key)
		if !in.Offer(Message{Topic: topic, Payload: p, ReceivedAt: now, Done: func() { close(done) }}) {
			t.Fatal("queue full")
		}
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("batch %d never handled", seq)
		}
	}
	const msg = "acks não publicados"
	steps := []struct {
		at        int64
		wantLines int
		wantCount string // quantos= of the last line
	}{
		{0, 1, "quantos=1"}, // the first failure is logged at once
		{1, 1, ""},
		{5, 1, ""},
		{9, 1, ""},
		{10, 2, "quantos=4"}, // 10 s later: the three held back and this one
		{11, 2, ""},
		{25, 3, "quantos=2"},
	}
	for _, s := range steps {
		commitOne(s.at)
		got := linesWith(logs, msg)
		if len(got) != s.wantLines {
			t.Fatalf("at %ds: %d lines %q, want %d", s.at, len(got), got, s.wantLines)
		}
		if s.wantCount != "" && !strings.Contains(got[len(got)-1], s.wantCount) {
			t.Errorf("at %ds: %q, want %s", s.at, got[len(got)-1], s.wantCount)
		}
	}
	if c := counter(t, reg, "sossego_ingest_acks_failed_total"); c != float64(len(steps)) {
		t.Errorf("acks_failed_total = %v, want %d", c, len(steps))
	}
	if c, _ := st.CountLevels(context.Background(), "gw-a-s1"); c != int64(len(steps)) {
		t.Errorf("stored %d records, want %d (a failed ack loses nothing)", c, len(steps))
	}
}
