package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sossego/sossego/internal/wire"
)

// enqueue numbers, seals and stores a levels batch.
func (g *Gateway) enqueue(ctx context.Context, p Pending) {
	g.store(ctx, held{kind: wire.KindLevels, topic: g.levelsTopic, n: len(p.Records), until: p.Until(),
		build: func(seq uint64, now time.Time) wire.Batch { return g.batch(p, seq, now) }})
}

// store numbers, seals and stores a batch (levels and env batches share the
// outbox and its seq space). Nothing here ends the run: a full outbox is
// counted and reported in the status; when the disk refuses the write the
// batch waits in memory, behind any batch already waiting, and is stored
// once the disk takes writes again (retryMemory); beyond
// Options.MemoryRecords it is dropped and counted.
func (g *Gateway) store(ctx context.Context, h held) {
	g.memMu.Lock()
	defer g.memMu.Unlock()
	g.flushMemoryLocked(ctx)
	if len(g.mem) == 0 && g.storeOne(ctx, h) {
		return
	}
	if int(g.memRecords.Load())+h.n > g.opts.MemoryRecords {
		_ = g.box.Drop(ctx, h.n)
		if g.memDrops++; g.memDrops == 1 || g.memDrops%60 == 0 {
			g.log.Warn("disco recusa gravações e a memória de espera está cheia; lote descartado (contado em dropped)",
				"kind", h.kind, "records", h.n, "memory_records", g.memRecords.Load(), "dropped_total", g.box.Stats().Dropped)
		}
		g.poke()
		return
	}
	g.mem = append(g.mem, h)
	g.memRecords.Add(int64(h.n))
	g.poke()
}

// storeOne tries to store h; false means the disk refused it (the caller
// keeps it). A refusal by the full policy or a batch that cannot be sealed
// counts as done: both are counted as dropped.
func (g *Gateway) storeOne(ctx context.Context, h held) bool {
	now := g.now().UTC()
	seq, err := g.box.Store(ctx, now, Put{Topic: h.topic, Records: h.n, Until: h.until, Seal: func(seq uint64) ([]byte, error) {
		b := h.build(seq, now)
		return wire.Seal(&b, g.key)
	}})
	switch {
	case err == nil:
		if g.diskDown.CompareAndSwap(true, false) {
			g.log.Info("a fila (outbox) voltou a gravar no disco", "memory_records", g.memRecords.Load())
			g.poke()
		}
		g.log.Debug("batch stored", "kind", h.kind, "seq", seq, "records", h.n)
		g.poke()
		return true
	case errors.Is(err, ErrFull):
		st := g.box.Stats()
		g.log.Warn("fila (outbox) cheia; lote descartado", "kind", h.kind, "policy", g.opts.FullPolicy, "records", h.n,
			"dropped_total", st.Dropped, "pending", st.Pending, "capacity", st.Capacity)
		g.poke()
		return true
	case errors.Is(err, ErrStorage):
		if g.diskDown.CompareAndSwap(false, true) {
			g.log.Error("o disco recusa gravar a fila (outbox); lotes guardados na memória até haver espaço, acks continuam sendo aplicados",
				"erro", err, "memory_limit_records", g.opts.MemoryRecords)
			g.poke()
		}
		return false
	default:
		_ = g.box.Drop(ctx, h.n)
		g.log.Error("lote não pôde ser selado; descartado e contado", "kind", h.kind, "records", h.n, "erro", err)
		return true
	}
}

// flushMemoryLocked stores waiting batches, oldest first, until the disk
// refuses one.
func (g *Gateway) flushMemoryLocked(ctx context.Context) {
	for len(g.mem) > 0 && g.storeOne(ctx, g.mem[0]) {
		g.memRecords.Add(-int64(g.mem[0].n))
		g.mem[0] = held{}
		g.mem = g.mem[1:]
	}
	if len(g.mem) == 0 {
		g.mem = nil
	}
}

// retryMemory tries the waiting batches again (the sender calls it every
// second and after acks).
func (g *Gateway) retryMemory(ctx context.Context) {
	if g.memRecords.Load() == 0 && !g.diskDown.Load() {
		return
	}
	g.memMu.Lock()
	defer g.memMu.Unlock()
	g.flushMemoryLocked(ctx)
}

// abandonMemory runs after the loops have stopped: one last try, then the
// batches the disk still refuses are counted as dropped (the outbox writes
// the count on Close, from its reserve if need be).
func (g *Gateway) abandonMemory(ctx context.Context) {
	g.memMu.Lock()
	defer g.memMu.Unlock()
	g.flushMemoryLocked(ctx)
	if n := g.memRecords.Load(); n > 0 {
		_ = g.box.Drop(ctx, int(n))
		g.log.Error("parada com lotes na memória que o disco não aceitou; contados como descartados", "records", n)
		g.mem = nil
		g.memRecords.Store(0)
	}
}

// noRoom reports whether a new batch would be lost: the outbox is at its
// capacity, or the disk refuses writes and the memory buffer is full.
func (g *Gateway) noRoom() bool {
	if g.box.Full() {
		return true
	}
	return g.box.StorageErr() != nil && int(g.memRecords.Load()) >= g.opts.MemoryRecords
}

func (g *Gateway) batch(p Pending, seq uint64, now time.Time) wire.Batch {
	g.checkState.setDevice(p.Device) // the device a field check reports
	return wire.Batch{
		V: wire.Version, Kind: wire.KindLevels, Municipality: g.opts.Municipality, Gateway: g.opts.Gateway,
		Sensor: g.opts.Sensor, Seq: seq, SentAt: now.Truncate(time.Millisecond), Device: p.Device, Clock: p.Clock,
		Records: p.Records,
	}
}

// reseal gives a stored batch a new seq (see Outbox.Renumber). The batch
// is one this gateway sealed, so encoding/json reads it back: wire.Open's
// strict decoder is for the central service, and leaving it out keeps its
// JSON module out of the gateway binary (BENCHMARKS.md, gateway memory).
func (g *Gateway) reseal(old []byte, seq uint64) ([]byte, error) {
	var env wire.Envelope
	if err := json.Unmarshal(old, &env); err != nil {
		return nil, fmt.Errorf("gateway: reseal: %w", err)
	}
	var b wire.Batch
	if err := json.Unmarshal(env.Body, &b); err != nil {
		return nil, fmt.Errorf("gateway: reseal: %w", err)
	}
	b.Seq = seq
	return wire.Seal(&b, g.key)
}
