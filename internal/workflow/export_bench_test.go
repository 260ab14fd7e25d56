package workflow_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/workflow"
)

// BenchmarkExportDataDir exports the 24-hour bag of the data directory
// TestMakeEvidenceBenchDir (cmd/sossego) builds, through the service path
// the CLI uses (records streamed from SQLite, batches by seq range):
// SOSSEGO_EVIDENCE_BENCH_DIR=/tmp/ev24 go test -run '^$' -bench ExportDataDir ./internal/workflow/
func BenchmarkExportDataDir(b *testing.B) {
	dir := os.Getenv("SOSSEGO_EVIDENCE_BENCH_DIR")
	if dir == "" {
		b.Skip("set SOSSEGO_EVIDENCE_BENCH_DIR to a data directory made by TestMakeEvidenceBenchDir")
	}
	ctx := context.Background()
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	rb, err := os.ReadFile(filepath.Join(dir, "registry.yaml"))
	must(err)
	reg, err := registry.Parse(rb)
	must(err)
	set, err := codes.LoadDir("")
	must(err)
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
	must(err)
	defer st.Close()
	al, err := alertstore.Open(ctx, filepath.Join(dir, "cases.db"))
	must(err)
	defer al.Close()
	cs, err := casesdb.Open(ctx, filepath.Join(dir, "cases.db"))
	must(err)
	defer cs.Close()
	kr, err := evidence.LoadOrCreateKeyRing(dir, time.Now())
	must(err)
	svc := workflow.New(workflow.Config{Cases: caseStores(cs), Alerts: al, Registry: reg, Readings: st, Batches: st, Codes: set, Key: kr.Signer,
		Margin: 11*time.Hour + 58*time.Minute, Evidence: workflow.EvidenceSources{Keys: kr, Env: st}})
	for b.Loop() {
		if _, err := svc.Export(ctx, "lapa-bar-01/2026-03-07T02:10:00.000Z", io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
}
