package central

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// benchMessages is the number of batches per measured run
// (SOSSEGO_BENCH_MSGS overrides).
func benchMessages() int {
	if v, err := strconv.Atoi(os.Getenv("SOSSEGO_BENCH_MSGS")); err == nil && v > 0 {
		return v
	}
	return 20000
}

// rawPair measures a raw paho QoS 1 publisher → broker → paho subscriber
// pair (separate connections, window 1000, subscriber in order, auto-ack)
// with the given payloads: the baseline the ingest ratio is taken against.
//
// It also returns the CPU per message, from the first publish to the last
// delivery, of this process (both clients) and of the broker (brokerCPU).
func rawPair(b *testing.B, url, user, pass, subUser, subPass string, payloads [][]byte, topic string,
	brokerCPU func() time.Duration) (msgPerS float64, procCPU, bCPU time.Duration) {
	b.Helper()
	var got atomic.Int64
	allIn := make(chan struct{})
	n := int64(len(payloads))
	subOpts := paho.NewClientOptions().AddBroker(url).SetClientID("bench-sub").SetUsername(subUser).SetPassword(subPass).
		SetCleanSession(true)
	sub := paho.NewClient(subOpts)
	if tok := sub.Connect(); tok.Wait() && tok.Error() != nil {
		b.Fatal(tok.Error())
	}
	defer sub.Disconnect(100)
	var first, last time.Time
	var once sync.Once
	if tok := sub.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
		once.Do(func() { first = time.Now() })
		if got.Add(1) == n {
			last = time.Now()
			close(allIn)
		}
	}); tok.Wait() && tok.Error() != nil {
		b.Fatal(tok.Error())
	}
	pubOpts := paho.NewClientOptions().AddBroker(url).SetClientID(user).SetUsername(user).SetPassword(pass)
	if user == "" {
		pubOpts.SetClientID("bench-pub")
	}
	pub := paho.NewClient(pubOpts)
	if tok := pub.Connect(); tok.Wait() && tok.Error() != nil {
		b.Fatal(tok.Error())
	}
	defer pub.Disconnect(100)
	window := make(chan paho.Token, 1000)
	go func() {
		for tok := range window {
			tok.Wait()
		}
	}()
	proc0, broker0 := testenv.SelfCPU(), brokerCPU()
	for _, p := range payloads {
		window <- pub.Publish(topic, 1, false, p)
	}
	close(window)
	select {
	case <-allIn:
	case <-time.After(time.Minute):
		b.Fatalf("raw pair: %d of %d delivered", got.Load(), n)
	}
	proc1, broker1 := testenv.SelfCPU(), brokerCPU()
	return float64(n) / last.Sub(first).Seconds(), (proc1 - proc0) / time.Duration(n), (broker1 - broker0) / time.Duration(n)
}

func sealedPayloads(b *testing.B, gw string, n, records int) [][]byte {
	key := loadgen.Key(seed, gw)
	start := time.Now().Add(-time.Duration(n*records) * time.Second).UTC().Truncate(time.Second)
	out := make([][]byte, n)
	for i := range out {
		bt := &wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: gw, Sensor: gw + "-s1",
			Seq: uint64(i + 1), SentAt: time.Now().UTC(), Device: wire.Device{Model: "m", Serial: "s", Grade: "class2"}}
		for j := range records {
			bt.Records = append(bt.Records, wire.Record{T: start.Add(time.Duration(i*records+j) * time.Second), DurMs: 1000,
				LAeq: 60, LAFmax: 64, LAFmin: 55})
		}
		p, err := wire.Seal(bt, key)
		if err != nil {
			b.Fatal(err)
		}
		out[i] = p
	}
	return out
}

func writeBenchRegistry(b testing.TB, dir string, gateways int) (string, *registry.Registry) {
	return writeSeededRegistry(b, dir, gateways, seed)
}

// writeSeededRegistry writes a register of gateways whose keys derive from s.
func writeSeededRegistry(b testing.TB, dir string, gateways int, s string) (string, *registry.Registry) {
	y, err := loadgen.RegistryYAML(s, gateways, 1, "lapa")
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(p, y, 0o600); err != nil {
		b.Fatal(err)
	}
	r, err := registry.Parse(y)
	if err != nil {
		b.Fatal(err)
	}
	return p, r
}

type ingestResult struct {
	msgPerS, recPerS float64
	p50, p99         time.Duration // publish → application ack at the gateway
	eval50, eval99   time.Duration // publish → the batch's first reading handed to the alerts monitor
	// Paced runs only: publish → the reading on an operator's websocket
	// (the dashboard's live feed), over the levels it delivered (dashN).
	dash50, dash99 time.Duration
	dashN          int
	slowWrites     int     // group commits (incl. fsync) that took more than 64 ms
	slowestWrite   float64 // upper bound (s) of the slowest commit's histogram bucket
	// CPU per message from the first publish to the last ack: this test
	// process (service, load generator, embedded broker) and an external
	// broker (brokerCPU given to runIngestAt; 0 without one).
	procCPU, brokerCPU time.Duration
	verifyBatch        float64 // mean messages per signature batch
	// stop stops the service (also done at cleanup): call it once the run's
	// figures are in, so that an idle service does not run beside the next.
	stop func()
}

// scrapeMetric reads the service's /metrics and returns the first series of
// the named metric family, failing the test when it is missing.
func scrapeMetric(t testing.TB, httpAddr, name string) *dto.Metric {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	f := fams[name]
	if f == nil || len(f.GetMetric()) == 0 {
		t.Fatalf("no %s in /metrics", name)
	}
	return f.GetMetric()[0]
}

// storeWriteTail reads the service's sossego_store_write_seconds histogram
// from /metrics: how many group commits took over 64 ms and the upper
// bound of the slowest one's bucket. A durable commit ends in an fsync, so
// this is where the disk's latency tail shows up in the ack and eval
// latencies.
func storeWriteTail(b testing.TB, httpAddr string) (slow int, slowest float64) {
	b.Helper()
	h := scrapeMetric(b, httpAddr, "sossego_store_write_seconds").GetHistogram()
	total := h.GetSampleCount()
	prev := uint64(0)
	for _, bk := range h.GetBucket() {
		if bk.GetCumulativeCount() > prev {
			slowest = bk.GetUpperBound()
		}
		if bk.GetUpperBound() <= 0.064 {
			slow = int(total - bk.GetCumulativeCount())
		}
		prev = bk.GetCumulativeCount()
	}
	if total > prev {
		slowest = math.Inf(1)
	}
	return slow, slowest
}

// evalClock times each batch from its publish to the moment the central
// service hands its first stored reading to the observers (the alerts
// monitor is the next observer, so this is publish → alert evaluation).
// Its keys are plain structs: the clock runs inside the measured process,
// so it must cost little per message.
type evalClock struct {
	mu        sync.Mutex
	published map[evalKey]time.Time // publish time by gateway and seq
	lat       []time.Duration
	last      evalKey // the batch of the previous reading (the observers get a batch's readings together)
}

type evalKey struct {
	gw  string
	seq uint64
}

func (c *evalClock) onPublish(gw string, seq uint64, at time.Time) {
	c.mu.Lock()
	c.published[evalKey{gw, seq}] = at
	c.mu.Unlock()
}

func (c *evalClock) Observe(_ context.Context, r ingest.Reading) {
	k := evalKey{r.Gateway, r.Seq}
	if k == c.last {
		return // not the batch's first reading
	}
	c.last = k
	now := time.Now()
	c.mu.Lock()
	if at, ok := c.published[k]; ok {
		c.lat = append(c.lat, now.Sub(at))
		delete(c.published, k)
	}
	c.mu.Unlock()
}

func (c *evalClock) percentile(p float64) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return percentile(c.lat, p)
}

// percentile is the p-th percentile of lat (0 when empty); lat is not
// changed.
func percentile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(p/100*float64(len(s))))]
}

// dashClock times publish → operator's screen: an operator's websocket
// (what the dashboard's overview listens to) receives each sensor's latest
// level once per hub tick; each level delivered is matched to the publish
// of the batch it came in by gateway and record start. This includes the
// hub's coalescing wait (0 – 250 ms by design) and a batch's readings that
// a later one replaced within a tick are never delivered.
type dashClock struct {
	mu        sync.Mutex
	published map[dashKey]time.Time
	lat       []time.Duration
	// The batch's latest record starts at start + ((seq-1)·records +
	// records-1) s (loadgen's record times, its Start given explicitly).
	start   time.Time
	records int
}

type dashKey struct {
	gw string
	t  int64 // record start, Unix ms
}

func (c *dashClock) onPublish(gw string, seq uint64, at time.Time) {
	t := c.start.Add(time.Duration(int(seq-1)*c.records+c.records-1) * time.Second)
	c.mu.Lock()
	c.published[dashKey{gw, t.UnixMilli()}] = at
	c.mu.Unlock()
}

// watch reads the live feed of a logged-in operator until the service
// closes it.
func (c *dashClock) watch(b *testing.B, httpAddr string) {
	base := "http://" + httpAddr
	conn := dialFeed(b, base, apiClient(b, base))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, msg, err := conn.ReadMessage()
			now := time.Now()
			if err != nil {
				return
			}
			var m struct {
				Type   string `json:"type"`
				Levels []struct {
					Gateway string    `json:"gateway"`
					T       time.Time `json:"t"`
				} `json:"levels"`
			}
			if json.Unmarshal(msg, &m) != nil || m.Type != "update" {
				continue
			}
			c.mu.Lock()
			for _, l := range m.Levels {
				k := dashKey{l.Gateway, l.T.UnixMilli()}
				if at, ok := c.published[k]; ok {
					c.lat = append(c.lat, now.Sub(at))
					delete(c.published, k)
				}
			}
			c.mu.Unlock()
		}
	}()
	b.Cleanup(func() { conn.Close(); <-done })
}

func (c *dashClock) result() (p50, p99 time.Duration, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return percentile(c.lat, 50), percentile(c.lat, 99), len(c.lat)
}

// profilePath, when set, is where runIngestAt writes a CPU profile of the
// steady load (profileSteady); BenchmarkIngestMosquitto sets it.
var profilePath string

// profileSteady writes a 2-s CPU profile to path, starting 1 s from now.
func profileSteady(b *testing.B, path string) {
	time.Sleep(time.Second)
	f, err := os.Create(path)
	if err != nil {
		b.Error(err)
		return
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Error(err)
		return
	}
	time.Sleep(2 * time.Second)
	pprof.StopCPUProfile()
}

func runIngest(b *testing.B, o Options, r *registry.Registry, gateways, msgs, records int, brokerCPU func() time.Duration) ingestResult {
	b.Helper()
	return runIngestAt(b, o, r, gateways, msgs, records, 0, false, brokerCPU)
}

// runIngestAt is runIngest with each gateway paced at rate batches/s (0:
// flat out), the gateways spread over the period or all publishing at once.
//
// brokerCPU (nil: none) reads an external broker's CPU time, charged per
// message in the result.
func runIngestAt(b *testing.B, o Options, r *registry.Registry, gateways, msgs, records int, rate float64, spread bool,
	brokerCPU func() time.Duration) ingestResult {
	b.Helper()
	if brokerCPU == nil {
		brokerCPU = func() time.Duration { return 0 }
	}
	clock := &evalClock{published: map[evalKey]time.Time{}}
	// The record times are given to the load generator (its default, made
	// explicit) so that the dashboard clock knows them.
	start := time.Now().UTC().Truncate(time.Second).Add(-time.Duration(msgs/gateways*records) * time.Second)
	var dash *dashClock
	if rate > 0 {
		dash = &dashClock{published: map[dashKey]time.Time{}, start: start, records: records}
	}
	var cpuOnce sync.Once
	var proc0, broker0 time.Duration
	onPublish := func(gw string, seq uint64, at time.Time) {
		cpuOnce.Do(func() {
			proc0, broker0 = testenv.SelfCPU(), brokerCPU()
			if profilePath != "" {
				go profileSteady(b, profilePath)
			}
		})
		clock.onPublish(gw, seq, at)
		if dash != nil {
			dash.onPublish(gw, seq, at)
		}
	}
	o.Observers = append(o.Observers, clock)
	a, stop := startCentralStop(b, o)
	b.Cleanup(stop)
	url := a.MQTT
	if o.MQTTURL != "" {
		url = o.MQTTURL
	}
	gws := loadgen.FromRegistry(r, seed)[:gateways]
	if dash != nil {
		dash.watch(b, a.HTTP)
	}
	var st loadgen.Stats
	var err error
	pprof.Do(context.Background(), pprof.Labels("part", "loadgen"), func(ctx context.Context) {
		st, err = loadgen.Run(ctx, loadgen.Options{URL: url, Gateways: gws, Batches: msgs / gateways, Start: start,
			RecordsPerBatch: records, Window: 1000, WaitAcks: 2 * time.Minute, Prepare: true, OnPublish: onPublish, Rate: rate, Spread: spread})
	})
	if err != nil {
		b.Fatal(err)
	}
	proc1, broker1 := testenv.SelfCPU(), brokerCPU()
	if st.Acked != st.Published {
		b.Fatalf("acked %d of %d", st.Acked, st.Published)
	}
	slow, slowest := storeWriteTail(b, a.HTTP)
	vb := scrapeMetric(b, a.HTTP, "sossego_ingest_verify_batch_messages").GetHistogram()
	n := time.Duration(max(st.Published, 1))
	res := ingestResult{verifyBatch: vb.GetSampleSum() / float64(max(vb.GetSampleCount(), 1)), procCPU: (proc1 - proc0) / n, brokerCPU: (broker1 - broker0) / n, stop: stop, msgPerS: st.MsgRate(), recPerS: st.MsgRate() * float64(records), p50: st.Percentile(50), p99: st.Percentile(99),
		eval50: clock.percentile(50), eval99: clock.percentile(99), slowWrites: slow, slowestWrite: slowest}
	if dash != nil {
		time.Sleep(500 * time.Millisecond) // the last hub ticks
		res.dash50, res.dash99, res.dashN = dash.result()
		if res.dashN == 0 {
			b.Fatal("the dashboard's websocket delivered none of the published levels")
		}
	}
	return res
}

// BenchmarkIngest measures sustained ingest (broker → decode → verify →
// validate → store (SQLite, synchronous=full) → ack → alerts) with the
// embedded broker and with Mosquitto, and the raw paho QoS 1 pair through
// Mosquitto with the same payloads in the same run (before and after the
// service runs; the ratios are to the mean of the two). Run with -benchtime=1x;
// each iteration sends SOSSEGO_BENCH_MSGS batches (default 20000).
// Latency is publish → application ack (the batch is durably stored).
func BenchmarkIngest(b *testing.B) {
	for _, records := range []int{1, 10} {
		b.Run("records="+strconv.Itoa(records), func(b *testing.B) {
			msgs := benchMessages()
			for range b.N {
				m := startSecuredMosquittoB(b)
				payloads := sealedPayloads(b, "lg-0001", msgs, records)
				raw1, rawProc1, rawBroker1 := rawPair(b, m.URL, "lg-0001", loadgen.Password(seed, "lg-0001"), ServiceUser, "svc-pass", payloads,
					wire.LevelsTopic("lapa", "lg-0001", "lg-0001-s1"), m.CPU)

				dir := b.TempDir()
				regPath, r := writeBenchRegistry(b, dir, 4)
				emb := runIngest(b, Options{DataDir: dir, Registry: regPath}, r, 4, msgs, records, nil)
				emb.stop()

				dir2 := b.TempDir()
				regPath2, _ := writeBenchRegistry(b, dir2, 4)
				mos := runIngest(b, Options{DataDir: dir2, Registry: regPath2, MQTTURL: m.URL, MQTTPassword: "svc-pass"},
					r, 4, msgs, records, m.CPU)
				mos.stop()

				// The raw pair again after the two service runs: the baseline
				// is the mean of both, so a noisy moment on the shared
				// machine during one short raw run does not set the ratios.
				// A fresh broker: the first one keeps the service's
				// persistent session and would queue these messages for it.
				m2 := startSecuredMosquittoB(b)
				raw2, rawProc2, rawBroker2 := rawPair(b, m2.URL, "lg-0001", loadgen.Password(seed, "lg-0001"), ServiceUser, "svc-pass", payloads,
					wire.LevelsTopic("lapa", "lg-0001", "lg-0001-s1"), m2.CPU)
				raw := (raw1 + raw2) / 2

				// InfluxDB: the embedded run again with --store influx; the
				// mirror drains SQLite into a real InfluxDB 1.8.10 alongside.
				flux := testenv.StartInflux(b)
				flux.CreateDatabase(b, "sossego")
				dir3 := b.TempDir()
				regPath3, _ := writeBenchRegistry(b, dir3, 4)
				began := time.Now()
				inf := runIngest(b, Options{DataDir: dir3, Registry: regPath3, Store: "influx", InfluxURL: flux.URL,
					InfluxBucket: "sossego/autogen"}, r, 4, msgs, records, nil)
				want := msgs / 4 * 4 * records
				if n := waitInfluxCount(b, flux.URL, want, 2*time.Minute); n != want {
					b.Fatalf("InfluxDB holds %d of %d records", n, want)
				}
				mirrored := time.Since(began)
				inf.stop()
				flux.Stop()

				b.ReportMetric(raw, "raw_msg/s")
				b.ReportMetric(raw1, "raw_before_msg/s")
				b.ReportMetric(raw2, "raw_after_msg/s")
				us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
				b.ReportMetric(us(rawProc1+rawProc2)/2, "raw_clients_cpu_us/msg")
				b.ReportMetric(us(rawBroker1+rawBroker2)/2, "raw_broker_cpu_us/msg")
				b.ReportMetric(us(emb.procCPU), "embedded_cpu_us/msg")
				b.ReportMetric(us(mos.procCPU), "mosquitto_service_cpu_us/msg")
				b.ReportMetric(us(mos.brokerCPU), "mosquitto_broker_cpu_us/msg")
				b.ReportMetric(emb.msgPerS, "embedded_msg/s")
				b.ReportMetric(emb.recPerS, "embedded_readings/s")
				b.ReportMetric(emb.msgPerS/raw, "embedded_ratio")
				b.ReportMetric(float64(emb.p50.Microseconds())/1000, "embedded_p50_ms")
				b.ReportMetric(float64(emb.p99.Microseconds())/1000, "embedded_p99_ms")
				b.ReportMetric(float64(emb.eval50.Microseconds())/1000, "embedded_eval_p50_ms")
				b.ReportMetric(float64(emb.eval99.Microseconds())/1000, "embedded_eval_p99_ms")
				b.ReportMetric(mos.msgPerS, "mosquitto_msg/s")
				b.ReportMetric(mos.recPerS, "mosquitto_readings/s")
				b.ReportMetric(mos.msgPerS/raw, "mosquitto_ratio")
				b.ReportMetric(float64(mos.p50.Microseconds())/1000, "mosquitto_p50_ms")
				b.ReportMetric(float64(mos.p99.Microseconds())/1000, "mosquitto_p99_ms")
				b.ReportMetric(float64(mos.eval50.Microseconds())/1000, "mosquitto_eval_p50_ms")
				b.ReportMetric(float64(mos.eval99.Microseconds())/1000, "mosquitto_eval_p99_ms")
				b.ReportMetric(inf.msgPerS, "influx_msg/s")
				b.ReportMetric(inf.msgPerS/raw, "influx_ratio")
				b.ReportMetric(float64(msgs/4*4*records)/mirrored.Seconds(), "influx_mirrored_readings/s")
			}
		})
	}
}

// BenchmarkIngestMosquitto is BenchmarkIngest's Mosquitto run alone (no
// raw pair, no other service runs in the process): for comparing two
// builds at the same moment and for profiling. SOSSEGO_BENCH_RECORDS sets
// the records per batch (default 1). SOSSEGO_BENCH_CPUPROFILE=FILE
// writes a 2-s CPU profile taken from 1 s after the first publish, when
// the load is steady (the -cpuprofile flag would also cover the payload
// signing and the registry's password hashing). Profile labels tell the
// service (part=service) from the load generator (part=loadgen).
func BenchmarkIngestMosquitto(b *testing.B) {
	msgs := benchMessages()
	for range b.N {
		m := startSecuredMosquittoB(b)
		dir := b.TempDir()
		regPath, r := writeBenchRegistry(b, dir, 4)
		profilePath = os.Getenv("SOSSEGO_BENCH_CPUPROFILE")
		records := 1
		if v, err := strconv.Atoi(os.Getenv("SOSSEGO_BENCH_RECORDS")); err == nil && v > 0 {
			records = v
		}
		mos := runIngest(b, Options{DataDir: dir, Registry: regPath, MQTTURL: m.URL, MQTTPassword: "svc-pass"}, r, 4, msgs, records, m.CPU)
		mos.stop()
		b.ReportMetric(mos.msgPerS, "mosquitto_msg/s")
		b.ReportMetric(float64(mos.procCPU.Nanoseconds())/1000, "service_cpu_us/msg")
		b.ReportMetric(float64(mos.brokerCPU.Nanoseconds())/1000, "broker_cpu_us/msg")
		b.ReportMetric(mos.verifyBatch, "verify_batch_msgs")
		b.ReportMetric(float64(mos.p50.Microseconds())/1000, "mosquitto_p50_ms")
		b.ReportMetric(float64(mos.p99.Microseconds())/1000, "mosquitto_p99_ms")
	}
}

// BenchmarkIngestPaced measures latency where it means something: 100
// gateways publishing one-record batches at a fixed total rate for 15 s,
// through the embedded broker and through Mosquitto; publish → ack at the
// gateway, publish → alert evaluation in the service, and publish → the
// level on an operator's dashboard websocket (dashClock: the reading→
// dashboard latency, hub tick included). "spread": the
// gateways' publishes are spread over each period, as independent gateways'
// are; "aligned": all 100 publish in the same instant every period (the
// worst case — gateways batching on the same clock boundary).
func BenchmarkIngestPaced(b *testing.B) {
	const gateways, seconds = 100, 15
	for _, tc := range []struct {
		total  int
		spread bool
	}{{1000, true}, {1000, false}, {3000, true}, {3000, false}} {
		total := tc.total
		mode := map[bool]string{true: "spread", false: "aligned"}[tc.spread]
		b.Run("msgs_per_s="+strconv.Itoa(total)+"/"+mode, func(b *testing.B) {
			for range b.N {
				perGw := float64(total) / gateways
				msgs := total * seconds
				users := map[string]string{ServiceUser: "svc-pass"}
				for i := 1; i <= gateways; i++ {
					users[loadgen.GatewayID(i)] = loadgen.Password(seed, loadgen.GatewayID(i))
				}
				m := startSecuredMosquittoInflight(b, users, 1000)
				dir := b.TempDir()
				regPath, r := writeBenchRegistry(b, dir, gateways)
				emb := runIngestAt(b, Options{DataDir: dir, Registry: regPath}, r, gateways, msgs, 1, perGw, tc.spread, nil)
				emb.stop()
				dir2 := b.TempDir()
				regPath2, _ := writeBenchRegistry(b, dir2, gateways)
				mos := runIngestAt(b, Options{DataDir: dir2, Registry: regPath2, MQTTURL: m.URL, MQTTPassword: "svc-pass"},
					r, gateways, msgs, 1, perGw, tc.spread, m.CPU)
				mos.stop()
				for _, x := range []struct {
					name string
					res  ingestResult
				}{{"embedded", emb}, {"mosquitto", mos}} {
					b.ReportMetric(x.res.msgPerS, x.name+"_msg/s")
					b.ReportMetric(float64(x.res.p50.Microseconds())/1000, x.name+"_ack_p50_ms")
					b.ReportMetric(float64(x.res.p99.Microseconds())/1000, x.name+"_ack_p99_ms")
					b.ReportMetric(float64(x.res.eval50.Microseconds())/1000, x.name+"_eval_p50_ms")
					b.ReportMetric(float64(x.res.eval99.Microseconds())/1000, x.name+"_eval_p99_ms")
					b.ReportMetric(float64(x.res.dash50.Microseconds())/1000, x.name+"_dashboard_p50_ms")
					b.ReportMetric(float64(x.res.dash99.Microseconds())/1000, x.name+"_dashboard_p99_ms")
					b.ReportMetric(float64(x.res.dashN)/float64(msgs), x.name+"_dashboard_delivered_share")
					b.ReportMetric(float64(x.res.slowWrites), x.name+"_commits_over_64ms")
					b.ReportMetric(x.res.slowestWrite*1000, x.name+"_slowest_commit_le_ms")
					// CPU per message of this process (service + the 100
					// simulated gateways) and of Mosquitto.
					b.ReportMetric(float64(x.res.procCPU.Nanoseconds())/1000, x.name+"_cpu_us/msg")
					if x.res.brokerCPU > 0 {
						b.ReportMetric(float64(x.res.brokerCPU.Nanoseconds())/1000, x.name+"_broker_cpu_us/msg")
					}
				}
			}
		})
	}
}

// BenchmarkIngestRamp is the throughput ceiling: one
// central service takes 100 spread gateways (one-record batches) at a rate
// raised step by step (SOSSEGO_RAMP_STEP long each, default 10 s) until it
// no longer keeps up: acknowledged rate under 95 % of the offered rate, or
// publish → ack p99 (the ingest lag a gateway sees) over 1 s. Reported:
// the highest rate that kept up (ceiling_msg/s), and each step's achieved
// rate and lag in the log. Embedded broker and Mosquitto, SQLite store.
// The load generator runs on the same 2 cores, so the ceiling includes
// the 100 simulated gateways' own CPU (publishing, acks), as the raw pair's
// figure includes its publisher.
func BenchmarkIngestRamp(b *testing.B) {
	const gateways = 100
	stepDur := 10 * time.Second
	if d, err := time.ParseDuration(os.Getenv("SOSSEGO_RAMP_STEP")); err == nil && d > 0 {
		stepDur = d
	}
	steps := []int{1000, 2000, 4000, 6000, 8000, 9000, 10000, 11000, 12000, 14000, 16000, 20000}
	users := map[string]string{ServiceUser: "svc-pass"}
	for i := 1; i <= gateways; i++ {
		users[loadgen.GatewayID(i)] = loadgen.Password(seed, loadgen.GatewayID(i))
	}
	for _, broker := range []string{"embedded", "mosquitto"} {
		b.Run(broker, func(b *testing.B) {
			for range b.N {
				dir := b.TempDir()
				regPath, r := writeBenchRegistry(b, dir, gateways)
				o := Options{DataDir: dir, Registry: regPath}
				if broker == "mosquitto" {
					m := startSecuredMosquittoInflight(b, users, 1000)
					o.MQTTURL, o.MQTTPassword = m.URL, "svc-pass"
				}
				a := startCentral(b, o)
				url := a.MQTT
				if o.MQTTURL != "" {
					url = o.MQTTURL
				}
				gws := loadgen.FromRegistry(r, seed)[:gateways]
				total := 0
				for _, s := range steps {
					total += s * int(stepDur/time.Second) / gateways
				}
				// Record times run from total seconds ago, continuing step
				// after step, so each sensor's readings stay in order.
				start := time.Now().UTC().Truncate(time.Second).Add(-time.Duration(total) * time.Second)
				seq, ceiling := uint64(1), 0
				for _, rate := range steps {
					batches := rate * int(stepDur/time.Second) / gateways
					st, err := loadgen.Run(context.Background(), loadgen.Options{URL: url, Gateways: gws, Batches: batches,
						StartSeq: seq, Start: start.Add(time.Duration(seq-1) * time.Second), Rate: float64(rate) / gateways,
						Spread: true, Window: 1000, WaitAcks: 2 * time.Minute, Prepare: true})
					if err != nil {
						b.Fatal(err)
					}
					if st.Acked != st.Published {
						b.Fatalf("%d msg/s: acked %d of %d", rate, st.Acked, st.Published)
					}
					seq += uint64(batches)
					kept := st.MsgRate() >= 0.95*float64(rate) && st.Percentile(99) < time.Second
					b.Logf("%s %6d msg/s offered: %8.0f published/s, %8.0f acked/s, ack p50 %v p99 %v, republished %d, kept up %v",
						broker, rate, st.PublishRate(), st.MsgRate(), st.Percentile(50).Round(10*time.Microsecond),
						st.Percentile(99).Round(10*time.Microsecond), st.Republished, kept)
					b.ReportMetric(st.MsgRate(), "acked_msg/s_at_"+strconv.Itoa(rate))
					if !kept {
						break
					}
					ceiling = rate
				}
				b.ReportMetric(float64(ceiling), "ceiling_msg/s")
			}
		})
	}
}

// waitInfluxCount polls InfluxDB until the levels measurement holds want
// points or timeout passes, and returns the last count.
func waitInfluxCount(b testing.TB, url string, want int, timeout time.Duration) int {
	b.Helper()
	deadline := time.Now().Add(timeout)
	n := 0
	for {
		resp, err := http.Get(url + "/query?db=sossego&q=" + neturl.QueryEscape(`SELECT count("laeq") FROM "levels"`))
		if err == nil {
			var out struct {
				Results []struct {
					Series []struct {
						Values [][]any `json:"values"`
					} `json:"series"`
				} `json:"results"`
			}
			if json.NewDecoder(resp.Body).Decode(&out) == nil && len(out.Results) > 0 && len(out.Results[0].Series) > 0 &&
				len(out.Results[0].Series[0].Values) > 0 && len(out.Results[0].Series[0].Values[0]) > 1 {
				if f, ok := out.Results[0].Series[0].Values[0][1].(float64); ok {
					n = int(f)
				}
			}
			resp.Body.Close()
		}
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func startSecuredMosquittoB(b *testing.B) *testenv.Mosquitto {
	users := map[string]string{ServiceUser: "svc-pass"}
	for i := 1; i <= 4; i++ {
		users[loadgen.GatewayID(i)] = loadgen.Password(seed, loadgen.GatewayID(i))
	}
	inflight := 1000
	if v, err := strconv.Atoi(os.Getenv("SOSSEGO_BENCH_INFLIGHT")); err == nil && v > 0 {
		inflight = v
	}
	return startSecuredMosquittoInflight(b, users, inflight)
}

// BenchmarkStoreApply measures one group commit of 256 batches of 1 or 10
// records (the store alone, synchronous=full).
func BenchmarkStoreApply(b *testing.B) {
	for _, records := range []int{1, 10} {
		b.Run("records="+strconv.Itoa(records), func(b *testing.B) {
			s, err := sqlitestore.Open(filepath.Join(b.TempDir(), "b.db"), sqlitestore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			t0 := time.Now().Add(-time.Hour)
			seq := uint64(0)
			b.ReportAllocs()
			for b.Loop() {
				var w store.Write
				for range 256 {
					seq++
					bt := store.Batch{Gateway: "g", Municipality: "lapa", Sensor: "s", Kind: "levels",
						Topic: "t", Seq: seq, Body: make([]byte, 400), ReceivedAt: t0}
					for j := range records {
						bt.Records = append(bt.Records, wire.Record{T: t0.Add(time.Duration(int(seq)*records+j) * time.Second),
							DurMs: 1000, LAeq: 60, LAFmax: 62, LAFmin: 58})
					}
					w.Batches = append(w.Batches, bt)
				}
				if _, err := s.Apply(context.Background(), w); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*256)/b.Elapsed().Seconds(), "batches/s")
			b.ReportMetric(float64(b.N*256*records)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
