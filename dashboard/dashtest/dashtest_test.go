package dashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// fatalRecorder is the test handed to Run: it keeps what Run fails with
// instead of ending the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, a ...any) { f.msg = fmt.Sprintf(format, a...) }

// TestRunFailsWithThePageAfterTheDeadline: steps still running when the
// browser's deadline passes fail saying so, and the failure still has its
// screenshot and the page's text.
func TestRunFailsWithThePageAfterTheDeadline(t *testing.T) {
	t.Setenv("SOSSEGO_SCREENSHOTS", t.TempDir())
	ctx := Browser(t, Desktop)
	Run(t, ctx, chromedp.Navigate(`data:text/html;charset=utf-8,<p>página de teste</p>`))
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	rec := &fatalRecorder{TB: t}
	Run(rec, short, WaitJS(`false`, "a condition that never holds"))
	if !strings.Contains(rec.msg, "the test's browser deadline passed during these steps") || !strings.Contains(rec.msg, "página de teste") {
		t.Errorf("failure message %q", rec.msg)
	}
	name := "failure-" + strings.ReplaceAll(t.Name(), "/", "-") + ".png"
	if st, err := os.Stat(filepath.Join(os.Getenv("SOSSEGO_SCREENSHOTS"), name)); err != nil || st.Size() == 0 {
		t.Errorf("failure screenshot: %v", err)
	}
}
