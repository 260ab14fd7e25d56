package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the demo's writer and the test's reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDemoFiresAlert runs `sossego demo` as make run does (on free ports):
// the banner names the URL and the accounts, a fiscal can log in, the Lapa
// bar's scripted scenario fires an Art. 96 alert within two minutes, and
// Ctrl-C (context cancel) stops everything cleanly.
func TestDemoFiresAlert(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole demo for up to two minutes")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"demo", "--data-dir", t.TempDir(), "--http", "127.0.0.1:0", "--mqtt-listen", "127.0.0.1:0"},
			stdio{in: strings.NewReader(""), out: &out, err: &errb})
	}()
	re := regexp.MustCompile(`painel:\s+(http://\S+)`)
	var base string
	for deadline := time.Now().Add(60 * time.Second); base == ""; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner after 60 s\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, want := range []string{"fiscal", "fiscal-demo-2026", "operador-demo-2026", "Ctrl-C"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, out.String())
		}
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/login", strings.NewReader(`{"user":"fiscal","password":"fiscal-demo-2026"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %v %v", err, resp)
	}
	resp.Body.Close()
	start := time.Now()
	var firing bool
	for !firing && time.Since(start) < 2*time.Minute {
		time.Sleep(2 * time.Second)
		resp, err := c.Get(base + "/api/v1/alerts?sensor=lapa-bar-01&state=firing")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Alerts []struct {
				Article string  `json:"article"`
				Limit   float64 `json:"limit_db"`
				CodeID  string  `json:"code_id"`
			} `json:"alerts"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range body.Alerts {
			if a.Article == "Art. 96" && a.CodeID == "lapa" && (a.Limit == 60 || a.Limit == 65) {
				firing = true
			}
		}
	}
	if !firing {
		t.Fatalf("no Art. 96 alert for lapa-bar-01 within 2 minutes\nstderr:\n%s", errb.String())
	}
	t.Logf("alert firing %s after the banner", time.Since(start).Round(time.Second))
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("demo exit %d\nstderr:\n%s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("demo did not stop within 30 s of Ctrl-C")
	}
	if !strings.Contains(out.String(), "demonstração encerrada") {
		t.Errorf("no closing line:\n%s", out.String())
	}
}
