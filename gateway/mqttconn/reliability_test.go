package mqttconn_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/gateway/gatewaytest"
	"github.com/sossego/sossego/gateway/mqttconn"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// A broker the tests can take down and bring back.
type broker interface {
	url() string
	down() // outage (graceful for Mosquitto)
	up(t *testing.T)
	crash() // SIGKILL for Mosquitto; Close for the in-process mochi
}

type mosq struct{ m *testenv.Mosquitto }

func (b mosq) url() string     { return b.m.URL }
func (b mosq) down()           { b.m.Stop() }
func (b mosq) up(t *testing.T) { b.m.Restart(t) }
func (b mosq) crash()          { b.m.Kill() }

type mochiBroker struct{ m *gatewaytest.Mochi }

func (b mochiBroker) url() string { return b.m.URL }
func (b mochiBroker) down()       { b.m.Stop() }
func (b mochiBroker) up(t *testing.T) {
	if err := b.m.Start(); err != nil {
		t.Fatal(err)
	}
}
func (b mochiBroker) crash() { b.m.Stop() }

func brokers(t *testing.T) map[string]func(t *testing.T) broker {
	return map[string]func(t *testing.T) broker{
		"mosquitto": func(t *testing.T) broker {
			return mosq{testenv.StartMosquitto(t, testenv.MosquittoOpts{Extra: []string{"autosave_interval 1800"}})}
		},
		"mochi": func(t *testing.T) broker { return mochiBroker{gatewaytest.StartMochi(t)} },
	}
}

const (
	muni = "lapa"
	sens = "m1"
)

// gw is a gateway running in this process.
type gw struct {
	id     string
	g      *gateway.Gateway
	box    *gateway.Outbox
	meter  *gatewaytest.Meter
	key    ed25519.PrivateKey
	cancel context.CancelFunc
	done   chan error
}

type gwOpts struct {
	capacity   int
	policy     gateway.FullPolicy
	period     time.Duration
	silent     bool    // a meter that never answers: the gateway only delivers its outbox
	replayRate float64 // messages per second; default 500
}

type deadMeter struct{}

func (deadMeter) Sense(*bridge.Sample) error { return errors.New("no meter") }
func (deadMeter) Halt() error                { return nil }
func (deadMeter) String() string             { return "dead" }

func startGateway(t *testing.T, brokerURL, id, dir string, o gwOpts) *gw {
	t.Helper()
	if o.capacity == 0 {
		o.capacity = 1_000_000
	}
	if o.period == 0 {
		o.period = 10 * time.Millisecond // 100 one-second records per second of test
	}
	key, _, err := gateway.LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	box, err := gateway.OpenOutbox(filepath.Join(dir, "outbox.db"), o.capacity)
	if err != nil {
		t.Fatal(err)
	}
	meter := &gatewaytest.Meter{Start: time.Now().Add(-24 * time.Hour).Truncate(time.Second)}
	h := &gw{id: id, box: box, meter: meter, key: key, done: make(chan error, 1)}
	opts := testOptions(id, o)
	pubs := &lazyPub{}
	var m bridge.Meter = meter
	if o.silent {
		m = deadMeter{}
	}
	h.g, err = gateway.New(opts, m, gateway.FixedSync(wire.Clock{Synced: true, OffsetMs: 1, Source: "ntp"}),
		box, key, pubs, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := mqttconn.New(transportOptions(brokerURL, id, h.g), h.g, nil)
	if err != nil {
		t.Fatal(err)
	}
	pubs.p = cl
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		errc := make(chan error, 1)
		go func() { errc <- cl.Run(ctx) }()
		err := h.g.Run(ctx)
		<-errc
		h.done <- err
	}()
	t.Cleanup(h.stop)
	return h
}

func testOptions(id string, o gwOpts) gateway.Options {
	if o.replayRate <= 0 {
		o.replayRate = 500
	}
	return gateway.Options{
		Municipality: muni, Gateway: id, Sensor: sens, SamplePeriod: o.period,
		BatchRecords: 10, BatchMaxAge: 10 * time.Second, FullPolicy: o.policy,
		ReplayRate: o.replayRate, Window: 200, AckTimeout: 2 * time.Second, StatusInterval: 500 * time.Millisecond,
		PublishTimeout: 2 * time.Second, Version: "test",
	}
}

func transportOptions(url, id string, g *gateway.Gateway) mqttconn.Options {
	return mqttconn.Options{Broker: url, ClientID: id, StatusTopic: g.StatusTopic(), AckTopic: g.AckTopic(),
		KeepAlive: 2 * time.Second, ConnectTimeout: 2 * time.Second, ConnectRetryInterval: 200 * time.Millisecond,
		MaxReconnectInterval: 500 * time.Millisecond}
}

// lazyPub breaks the construction cycle gateway ↔ transport.
type lazyPub struct{ p gateway.Publisher }

func (l *lazyPub) Publish(ctx context.Context, topic string, payload []byte, retained bool) error {
	return l.p.Publish(ctx, topic, payload, retained)
}

// PublishAsync keeps the transport's pipelining (gateway.AsyncPublisher).
func (l *lazyPub) PublishAsync(topic string, payload []byte, retained bool) func(context.Context) error {
	return l.p.(gateway.AsyncPublisher).PublishAsync(topic, payload, retained)
}

func (h *gw) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	if err := <-h.done; err != nil {
		panic(fmt.Sprintf("gateway %s: %v", h.id, err))
	}
	h.box.Close()
}

// checkStore asserts the invariant at the subscriber's store: seqs 1..n all
// present exactly once, records in time order across seqs, each record once,
// nothing rejected; it returns the number of records.
//
// contiguous (optional) relaxes the check for a gateway that was killed
// while batches were in flight: seqs 1..contiguous must be complete, batches
// above may have gaps (they would be resent by a live gateway).
func checkStore(t *testing.T, c *gatewaytest.Central, id string, n uint64, contiguous ...uint64) int {
	t.Helper()
	if r := c.Rejected(); len(r) > 0 {
		t.Errorf("central rejected %d messages, first: %s", len(r), r[0])
	}
	bs := c.Batches(id)
	if uint64(len(bs)) != n {
		t.Fatalf("store holds %d batches, want %d", len(bs), n)
	}
	if len(contiguous) == 1 {
		bs = bs[:contiguous[0]]
	}
	var last time.Time
	records := 0
	for i, b := range bs {
		if b.Seq != uint64(i+1) {
			t.Fatalf("store position %d holds seq %d: gap", i, b.Seq)
		}
		for _, r := range b.Records {
			if !r.T.After(last) {
				t.Fatalf("seq %d: record %s not after %s (duplicate or out of order)", b.Seq, r.T, last)
			}
			last = r.T
			records++
		}
	}
	return records
}

// drainAndCheck stops the gateway (which flushes its open record and batch
// into the outbox), lets a fresh gateway process on the same state folder
// deliver the rest, and checks that the subscriber's store holds exactly the
// records the meter produced: every one once, in order, none lost.
func drainAndCheck(t *testing.T, c *gatewaytest.Central, h *gw, b broker, dir string) {
	t.Helper()
	h.stop()
	samples := h.meter.Count()
	h2 := startGateway(t, b.url(), h.id, dir, gwOpts{silent: true})
	ok := gatewaytest.WaitFor(90*time.Second, func() bool {
		return c.Contiguous(h.id) == h2.box.LastSeq() && h2.box.Stats().Pending == 0
	})
	last := h2.box.LastSeq()
	if !ok {
		t.Fatalf("not drained: central contiguous %d, gateway last seq %d, outbox %+v",
			c.Contiguous(h.id), last, h2.box.Stats())
	}
	recs := checkStore(t, c, h.id, last)
	t.Logf("%s: %d batches, %d records stored once in order (meter produced %d samples), %d redeliveries ignored",
		h.id, last, recs, samples, c.Duplicates())
	if int64(recs) != samples {
		t.Errorf("stored %d records for %d one-second samples", recs, samples)
	}
}

func TestBrokerOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts brokers")
	}
	// The broker stays down until the gateway has queued minQueued batches
	// (15 minutes of records: the meter gives 100 one-second records per
	// second of test, 10 to a batch) and, with SOSSEGO_OUTAGE, at least
	// that long in wall time.
	const minQueued = 90
	var outage time.Duration
	if v := os.Getenv("SOSSEGO_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		outage = d
	}
	for name, start := range brokers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := start(t)
			id := "gw-outage-" + name
			dir := t.TempDir()
			h := startGateway(t, b.url(), id, dir, gwOpts{})
			c := gatewaytest.StartCentral(t, b.url(), "central-"+id, map[string]ed25519.PublicKey{id: h.key.Public().(ed25519.PublicKey)})
			if !gatewaytest.WaitFor(20*time.Second, func() bool { return c.Contiguous(id) >= 20 }) {
				t.Fatalf("no traffic before the outage: contiguous %d", c.Contiguous(id))
			}
			b.down()
			before, down := h.box.LastSeq(), time.Now()
			if !gatewaytest.WaitFor(outage+60*time.Second, func() bool {
				return h.box.LastSeq() >= before+minQueued && time.Since(down) >= outage
			}) {
				t.Fatalf("gateway stopped producing during the outage: %d batches enqueued in %s", h.box.LastSeq()-before, time.Since(down).Round(time.Second))
			}
			queued := h.box.LastSeq() - before
			b.up(t)
			t.Logf("outage %s: %d batches enqueued while the broker was down", time.Since(down).Round(time.Millisecond), queued)
			drainAndCheck(t, c, h, b, dir)
		})
	}
}

func TestBrokerKilledUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts brokers")
	}
	for name, start := range brokers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := start(t)
			id := "gw-kill-" + name
			dir := t.TempDir()
			h := startGateway(t, b.url(), id, dir, gwOpts{})
			c := gatewaytest.StartCentral(t, b.url(), "central-"+id, map[string]ed25519.PublicKey{id: h.key.Public().(ed25519.PublicKey)})
			for i := range 10 {
				want := c.Contiguous(id) + 10
				if !gatewaytest.WaitFor(30*time.Second, func() bool { return c.Contiguous(id) >= want }) {
					t.Fatalf("kill %d: no progress (contiguous %d)", i, c.Contiguous(id))
				}
				b.crash()
				time.Sleep(500 * time.Millisecond)
				b.up(t)
			}
			drainAndCheck(t, c, h, b, dir)
		})
	}
}

func TestOutboxFullRaisesAlarm(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts brokers")
	}
	for name, start := range brokers(t) {
		for _, policy := range []gateway.FullPolicy{gateway.DropNew, gateway.StopSampling} {
			t.Run(name+"/"+string(policy), func(t *testing.T) {
				t.Parallel()
				b := start(t)
				id := "gw-full-" + name + "-" + string(policy)
				h := startGateway(t, b.url(), id, t.TempDir(), gwOpts{capacity: 50, policy: policy})
				c := gatewaytest.StartCentral(t, b.url(), "central-"+id, map[string]ed25519.PublicKey{id: h.key.Public().(ed25519.PublicKey)})
				c.SetAcking(false) // the central service is down: nothing is acked
				if !gatewaytest.WaitFor(30*time.Second, func() bool {
					s, ok := c.Status(id)
					return ok && s.State == "online" && s.Outbox != nil && s.Outbox.Full && s.Outbox.Dropped > 0
				}) {
					s, _ := c.Status(id)
					t.Fatalf("no full alarm in the retained status; last %+v outbox %+v", s, s.Outbox)
				}
				s, _ := c.Status(id)
				if s.Outbox.Capacity != 50 || s.Outbox.Pending > 50 {
					t.Errorf("status outbox %+v", *s.Outbox)
				}
				// The alarm is retained: a late subscriber sees it too.
				late := gatewaytest.StartCentral(t, b.url(), "late-"+id, nil)
				if !gatewaytest.WaitFor(10*time.Second, func() bool { s, ok := late.Status(id); return ok && s.Outbox != nil }) {
					t.Fatal("retained status not delivered to a new subscriber")
				}
				// The central service comes back: the outbox drains and the alarm clears, the count stays.
				c.SetAcking(true)
				// Batches sent while "down" were ignored; the gateway resends them after AckTimeout.
				if !gatewaytest.WaitFor(30*time.Second, func() bool {
					s, ok := c.Status(id)
					return ok && s.Outbox != nil && !s.Outbox.Full && s.Outbox.Dropped > 0 && c.Contiguous(id) > 0
				}) {
					s, _ := c.Status(id)
					t.Fatalf("alarm not cleared after acks resumed: %+v", s.Outbox)
				}
				h.stop()
				checkStore(t, c, id, uint64(len(c.Batches(id))), c.Contiguous(id))
			})
		}
	}
}

// --- gateway killed (SIGKILL) during an outage, in a child process ---

const childEnv = "SOSSEGO_GATEWAY_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

// runChild is the gateway process of TestGatewayKilledDuringOutage.
func runChild() int {
	broker, dir, id := os.Getenv("CHILD_BROKER"), os.Getenv("CHILD_DIR"), os.Getenv("CHILD_ID")
	startUnix, _ := strconv.ParseInt(os.Getenv("CHILD_START"), 10, 64)
	key, _, err := gateway.LoadOrCreateKey(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	box, err := gateway.OpenOutbox(filepath.Join(dir, "outbox.db"), 1_000_000)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer box.Close()
	meter := &gatewaytest.Meter{Start: time.Unix(startUnix, 0)}
	pubs := &lazyPub{}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	rate, _ := strconv.ParseFloat(os.Getenv("CHILD_REPLAY_RATE"), 64)
	g, err := gateway.New(testOptions(id, gwOpts{period: 10 * time.Millisecond, replayRate: rate}), meter,
		gateway.FixedSync(wire.Clock{Synced: true, Source: "ntp"}), box, key, pubs, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cl, err := mqttconn.New(transportOptions(broker, id, g), g, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pubs.p = cl
	ctx, stop := signalContext()
	defer stop()
	go func() { _ = cl.Run(ctx) }()
	if err := g.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type child struct {
	cmd *exec.Cmd
}

func startChild(t *testing.T, broker, dir, id string, start time.Time, env ...string) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "CHILD_BROKER="+broker, "CHILD_DIR="+dir, "CHILD_ID="+id,
		"CHILD_START="+strconv.FormatInt(start.Unix(), 10))
	cmd.Env = append(cmd.Env, env...)
	logf, err := os.OpenFile(filepath.Join(dir, "child.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	c := &child{cmd: cmd}
	t.Cleanup(func() { c.kill() })
	return c
}

func (c *child) kill() {
	if c.cmd.Process == nil || c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
}

// replayedAfterRestart waits until the restarted gateway p has replayed past
// lastAtKill (the last seq of its killed life) with no gap open, kills it
// for good, and checks the store: every batch once in order, and every
// record of the killed life that reached its outbox stored, contiguous in
// time from base. It returns the contiguous seq and the killed life's
// record count.
func replayedAfterRestart(t *testing.T, c *gatewaytest.Central, p *child, id string, lastAtKill uint64, base time.Time,
	within time.Duration) (n uint64, first int) {
	t.Helper()
	if !gatewaytest.WaitFor(within, func() bool {
		n := c.Contiguous(id)
		return n >= lastAtKill+20 && uint64(len(c.Batches(id))) == n
	}) {
		t.Fatalf("outbox not replayed after the restart: contiguous %d, want ≥ %d", c.Contiguous(id), lastAtKill+20)
	}
	p.kill()
	// Whatever arrived between the check and the kill may leave a gap above
	// the contiguous seq; the gateway that would resend it is dead.
	n = c.Contiguous(id)
	checkStore(t, c, id, uint64(len(c.Batches(id))), n)
	var recs []wire.Record
	for _, s := range c.Batches(id) {
		if s.Seq <= lastAtKill {
			recs = append(recs, s.Records...)
		}
	}
	for i, r := range recs {
		if want := base.Add(time.Duration(i) * time.Second); !r.T.Equal(want) {
			t.Fatalf("first life record %d at %s, want %s: lost or duplicated records", i, r.T, want)
		}
	}
	return n, len(recs)
}

// outboxAt reads the outbox of a dead gateway: the last seq it assigned.
func outboxAt(t *testing.T, dir string) (last uint64, pending int) {
	t.Helper()
	box, err := gateway.OpenOutbox(filepath.Join(dir, "outbox.db"), 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	return box.LastSeq(), box.Stats().Pending
}

func TestGatewayKilledDuringOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts brokers and a gateway process")
	}
	for name, start := range brokers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := start(t)
			id := "gw-crash-" + name
			dir := t.TempDir()
			key, _, err := gateway.LoadOrCreateKey(dir)
			if err != nil {
				t.Fatal(err)
			}
			c := gatewaytest.StartCentral(t, b.url(), "central-"+id, map[string]ed25519.PublicKey{id: key.Public().(ed25519.PublicKey)})
			base := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
			p := startChild(t, b.url(), dir, id, base)
			if !gatewaytest.WaitFor(30*time.Second, func() bool { return c.Contiguous(id) >= 20 }) {
				t.Fatalf("no traffic from the gateway process: contiguous %d", c.Contiguous(id))
			}
			b.down()
			time.Sleep(2 * time.Second) // the gateway keeps measuring into its outbox
			p.kill()                    // power cut during the outage
			lastAtKill, pendingAtKill := outboxAt(t, dir)
			t.Logf("killed with seqs 1..%d assigned, %d records pending in the outbox", lastAtKill, pendingAtKill)
			if pendingAtKill == 0 {
				t.Fatal("nothing pending at the kill: the test proves nothing")
			}
			// The gateway restarts (its meter continues a day later, so records never collide).
			p = startChild(t, b.url(), dir, id, base.Add(24*time.Hour))
			time.Sleep(time.Second)
			b.up(t)
			n, first := replayedAfterRestart(t, c, p, id, lastAtKill, base, 60*time.Second)
			t.Logf("%d batches stored once in order; %d records of the killed life, none lost; %d redeliveries ignored",
				n, first, c.Duplicates())
			// The Will announced the kill.
			sawOffline := false
			for _, s := range c.StatusLog(id) {
				if s.State == "offline" {
					sawOffline = true
				}
			}
			if name == "mosquitto" && !sawOffline {
				t.Error("no offline status (Will) after the gateway was killed")
			}
		})
	}
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
}

// TestPowerCutMidReplay is the offline-hour goal in compressed time: the
// gateway process (a meter giving 100 one-second records per wall second)
// is cut off from the broker long enough to queue an hour of records
// (36 s; SOSSEGO_R7_OUTAGE for another span), the broker comes back, and
// the gateway is SIGKILLed halfway through its rate-limited replay (20
// msg/s here) and restarted. Every record of the killed life — the hour
// included — must be stored once, with its original time, in order.
func TestPowerCutMidReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts brokers and a gateway process")
	}
	outage := 36 * time.Second
	if d, err := time.ParseDuration(os.Getenv("SOSSEGO_R7_OUTAGE")); err == nil && d > 0 {
		outage = d
	}
	const rate = 20
	for name, start := range brokers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := start(t)
			id := "gw-r7-" + name
			dir := t.TempDir()
			key, _, err := gateway.LoadOrCreateKey(dir)
			if err != nil {
				t.Fatal(err)
			}
			c := gatewaytest.StartCentral(t, b.url(), "central-"+id, map[string]ed25519.PublicKey{id: key.Public().(ed25519.PublicKey)})
			base := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
			rateEnv := "CHILD_REPLAY_RATE=" + strconv.Itoa(rate)
			p := startChild(t, b.url(), dir, id, base, rateEnv)
			if !gatewaytest.WaitFor(30*time.Second, func() bool { return c.Contiguous(id) >= 20 }) {
				t.Fatalf("no traffic from the gateway process: contiguous %d", c.Contiguous(id))
			}
			b.down()
			before := c.Contiguous(id)
			time.Sleep(outage) // the gateway keeps measuring into its outbox
			b.up(t)
			// Kill once the replay has covered about half of what the outage queued.
			queued := uint64(outage / time.Second * 10) // batches: 100 records/s, 10 per batch
			replayStart := time.Now()
			if !gatewaytest.WaitFor(outage+60*time.Second, func() bool { return c.Contiguous(id) >= before+queued/2 }) {
				t.Fatalf("replay stalled: contiguous %d, want ≥ %d", c.Contiguous(id), before+queued/2)
			}
			replayed := c.Contiguous(id) - before
			elapsed := time.Since(replayStart)
			p.kill() // power cut mid-replay
			lastAtKill, pendingAtKill := outboxAt(t, dir)
			behind := lastAtKill - c.Contiguous(id)
			t.Logf("outage %v queued ~%d batches; replayed %d in %v (≈ %.0f msg/s, limit %d); killed with seqs 1..%d assigned, %d records pending, %d batches not yet stored",
				outage, queued, replayed, elapsed.Round(time.Millisecond), float64(replayed)/elapsed.Seconds(), rate, lastAtKill, pendingAtKill, behind)
			if behind < queued/4 {
				t.Fatalf("only %d batches were left to replay at the kill: not mid-replay, the test proves nothing", behind)
			}
			// The gateway restarts (its meter continues a day later, so records never collide).
			p = startChild(t, b.url(), dir, id, base.Add(24*time.Hour), rateEnv)
			n, first := replayedAfterRestart(t, c, p, id, lastAtKill, base, outage+90*time.Second)
			t.Logf("%d batches stored once in order; all %d records of the killed life (the outage's included) with their original times; %d redeliveries ignored",
				n, first, c.Duplicates())
		})
	}
}
