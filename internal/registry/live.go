package registry

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Live holds the current register and replaces it when its file changes.
// Readers call Current, which never blocks; a reload that fails keeps the
// register in force and is reported by Err and the log.
type Live struct {
	path   string
	log    *slog.Logger
	checks []Check
	cur    atomic.Pointer[Registry]

	mu      sync.Mutex // serialises reloads
	modTime time.Time
	size    int64
	lastErr error
}

// NewLive wraps a fixed register (no file to reload).
func NewLive(r *Registry) *Live {
	l := &Live{log: slog.New(slog.DiscardHandler)}
	l.cur.Store(r)
	return l
}

// Check is a rule of the service's on top of the register's own validation
// (e.g. no gateway with a demonstration key outside the demo). Its error is
// pt-BR and says what to change.
type Check func(*Registry) error

// Open reads and validates the register at path. Every reload (file change,
// SIGHUP, the API) passes the same validation and the checks, or keeps the
// register in force.
func Open(path string, log *slog.Logger, checks ...Check) (*Live, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Live{path: path, log: log, checks: checks}
	if err := l.Reload(); err != nil {
		return nil, err
	}
	return l, nil
}

// Current returns the register in force.
func (l *Live) Current() *Registry { return l.cur.Load() }

// Path is the file the register comes from ("" for a fixed register).
func (l *Live) Path() string { return l.path }

// Err is the error of the last reload, nil if it succeeded.
func (l *Live) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr
}

// Check runs the checks Open was given on r (a register about to be
// written, for instance).
func (l *Live) Check(r *Registry) error {
	for _, c := range l.checks {
		if err := c(r); err != nil {
			return err
		}
	}
	return nil
}

// Reload re-reads the file and swaps the register in if it is valid.
func (l *Live) Reload() error {
	if l.path == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := os.Stat(l.path)
	if err != nil {
		l.lastErr = fmt.Errorf("registry: %w", err)
		return l.lastErr
	}
	data, err := os.ReadFile(l.path)
	if err != nil {
		l.lastErr = fmt.Errorf("registry: %w", err)
		return l.lastErr
	}
	r, err := Parse(data)
	if err != nil {
		l.lastErr = fmt.Errorf("registry: %s: %w", l.path, err)
		// Do not retry the same broken file on every poll.
		l.modTime, l.size = st.ModTime(), st.Size()
		return l.lastErr
	}
	if err := l.Check(r); err != nil {
		l.lastErr = fmt.Errorf("registry: %s: %w", l.path, err)
		l.modTime, l.size = st.ModTime(), st.Size()
		return l.lastErr
	}
	l.cur.Store(r)
	l.modTime, l.size = st.ModTime(), st.Size()
	l.lastErr = nil
	return nil
}

func (l *Live) changed() bool {
	st, err := os.Stat(l.path)
	if err != nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return !st.ModTime().Equal(l.modTime) || st.Size() != l.size
}

// Run polls the file every interval and reloads it when its modification
// time or size changes, and reloads on every receive from hup (SIGHUP).
// It returns nil when ctx ends.
func (l *Live) Run(ctx context.Context, interval time.Duration, hup <-chan struct{}) error {
	if l.path == "" {
		<-ctx.Done()
		return nil
	}
	if interval <= 0 {
		interval = 2 * time.Second
	}
	tk := time.NewTicker(interval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tk.C:
			if !l.changed() {
				continue
			}
		case <-hup:
		}
		if err := l.Reload(); err != nil {
			l.log.Error("cadastro inválido; mantido o anterior", "arquivo", l.path, "erro", err)
		} else {
			r := l.Current()
			l.log.Info("cadastro recarregado", "arquivo", l.path, "gateways", len(r.gwOrder), "sensores", len(r.snOrder))
		}
	}
}
