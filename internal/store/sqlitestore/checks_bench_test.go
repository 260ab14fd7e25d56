package sqlitestore

import (
	"testing"

	"github.com/sossego/sossego/internal/wire"
)

// BenchmarkChecksIndex builds the field checks' index (schema step 6,
// checksIndex) over a readings store of gateway-shaped batches: what the
// first start after an upgrade to that step does once, before ingest
// runs. The index is partial, but building it reads every batch, bodies
// included. It reports the time per stored batch and for 777,600 batches
// (90 days of one sensor at one batch every 10 s).
func BenchmarkChecksIndex(b *testing.B) {
	const n = 100_000
	s, _ := openTest(b)
	ctx := b.Context()
	// Bodies of 2,720 bytes, a 10-record levels batch's size; one batch
	// in 8,640 (a day's) a field check.
	if _, err := s.w.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO batches (gateway, seq, kind, municipality, sensor, topic, body, sig, verified, received_at, records)
		SELECT 'gw', i, CASE WHEN i % 8640 = 0 THEN ? ELSE ? END, 'lapa', 'gw-s', 'sossego/v1/lapa/gw/levels',
			randomblob(2720), randomblob(64), 1, 1772000000000 + i * 10000, 10 FROM n`, n, wire.KindCheck, wire.KindLevels); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		if _, err := s.w.ExecContext(ctx, `DROP INDEX IF EXISTS batches_checks`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := s.w.ExecContext(ctx, checksIndex); err != nil {
			b.Fatal(err)
		}
	}
	perBatch := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / n
	b.ReportMetric(perBatch, "ns/batch")
	b.ReportMetric(perBatch*777_600/1e9, "s/90-days-of-a-sensor")
}
