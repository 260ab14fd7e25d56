package ingest

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/wire"
)

// TestDuplicatesAndReorderingKeepTheRecord is the duplicates-and-reordering goal: an
// hour of 10-record batches delivered with ~5 % duplicated and ~5 % swapped
// with their neighbour (as redeliveries after a reconnect do) leaves the
// store with exactly the unique records, the gateway acked to the end, and
// hourly and 10-minute LAeq identical (to 0.01 dB) to the same hour
// delivered in order.
func TestDuplicatesAndReorderingKeepTheRecord(t *testing.T) {
	key := loadgen.Key(seed, "gw-a")
	topic := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	t0 := now.Add(-3 * time.Hour).Truncate(time.Hour)
	const batches = 360 // one hour
	rng := rand.New(rand.NewPCG(14, 14))
	payloads := make([][]byte, batches)
	for i := range payloads {
		levels := make([]float64, 10)
		for j := range levels {
			levels[j] = math.Round((45+25*rng.Float64())*10) / 10
		}
		seq := uint64(i + 1)
		payloads[i] = seal(t, mkBatch("gw-a", "gw-a-s1", seq, t0.Add(time.Duration(i)*10*time.Second), levels...), key)
	}
	// The disturbed order: swap ~5 % of neighbours, duplicate ~5 %.
	order := make([]int, batches)
	for i := range order {
		order[i] = i
	}
	swaps, dups := 0, 0
	for i := 0; i+1 < batches; i++ {
		if rng.Float64() < 0.05 {
			order[i], order[i+1] = order[i+1], order[i]
			swaps++
			i++
		}
	}
	var disturbed []int
	for _, i := range order {
		disturbed = append(disturbed, i)
		if rng.Float64() < 0.05 {
			disturbed = append(disturbed, i)
			dups++
		}
	}
	if swaps == 0 || dups == 0 {
		t.Fatalf("the disturbance did nothing (%d swaps, %d duplicates)", swaps, dups)
	}

	feed := func(seqOrder []int) *harness {
		h := newHarness(t, testRegistry(t, "gw-a"))
		for _, i := range seqOrder {
			h.offer(t, topic, payloads[i])
		}
		h.waitDone(t)
		return h
	}
	inOrder := make([]int, batches)
	for i := range inOrder {
		inOrder[i] = i
	}
	ref, got := feed(inOrder), feed(disturbed)

	ctx := context.Background()
	if n, _ := got.st.CountLevels(ctx, "gw-a-s1"); n != batches*10 {
		t.Errorf("stored %d records, want %d unique", n, batches*10)
	}
	if a := got.acks.last("gw-a"); a != batches {
		t.Errorf("ack %d, want %d", a, batches)
	}
	for _, step := range []time.Duration{time.Hour, 10 * time.Minute} {
		want, err := ref.st.Buckets(ctx, "gw-a-s1", t0, t0.Add(time.Hour), step)
		if err != nil {
			t.Fatal(err)
		}
		have, err := got.st.Buckets(ctx, "gw-a-s1", t0, t0.Add(time.Hour), step)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != len(have) || len(want) != int(time.Hour/step) {
			t.Fatalf("step %v: %d buckets, reference %d", step, len(have), len(want))
		}
		for i := range want {
			if math.Abs(want[i].LAeq-have[i].LAeq) > 0.01 || want[i].Count != have[i].Count {
				t.Errorf("step %v bucket %d: LAeq %.3f over %d records, in order %.3f over %d",
					step, i, have[i].LAeq, have[i].Count, want[i].LAeq, want[i].Count)
			}
		}
	}
	t.Logf("%d batches with %d neighbour swaps and %d duplicates: %d records stored", batches, swaps, dups, batches*10)
}
