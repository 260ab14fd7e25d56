package holidays

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
)

// Register is what Apply and Watch read of the register of decreed days
// (*holidaysdb.Store).
type Register interface {
	// List returns the entries of a municipality ("" = every one).
	List(ctx context.Context, municipality string) ([]Entry, error)
	// Seq is the number of the register's last change (0 when empty).
	Seq(ctx context.Context) (int64, error)
}

// Target takes the decreed days (*codes.Set).
type Target interface {
	Codes
	SetDecreed(byCode map[string][]codes.Decreed) error
}

// Apply reads the register and hands every entry to set, so the codes it
// returns from then on carry them. Entries of a municipality the set no
// longer loads are left out and logged.
func Apply(ctx context.Context, s Register, set Target, log *slog.Logger) (int, error) {
	entries, err := s.List(ctx, "")
	if err != nil {
		return 0, err
	}
	by, unknown := ByMunicipality(set, entries)
	if len(unknown) > 0 && log != nil {
		log.Warn("feriados municipais de códigos não carregados ficam de fora", "municipios", strings.Join(unknown, ", "))
	}
	if err := set.SetDecreed(by); err != nil {
		return 0, fmt.Errorf("holidays: apply: %w", err)
	}
	n := 0
	for _, d := range by {
		n += len(d)
	}
	return n, nil
}

// Watch keeps a set in step with the register: Run applies it at once and
// again whenever the log moves (a change through the API applies at once
// through Changed; one through the CLI, from another process, within
// Every).
type Watch struct {
	Store Register
	Set   Target
	Every time.Duration // default 15 s
	Log   *slog.Logger
	kick  chan struct{}
}

// NewWatch returns a Watch.
func NewWatch(s Register, set Target, every time.Duration, log *slog.Logger) *Watch {
	if every <= 0 {
		every = 15 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watch{Store: s, Set: set, Every: every, Log: log, kick: make(chan struct{}, 1)}
}

// Changed asks Run to re-read the register now.
func (w *Watch) Changed() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Sync applies the register if its log moved past seen; it returns the new
// position.
func (w *Watch) Sync(ctx context.Context, seen int64) (int64, error) {
	seq, err := w.Store.Seq(ctx)
	if err != nil {
		return seen, err
	}
	if seq == seen {
		return seen, nil
	}
	n, err := Apply(ctx, w.Store, w.Set, w.Log)
	if err != nil {
		return seen, err
	}
	w.Log.Info("feriados municipais aplicados ao calendário", "dias", n, "alteracao", seq)
	return seq, nil
}

// Run applies the register now and follows it until ctx ends. A read that
// fails is logged and retried at the next tick; the calendar in force
// stays as it was.
func (w *Watch) Run(ctx context.Context) error {
	seen := int64(-1)
	t := time.NewTicker(w.Every)
	defer t.Stop()
	for {
		var err error
		if seen, err = w.Sync(ctx, seen); err != nil && ctx.Err() == nil {
			w.Log.Error("feriados municipais: falha ao ler o cadastro; o calendário em vigor continua", "erro", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-w.kick:
		}
	}
}
