package gateway

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/wire"
)

// BenchmarkPipeline1000Records measures the gateway's per-record work with
// a 10 Hz meter: 10 000 samples → 1 000 one-second records → 100 sealed
// batches stored in the SQLite outbox (WAL, synchronous=FULL) and acked.
// One op = 1 000 records; cpu-ms/op is process CPU time (user+system,
// getrusage), ns/op is wall time including fsync waits. MQTT I/O is not included (see gateway-bench.md
// for the whole-process figures).
func BenchmarkPipeline1000Records(b *testing.B) {
	ctx := context.Background()
	box, err := OpenOutbox(filepath.Join(b.TempDir(), "outbox.db"), 1_000_000)
	if err != nil {
		b.Fatal(err)
	}
	defer box.Close()
	_, key, _ := ed25519.GenerateKey(nil)
	clk := wire.Clock{Synced: true, OffsetMs: 1, Source: "ntp"}
	agg := NewAggregator(100 * time.Millisecond)
	bat := &Batcher{MaxRecords: 10, MaxAge: 10 * time.Second}
	at := t0
	enqueue := func(p Pending) {
		_, err := box.Enqueue(ctx, "t", len(p.Records), at, func(seq uint64) ([]byte, error) {
			bt := wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: "gw", Sensor: "m1",
				Seq: seq, SentAt: at, Device: p.Device, Clock: p.Clock, Records: p.Records}
			return wire.Seal(&bt, key)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	for b.Loop() {
		for range 10_000 {
			at = at.Add(100 * time.Millisecond)
			db := 45 + float64(at.UnixMilli()%300)/10
			outs, err := agg.Add(laf(at, db), clk)
			if err != nil {
				b.Fatal(err)
			}
			for _, o := range outs {
				for _, p := range bat.Add(o, at) {
					enqueue(p)
				}
			}
		}
		if _, err := box.Ack(ctx, box.LastSeq()); err != nil {
			b.Fatal(err)
		}
	}
	var after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
