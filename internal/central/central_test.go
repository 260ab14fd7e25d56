package central

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/cookiejar"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
)

const seed = loadgen.DefaultSeed

// procSeed signs for the tests that run `sossego central` as a process:
// outside the demonstration it refuses keys derived from the public seed.
const procSeed = "sossego-testes-processo"

// startCentral runs the service in-process and returns its addresses.
func startCentral(t testing.TB, o Options) Addrs {
	t.Helper()
	a, stop := startCentralStop(t, o)
	t.Cleanup(stop)
	return a
}

// startCentralStop is startCentral that also returns a function stopping
// the service (idempotent; startCentral calls it at cleanup) — for
// benchmarks, where a finished service must not share the CPU with the
// next run.
func startCentralStop(t testing.TB, o Options) (Addrs, func()) {
	t.Helper()
	o.Demo = true // the tests' registers sign with keys derived from the demonstration seed
	return startCentralAs(t, o)
}

// startCentralAs runs the service with o.Demo as given (a service outside
// the demonstration needs a register with its own keys).
func startCentralAs(t testing.TB, o Options) (Addrs, func()) {
	t.Helper()
	if o.DataDir == "" {
		o.DataDir = t.TempDir()
	}
	if o.HTTP == "" {
		o.HTTP = "127.0.0.1:0"
	}
	if o.MQTTURL == "" && o.MQTTListen == "" {
		o.MQTTListen = "127.0.0.1:0"
	}
	o.Log = slog.New(slog.DiscardHandler)
	addTestUser(t, o.DataDir)
	ready := make(chan Addrs, 1)
	o.Ready = func(a Addrs) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// Profiles (BenchmarkIngestMosquitto) tell the service's goroutines
	// from the load generator's by this label.
	go pprof.Do(ctx, pprof.Labels("part", "service"), func(ctx context.Context) { done <- Run(ctx, o) })
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("central.Run: %v", err)
			}
		})
	}
	select {
	case a := <-ready:
		return a, stop
	case err := <-done:
		cancel()
		t.Fatalf("central.Run: %v", err)
	case <-time.After(30 * time.Second):
		t.Cleanup(stop)
		t.Fatal("central did not start")
	}
	return Addrs{}, stop
}

// Test credentials created in every data dir by startCentral.
const (
	testUser     = "operadora"
	testPassword = "senha-de-teste-123"
)

func addTestUser(t testing.TB, dir string) {
	t.Helper()
	us, err := usersdb.OpenDir(context.Background(), dir, users.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer us.Close()
	if _, err := us.Add(context.Background(), testUser, users.Operador, testPassword, time.Now()); err != nil && !errors.Is(err, users.ErrExists) {
		t.Fatal(err)
	}
}

var clients sync.Map // host → *http.Client with a session cookie

// apiClient logs in once per service (host) and keeps the session cookie.
func apiClient(t testing.TB, rawURL string) *http.Client {
	t.Helper()
	u, err := neturl.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := clients.Load(u.Host); ok {
		return c.(*http.Client)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	req, _ := http.NewRequest(http.MethodPost, "http://"+u.Host+"/api/v1/login",
		strings.NewReader(`{"user":"`+testUser+`","password":"`+testPassword+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://"+u.Host)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: HTTP %d", resp.StatusCode)
	}
	clients.Store(u.Host, c)
	return c
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := apiClient(t, url).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp.StatusCode
}

// lapaBar is the demo registry's lapa-centro-01 gateway simulated with only
// its bar sensor, lapa-bar-01: the Art. 96 night scenario of several tests.
func lapaBar(t testing.TB) loadgen.Gateway {
	t.Helper()
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range loadgen.FromRegistry(reg, seed) {
		if g.ID == "lapa-centro-01" {
			g.Sensors = []string{"lapa-bar-01"}
			return g
		}
	}
	t.Fatal("the demo registry has no gateway lapa-centro-01")
	return loadgen.Gateway{}
}

// lastNight is 23:00 in Lapa (America/Sao_Paulo, UTC−3) on the previous day.
func lastNight() time.Time {
	loc := time.FixedZone("BRT", -3*3600)
	n := time.Now().In(loc).AddDate(0, 0, -1)
	return time.Date(n.Year(), n.Month(), n.Day(), 23, 0, 0, 0, loc)
}

// TestEndToEndEmbedded: loadgen → embedded broker (auth + ACL) → ingest →
// SQLite → ack → alerts, then the API. A scripted night-time exceedance at
// the Lapa bar sensor fires an alert citing Art. 96 with limit 60 and
// resolves when the level drops.
func TestEndToEndEmbedded(t *testing.T) {
	dir := t.TempDir()
	a := startCentral(t, Options{DataDir: dir})
	lapa := lapaBar(t)
	start := lastNight()
	// 10 minutes at 75 dB, then 10 minutes at 45 dB (1-s records).
	level := func(_, _ string, t time.Time) float64 {
		if t.Sub(start) < 10*time.Minute {
			return 75
		}
		return 45
	}
	st, err := loadgen.Run(context.Background(), loadgen.Options{URL: a.MQTT, Gateways: []loadgen.Gateway{lapa},
		Batches: 1200, RecordsPerBatch: 1, Start: start, Level: level, Window: 200})
	if err != nil {
		t.Fatal(err)
	}
	if st.Acked != 1200 || st.AckedSeq["lapa-centro-01"] != 1200 {
		t.Fatalf("acked %d batches, watermark %d; want 1200", st.Acked, st.AckedSeq["lapa-centro-01"])
	}
	base := "http://" + a.HTTP + "/api/v1"
	var rd struct {
		Buckets []store.Bucket `json:"buckets"`
	}
	from := start.UTC().Format(time.RFC3339)
	to := start.Add(20 * time.Minute).UTC().Format(time.RFC3339)
	if code := getJSON(t, base+"/readings?sensor=lapa-bar-01&step=10m&from="+from+"&to="+to, &rd); code != 200 || len(rd.Buckets) != 2 {
		t.Fatalf("readings: %d %+v", code, rd)
	}
	if math.Abs(rd.Buckets[0].LAeq-75) > 1e-9 || math.Abs(rd.Buckets[1].LAeq-45) > 1e-9 || rd.Buckets[0].Count != 600 {
		t.Errorf("buckets = %+v", rd.Buckets)
	}
	// The alert: Art. 96, limit 60, resolved.
	var al struct {
		Alerts []struct {
			State   string  `json:"state"`
			Kind    string  `json:"kind"`
			Article string  `json:"article"`
			LimitDB float64 `json:"limit_db"`
			LAeqDB  float64 `json:"laeq_db"`
			Sensor  string  `json:"sensor"`
		} `json:"alerts"`
	}
	deadline := time.Now().Add(10 * time.Second)
	found := false
	for !found && time.Now().Before(deadline) {
		getJSON(t, base+"/alerts?sensor=lapa-bar-01&state=resolved", &al)
		for _, x := range al.Alerts {
			if x.Kind == "exceedance" && x.Article == "Art. 96" && x.LimitDB == 60 && x.LAeqDB >= 74.9 {
				found = true
			}
		}
		if !found {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !found {
		t.Fatalf("no resolved Art. 96 alert with limit 60: %+v", al.Alerts)
	}
	var dl struct {
		DeadLetters []store.DeadLetter `json:"dead_letters"`
	}
	if getJSON(t, base+"/dead-letters", &dl); len(dl.DeadLetters) != 0 {
		t.Errorf("dead letters: %+v", dl.DeadLetters)
	}
}

// TestEndToEndMosquitto: the same path through a real Mosquitto with the
// shipped ACL, the service logging in with its own credential.
func TestEndToEndMosquitto(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	m := startSecuredMosquitto(t, map[string]string{ServiceUser: "svc-pass", "lg-0001": loadgen.Password(seed, "lg-0001"),
		"lg-0002": loadgen.Password(seed, "lg-0002")})
	dir := t.TempDir()
	regYAML, err := loadgen.RegistryYAML(seed, 2, 1, "lapa")
	if err != nil {
		t.Fatal(err)
	}
	regPath := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(regPath, regYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	a := startCentral(t, Options{DataDir: dir, Registry: regPath, MQTTURL: m.URL, MQTTPassword: "svc-pass", DisableAlerts: true})
	r, _ := registry.Parse(regYAML)
	st, err := loadgen.Run(context.Background(), loadgen.Options{URL: m.URL, Gateways: loadgen.FromRegistry(r, seed),
		Batches: 300, RecordsPerBatch: 5})
	if err != nil {
		t.Fatal(err)
	}
	if st.Acked != 600 {
		t.Fatalf("acked %d of 600", st.Acked)
	}
	var rd struct {
		Records []store.Record `json:"records"`
	}
	from := time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
	getJSON(t, "http://"+a.HTTP+"/api/v1/readings?sensor=lg-0001-s1&from="+from, &rd)
	if len(rd.Records) != 1500 {
		t.Errorf("stored %d records for lg-0001-s1, want 1500", len(rd.Records))
	}
}

func startSecuredMosquitto(t testing.TB, users map[string]string) *testenv.Mosquitto {
	t.Helper()
	return startSecuredMosquittoInflight(t, users, 1000)
}

// startSecuredMosquittoInflight is startSecuredMosquitto with the given
// max_inflight_messages (the shipped config has 1000; Mosquitto's default
// is 20).
func startSecuredMosquittoInflight(t testing.TB, users map[string]string, inflight int) *testenv.Mosquitto {
	t.Helper()
	_, pw, aclPath := testenv.MosquittoAuth(t, users)
	return testenv.StartMosquitto(t, testenv.MosquittoOpts{Extra: []string{
		"allow_anonymous false", "password_file " + pw, "acl_file " + aclPath,
		"max_inflight_messages " + strconv.Itoa(inflight), "max_packet_size " + strconv.Itoa(1052672), "set_tcp_nodelay true"}})
}

// buildSossego builds cmd/sossego for tests that run the service as a real
// process, and returns the binary's path.
func buildSossego(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sossego")
	build := exec.Command("go", "build", "-o", bin, "github.com/sossego/sossego/cmd/sossego")
	build.Dir = testenv.RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestKill9Restart: the central service (a real process) is killed with
// SIGKILL in the middle of a stream and restarted; every batch the
// gateways saw acknowledged is in the store, each exactly once.
func TestKill9Restart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	bin := buildSossego(t)
	dir := t.TempDir()
	regYAML, err := loadgen.RegistryYAML(procSeed, 4, 1, "lapa")
	if err != nil {
		t.Fatal(err)
	}
	regPath := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(regPath, regYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	mqttAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "central", "--data-dir", dir, "--registry", regPath, "--http", "",
			"--mqtt-listen", mqttAddr, "--log", "warn")
		logf, _ := os.OpenFile(filepath.Join(dir, "central.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	cmd := start()

	r, _ := registry.Parse(regYAML)
	const perGateway = 3000
	acks := make(chan uint64, 100000)
	done := make(chan loadgen.Stats, 1)
	go func() {
		st, err := loadgen.Run(context.Background(), loadgen.Options{URL: "tcp://" + mqttAddr,
			Gateways: loadgen.FromRegistry(r, procSeed), Batches: perGateway, RecordsPerBatch: 2, Rate: 500,
			Window: 500, ResendAfter: 2 * time.Second, WaitAcks: 60 * time.Second,
			OnAck: func(_ string, seq uint64) {
				select {
				case acks <- seq:
				default:
				}
			}})
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	// Kill once the stream is well under way.
	for seq := range acks {
		if seq >= perGateway/3 {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Log("central killed with SIGKILL; restarting")
	time.Sleep(500 * time.Millisecond)
	cmd = start()
	st := <-done
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()

	s, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	t.Logf("published %d, republished %d, acked %d", st.Published, st.Republished, st.Acked)
	for gw, acked := range st.AckedSeq {
		seqs, err := s.StoredSeqs(ctx, gw)
		if err != nil {
			t.Fatal(err)
		}
		for q := uint64(1); q <= acked; q++ {
			if !seqs[q] {
				t.Errorf("%s: seq %d acknowledged but not stored", gw, q)
			}
		}
		if acked != perGateway {
			t.Errorf("%s: final ack %d, want %d", gw, acked, perGateway)
		}
		n, _ := s.CountLevels(ctx, gw+"-s1")
		if n != int64(len(seqs))*2 {
			t.Errorf("%s: %d records for %d batches (duplicates or losses)", gw, n, len(seqs))
		}
	}
	if st.Republished == 0 {
		t.Log("note: nothing needed republishing (kill landed between batches)")
	}
}

// TestEndToEndMosquittoInflux: loadgen → real Mosquitto → central with
// --store influx against a real InfluxDB 1.8.10; the night-time exceedance
// at the Lapa bar fires and resolves an Art. 96 alert (limit 60), and the
// window query is answered by Flux.
func TestEndToEndMosquittoInflux(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	in := testenv.StartInflux(t)
	in.CreateDatabase(t, "sossego")
	m := startSecuredMosquitto(t, map[string]string{ServiceUser: "svc-pass",
		"lapa-centro-01": loadgen.Password(seed, "lapa-centro-01")})
	dir := t.TempDir()
	a := startCentral(t, Options{DataDir: dir, MQTTURL: m.URL, MQTTPassword: "svc-pass", Store: "influx",
		InfluxURL: in.URL, InfluxBucket: "sossego/autogen"})
	lapa := lapaBar(t)
	start := lastNight()
	level := func(_, _ string, t time.Time) float64 {
		if t.Sub(start) < 10*time.Minute {
			return 72
		}
		return 50
	}
	st, err := loadgen.Run(context.Background(), loadgen.Options{URL: m.URL, Gateways: []loadgen.Gateway{lapa},
		Batches: 120, RecordsPerBatch: 10, Start: start, Level: level})
	if err != nil {
		t.Fatal(err)
	}
	if st.Acked != 120 {
		t.Fatalf("acked %d of 120", st.Acked)
	}
	base := "http://" + a.HTTP + "/api/v1"
	from := start.UTC().Format(time.RFC3339)
	to := start.Add(20 * time.Minute).UTC().Format(time.RFC3339)
	var rd struct {
		Buckets []store.Bucket `json:"buckets"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		getJSON(t, base+"/readings?sensor=lapa-bar-01&step=10m&from="+from+"&to="+to, &rd)
		if len(rd.Buckets) == 2 && rd.Buckets[1].Count == 600 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("InfluxDB buckets never complete: %+v", rd.Buckets)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if math.Abs(rd.Buckets[0].LAeq-72) > 1e-6 || math.Abs(rd.Buckets[1].LAeq-50) > 1e-6 {
		t.Errorf("Flux buckets = %+v", rd.Buckets)
	}
	var al struct {
		Alerts []struct {
			Article string  `json:"article"`
			LimitDB float64 `json:"limit_db"`
			Kind    string  `json:"kind"`
		} `json:"alerts"`
	}
	getJSON(t, base+"/alerts?sensor=lapa-bar-01&state=resolved", &al)
	ok := false
	for _, x := range al.Alerts {
		ok = ok || (x.Kind == "exceedance" && x.Article == "Art. 96" && x.LimitDB == 60)
	}
	if !ok {
		t.Errorf("no resolved Art. 96 alert: %+v", al.Alerts)
	}
}
