package dashboard

import (
	"bufio"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/stats"
)

// BenchmarkExportCore is the export's own work without HTTP: reading and
// decoding a month of one sensor's minutes from a real tier and formatting
// them as CSV into io.Discard (bytes per op: ~3 MB).
func BenchmarkExportCore(b *testing.B) {
	e := newReportsEnv(b)
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, loc)
	to := from.AddDate(0, 0, 30)
	rng := rand.New(rand.NewPCG(2, 2))
	if err := e.tier.AddMinutes(context.Background(), "lapa-bar-01", synthMinutes(from, to, rng)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var n countingWriter
	for range b.N {
		bw := bufio.NewWriterSize(&n, 64<<10)
		ex := &exporter{w: bw}
		ex.begin("x", "1min", from, to)
		if err := e.tier.EachMinuteRow(context.Background(), "lapa-bar-01", from, to, func(m *stats.MinuteRow) error { ex.minute(m); return nil }); err != nil {
			b.Fatal(err)
		}
		bw.Flush() //nolint:errcheck // countingWriter does not fail
	}
	b.SetBytes(int64(n) / int64(b.N))
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
