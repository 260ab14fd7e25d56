// Package dashtest drives the dashboard in a real browser for end-to-end
// tests: it starts Debian's chromium headless through chromedp with a fresh
// profile, logs in through the UI, stubs the alarm sound and the browser
// notification in the page (counting them instead), waits for text, and
// saves screenshots.
//
// It is used by dashboard's own UI test and meant for the full-system test
// (central service + simulated gateways + workflow):
//
//	ctx := dashtest.Browser(t, dashtest.Phone)          // or dashtest.Desktop
//	dashtest.Run(t, ctx, dashtest.Login(srv.URL, "fiscal", "senha"))
//	dashtest.Run(t, ctx, dashtest.WaitText(`[data-sensor="lapa-bar-01"]`, "dB(A)"))
//	dashtest.Screenshot(t, ctx, "overview-phone")
//
// Screenshots go to $SOSSEGO_SCREENSHOTS (relative to the repository root),
// or $TMPDIR/sossego-screenshots.
package dashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/sossego/sossego/internal/testenv"
)

// Viewport is a browser window size.
type Viewport struct {
	Width, Height int
	Mobile        bool
}

// Desktop and Phone are the two sizes the UI must work at.
var (
	Desktop = Viewport{Width: 1280, Height: 900}
	Phone   = Viewport{Width: 360, Height: 740, Mobile: true}
)

// Timeout bounds a browser test when the test binary has no deadline of
// its own (go test -timeout 0). Otherwise a test's browser lasts until two
// minutes before that deadline: a hung page still fails, with its
// screenshot, before go test's own timeout ends the binary, and a long
// end-to-end flow on a busy machine is not cut by a guess of how long it
// takes (its waits are bounded one by one, StepTimeout).
var Timeout = 5 * time.Minute

// browserDeadline is when a test's browser context ends.
func browserDeadline(t testing.TB) time.Time {
	now := time.Now()
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok {
			if end := dl.Add(-2 * time.Minute); end.After(now.Add(time.Minute)) {
				return end
			}
			return now.Add(time.Minute)
		}
	}
	return now.Add(Timeout)
}

// StartTimeout bounds chromium's start, until it prints its DevTools
// address. chromedp's default (20 s) was exceeded on a 2-core machine with
// two CPU hogs and other test binaries running: a start that slow is the
// machine, not the page under test.
var StartTimeout = 2 * time.Minute

// StepTimeout bounds one WaitText/WaitJS.
var StepTimeout = 30 * time.Second

// Browser starts chromium with a fresh user-data-dir at viewport v and
// returns a chromedp context; everything stops when the test ends.
func Browser(t testing.TB, v Viewport) context.Context {
	t.Helper()
	bin := testenv.Chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.WindowSize(v.Width, v.Height),
		chromedp.WSURLReadTimeout(StartTimeout),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithDeadline(ctx, browserDeadline(t))
	t.Cleanup(func() {
		cancelT()
		cancelB()
		cancelA()
	})
	emu := chromedp.EmulateViewport(int64(v.Width), int64(v.Height))
	if v.Mobile {
		emu = chromedp.EmulateViewport(int64(v.Width), int64(v.Height), chromedp.EmulateMobile, chromedp.EmulateScale(2))
	}
	if err := chromedp.Do(ctx, emu); err != nil {
		t.Fatalf("dashtest: start chromium %s: %v", bin, err)
	}
	return ctx
}

// Run runs actions and fails the test with a screenshot on error.
func Run(t testing.TB, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: the test's browser deadline passed during these steps", err)
		}
		// The page is looked at even when ctx itself has ended: the
		// browser lives until the test's cleanup.
		look, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		name := "failure-" + strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
		Screenshot(t, look, name)
		text, _ := chromedp.Run(look, chromedp.Evaluate[string](`document.body.innerText.slice(0, 2000)`))
		t.Fatalf("dashtest: %v (screenshot %s.png)\npage text:\n%s", err, name, text)
	}
}

// Login opens base and logs in through the form; it stubs the alarms first.
func Login(base, user, password string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#login-user`)),
		StubAlarms(),
		chromedp.SendKeys(chromedp.CSS(`#login-user`), user),
		chromedp.SendKeys(chromedp.CSS(`#login-password`), password),
		chromedp.Click(chromedp.CSS(`#login-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#nav`)),
		WaitText(`#live-text`, "ao vivo"),
	)
}

// StubAlarms replaces the browser's audio and notification APIs with fakes
// that count what the page does with them: window.__beeps (alarm sounds
// started) and window.__notifications (titles). Notifications are granted.
// The page makes its audio context at login, so stub before logging in.
func StubAlarms() chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => {
		window.__beeps = 0; window.__notifications = [];
		const param = () => ({ value: 0, setValueAtTime() {}, exponentialRampToValueAtTime() {} });
		class FakeAudioContext {
			constructor() { this.currentTime = 0; this.destination = {}; }
			createOscillator() { return { type: "", frequency: param(), connect: (n) => n, start() { window.__beeps++; }, stop() {} }; }
			createGain() { return { gain: param(), connect: (n) => n }; }
		}
		window.AudioContext = FakeAudioContext; window.webkitAudioContext = FakeAudioContext;
		class FakeNotification {
			constructor(title) { window.__notifications.push(title); }
			static requestPermission() { return Promise.resolve("granted"); }
		}
		FakeNotification.permission = "granted";
		window.Notification = FakeNotification;
	})()`)
}

// WaitText polls until the first element matching the CSS selector contains
// substr. The test's deadline bounds it.
func WaitText(sel, substr string) chromedp.Action[chromedp.Void] {
	return WaitJS(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, substr),
		fmt.Sprintf("%s to contain %q", sel, substr))
}

// WaitJS polls until the JavaScript expression is true, for at most
// StepTimeout.
func WaitJS(expr, what string) chromedp.Action[chromedp.Void] {
	return WaitJSWithin(StepTimeout, expr, what)
}

// WaitJSWithin polls until the JavaScript expression is true, for at most
// d (for events that take long by design, such as an alert's minimum
// duration).
func WaitJSWithin(d time.Duration, expr, what string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		check := chromedp.Evaluate[bool](expr)
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		for {
			ok, err := check(ctx, tg)
			if err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
			if ok {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// ScreenshotDir is where Screenshot writes: $SOSSEGO_SCREENSHOTS (a
// relative path is relative to the repository root, as for the full-system
// test), or a temporary directory.
func ScreenshotDir(t testing.TB) string {
	if d := os.Getenv("SOSSEGO_SCREENSHOTS"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(testenv.RepoRoot(t), d)
		}
		return d
	}
	// Outside the repository, so that a test run never dirties the tree;
	// kept after the test for a person to look at (the path is logged).
	d := filepath.Join(os.TempDir(), "sossego-screenshots")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatalf("dashtest: %v", err)
	}
	return d
}

// Screenshot saves a full-page PNG named name.png in ScreenshotDir and
// returns its path.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	return ScreenshotTo(t, ctx, ScreenshotDir(t), name, true)
}

// ScreenshotTo saves a PNG named name.png in dir: the full page, or only
// the viewport (smaller files for long pages).
func ScreenshotTo(t testing.TB, ctx context.Context, dir, name string, fullPage bool) string {
	t.Helper()
	shot := chromedp.CaptureScreenshot()
	if fullPage {
		shot = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Logf("dashtest: screenshot %s: %v", name, err)
		return ""
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("dashtest: %v", err)
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatalf("dashtest: %v", err)
	}
	return p
}

// Download is a file the page downloaded.
type Download struct {
	Path string // where it was saved
	Name string // the file name the server suggested
	URL  string
}

// Downloads receives the files the page downloads (see AllowDownloads).
type Downloads struct {
	dir   string
	mu    sync.Mutex
	names map[string]Download // by GUID, from downloadWillBegin
	done  chan string         // GUIDs of completed downloads
}

// AllowDownloads lets the page of ctx download files into a fresh
// directory; Next waits for each completed download.
func AllowDownloads(t testing.TB, ctx context.Context) *Downloads {
	t.Helper()
	d := &Downloads{dir: t.TempDir(), names: map[string]Download{}, done: make(chan string, 64)}
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *browser.EventDownloadWillBegin:
			d.mu.Lock()
			d.names[e.GUID] = Download{Path: filepath.Join(d.dir, e.GUID), Name: e.SuggestedFilename, URL: e.URL}
			d.mu.Unlock()
		case *browser.EventDownloadProgress:
			if e.State == browser.DownloadProgressStateCompleted {
				select {
				case d.done <- e.GUID:
				default:
				}
			}
		}
	})
	if err != nil {
		t.Fatalf("dashtest: listen for downloads: %v", err)
	}
	err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: d.dir, EventsEnabled: ptr(true)})
		return err
	}))
	if err != nil {
		t.Fatalf("dashtest: allow downloads: %v", err)
	}
	return d
}

// Next waits (StepTimeout) for the next completed download.
func (d *Downloads) Next(t testing.TB) Download {
	t.Helper()
	select {
	case guid := <-d.done:
		d.mu.Lock()
		dl, ok := d.names[guid]
		d.mu.Unlock()
		if !ok {
			dl = Download{Path: filepath.Join(d.dir, guid)}
		}
		return dl
	case <-time.After(StepTimeout):
		t.Fatalf("dashtest: no download completed within %v", StepTimeout)
	}
	return Download{}
}

func ptr[T any](v T) *T { return &v }

// Click waits for the first element matching the CSS selector and clicks it
// in the page, in one step: live views re-render elements (a sensor card on
// each update), and a node looked up first and clicked after may be gone by
// then ("Could not find node with given id").
func Click(sel string) chromedp.Action[chromedp.Void] {
	return WaitJS(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true; })()`, sel),
		"a click on "+sel)
}
