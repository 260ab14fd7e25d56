package gateway

import (
	"context"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/wire"
)

func (g *Gateway) readClock(now time.Time) wire.Clock {
	c, err := g.sync.SyncState()
	if err != nil {
		g.log.Warn("estado do relógio ilegível; registros marcados como não sincronizados", "erro", err)
		c = unsyncedClock
	}
	g.clockMu.Lock()
	g.clock = c
	g.clockMu.Unlock()
	return c
}

func (g *Gateway) currentClock() wire.Clock {
	g.clockMu.Lock()
	defer g.clockMu.Unlock()
	return g.clock
}

func (g *Gateway) sample(ctx context.Context) error {
	// Database writes finish even when ctx ends mid-way: a batch that has
	// been cut must reach the outbox (they take milliseconds).
	sp := &sampler{dbctx: context.WithoutCancel(ctx), agg: NewAggregator(g.opts.SamplePeriod)}
	sp.agg.Seed(g.box.High())
	sp.bat = &Batcher{MaxRecords: g.opts.BatchRecords, MaxAge: g.opts.BatchMaxAge}
	tick := time.NewTicker(g.opts.SamplePeriod)
	defer tick.Stop()

	sp.clk = g.readClock(g.now())
	sp.lastClock = g.now()
	for {
		select {
		case <-ctx.Done():
			// Persist what is in memory, even though the run is over.
			g.flushSampler(sp)
			return nil
		case <-tick.C:
		}
		g.sampleTick(sp)
	}
}

// sampler is the state of the sampling loop between ticks.
type sampler struct {
	dbctx     context.Context // never cancelled: a cut batch reaches the outbox
	agg       *Aggregator
	bat       *Batcher
	clk       wire.Clock // the clock's state, read again at most once a second
	lastClock time.Time
	skipped   time.Duration // sampling time skipped while the outbox is full, under 1 s
	wasFull   bool
}

// flushSampler cuts the seconds and the batch in progress and stores them.
func (g *Gateway) flushSampler(sp *sampler) {
	for _, o := range sp.agg.Flush() {
		for _, p := range sp.bat.Add(o, g.now()) {
			g.enqueue(sp.dbctx, p)
		}
	}
	if p, ok := sp.bat.Flush(); ok {
		g.enqueue(sp.dbctx, p)
	}
}

// sampleTick is one tick of the sampling loop: it follows the clock and
// the outbox's room, reads the meter and stores the batches completed.
// With the outbox full under stop-sampling it counts the seconds not
// measured instead.
func (g *Gateway) sampleTick(sp *sampler) {
	now := g.now()
	if now.Round(0).Sub(sp.lastClock.Round(0)).Abs() >= time.Second {
		sp.clk = g.readClock(now)
		sp.lastClock = now
	}
	if full := g.noRoom(); full != sp.wasFull {
		sp.wasFull = full
		g.poke() // status changes
	}
	if g.opts.FullPolicy == StopSampling && sp.wasFull {
		g.flushSampler(sp)
		sp.skipped += g.opts.SamplePeriod
		if s := int(sp.skipped / time.Second); s > 0 {
			sp.skipped -= time.Duration(s) * time.Second
			_ = g.box.Drop(sp.dbctx, s)
		}
		return
	}
	s, ok := g.readMeter(now)
	if !ok {
		return
	}
	outs, err := sp.agg.Add(s, sp.clk)
	if err != nil {
		g.meterFailed("amostra do medidor recusada", err)
		return
	}
	for _, st := range sp.agg.Steps() {
		g.log.Warn("o relógio voltou no tempo; os segundos medidos de novo vão em lotes marcados (clock.source=step, synced=false)",
			"at", st.At, "back", st.Back.Round(time.Millisecond))
	}
	for _, o := range outs {
		for _, p := range sp.bat.Add(o, g.now()) {
			g.enqueue(sp.dbctx, p)
		}
	}
	if p, ok := sp.bat.Due(now); ok {
		g.enqueue(sp.dbctx, p)
	}
	for _, m := range sp.agg.Minutes() {
		g.log.Debug("minute", "start", m.Start, "laeq_db", m.LAeq, "lafmax_db", m.LAFmax,
			"l10_db", m.L10, "l50_db", m.L50, "l90_db", m.L90, "records", m.NumRecords)
	}
}

// readMeter reads one sample, stamped now when the meter does not stamp
// it; a failure is counted and logged.
func (g *Gateway) readMeter(now time.Time) (bridge.Sample, bool) {
	var s bridge.Sample
	if err := g.meter.Sense(&s); err != nil {
		g.meterFailed("leitura do medidor falhou", err)
		return s, false
	}
	if s.At.IsZero() {
		s.At = now
	}
	return s, true
}

// meterFailed counts a failed or refused reading and logs the first and
// every 600th.
func (g *Gateway) meterFailed(msg string, err error) {
	if n := g.senseErrors.Add(1); n == 1 || n%600 == 0 {
		g.log.Warn(msg, "meter", g.meter.String(), "erro", err, "failures", n)
	}
}
