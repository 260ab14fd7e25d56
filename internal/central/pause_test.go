package central

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/testenv"
)

// TestPausedService is the "slow/paused consumer" goal: the
// central service, a real process subscribed to a Mosquitto running the
// shipped docs/mosquitto/mosquitto.conf, is frozen with SIGSTOP while 4
// gateways keep publishing 1,000 msg/s, then resumed with SIGCONT. The
// gateways' resends are switched off, so every batch that reaches the store
// was held by Mosquitto for the service's persistent session
// (max_queued_messages 0): a broker that dropped queued messages (Mosquitto's
// default of 1,000 drops most of a 60-s backlog) fails the test. The
// default pause, 50 s, outlasts 1.5 × the service's 30-s keep-alive, so
// Mosquitto also drops the frozen connection and the service must reconnect
// and take its session's backlog. SOSSEGO_PAUSE=60s gives the goal's 60 s.
func TestPausedService(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	pause := 50 * time.Second
	if v := os.Getenv("SOSSEGO_PAUSE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SOSSEGO_PAUSE=%q: %v", v, err)
		}
		pause = d
	}
	const gateways, rate = 4, 250 // batches/s per gateway: 1,000 msg/s in all
	batches := rate * int(5*time.Second+pause+10*time.Second) / int(time.Second)

	users := map[string]string{ServiceUser: "svc-pass"}
	for i := 1; i <= gateways; i++ {
		users[loadgen.GatewayID(i)] = loadgen.Password(procSeed, loadgen.GatewayID(i))
	}
	m := testenv.StartShippedMosquitto(t, users)
	bin := buildSossego(t)
	dir := t.TempDir()
	regPath, r := writeSeededRegistry(t, dir, gateways, procSeed)
	cmd := exec.Command(bin, "central", "--data-dir", dir, "--registry", regPath, "--http", "",
		"--mqtt-url", m.URL, "--log", "warn")
	cmd.Env = append(os.Environ(), "SOSSEGO_MQTT_PASSWORD=svc-pass")
	logf, err := os.Create(filepath.Join(dir, "central.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	var published atomic.Int64
	var mu sync.Mutex
	acked := map[string]uint64{}
	ackedTotal := func() int64 {
		mu.Lock()
		defer mu.Unlock()
		var n int64
		for _, v := range acked {
			n += int64(v)
		}
		return n
	}
	done := make(chan loadgen.Stats, 1)
	go func() {
		st, err := loadgen.Run(context.Background(), loadgen.Options{URL: m.URL, Gateways: loadgen.FromRegistry(r, procSeed),
			Batches: batches, Rate: rate, Spread: true, Window: batches, ResendAfter: time.Hour,
			WaitAcks: pause + 2*time.Minute, Prepare: true,
			OnPublish: func(string, uint64, time.Time) { published.Add(1) },
			OnAck: func(gw string, seq uint64) {
				mu.Lock()
				acked[gw] = max(acked[gw], seq)
				mu.Unlock()
			}})
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	waitFor := func(what string, limit time.Duration, ok func() bool) time.Duration {
		t.Helper()
		began := time.Now()
		for !ok() {
			if time.Since(began) > limit {
				t.Fatalf("%s: not after %v (published %d, acked %d)", what, limit, published.Load(), ackedTotal())
			}
			time.Sleep(10 * time.Millisecond)
		}
		return time.Since(began)
	}
	// The load generator signs every batch before its clock starts
	// (Prepare): tens of thousands of signatures, which under the race
	// detector on a busy machine take minutes. Time is measured from the
	// first publish, not from the start of the preparation.
	waitFor("first publish (the load generator still signing its batches)", 15*time.Minute, func() bool { return published.Load() > 0 })
	// The service is ingesting: the first two seconds are acknowledged.
	waitFor("first acks", time.Minute, func() bool { return ackedTotal() >= 2*gateways*rate })

	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	atStop := published.Load()
	time.Sleep(pause)
	atCont, ackedAtCont := published.Load(), ackedTotal()
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// A broker that dropped part of the backlog stalls the contiguous ack at
	// the first missing seq (the gateways do not resend here).
	drain := waitFor("backlog drained (a stalled ack means a batch never reached the service)", 2*time.Minute,
		func() bool { return ackedTotal() >= atCont })
	t.Logf("paused %v: %d batches published meanwhile; the backlog of %d unacknowledged batches was stored and acknowledged %.1f s after SIGCONT",
		pause, atCont-atStop, atCont-ackedAtCont, drain.Seconds())

	st := <-done
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	t.Logf("published %d, republished %d, acked %d", st.Published, st.Republished, st.Acked)
	if st.Republished != 0 {
		t.Errorf("the gateways republished %d batches; resends are off, so nothing should have needed one", st.Republished)
	}
	s, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for gw, a := range st.AckedSeq {
		if a != uint64(batches) {
			t.Errorf("%s: final ack %d, want %d", gw, a, batches)
		}
		seqs, err := s.StoredSeqs(ctx, gw)
		if err != nil {
			t.Fatal(err)
		}
		if len(seqs) != batches {
			t.Errorf("%s: %d batches stored, want %d", gw, len(seqs), batches)
		}
		if n, _ := s.CountLevels(ctx, gw+"-s1"); n != int64(batches) {
			t.Errorf("%s: %d records stored, want %d", gw, n, batches)
		}
	}
	logText, err := os.ReadFile(filepath.Join(m.Dir, "mosquitto.log"))
	if err != nil {
		t.Fatal(err)
	}
	if dropped := grepLines(string(logText), "messages are being dropped"); dropped != "" {
		t.Errorf("Mosquitto dropped messages:\n%s", dropped)
	}
	if lost := grepLines(string(logText), "exceeded timeout"); lost != "" {
		t.Logf("Mosquitto:\n%s", lost)
	}
}

// grepLines returns the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
