package ingest

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// TestDeadLettersBoundedPerGateway: junk under a gateway's quota used to
// be kept whole, as fast as it came. Past its gateway's hourly budget a
// dead letter is kept only as a sample (payload cut) or, when it settles
// a seq, with its payload cut; the others are counted, not stored; another
// gateway's budget is its own.
func TestDeadLettersBoundedPerGateway(t *testing.T) {
	const budget, junkSize, junk = 64 << 10, 8 << 10, 40
	var m *Metrics
	h := newHarnessWith(t, testRegistry(t, "gw-a", "gw-b"), func(o *Options) {
		o.DeadLetterBytesPerHour = budget
		o.Metrics = NewMetrics(nil)
		m = o.Metrics
	})
	keyB := loadgen.Key(seed, "gw-b")
	topicA, topicB := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), wire.LevelsTopic("lapa", "gw-b", "gw-b-s1")
	payload := append([]byte("not json "), bytes.Repeat([]byte("x"), junkSize)...)
	for range junk {
		h.offer(t, topicA, payload)
	}
	h.offer(t, topicB, payload) // another gateway, within its own budget
	h.waitDone(t)
	// Then gw-b's authenticated bad batches (900 dB) past gw-b's budget:
	// exhaust it with junk first.
	for range junk {
		h.offer(t, topicB, payload)
	}
	h.waitDone(t)
	const settling = 5
	loud := make([]float64, 100) // larger than what is left of the budget
	for i := range loud {
		loud[i] = 900
	}
	for seq := uint64(1); seq <= settling; seq++ {
		h.offer(t, topicB, seal(t, mkBatch("gw-b", "gw-b-s1", seq, now.Add(-2*time.Hour).Add(time.Duration(seq)*time.Minute), loud...), keyB))
	}
	h.waitDone(t)

	ctx := context.Background()
	for _, gw := range []string{"gw-a", "gw-b"} {
		dls, err := h.st.DeadLetters(ctx, store.DeadLetterFilter{Gateway: gw, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var whole, cut, stored int
		var bytesStored int
		settled := 0
		for _, d := range dls {
			bytesStored += len(d.Payload)
			switch {
			case d.Settled:
				settled++
				if !d.Truncated || len(d.Payload) > quotaSampleBytes {
					t.Errorf("%s: a settling dead letter past the budget kept %d bytes", gw, len(d.Payload))
				}
			case d.Truncated:
				cut++
			default:
				whole++
			}
			stored++
		}
		if whole == 0 || bytesStored > budget+2*quotaSampleBytes+settling*quotaSampleBytes {
			t.Errorf("%s: %d dead letters whole, %d payload bytes stored; budget %d", gw, whole, bytesStored, budget)
		}
		if cut != 1 {
			t.Errorf("%s: %d junk samples past the budget, want 1 (one per gateway and QuotaSampleEvery)", gw, cut)
		}
		over := h.in.DeadLettersOverBudget()[gw]
		sent := junk
		if gw == "gw-b" {
			sent = junk + 1 + settling
			if settled != settling {
				t.Errorf("gw-b: %d settling dead letters stored, want %d (each settles its seq)", settled, settling)
			}
			if got := h.acks.last("gw-b"); got != settling {
				t.Errorf("gw-b ack %d, want %d", got, settling)
			}
		}
		if int(over) != sent-whole {
			t.Errorf("%s: %d counted past the budget, want %d (%d sent, %d kept whole)", gw, over, sent-whole, sent, whole)
		}
		var c dto.Metric
		if err := m.deadOverBudget.WithLabelValues(gw, "descartada").Write(&c); err != nil {
			t.Fatal(err)
		}
		if got := c.GetCounter().GetValue(); int(got) != sent-whole-cut-settledPast(gw, settled) {
			t.Errorf("%s: metric says %v dropped, want %d", gw, got, sent-whole-cut-settledPast(gw, settled))
		}
	}
}

// settledPast is how many of gw's settling dead letters came past its
// budget (all of them, for gw-b; gw-a sends none).
func settledPast(gw string, settled int) int {
	if gw == "gw-b" {
		return settled
	}
	return 0
}

// TestRecordLongerThanASecondRefused: a record covers at most one second
// (docs/wire.md, dur_ms); one claiming an hour used to be stored, and its
// minute then held 3,600,000 ms. It is a dead letter with the reason, its
// authenticated batch settles its seq, and nothing of it is stored.
func TestRecordLongerThanASecondRefused(t *testing.T) {
	h := newHarness(t, testRegistry(t, "gw-a"))
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	for i, dur := range []int64{wire.MaxDurMs + 1, 3_600_000} {
		b := mkBatch("gw-a", "gw-a-s1", uint64(i+1), now.Add(-time.Hour), 60)
		b.Records[0].DurMs = dur
		h.offer(t, topic, seal(t, b, key))
	}
	good := mkBatch("gw-a", "gw-a-s1", 3, now.Add(-time.Hour).Add(time.Second), 60)
	h.offer(t, topic, seal(t, good, key))
	h.waitDone(t)
	ctx := context.Background()
	dls, err := h.st.DeadLetters(ctx, store.DeadLetterFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 2 {
		t.Fatalf("%d dead letters, want 2: %+v", len(dls), dls)
	}
	for _, d := range dls {
		if d.Reason != wire.ReasonSchema || !strings.Contains(d.Message, "no máximo um segundo") || !d.Settled {
			t.Errorf("dead letter %q (%s), settled %v; want schema, saying a record covers a second, settled", d.Reason, d.Message, d.Settled)
		}
	}
	if n, _ := h.st.CountLevels(ctx, "gw-a-s1"); n != 1 {
		t.Errorf("%d records stored, want only the good one", n)
	}
	if got := h.acks.last("gw-a"); got != 3 {
		t.Errorf("ack %d, want 3", got)
	}
}
