package workflow_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/workflow"
)

var set = noticetest.Codes()

// fakeAlerts is the alerts table.
type fakeAlerts map[string]alerts.Alert

func (f fakeAlerts) GetAlert(_ context.Context, id string) (alerts.Alert, error) {
	a, ok := f[id]
	if !ok {
		return a, fmt.Errorf("%w: %s", alerts.ErrNotFound, id)
	}
	return a, nil
}

// caseStores is the case store as every store of the service.
func caseStores(cs *casesdb.Store) workflow.CaseStores {
	return workflow.CaseStores{Documents: cs, Steps: cs, Constatacoes: cs, PDFs: cs, Triage: cs}
}

func unzip(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		out[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	return out
}
