package dashboard

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/reports"
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
	eng := reports.New(e.tier, nil, nil)
	for range b.N {
		if err := eng.Export(context.Background(), &n, "lapa-bar-01", "1min", false, from, to); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(n) / int64(b.N))
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
