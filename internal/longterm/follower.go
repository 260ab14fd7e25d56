package longterm

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/store"
)

// Source is what the follower reads of the readings store.
type Source interface {
	// LevelsAfter returns up to limit level records with id > after, in id
	// order.
	LevelsAfter(ctx context.Context, after int64, limit int) ([]store.Record, error)
	MaxLevelID(ctx context.Context) (int64, error)
}

// Floorer raises the source's record ids above a cursor (sqlitestore.Store).
type Floorer interface {
	FloorLevelIDs(ctx context.Context, pos int64) error
}

// FollowerOptions configure a Follower.
type FollowerOptions struct {
	Batch int           // records per transaction; default 20000
	Poll  time.Duration // between looks for new records when caught up; default 1 s
	Log   *slog.Logger
}

// Follower folds the readings store's level records into the tier.
type Follower struct {
	src Source
	dst *Store
	o   FollowerOptions
	at  int64
	// prepared: at was read from the tier (Prepare or Run).
	prepared bool
	caughtUp chan struct{} // closed at the first step that found no backlog
	closed   bool
}

// NewFollower returns a follower of src into dst.
func NewFollower(src Source, dst *Store, o FollowerOptions) *Follower {
	if o.Batch <= 0 {
		o.Batch = 20000
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Follower{src: src, dst: dst, o: o, caughtUp: make(chan struct{})}
}

// CaughtUp is closed once the follower has folded in everything the
// readings store held when it started (retention waits for it: it keeps
// what the tier has not folded in).
func (f *Follower) CaughtUp() <-chan struct{} { return f.caughtUp }

// Prepare reads the cursor and, when the source can, raises the source's
// ids above it (Floorer); call it before ingest starts writing.
func (f *Follower) Prepare(ctx context.Context) error {
	at, err := f.dst.Cursor(ctx, CursorLevels)
	if err != nil {
		return err
	}
	f.at, f.prepared = at, true
	if fl, ok := f.src.(Floorer); ok {
		if err := fl.FloorLevelIDs(ctx, at); err != nil {
			return fmt.Errorf("longterm: %w", err)
		}
	}
	return nil
}

// Cursor is the id of the last record folded in.
func (f *Follower) Cursor(ctx context.Context) (int64, error) { return f.dst.Cursor(ctx, CursorLevels) }

// Backlog is the number of level records not yet folded in.
func (f *Follower) Backlog(ctx context.Context) (int64, error) {
	maxID, err := f.src.MaxLevelID(ctx)
	if err != nil {
		return 0, err
	}
	at, err := f.dst.Cursor(ctx, CursorLevels)
	if err != nil {
		return 0, err
	}
	return max(maxID-at, 0), nil
}

// Step folds the next batch of records in; it returns how many.
func (f *Follower) Step(ctx context.Context) (int, error) {
	if !f.prepared {
		at, err := f.dst.Cursor(ctx, CursorLevels)
		if err != nil {
			return 0, err
		}
		f.at, f.prepared = at, true
	}
	recs, err := f.src.LevelsAfter(ctx, f.at, f.o.Batch)
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	in := make([]Record, len(recs))
	for i, r := range recs {
		in[i] = Record{Sensor: r.Sensor, Second: stats.Second{T: r.T, DurMs: r.DurMs, LAeq: r.LAeq, LAFmax: r.LAFmax,
			LAFmin: r.LAFmin, Hist: r.Hist}}
	}
	last := recs[len(recs)-1].ID
	if err := f.dst.Add(ctx, in, CursorLevels, last); err != nil {
		return 0, err
	}
	f.at = last
	return len(recs), nil
}

// Run folds records in until ctx ends. A failure (the tier's disk full, a
// read error) is logged and tried again with a growing pause: nothing is
// lost, the records wait in the readings store (retention keeps them until
// the cursor has passed them).
func (f *Follower) Run(ctx context.Context) error {
	if !f.prepared {
		at, err := f.dst.Cursor(ctx, CursorLevels)
		if err != nil {
			return err
		}
		f.at, f.prepared = at, true
	}
	backoff, failing := time.Second, false
	for {
		n, err := f.Step(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			if !failing {
				f.o.Log.Error("agregação de longo prazo falhou; as leituras continuam no banco de leituras e serão agregadas depois",
					"erro", err)
			}
			failing = true
			if !sleep(ctx, backoff) {
				return nil
			}
			backoff = min(backoff*2, time.Minute)
			continue
		}
		if failing {
			f.o.Log.Info("agregação de longo prazo voltou a funcionar")
			failing, backoff = false, time.Second
		}
		if n < f.o.Batch {
			if !f.closed {
				close(f.caughtUp)
				f.closed = true
			}
			if !sleep(ctx, f.o.Poll) {
				return nil
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
