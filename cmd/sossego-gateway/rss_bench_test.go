package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/sim"
	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/gateway/mqttconn"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// BenchmarkReplayRSS measures the peak resident memory (VmHWM in
// /proc/<pid>/status) of the real sossego-gateway process while it drains a
// long outbox backlog into a real broker (Mosquitto) and an acking
// subscriber: the state in which the gateway used the most memory. It
// builds the binary the way `make cross` builds it for the Pi (CGO off,
// -trimpath -ldflags='-s -w'), or runs SOSSEGO_GATEWAY_BIN; fills the
// outbox with SOSSEGO_RSS_HOURS hours (default 12) of 1-s records of the
// simulated bar music in batches of 10, replays them at the default 50
// batches/s (SOSSEGO_RSS_RATE), and reports peak-RSS-MB (VmHWM), its
// file-backed part at the end (the binary's pages, file-RSS-MB) and the
// anonymous part (heap, stacks, SQLite's cache, anon-RSS-MB). One run:
//
//	go test -run '^$' -bench BenchmarkReplayRSS -benchtime 1x ./cmd/sossego-gateway/
func BenchmarkReplayRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	hours := envInt(b, "SOSSEGO_RSS_HOURS", 12)
	rate := envInt(b, "SOSSEGO_RSS_RATE", 50)
	bin := os.Getenv("SOSSEGO_GATEWAY_BIN")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "sossego-gateway")
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("build: %v\n%s", err, out)
		}
	}
	dir := b.TempDir()
	key, _, err := gateway.LoadOrCreateKey(dir)
	if err != nil {
		b.Fatal(err)
	}
	last := makeBacklog(b, filepath.Join(dir, "outbox.db"), key, hours)
	mosq := testenv.StartMosquitto(b, testenv.MosquittoOpts{})
	ack := startAcker(b, mosq.URL, "lapa", "gw-rss")
	cfg := filepath.Join(dir, "gw.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("municipality: lapa\ngateway: gw-rss\nstate_dir: %s\n"+
		"meter: {type: sim, sim_scenario: bar_music}\nreplay: {rate_per_second: %d}\n", dir, rate)), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		logf, err := os.Create(filepath.Join(dir, "gateway.log"))
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(bin, "--config", cfg, "--broker", mosq.URL)
		cmd.Stdout, cmd.Stderr = logf, logf
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var hwm, fileRSS, anonRSS int64
		deadline := start.Add(time.Duration(last)*time.Second/time.Duration(rate) + 5*time.Minute)
		for ack.watermark() < last {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				log, _ := os.ReadFile(logf.Name())
				b.Fatalf("replay stalled at %d of %d\n%s", ack.watermark(), last, log)
			}
			hwm = max(hwm, procKB(b, cmd.Process.Pid, "status", "VmHWM:"))
			time.Sleep(50 * time.Millisecond)
		}
		elapsed := time.Since(start)
		hwm = max(hwm, procKB(b, cmd.Process.Pid, "status", "VmHWM:"))
		fileRSS = procKB(b, cmd.Process.Pid, "smaps_rollup", "Rss:") - procKB(b, cmd.Process.Pid, "smaps_rollup", "Anonymous:")
		anonRSS = procKB(b, cmd.Process.Pid, "smaps_rollup", "Anonymous:")
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			log, _ := os.ReadFile(logf.Name())
			b.Fatalf("gateway exit: %v\n%s", err, log)
		}
		logf.Close()
		b.ReportMetric(float64(hwm)/1024, "peak-RSS-MB")
		b.ReportMetric(float64(fileRSS)/1024, "file-RSS-MB")
		b.ReportMetric(float64(anonRSS)/1024, "anon-RSS-MB")
		b.ReportMetric(float64(last)/elapsed.Seconds(), "batches/s")
		b.Logf("%d batches (%d h of records) replayed in %s; VmHWM %.1f MB", last, hours, elapsed.Round(time.Second), float64(hwm)/1024)
	}
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// procKB reads a "Name:   123 kB" line of /proc/<pid>/<file>.
func procKB(b *testing.B, pid int, file, name string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// makeBacklog fills a new outbox with hours of the simulated meter's
// records, aggregated and batched as the gateway does, and returns the last
// seq.
func makeBacklog(b *testing.B, path string, key ed25519.PrivateKey, hours int) uint64 {
	ctx := context.Background()
	box, err := gateway.OpenOutbox(path, 3*86400)
	if err != nil {
		b.Fatal(err)
	}
	defer box.Close()
	now := time.Now().Add(-time.Duration(hours+1) * time.Hour).Truncate(time.Second).Add(37 * time.Millisecond)
	m, err := sim.New(&sim.Opts{Scenario: sim.BarMusic, Now: func() time.Time { return now }, Start: now})
	if err != nil {
		b.Fatal(err)
	}
	agg := gateway.NewAggregator(100 * time.Millisecond)
	bat := &gateway.Batcher{MaxRecords: 10, MaxAge: 10 * time.Second}
	clk := wire.Clock{Synced: true, OffsetMs: 0.8, Source: "ntp"}
	topic := wire.LevelsTopic("lapa", "gw-rss", "m1")
	store := func(p gateway.Pending) {
		_, err := box.Store(ctx, now, gateway.Put{Topic: topic, Records: len(p.Records), Until: p.Until(),
			Seal: func(seq uint64) ([]byte, error) {
				bt := wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: "gw-rss", Sensor: "m1",
					Seq: seq, SentAt: now.UTC().Truncate(time.Millisecond), Device: p.Device, Clock: p.Clock, Records: p.Records}
				return wire.Seal(&bt, key)
			}})
		if err != nil {
			b.Fatal(err)
		}
	}
	for range hours * 36000 {
		now = now.Add(100 * time.Millisecond)
		s := sampleOf(b, m)
		outs, err := agg.Add(s, clk)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range outs {
			for _, p := range bat.Add(o, now) {
				store(p)
			}
		}
	}
	return box.LastSeq()
}

func sampleOf(b *testing.B, m *sim.Dev) (s bridge.Sample) {
	if err := m.Sense(&s); err != nil {
		b.Fatal(err)
	}
	return s
}

// acker is a minimal central service for the benchmark: it subscribes to
// the gateway's levels at QoS 1 and acks the highest contiguous seq, keeping
// only the seqs (the benchmark measures the gateway, not this).
type acker struct {
	c      mqtt.Client
	mu     sync.Mutex
	seen   map[uint64]bool
	wm     uint64
	topic  string
	gwName string
}

func startAcker(b *testing.B, broker, muni, gw string) *acker {
	a := &acker{seen: map[uint64]bool{}, topic: wire.AckTopic(muni, gw), gwName: gw}
	opts := mqtt.NewClientOptions().AddBroker(broker).SetClientID("rss-central").SetCleanSession(false).
		SetStore(mqttconn.NewStore()).SetAutoReconnect(true).SetOrderMatters(false).
		SetOnConnectHandler(func(c mqtt.Client) { c.Subscribe(wire.SubLevels, 1, a.onMessage) })
	a.c = mqtt.NewClient(opts)
	if tok := a.c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		b.Fatalf("acker connect: %v", tok.Error())
	}
	b.Cleanup(func() { a.c.Disconnect(100) })
	return a
}

func (a *acker) onMessage(_ mqtt.Client, m mqtt.Message) {
	_, bt, err := wire.Open(m.Payload())
	if err != nil {
		return
	}
	a.mu.Lock()
	a.seen[bt.Seq] = true
	for a.seen[a.wm+1] {
		delete(a.seen, a.wm)
		a.wm++
	}
	wm := a.wm
	a.mu.Unlock()
	p, _ := json.Marshal(wire.Ack{V: 1, Gateway: a.gwName, Seq: wm})
	a.c.Publish(a.topic, 1, false, p)
}

func (a *acker) watermark() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.wm
}
