package dashboard

// Hub load generator (not run by default; figures in BENCHMARKS.md):
//
//	SOSSEGO_HUB_LOAD=1 go test -run TestHubLoad -v ./dashboard/
//
// The hub runs in this process; 1,000 websocket clients run in a child
// process (this test binary re-executed), so the CPU time reported is the
// server's alone (getrusage RUSAGE_SELF). 1,000 sensors publish one level
// each per second, spread evenly (1,000 updates/s); every client receives
// every update (coalesced into 4 frames/s at the default 250 ms tick).
// Delivery latency is measured per update, from PublishLevel (the level's
// t field) to the client decoding the frame.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/sossego/sossego/internal/users"
)

type anySession struct{}

func (anySession) SessionFromRequest(*http.Request) (users.Session, error) {
	return users.Session{Token: "t", User: users.User{Name: "carga", Role: users.Operador}}, nil
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

type loadResult struct {
	Clients, Connected, Closed int
	Updates                    int
	P50, P90, P99, Max         float64 // ms
}

func TestHubLoad(t *testing.T) {
	if os.Getenv("SOSSEGO_HUB_LOAD") != "1" {
		t.Skip("load generator: set SOSSEGO_HUB_LOAD=1")
	}
	clients := envInt("SOSSEGO_HUB_CLIENTS", 1000)
	rate := envInt("SOSSEGO_HUB_RATE", 1000) // updates/s
	sensors := envInt("SOSSEGO_HUB_SENSORS", 1000)
	dur := time.Duration(envInt("SOSSEGO_HUB_SECONDS", 20)) * time.Second

	hub := NewHub(anySession{}, HubOptions{}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hub.Run(ctx) }()
	srv := httptest.NewServer(hub)
	defer func() {
		cancel()
		<-done
		srv.Close()
	}()

	child := exec.Command(os.Args[0], "-test.run=^TestHubLoadClients$", "-test.v")
	child.Env = append(os.Environ(), "SOSSEGO_HUB_LOAD_URL="+srv.URL, "SOSSEGO_HUB_CLIENTS="+strconv.Itoa(clients),
		"SOSSEGO_HUB_WARMUP_MS=3000", "SOSSEGO_HUB_MEASURE_MS="+strconv.Itoa(int(dur.Milliseconds())))
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until every client is connected.
	for hub.Stats().Clients < clients {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d clients connected", clients)

	pubCtx, stopPub := context.WithCancel(context.Background())
	var pubWG sync.WaitGroup
	pubWG.Add(1)
	go func() {
		defer pubWG.Done()
		interval := time.Second / time.Duration(rate)
		next := time.Now()
		for i := 0; ; i++ {
			select {
			case <-pubCtx.Done():
				return
			default:
			}
			now := time.Now()
			hub.PublishLevel(Level{Sensor: "sensor-" + strconv.Itoa(i%sensors), T: now, LAeq: DB(40 + i%40), LAFmax: 70})
			next = next.Add(interval)
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			}
		}
	}()

	time.Sleep(3 * time.Second) // warm-up, same as the child's
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	s0 := hub.Stats()
	t0 := time.Now()

	var res loadResult
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				t.Fatal(err)
			}
		}
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	wall := time.Since(t0)
	s1 := hub.Stats()
	stopPub()
	pubWG.Wait()
	if err := child.Wait(); err != nil {
		t.Fatalf("clients: %v", err)
	}
	cpu := tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)
	published := s1.LevelsReceived - s0.LevelsReceived
	t.Logf("clients %d (dropped by hub: %d, closed seen by clients: %d); published %.0f updates/s over %v",
		res.Connected, s1.Dropped-s0.Dropped, res.Closed, float64(published)/wall.Seconds(), wall.Round(time.Millisecond))
	t.Logf("deliveries %d (%.0f/s); latency ms p50 %.1f p90 %.1f p99 %.1f max %.1f",
		res.Updates, float64(res.Updates)/wall.Seconds(), res.P50, res.P90, res.P99, res.Max)
	t.Logf("server CPU %.2f s over %.2f s wall = %.0f%% of one core; frames offered %d",
		cpu.Seconds(), wall.Seconds(), 100*cpu.Seconds()/wall.Seconds(), s1.Frames-s0.Frames)
}

func tv(v syscall.Timeval) time.Duration {
	return time.Duration(v.Sec)*time.Second + time.Duration(v.Usec)*time.Microsecond
}

// TestHubLoadClients is the child process of TestHubLoad.
func TestHubLoadClients(t *testing.T) {
	base := os.Getenv("SOSSEGO_HUB_LOAD_URL")
	if base == "" {
		t.Skip("child of TestHubLoad")
	}
	n := envInt("SOSSEGO_HUB_CLIENTS", 1000)
	warm := time.Duration(envInt("SOSSEGO_HUB_WARMUP_MS", 3000)) * time.Millisecond
	measure := time.Duration(envInt("SOSSEGO_HUB_MEASURE_MS", 20000)) * time.Millisecond
	url := "ws" + strings.TrimPrefix(base, "http")
	conns := make([]*websocket.Conn, 0, n)
	for i := 0; i < n; i++ {
		h := http.Header{"Origin": {base}}
		c, _, err := (&websocket.Dialer{HandshakeTimeout: 30 * time.Second}).Dial(url, h)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	start := time.Now().Add(warm)
	end := start.Add(measure)
	var mu sync.Mutex
	var lat []float64
	closed := 0
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func(c *websocket.Conn) {
			defer wg.Done()
			var m struct {
				Levels []struct {
					T time.Time `json:"t"`
				} `json:"levels"`
			}
			local := make([]float64, 0, 1<<14)
			for {
				c.SetReadDeadline(end.Add(5 * time.Second))
				_, b, err := c.ReadMessage()
				now := time.Now()
				if err != nil {
					mu.Lock()
					closed++
					mu.Unlock()
					break
				}
				if now.After(end) {
					break
				}
				m.Levels = m.Levels[:0]
				if json.Unmarshal(b, &m) != nil || now.Before(start) {
					continue
				}
				for _, l := range m.Levels {
					local = append(local, float64(now.Sub(l.T).Microseconds())/1000)
				}
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
			c.Close()
		}(c)
	}
	wg.Wait()
	sort.Float64s(lat)
	q := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(p*float64(len(lat)-1))]
	}
	r := loadResult{Clients: n, Connected: len(conns), Closed: closed, Updates: len(lat), P50: q(.5), P90: q(.9), P99: q(.99), Max: q(1)}
	b, _ := json.Marshal(r)
	fmt.Println("RESULT " + string(b))
}
