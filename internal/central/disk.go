package central

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/dashboard"
)

// DefaultMinFreeDisk is the free space on the data dir's file system below
// which the health report turns "degradado" (--min-free-disk).
const DefaultMinFreeDisk = 1 << 30 // 1 GiB

// defaultDiskPoll is how often the data dir's free space is measured.
const defaultDiskPoll = 30 * time.Second

// DiskSpace measures the file system that holds path: the bytes an
// unprivileged process may still write (free) and its size (total). The
// real one is statfs(2); tests pass a fake.
type DiskSpace func(path string) (free, total uint64, err error)

// diskState is the outcome of the last measurement.
type diskState int

const (
	diskOK diskState = iota
	diskLow
	diskFailing     // the measurement itself failed
	diskUnsupported // no statfs on this system: nothing is reported
)

// diskWatch measures the data dir's free space at start and every poll:
// it feeds the health report and the data-dir gauges, and logs when the
// free space crosses the threshold (and back), not on every tick.
type diskWatch struct {
	dir   string
	min   uint64 // 0: no threshold
	space DiskSpace
	poll  time.Duration
	log   *slog.Logger

	mu          sync.Mutex
	state       diskState
	free, total uint64
	err         error
}

// newDiskWatch takes the threshold as Options.MinFreeDisk does: 0 →
// DefaultMinFreeDisk, negative → none.
func newDiskWatch(dir string, minFree int64, space DiskSpace, poll time.Duration, log *slog.Logger) *diskWatch {
	if space == nil {
		space = statfsSpace
	}
	if poll <= 0 {
		poll = defaultDiskPoll
	}
	switch {
	case minFree == 0:
		minFree = DefaultMinFreeDisk
	case minFree < 0:
		minFree = 0
	}
	return &diskWatch{dir: dir, min: uint64(minFree), space: space, poll: poll, log: log}
}

// Run measures every poll until ctx ends.
func (w *diskWatch) Run(ctx context.Context) error {
	t := time.NewTicker(w.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			w.check()
		}
	}
}

// check measures once, updates the state and logs a change of state.
func (w *diskWatch) check() {
	free, total, err := w.space(w.dir)
	next := diskOK
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		next = diskUnsupported
	case err != nil:
		next = diskFailing
	case free < w.min:
		next = diskLow
	}
	w.mu.Lock()
	prev := w.state
	w.state, w.err = next, err
	if err == nil {
		w.free, w.total = free, total
	}
	w.mu.Unlock()
	if next == prev {
		return
	}
	switch next {
	case diskLow:
		w.log.Warn("pouco espaço livre no disco de dados: libere espaço ou aumente o volume; sem espaço a ingestão para de confirmar leituras",
			"pasta", w.dir, "livre", FormatBytes(free), "total", FormatBytes(total), "limite", FormatBytes(w.min))
	case diskFailing:
		w.log.Warn("não foi possível medir o espaço livre do disco de dados", "pasta", w.dir, "erro", err)
	case diskUnsupported:
		w.log.Info("espaço livre do disco de dados não é medido neste sistema", "pasta", w.dir)
	case diskOK:
		if prev == diskLow {
			w.log.Info("espaço livre do disco de dados de volta acima do limite", "pasta", w.dir, "livre", FormatBytes(free),
				"total", FormatBytes(total), "limite", FormatBytes(w.min))
		} else {
			w.log.Info("espaço livre do disco de dados medido de novo", "pasta", w.dir, "livre", FormatBytes(free),
				"total", FormatBytes(total))
		}
	}
}

// report adds the "disco" component, and a problem when the free space is
// below the threshold or cannot be measured, to h.
func (w *diskWatch) report(h *dashboard.HealthReport) {
	w.mu.Lock()
	state, free, total, err := w.state, w.free, w.total, w.err
	w.mu.Unlock()
	space := FormatBytes(free) + " livres de " + FormatBytes(total) + percent(free, total)
	switch state {
	case diskOK:
		h.Components["disco"] = "ok; " + space
	case diskLow:
		h.Components["disco"] = "abaixo do mínimo; " + space
		h.Problems = append(h.Problems, fmt.Sprintf("disco de dados (%s) com %s livres%s, abaixo do mínimo de %s (--min-free-disk): "+
			"libere espaço ou aumente o volume — sem espaço o SQLite não grava, a ingestão para de confirmar leituras "+
			"e os gateways passam a acumulá-las", w.dir, FormatBytes(free), percent(free, total), FormatBytes(w.min)))
	case diskFailing:
		h.Components["disco"] = "não medido: " + err.Error()
		h.Problems = append(h.Problems, fmt.Sprintf("não foi possível medir o espaço livre do disco de dados (%s): %v; "+
			"verifique se a pasta (--data-dir) existe e pode ser lida pelo serviço", w.dir, err))
	case diskUnsupported:
		h.Components["disco"] = "não medido neste sistema"
	}
}

var (
	diskFreeDesc = prometheus.NewDesc("sossego_data_dir_free_bytes",
		"Bytes the service may still write on the data dir's file system (statfs f_bavail), at the last measurement.", nil, nil)
	diskTotalDesc = prometheus.NewDesc("sossego_data_dir_total_bytes",
		"Size in bytes of the data dir's file system, at the last measurement.", nil, nil)
)

// Describe implements prometheus.Collector.
func (w *diskWatch) Describe(ch chan<- *prometheus.Desc) {
	ch <- diskFreeDesc
	ch <- diskTotalDesc
}

// Collect implements prometheus.Collector. Nothing is exported while the
// last measurement failed: a stale value would look current.
func (w *diskWatch) Collect(ch chan<- prometheus.Metric) {
	w.mu.Lock()
	state, free, total := w.state, w.free, w.total
	w.mu.Unlock()
	if state != diskOK && state != diskLow {
		return
	}
	ch <- prometheus.MustNewConstMetric(diskFreeDesc, prometheus.GaugeValue, float64(free))
	ch <- prometheus.MustNewConstMetric(diskTotalDesc, prometheus.GaugeValue, float64(total))
}

var _ prometheus.Collector = (*diskWatch)(nil)

// FormatBytes writes n in binary units the pt-BR way: "812 MiB", "1,5 GiB"
// (the disk watch's messages, the backup command's summary).
func FormatBytes(n uint64) string {
	if n < 1024 {
		return strconv.FormatUint(n, 10) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	prec := 1
	if v >= 100 {
		prec = 0
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	s = strings.TrimSuffix(s, ".0")
	return strings.Replace(s, ".", ",", 1) + " " + units[i]
}

// percent is " (3 %)", free as a share of total, or "" without a total.
func percent(free, total uint64) string {
	if total == 0 {
		return ""
	}
	return fmt.Sprintf(" (%.0f %%)", math.Floor(100*float64(free)/float64(total)))
}

// sizeUnits are the suffixes ParseSize accepts (case-insensitive).
var sizeUnits = map[string]uint64{
	"b":  1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseSize reads a size in bytes for a flag: a whole number with an
// optional unit, "500MB" (powers of 1000: kB, MB, GB, TB), "2GiB" (powers
// of 1024: KiB, MiB, GiB, TiB), "0" or "4096" (bytes). Units are
// case-insensitive; a space may separate them from the number. Its errors
// are pt-BR: they are shown to the operator as they are.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	digits, unit := t[:i], strings.ToLower(strings.TrimPrefix(t[i:], " "))
	mult, ok := sizeUnits[unit]
	if unit == "" {
		mult, ok = 1, true
	}
	if digits == "" || !ok {
		return 0, fmt.Errorf("tamanho %q inválido: use um número inteiro com unidade opcional — "+
			"kB, MB, GB, TB (potências de 1000) ou KiB, MiB, GiB, TiB (de 1024), ex.: 500MB, 2GiB", s)
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("tamanho %q grande demais", s)
	}
	return int64(n * mult), nil
}
