package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
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
	"github.com/sossego/sossego/internal/wire"
)

// Raw MQTT 3.1.1, for a client that stops reading when the test says so.

func rawString(s string) []byte { return append([]byte{byte(len(s) >> 8), byte(len(s))}, s...) }

func rawPacket(header byte, body []byte) []byte {
	out := []byte{header}
	n := len(body)
	for {
		b := byte(n % 128)
		n /= 128
		if n > 0 {
			b |= 0x80
		}
		out = append(out, b)
		if n == 0 {
			break
		}
	}
	return append(out, body...)
}

// rawConnect is a clean-session CONNECT with a keep-alive of 0: the broker
// never times the connection out, so a client that stops reading stays
// stuck until it reads again.
func rawConnect(id, pass string) []byte {
	body := append(rawString("MQTT"), 4, 0xC2, 0, 0)
	body = append(body, rawString(id)...)
	body = append(body, rawString(id)...)
	return rawPacket(0x10, append(body, rawString(pass)...))
}

func rawSubscribe(topic string) []byte {
	body := append([]byte{0, 1}, rawString(topic)...)
	return rawPacket(0x82, append(body, 1))
}

func rawPublish0(topic string, payload []byte) []byte {
	return rawPacket(0x30, append(rawString(topic), payload...))
}

func rawPuback(id []byte) []byte { return rawPacket(0x40, id) }

// rawRead reads one packet's type, flags and body.
func rawRead(r *bufio.Reader) (byte, []byte, error) {
	h, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, mul := 0, 1
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		n += int(b&0x7f) * mul
		mul *= 128
		if b&0x80 == 0 {
			break
		}
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	return h, body, err
}

// rawAck reads packets until an application-level ack arrives on topic,
// PUBACKing each QoS 1 publish; other publishes on topic that are not an
// ack (the filler) are skipped.
func rawAck(conn net.Conn, r *bufio.Reader, topic string, d time.Duration) (uint64, error) {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	for {
		h, body, err := rawRead(r)
		if err != nil {
			return 0, err
		}
		if h>>4 != 3 || len(body) < 2 {
			continue
		}
		tl := int(body[0])<<8 | int(body[1])
		got, rest := string(body[2:2+tl]), body[2+tl:]
		if (h>>1)&3 > 0 {
			if _, err := conn.Write(rawPuback(rest[:2])); err != nil {
				return 0, err
			}
			rest = rest[2:]
		}
		var a wire.Ack
		if got == topic && json.Unmarshal(rest, &a) == nil {
			return a.Seq, nil
		}
	}
}

// TestInlineAckSlowGatewayIsolated: through the embedded broker, gw-a
// stops reading with its socket buffers full, then sends more batches
// (QoS 0: no PUBACK to write back). Its acks wait; gw-b's batches are
// stored and acked meanwhile. When gw-a reads again it gets its acks in
// order, ending with its newest.
func TestInlineAckSlowGatewayIsolated(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: embedded broker")
	}
	reg := testRegistry(t, "gw-a", "gw-b")
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	brk, err := broker.New(broker.Options{Listen: "127.0.0.1:0", ServiceUser: "svc", ServicePassword: "svc-pw",
		ShutdownGrace: 300 * time.Millisecond,
		Directory: broker.DirectoryFunc(func(id string) (broker.Gateway, bool) {
			g, ok := reg.Current().Gateway(id)
			return broker.Gateway{ID: g.ID, Municipality: g.Municipality, PasswordHash: hash}, ok
		})})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	in := New(Options{Store: st, Registry: reg, Workers: 2})
	inl, err := NewInline(in, brk)
	if err != nil {
		t.Fatal(err)
	}
	in.SetAcker(inl)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	runErr := make(chan error, 3)
	for _, run := range []func(context.Context) error{brk.Run, inl.Run, in.Run} {
		wg.Add(1)
		go func() { defer wg.Done(); runErr <- run(ctx) }()
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			wg.Wait()
		}
	}
	defer stop()

	keyA, keyB := loadgen.Key(seed, "gw-a"), loadgen.Key(seed, "gw-b")
	ackA, ackB := wire.AckTopic("lapa", "gw-a"), wire.AckTopic("lapa", "gw-b")
	batchA := func(seq uint64) []byte {
		return seal(t, mkBatch("gw-a", "gw-a-s1", seq, time.Now().Add(-time.Hour).Add(time.Duration(seq)*time.Minute), 60), keyA)
	}

	// gw-a: connected, subscribed, batch 1 acked while it still reads.
	a, err := net.Dial("tcp", brk.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ra := bufio.NewReader(a)
	if _, err := a.Write(append(rawConnect("gw-a", "pw"), rawSubscribe(ackA)...)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []byte{2, 9} { // CONNACK, SUBACK
		_ = a.SetReadDeadline(time.Now().Add(30 * time.Second))
		h, body, err := rawRead(ra)
		if err != nil || h>>4 != want || (want == 2 && body[1] != 0) {
			t.Fatalf("packet %x %x %v, want type %d", h, body, err, want)
		}
	}
	if _, err := a.Write(rawPublish0(wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), batchA(1))); err != nil {
		t.Fatal(err)
	}
	if seq, err := rawAck(a, ra, ackA, 60*time.Second); err != nil || seq != 1 {
		t.Fatalf("gw-a's first ack: %d %v, want 1", seq, err)
	}

	// gw-a stops reading: fill its socket buffers until the broker's writes
	// to it block (no publish to it completing for half a second).
	var filled atomic.Int64
	var stopFill atomic.Bool
	fillDone := make(chan struct{})
	go func() {
		defer close(fillDone)
		big := make([]byte, 64<<10)
		for !stopFill.Load() && filled.Load() < 1024 { // up to 64 MiB, far beyond any loopback socket buffers
			if brk.Publish(ackA, big) != nil {
				return
			}
			filled.Add(1)
		}
	}()
	defer func() { stopFill.Store(true); stop(); <-fillDone }()
	last, since := filled.Load(), time.Now()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n := filled.Load()
		if n >= 1024 {
			t.Fatal("64 MiB went into a client that does not read: the broker's writes never blocked")
		}
		if n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > 500*time.Millisecond && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker's writes to gw-a never blocked (%d publishes)", n)
		}
	}
	stopFill.Store(true) // the publish in progress completes once gw-a reads

	// gw-a's next batches are stored; their acks cannot be written to it.
	const lastA = 4
	for seq := uint64(2); seq <= lastA; seq++ {
		if _, err := a.Write(rawPublish0(wire.LevelsTopic("lapa", "gw-a", "gw-a-s1"), batchA(seq))); err != nil {
			t.Fatal(err)
		}
	}
	if !gatewaytest.WaitFor(60*time.Second, func() bool {
		seqs, _ := st.StoredSeqs(context.Background(), "gw-a")
		return seqs[lastA]
	}) {
		t.Fatalf("gw-a's batches up to %d not stored: the ingest waits on an ack to gw-a", lastA)
	}

	// gw-b publishes and is acked, batch after batch, while gw-a is stuck.
	acksB := make(chan uint64, 64)
	b := paho.NewClient(paho.NewClientOptions().AddBroker(brk.URL()).SetClientID("gw-b").SetUsername("gw-b").SetPassword("pw").
		SetCleanSession(true))
	if tok := b.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("connect gw-b: %v", tok.Error())
	}
	defer b.Disconnect(50)
	if tok := b.Subscribe(ackB, 1, func(_ paho.Client, m paho.Message) {
		var ack wire.Ack
		if json.Unmarshal(m.Payload(), &ack) == nil {
			acksB <- ack.Seq
		}
	}); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe gw-b: %v", tok.Error())
	}
	for seq := uint64(1); seq <= 5; seq++ {
		p := seal(t, mkBatch("gw-b", "gw-b-s1", seq, time.Now().Add(-time.Hour).Add(time.Duration(seq)*time.Minute), 60), keyB)
		if tok := b.Publish(wire.LevelsTopic("lapa", "gw-b", "gw-b-s1"), 1, false, p); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
			t.Fatalf("gw-b publish %d: %v", seq, tok.Error())
		}
		timeout := time.After(60 * time.Second)
		for got := uint64(0); got < seq; {
			select {
			case got = <-acksB:
			case <-timeout:
				t.Fatalf("gw-b's ack %d not received while gw-a is stuck (last %d)", seq, got)
			}
		}
	}

	// gw-a reads again: its acks arrive in order, the newest last.
	for prev := uint64(1); prev < lastA; {
		seq, err := rawAck(a, ra, ackA, 60*time.Second)
		if err != nil {
			buf := make([]byte, 1<<20)
			t.Logf("filled %d; stacks:\n%s", filled.Load(), buf[:runtime.Stack(buf, true)])
			t.Fatalf("gw-a reading again: %v (last ack %d, want %d)", err, prev, lastA)
		}
		if seq <= prev {
			t.Fatalf("gw-a got ack %d after %d", seq, prev)
		}
		prev = seq
	}

	stop()
	close(runErr)
	for err := range runErr {
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

// gatedAckBroker records the acks published on each topic; while held,
// a publish waits (like the embedded broker's publish to a gateway that
// does not read); fail makes every publish fail.
type gatedAckBroker struct {
	fakeBroker
	gate chan struct{} // closed: publishes go through
	fail error
	pmu  sync.Mutex
	seqs map[string][]uint64
}

func (b *gatedAckBroker) Publish(topic string, payload []byte) error {
	<-b.gate
	if b.fail != nil {
		return b.fail
	}
	var a wire.Ack
	if err := json.Unmarshal(payload, &a); err != nil {
		return err
	}
	b.pmu.Lock()
	defer b.pmu.Unlock()
	b.seqs[topic] = append(b.seqs[topic], a.Seq)
	return nil
}

func (b *gatedAckBroker) published(topic string) []uint64 {
	b.pmu.Lock()
	defer b.pmu.Unlock()
	return append([]uint64(nil), b.seqs[topic]...)
}

// lockedBuf is a log sink safe for concurrent writes.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInlineAckSender: Ack returns at once while the publishes wait; once
// they go through, each gateway gets its newest ack, in increasing order,
// without one publish per ack (newer acks replace an unsent older one, a
// late lower one is never sent); a failed publish is counted and logged;
// Run returns only after the senders end, and Ack is refused afterwards.
// (TestInlineAckSlowGatewayIsolated covers the isolation between gateways
// through the real broker.)
func TestInlineAckSender(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail error
	}{
		{"published", nil},
		{"failing", errors.New("broker closed")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs lockedBuf
			prom := prometheus.NewRegistry()
			in := New(Options{Store: gatedStore{gate: make(chan struct{})}, Registry: testRegistry(t, "gw-a", "gw-b"),
				Metrics: NewMetrics(prom), Log: slog.New(slog.NewTextHandler(&logs, nil))})
			fb := &gatedAckBroker{fakeBroker: fakeBroker{handlers: map[string]func(string, []byte){}}, gate: make(chan struct{}),
				fail: tc.fail, seqs: map[string][]uint64{}}
			link, err := NewInline(in, fb)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			runDone := make(chan error, 1)
			go func() { runDone <- link.Run(ctx) }()
			if !gatewaytest.WaitFor(30*time.Second, link.Connected) {
				t.Fatal("Run never started")
			}
			ackA, ackB := wire.AckTopic("lapa", "gw-a"), wire.AckTopic("lapa", "gw-b")
			const n = 100
			for seq := uint64(1); seq <= n; seq++ {
				if err := link.Ack("lapa", "gw-a", seq); err != nil {
					t.Fatalf("Ack gw-a %d: %v", seq, err)
				}
			}
			if err := link.Ack("lapa", "gw-a", 7); err != nil { // an older one, late
				t.Fatal(err)
			}
			if err := link.Ack("lapa", "gw-b", 3); err != nil {
				t.Fatal(err)
			}
			close(fb.gate)
			if tc.fail == nil {
				if !gatewaytest.WaitFor(30*time.Second, func() bool {
					a, b := fb.published(ackA), fb.published(ackB)
					return len(a) > 0 && a[len(a)-1] == n && len(b) > 0 && b[len(b)-1] == 3
				}) {
					t.Fatalf("acks published: gw-a %v, gw-b %v; want gw-a ending with %d, gw-b with 3", fb.published(ackA), fb.published(ackB), n)
				}
				a := fb.published(ackA)
				for i := 1; i < len(a); i++ {
					if a[i] <= a[i-1] {
						t.Fatalf("gw-a's acks out of order: %v", a)
					}
				}
				if len(a) >= n {
					t.Errorf("%d publishes for %d acks handed while the first waited: newer acks did not replace older ones", len(a), n)
				}
			} else if !gatewaytest.WaitFor(30*time.Second, func() bool {
				return labeledCounter(t, prom, "sossego_ingest_acks_failed_total") >= 2
			}) {
				t.Fatalf("failed acks counted: %v, want at least one per gateway", labeledCounter(t, prom, "sossego_ingest_acks_failed_total"))
			}
			cancel()
			select {
			case err := <-runDone:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return after ctx ended")
			}
			if tc.fail != nil && !strings.Contains(logs.String(), "broker closed") {
				t.Errorf("the failed publish is not logged:\n%s", logs.String())
			}
			if err := link.Ack("lapa", "gw-a", n+1); err == nil {
				t.Error("Ack after Run ended: want an error")
			}
		})
	}
}
