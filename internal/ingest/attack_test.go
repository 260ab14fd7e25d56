package ingest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/sossego/sossego/gateway/gatewaytest"
	"github.com/sossego/sossego/internal/broker"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// heapSampler records the peak of the live heap objects while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(h.done)
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return h
}

func (h *heapSampler) finish() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

func heapNow() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// vmHWM is the process's peak resident set (/proc/self/status), 0 where
// there is no /proc.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func dbBytes(path string) int64 {
	var n int64
	for _, sfx := range []string{"", "-wal"} {
		if fi, err := os.Stat(path + sfx); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// TestFloodOfLargeMessagesBounded is the attack on the embedded broker:
// one gateway's MQTT credential (and key) publishes 1 MiB messages as fast
// as the broker takes them — undecodable ones, and validly signed batches
// padded to 1 MiB with white space. 3,000 of them took the central service
// to 7.3 GB and grew the database by 3.1 GB in 20 s. Now the gateway's
// byte quota refuses all but its burst, the ingest queue holds at most
// QueueBytes of payloads, and the padded batches are rejected for their
// size: the heap and the database grow by about the burst, and another
// gateway's batches are stored and acked meanwhile.
func TestFloodOfLargeMessagesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: embedded broker, 200 MiB over loopback")
	}
	reg := testRegistry(t, "gw-a", "gw-b")
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	brk, err := broker.New(broker.Options{Listen: "127.0.0.1:0", ServiceUser: "svc", ServicePassword: "svc-pw",
		Directory: broker.DirectoryFunc(func(id string) (broker.Gateway, bool) {
			g, ok := reg.Current().Gateway(id)
			return broker.Gateway{ID: g.ID, Municipality: g.Municipality, PasswordHash: hash}, ok
		})})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := sqlitestore.Open(path, sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const burst, queueBytes = 8 << 20, 16 << 20
	prom := prometheus.NewRegistry()
	in := New(Options{Store: st, Registry: reg, Workers: 2, Metrics: NewMetrics(prom), QueueBytes: queueBytes,
		Quota: Quota{BytesPerSecond: 64 << 10, ByteBurst: burst}})
	inl, err := NewInline(in, brk)
	if err != nil {
		t.Fatal(err)
	}
	in.SetAcker(inl)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{brk.Run, inl.Run, in.Run} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = run(ctx) }()
	}
	defer func() { cancel(); wg.Wait() }()

	client := func(id string) paho.Client {
		c := paho.NewClient(paho.NewClientOptions().AddBroker(brk.URL()).SetClientID(id).SetUsername(id).SetPassword("pw").
			SetAutoReconnect(true).SetCleanSession(true))
		if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("connect %s: %v", id, tok.Error())
		}
		t.Cleanup(func() { c.Disconnect(50) })
		return c
	}
	attacker, victim := client("gw-a"), client("gw-b")
	keyA, keyB := loadgen.Key(seed, "gw-a"), loadgen.Key(seed, "gw-b")
	topicA := wire.LevelsTopic("lapa", "gw-a", "gw-a-s1")
	garbage := bytes.Repeat([]byte("x"), wire.MaxPayload-1024)
	signed := seal(t, mkBatch("gw-a", "gw-a-s1", 1, time.Now().Add(-time.Hour), 60), keyA)
	padded := append(append(append([]byte(nil), signed[:len(signed)-1]...), bytes.Repeat([]byte(" "), wire.MaxPayload-1024-len(signed))...), '}')

	const n = 200
	before, dbBefore := heapNow(), dbBytes(path)
	hs := sampleHeap()
	floodStart := time.Now()
	for i := range n {
		p := garbage
		if i%2 == 1 {
			p = padded
		}
		attacker.Publish(topicA, 1, false, p).WaitTimeout(10 * time.Second)
		if i == n/2 { // the victim goes on meanwhile
			victim.Publish(wire.LevelsTopic("lapa", "gw-b", "gw-b-s1"), 1, false,
				seal(t, mkBatch("gw-b", "gw-b-s1", 1, time.Now().Add(-time.Hour), 60), keyB))
		}
	}
	if !gatewaytest.WaitFor(60*time.Second, func() bool {
		seqs, _ := st.StoredSeqs(context.Background(), "gw-b")
		return seqs[1] && in.QueueLen() == 0 && in.gate.inUse() == 0
	}) {
		t.Fatalf("gw-b's batch not stored, or the queue never drained (%d queued, %d bytes)", in.QueueLen(), in.gate.inUse())
	}
	peak := hs.finish()
	grown := dbBytes(path) - dbBefore
	refused := labeledCounter(t, prom, "sossego_ingest_quota_refused_total", "limit", "bytes")
	t.Logf("%d × 1 MiB: heap peak %+d MiB over %d MiB, database %+d MiB, %v refused over quota, process peak RSS %d MiB",
		n, (int64(peak)-int64(before))>>20, before>>20, grown>>20, refused, vmHWM()>>20)
	if refused < n/2 {
		t.Errorf("only %v of %d messages refused over a %d MiB burst", refused, n, burst>>20)
	}
	if limit := int64(queueBytes) * 5; int64(peak)-int64(before) > limit {
		t.Errorf("heap grew by %d MiB during the flood (QueueBytes %d MiB)", (int64(peak)-int64(before))>>20, queueBytes>>20)
	}
	if limit := int64(burst) * 3; grown > limit {
		t.Errorf("database grew by %d MiB (burst %d MiB)", grown>>20, burst>>20)
	}
	// One sample per QuotaSampleEvery: one if the flood took less (an idle
	// machine), one more per period a busy machine spent on it.
	maxSamples := 1 + int(time.Since(floodStart)/QuotaSampleEvery)
	dls := deadLetters(t, st, wire.ReasonQuota)
	if len(dls) < 1 || len(dls) > maxSamples {
		t.Errorf("quota samples: %d over %s (want 1 to %d: one per %s)", len(dls), time.Since(floodStart).Round(time.Second), maxSamples, QuotaSampleEvery)
	}
	for _, d := range dls {
		if len(d.Payload) > quotaSampleBytes {
			t.Errorf("a quota sample keeps %d bytes, want ≤ %d (cut)", len(d.Payload), quotaSampleBytes)
		}
	}
	sized := deadLetters(t, st, wire.ReasonSize)
	for _, d := range sized {
		if !d.Settled || d.Seq != 1 {
			t.Errorf("a padded signed batch: seq %d settled %v, want 1 and true", d.Seq, d.Settled)
		}
	}
}

// TestMosquittoRetainedCleared is the retained-message attack through the
// shipped Mosquitto configuration, which cannot refuse a retained message
// by topic: gw-a retains large messages under invented sensor ids and
// statuses under another municipality or of an oversized payload. The
// central service clears each as it receives it (its ACL lets it write the
// data topics for that): a fresh subscriber afterwards finds only gw-a's
// own small status retained.
func TestMosquittoRetainedCleared(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts Mosquitto")
	}
	sm := testenv.StartShippedMosquitto(t, map[string]string{"sossego-central": "svc-pw", "gw-a": "pa"})
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	prom := prometheus.NewRegistry()
	in := New(Options{Store: st, Registry: testRegistry(t, "gw-a"), Metrics: NewMetrics(prom)})
	sub := NewSubscriber(in, SubscriberOptions{URL: sm.URL, Username: "sossego-central", Password: "svc-pw"})
	in.SetAcker(sub)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{in.Run, sub.Run} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = run(ctx) }()
	}
	stop := func() { cancel(); wg.Wait() }
	defer stop()
	if !gatewaytest.WaitFor(20*time.Second, sub.Connected) {
		t.Fatal("subscriber did not connect")
	}
	gw := paho.NewClient(paho.NewClientOptions().AddBroker(sm.URL).SetClientID("gw-a").SetUsername("gw-a").SetPassword("pa").
		SetAutoReconnect(false))
	if tok := gw.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("gateway connect: %v", tok.Error())
	}
	defer gw.Disconnect(50)
	const n, size = 64, 256 << 10
	big := bytes.Repeat([]byte("x"), size)
	junk := 0
	pub := func(topic string, p []byte) {
		if tok := gw.Publish(topic, 1, true, p); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("publish %s: %v", topic, tok.Error())
		}
		junk++
	}
	for i := range n {
		pub(wire.LevelsTopic("lapa", "gw-a", "invented-"+strconv.Itoa(i)), big)
	}
	pub(wire.EnvTopic("lapa", "gw-a", "invented"), big)
	pub(wire.StatusTopic("other", "gw-a"), wire.OfflinePayload)
	pub(wire.StatusTopic("lapa", "gw-a"), bytes.Repeat([]byte(" "), wire.MaxStatusPayload+1))
	// Every clear comes back to the subscriber as an empty message once
	// Mosquitto has applied it.
	empty := func() float64 {
		return labeledCounter(t, prom, "sossego_ingest_messages_total", "kind", "any", "result", "empty")
	}
	if !gatewaytest.WaitFor(60*time.Second, func() bool { return empty() >= float64(junk) }) {
		t.Fatalf("%v of %d clears came back", empty(), junk)
	}
	pub(wire.StatusTopic("lapa", "gw-a"), wire.OfflinePayload) // the gateway's own small status stays
	stop()

	probe := paho.NewClient(paho.NewClientOptions().AddBroker(sm.URL).SetClientID("probe").SetUsername("sossego-central").
		SetPassword("svc-pw").SetCleanSession(true).SetAutoReconnect(false))
	if tok := probe.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("probe connect: %v", tok.Error())
	}
	defer probe.Disconnect(50)
	var mu sync.Mutex
	retained := map[string]int{}
	marker := wire.AckTopic("lapa", "gw-a")
	seenMarker := make(chan struct{}, 1)
	probe.Subscribe("sossego/v1/#", 1, func(_ paho.Client, m paho.Message) {
		if m.Topic() == marker {
			seenMarker <- struct{}{}
			return
		}
		if m.Retained() && len(m.Payload()) > 0 {
			mu.Lock()
			retained[m.Topic()] = len(m.Payload())
			mu.Unlock()
		}
	}).WaitTimeout(10 * time.Second)
	probe.Publish(marker, 1, false, []byte(`{"v":1,"gateway":"gw-a","seq":1}`))
	select {
	case <-seenMarker:
	case <-time.After(20 * time.Second):
		t.Fatal("the probe's marker never came back")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(retained) != 1 || retained[wire.StatusTopic("lapa", "gw-a")] != len(wire.OfflinePayload) {
		t.Errorf("retained after the flood: %v; want only gw-a's own small status", retained)
	}
}

// labeledCounter is the value of the counter called name in reg with the
// given label pairs (0 when it has not been counted yet).
func labeledCounter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
