package central

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sossego/sossego/dashboard"
)

// fakeDisk is a DiskSpace whose answer the test sets.
type fakeDisk struct {
	mu          sync.Mutex
	free, total uint64
	err         error
	calls       int
	paths       []string
}

func (f *fakeDisk) space(path string) (free, total uint64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.paths = append(f.paths, path)
	return f.free, f.total, f.err
}

func (f *fakeDisk) set(free, total uint64, err error) {
	f.mu.Lock()
	f.free, f.total, f.err = free, total, err
	f.mu.Unlock()
}

func (f *fakeDisk) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// logRecorder is a slog.Handler that keeps "LEVEL message" lines.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.lines = append(r.lines, rec.Level.String()+" "+rec.Message)
	r.mu.Unlock()
	return nil
}

// take returns the lines logged since the last call.
func (r *logRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.lines
	r.lines = nil
	return l
}

// gathered returns the data-dir gauges in reg (absent ones are missing).
func gathered(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			if f.GetType() == dto.MetricType_GAUGE {
				out[f.GetName()] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

const (
	mib = 1 << 20
	gib = 1 << 30
)

// TestDiskWatch walks one watch through a disk that fills, is freed, and
// cannot be measured: the health component and problem, the gauges, and a
// log line only when the state changes.
func TestDiskWatch(t *testing.T) {
	const lowProblem = "disco de dados (/srv/sossego) com 812 MiB livres (3 %), abaixo do mínimo de 1 GiB (--min-free-disk): " +
		"libere espaço ou aumente o volume — sem espaço o SQLite não grava, a ingestão para de confirmar leituras " +
		"e os gateways passam a acumulá-las"
	statErr := errors.New("statfs /srv/sossego: no such file or directory")
	steps := []struct {
		name        string
		free, total uint64
		err         error
		component   string
		problem     string // "" → none
		log         string // "" → nothing logged
		gauges      bool
	}{
		{"roomy", 41 * gib, 50 * gib, nil, "ok; 41 GiB livres de 50 GiB (82 %)", "", "", true},
		{"still roomy", 30*gib + 512*mib, 50 * gib, nil, "ok; 30,5 GiB livres de 50 GiB (61 %)", "", "", true},
		{"below the threshold", 812 * mib, 20 * gib, nil, "abaixo do mínimo; 812 MiB livres de 20 GiB (3 %)", lowProblem,
			"WARN pouco espaço livre no disco de dados: libere espaço ou aumente o volume; sem espaço a ingestão para de confirmar leituras", true},
		{"still low: no new log", 100 * mib, 20 * gib, nil, "abaixo do mínimo; 100 MiB livres de 20 GiB (0 %)",
			"disco de dados (/srv/sossego) com 100 MiB livres (0 %), abaixo do mínimo de 1 GiB", "", true},
		{"exactly the minimum is enough", gib, 20 * gib, nil, "ok; 1 GiB livres de 20 GiB (5 %)", "",
			"INFO espaço livre do disco de dados de volta acima do limite", true},
		{"cannot measure", 0, 0, statErr, "não medido: " + statErr.Error(),
			"não foi possível medir o espaço livre do disco de dados (/srv/sossego): " + statErr.Error() +
				"; verifique se a pasta (--data-dir) existe e pode ser lida pelo serviço",
			"WARN não foi possível medir o espaço livre do disco de dados", false},
		{"still cannot", 0, 0, statErr, "não medido: " + statErr.Error(), "não foi possível medir", "", false},
		{"measured again", 2 * gib, 20 * gib, nil, "ok; 2 GiB livres de 20 GiB (10 %)", "",
			"INFO espaço livre do disco de dados medido de novo", true},
		{"unsupported system", 0, 0, errors.ErrUnsupported, "não medido neste sistema", "",
			"INFO espaço livre do disco de dados não é medido neste sistema", false},
	}
	fake := &fakeDisk{}
	logs := &logRecorder{}
	w := newDiskWatch("/srv/sossego", 0, fake.space, 0, slog.New(logs))
	reg := prometheus.NewRegistry()
	reg.MustRegister(w)
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			fake.set(st.free, st.total, st.err)
			w.check()
			h := dashboard.HealthReport{Components: map[string]string{}}
			w.report(&h)
			if got := h.Components["disco"]; got != st.component {
				t.Errorf("component disco = %q, want %q", got, st.component)
			}
			switch {
			case st.problem == "" && len(h.Problems) != 0:
				t.Errorf("problems %q, want none", h.Problems)
			case st.problem != "" && (len(h.Problems) != 1 || !strings.HasPrefix(h.Problems[0], st.problem)):
				t.Errorf("problems %q, want one starting with %q", h.Problems, st.problem)
			}
			got := logs.take()
			switch {
			case st.log == "" && len(got) != 0:
				t.Errorf("logged %q, want nothing", got)
			case st.log != "" && (len(got) != 1 || got[0] != st.log):
				t.Errorf("logged %q, want %q", got, st.log)
			}
			g := gathered(t, reg)
			free, okF := g["sossego_data_dir_free_bytes"]
			total, okT := g["sossego_data_dir_total_bytes"]
			if st.gauges && (!okF || !okT || free != float64(st.free) || total != float64(st.total)) {
				t.Errorf("gauges %v, want free %d and total %d", g, st.free, st.total)
			}
			if !st.gauges && (okF || okT) {
				t.Errorf("gauges %v exported for a failed measurement", g)
			}
		})
	}
	if p := fake.paths[0]; p != "/srv/sossego" {
		t.Errorf("measured %q, want the data dir", p)
	}
}

// TestDiskWatchThreshold: the threshold Options.MinFreeDisk gives.
func TestDiskWatchThreshold(t *testing.T) {
	tests := []struct {
		name    string
		minFree int64
		free    uint64
		low     bool
	}{
		{"default, below", 0, DefaultMinFreeDisk - 1, true},
		{"default, at", 0, DefaultMinFreeDisk, false},
		{"custom, below", 500e6, 499e6, true},
		{"custom, above", 500e6, 501e6, false},
		{"none, empty disk", -1, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeDisk{free: tc.free, total: 100 * gib}
			w := newDiskWatch("/d", tc.minFree, fake.space, 0, slog.New(slog.DiscardHandler))
			w.check()
			h := dashboard.HealthReport{Components: map[string]string{}}
			w.report(&h)
			if low := len(h.Problems) > 0; low != tc.low {
				t.Errorf("degraded %v (%q), want %v", low, h.Problems, tc.low)
			}
		})
	}
}

// TestDiskWatchRun: Run measures every poll, and stops with its context.
func TestDiskWatchRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := &fakeDisk{free: 10 * gib, total: 20 * gib}
		w := newDiskWatch("/d", 0, fake.space, 0, slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		time.Sleep(defaultDiskPoll - time.Second)
		synctest.Wait()
		if n := fake.count(); n != 0 {
			t.Fatalf("%d measurements before the first poll", n)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := fake.count(); n != 1 {
			t.Fatalf("%d measurements after the first poll, want 1", n)
		}
		fake.set(100*mib, 20*gib, nil)
		time.Sleep(defaultDiskPoll)
		synctest.Wait()
		if n := fake.count(); n != 2 {
			t.Fatalf("%d measurements after the second poll, want 2", n)
		}
		h := dashboard.HealthReport{Components: map[string]string{}}
		w.report(&h)
		if len(h.Problems) != 1 {
			t.Errorf("after the disk filled: %+v", h)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
	})
}

// TestStatfsSpace: the real measurement gives plausible numbers for a
// test directory and an error for a missing one.
func TestStatfsSpace(t *testing.T) {
	free, total, err := statfsSpace(t.TempDir())
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if total == 0 || free == 0 || free > total {
		t.Errorf("free %d of %d bytes", free, total)
	}
	if _, _, err := statfsSpace(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("no error for a missing directory")
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"0", 0, ""},
		{"4096", 4096, ""},
		{"4096B", 4096, ""},
		{"500MB", 500e6, ""},
		{"500 MB", 500e6, ""},
		{"2GiB", 2 << 30, ""},
		{"1GiB", DefaultMinFreeDisk, ""},
		{"1gib", 1 << 30, ""},
		{"3kB", 3000, ""},
		{"64KiB", 64 << 10, ""},
		{"128MiB", 128 << 20, ""},
		{"2TB", 2e12, ""},
		{"1TiB", 1 << 40, ""},
		{" 1GB ", 1e9, ""},
		{"", 0, `tamanho "" inválido`},
		{"GB", 0, `tamanho "GB" inválido`},
		{"muito", 0, `tamanho "muito" inválido: use um número inteiro com unidade opcional`},
		{"1.5GB", 0, `tamanho "1.5GB" inválido`},
		{"1,5GB", 0, `tamanho "1,5GB" inválido`},
		{"-1GB", 0, `tamanho "-1GB" inválido`},
		{"+1GB", 0, `tamanho "+1GB" inválido`},
		{"1G", 0, `tamanho "1G" inválido`},
		{"1 gigabyte", 0, `tamanho "1 gigabyte" inválido`},
		{"1  GB", 0, `tamanho "1  GB" inválido`},
		{"1GB1", 0, `tamanho "1GB1" inválido`},
		{"0x10", 0, `tamanho "0x10" inválido`},
		{"9223372036854775807", math.MaxInt64, ""},
		{"9223372036854775808", 0, `tamanho "9223372036854775808" grande demais`},
		{"8388608TiB", 0, `tamanho "8388608TiB" grande demais`},
		{"99999999999999999999", 0, "grande demais"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseSize(%q) = %d, %v; want an error with %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		n    uint64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1 KiB"},
		{1536, "1,5 KiB"},
		{812 * mib, "812 MiB"},
		{gib, "1 GiB"},
		{gib + 100*mib, "1,1 GiB"},
		{50 * gib, "50 GiB"},
		{3 << 40, "3 TiB"},
		{math.MaxUint64, "16 EiB"},
	}
	for _, tc := range tests {
		if got := FormatBytes(tc.n); got != tc.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestDiskHealth: the service with a fake disk. Low at start → /health is
// "degradado" (HTTP 200) with the problem and /metrics carries the fake's
// numbers; freed → back to "ok".
func TestDiskHealth(t *testing.T) {
	dir := t.TempDir()
	fake := &fakeDisk{free: 812 * mib, total: 20 * gib}
	a := startCentral(t, Options{DataDir: dir, DiskSpace: fake.space, DiskPoll: 20 * time.Millisecond})
	type healthView struct {
		Status     string            `json:"status"`
		Components map[string]string `json:"components"`
		Problems   []string          `json:"problemas"`
	}
	base := "http://" + a.HTTP + "/api/v1"
	var h healthView
	if code := getJSON(t, base+"/health", &h); code != http.StatusOK || h.Status != "degradado" || len(h.Problems) != 1 ||
		!strings.HasPrefix(h.Problems[0], "disco de dados ("+dir+") com 812 MiB livres (3 %), abaixo do mínimo de 1 GiB") ||
		h.Components["disco"] != "abaixo do mínimo; 812 MiB livres de 20 GiB (3 %)" {
		t.Errorf("health with a full disk: HTTP %d %+v", code, h)
	}
	if free, total := scrapeMetric(t, a.HTTP, "sossego_data_dir_free_bytes").GetGauge().GetValue(),
		scrapeMetric(t, a.HTTP, "sossego_data_dir_total_bytes").GetGauge().GetValue(); free != 812*mib || total != 20*gib {
		t.Errorf("/metrics: free %v, total %v; want %d and %d", free, total, 812*mib, 20*gib)
	}

	fake.set(15*gib, 20*gib, nil)
	if !waitFor(10*time.Second, func() bool {
		h = healthView{}
		getJSON(t, base+"/health", &h)
		return h.Status == "ok" && len(h.Problems) == 0 && h.Components["disco"] == "ok; 15 GiB livres de 20 GiB (75 %)"
	}) {
		t.Errorf("health after freeing the disk: %+v", h)
	}
	if free := scrapeMetric(t, a.HTTP, "sossego_data_dir_free_bytes").GetGauge().GetValue(); free != 15*gib {
		t.Errorf("/metrics: free %v after freeing the disk, want %d", free, 15*gib)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	for _, p := range fake.paths {
		if p != dir {
			t.Fatalf("measured %q, want the data dir %q", p, dir)
		}
	}
}
