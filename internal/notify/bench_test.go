package notify

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/internal/testenv"
)

// BenchmarkFiringToSMTPAccepted: from Notify (the monitor handing over a
// firing alert) to the SMTP server (mailpit, STARTTLS + AUTH PLAIN)
// accepting the message: the engine's step, the durable outbox write, the
// worker's connection, TLS, login and DATA. One alert at a time, each the
// first of its group (as a new alert in a quiet municipality is). Goal:
// p99 ≤ 2 s. Run: go test -run '^$' -bench FiringToSMTP -benchtime 200x ./internal/notify/
func BenchmarkFiringToSMTPAccepted(b *testing.B) {
	mp := testenv.StartMailpit(b, testenv.MailpitOpts{STARTTLS: true, Users: map[string]string{"sossego": "senha-smtp-123"}})
	svc, err := Open(context.Background(), Options{Path: filepath.Join(b.TempDir(), FileName),
		Users: func(context.Context) ([]notify.UserRef, error) { return testUsers, nil }, Sensors: details})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	lat := make(chan time.Duration, 1)
	svc.sent = func(_ string, d time.Duration) { lat <- d }
	all := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	set := baseSettings()
	set.Municipalities = nil
	for i := range b.N {
		set.Municipalities = append(set.Municipalities, notify.Municipality{ID: fmt.Sprintf("m%05d", i),
			Weekly: []notify.Shift{{Days: all, From: "00:00", To: "24:00", User: "fiscal-b"}}})
	}
	set.Email = emailTo(mp, "starttls", "sossego", "senha-smtp-123")
	if _, err := svc.PutSettings(context.Background(), set, "bench"); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var ds []time.Duration
	b.ResetTimer()
	for i := range b.N {
		ev := firing("s", time.Now())
		ev.Alert.Municipality = fmt.Sprintf("m%05d", i)
		ev.Alert.ID = fmt.Sprintf("s/%d", i)
		svc.Notify(context.Background(), ev)
		select {
		case d := <-lat:
			ds = append(ds, d)
		case <-time.After(30 * time.Second):
			b.Fatalf("alert %d: no delivery in 30 s", i)
		}
	}
	b.StopTimer()
	slices.Sort(ds)
	q := func(p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(ds[len(ds)-1].Microseconds())/1000, "max-ms")
	if n := mp.Count(b); n != b.N {
		b.Fatalf("mailpit holds %d messages, want %d", n, b.N)
	}
}

// BenchmarkNotifyEnqueue: what the alerts monitor pays per transition
// handed to the notifications, while the engine and the outbox work on
// the previous ones (a storm of firing alerts in many municipalities).
// The monitor calls it on its own goroutine, after the alert is stored;
// ingest never waits on it. Reports the worst single call too.
func BenchmarkNotifyEnqueue(b *testing.B) {
	dir := b.TempDir()
	svc, err := Open(context.Background(), Options{Path: filepath.Join(dir, FileName),
		Users: func(context.Context) ([]notify.UserRef, error) { return testUsers, nil }, Sensors: details})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	set := baseSettings()
	set.Email = notify.EmailSettings{Enabled: true, Transport: "dir", Dir: filepath.Join(dir, "mail"), From: "sossego@lapa.pr.gov.br"}
	if _, err := svc.PutSettings(context.Background(), set, "bench"); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	defer func() { cancel(); <-done }()
	evs := make([]alerts.Event, b.N)
	base := time.Now()
	for i := range evs {
		evs[i] = firing(fmt.Sprintf("s%04d", i%1000), base.Add(time.Duration(i)*time.Millisecond))
	}
	ds := make([]time.Duration, len(evs))
	b.ResetTimer()
	for i := range evs {
		t := time.Now()
		svc.Notify(context.Background(), evs[i])
		ds[i] = time.Since(t)
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(ds[min(len(ds)-1, len(ds)*99/100)].Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(ds[len(ds)-1].Nanoseconds()), "max-ns")
}
