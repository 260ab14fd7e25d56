package ingest

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// fakeChecks is a readings store holding some stored check batches.
type fakeChecks []store.StoredBatch

func (f fakeChecks) ChecksAfter(_ context.Context, after, upTo int64, fn func(int64, store.StoredBatch) error) error {
	for i, b := range f {
		if pos := int64(i + 1); pos > after && pos <= upTo {
			if err := fn(pos, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// checksSeen is a CheckObserver keeping what it gets.
type checksSeen []CheckReading

func (c *checksSeen) ObserveCheck(_ context.Context, r CheckReading) { *c = append(*c, r) }

// TestReplayChecks: the stored check messages in the range reach the
// observer as ingest handed them (the check and the meter from the signed
// body, the batch's gateway, seq, municipality, signature and receipt); a
// body that no longer decodes is logged and skipped.
func TestReplayChecks(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	b := &wire.Batch{V: 1, Kind: wire.KindCheck, Municipality: "lapa", Gateway: "gw-a", Sensor: "gw-a-s", Seq: 7, SentAt: now,
		Device: wire.Device{Model: "NTi XL2", Serial: "A2A-1", Grade: "class1"}, Clock: wire.Clock{Synced: true, Source: "ntp"},
		Check: &wire.Check{T: now.Add(-time.Minute), ReferenceDB: 114, MeasuredDB: 113.8, FrequencyHz: 1000, CalibratorModel: "B&K 4231",
			CalibratorSerial: "2671834", Note: "antes da campanha"}}
	p, err := wire.Seal(b, loadgen.Key(seed, "gw-a"))
	if err != nil {
		t.Fatal(err)
	}
	env, _, err := wire.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	good := store.StoredBatch{Gateway: "gw-a", Municipality: "lapa", Seq: 7, Sensor: "gw-a-s", Kind: wire.KindCheck, Body: env.Body,
		Sig: env.Sig, Verified: true, ReceivedAt: now}
	bad := good
	bad.Seq, bad.Body = 8, []byte(`{"v":1,"kind":"check","extra":true}`)
	src := fakeChecks{good, bad, good}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	for _, tc := range []struct {
		after, upTo int64
		want        int
	}{{0, 2, 1}, {1, 3, 1}, {3, 3, 0}} {
		var seen checksSeen
		n, err := ReplayChecks(context.Background(), src, tc.after, tc.upTo, &seen, log)
		if err != nil || n != tc.want || len(seen) != tc.want {
			t.Fatalf("(%d, %d]: %d handed over (%v), observer got %d, want %d", tc.after, tc.upTo, n, err, len(seen), tc.want)
		}
		for _, c := range seen {
			if c.Gateway != "gw-a" || c.Seq != 7 || c.Municipality != "lapa" || c.Sensor != "gw-a-s" || c.Device != b.Device ||
				c.Check != *b.Check || !c.Verified || !c.ReceivedAt.Equal(now) || !bytes.Equal(c.Body, env.Body) || !bytes.Equal(c.Sig, env.Sig) {
				t.Fatalf("replayed %+v", c)
			}
		}
	}
	if !strings.Contains(logs.String(), "verificação de campo guardada ilegível") || !strings.Contains(logs.String(), "seq=8") {
		t.Fatalf("log %s", logs.String())
	}
}
