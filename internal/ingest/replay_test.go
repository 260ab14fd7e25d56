package ingest

import (
	"bytes"
	"context"
	"errors"
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

// sealed is b signed by its gateway's test key, as ingest opened it.
func sealed(t *testing.T, b *wire.Batch) *wire.Envelope {
	t.Helper()
	p, err := wire.Seal(b, loadgen.Key(seed, b.Gateway))
	if err != nil {
		t.Fatal(err)
	}
	env, _, err := wire.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	return env
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
	env := sealed(t, b)
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

// fakeLevels is a readings store holding some stored levels batches.
type fakeLevels []store.StoredBatch

func (f fakeLevels) LevelBatchesAfter(_ context.Context, after, upTo int64, fn func(int64, store.StoredBatch) error) error {
	return fakeChecks(f).ChecksAfter(context.Background(), after, upTo, fn)
}

// TestReplayLevels: the stored levels batches in the range reach fn batch
// by batch with the meter, clock and records of their signed body and the
// batch's gateway, seq, municipality, sensor and receipt; a body that no
// longer decodes, or a check stored where levels were asked for, is logged
// and skipped; fn's error stops the replay.
func TestReplayLevels(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	b := &wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: "gw-a", Sensor: "gw-a-s", Seq: 7, SentAt: now,
		Device: wire.Device{Model: "NTi XL2", Serial: "A2A-1", Grade: "class1"}, Clock: wire.Clock{Synced: true, Source: "ntp"},
		Records: []wire.Record{{T: now.Add(-2 * time.Second), DurMs: 1000, LAeq: 61.5, LAFmax: 64, LAFmin: 58},
			{T: now.Add(-time.Second), DurMs: 1000, LAeq: 62, LAFmax: 65, LAFmin: 59}}}
	env := sealed(t, b)
	good := store.StoredBatch{Gateway: "gw-a", Municipality: "lapa", Seq: 7, Sensor: "gw-a-s", Kind: wire.KindLevels, Body: env.Body,
		Sig: env.Sig, Verified: true, ReceivedAt: now}
	bad := good
	bad.Seq, bad.Body = 8, []byte(`{"v":1,"kind":"levels","extra":true}`)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	src := fakeLevels{good, bad, good}
	for _, tc := range []struct {
		after, upTo int64
		want        int
	}{{0, 2, 1}, {1, 3, 1}, {0, 3, 2}, {3, 3, 0}} {
		var got int
		n, err := ReplayLevels(context.Background(), src, tc.after, tc.upTo, func(rs []Reading) error {
			got++
			if len(rs) != 2 {
				t.Fatalf("%d readings, want 2", len(rs))
			}
			for i, r := range rs {
				if r.Gateway != "gw-a" || r.Seq != 7 || r.Municipality != "lapa" || r.Sensor != "gw-a-s" || r.Device != b.Device ||
					r.Clock != b.Clock || !r.Verified || !r.ReceivedAt.Equal(now) || !r.Record.T.Equal(b.Records[i].T) || r.Record.LAeq != b.Records[i].LAeq {
					t.Fatalf("replayed %+v", r)
				}
			}
			return nil
		}, log)
		if err != nil || n != tc.want || got != tc.want {
			t.Fatalf("(%d, %d]: %d handed over (%v), fn called %d times, want %d", tc.after, tc.upTo, n, err, got, tc.want)
		}
	}
	if !strings.Contains(logs.String(), "lote de níveis guardado ilegível") || !strings.Contains(logs.String(), "seq=8") {
		t.Fatalf("log %s", logs.String())
	}
	stop := errors.New("parar")
	if _, err := ReplayLevels(context.Background(), src, 0, 3, func([]Reading) error { return stop }, log); !errors.Is(err, stop) {
		t.Fatalf("fn's error: %v", err)
	}
}
