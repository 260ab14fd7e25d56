package gateway

import (
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/wire"
)

// Batcher groups finished records into batches of at most MaxRecords
// records, spanning at most MaxAge of record time and waiting at most MaxAge
// of wall time (passed in) since the batch's first record arrived. A batch
// is also cut when the device or the clock's synced flag or source changes,
// so that the device and clock fields of a batch are true for every record
// in it, and before a record that does not come after the previous one
// (a backward clock step): records are always in time order within a
// batch, and re-measured seconds travel in a batch of their own marked
// source "step" (Aggregator). It is pure.
type Batcher struct {
	MaxRecords int
	MaxAge     time.Duration

	recs   []wire.Record
	opened time.Time // wall time of the first record
	dev    bridge.Device
	clock  wire.Clock
}

// Pending is a batch ready to be numbered and sealed.
type Pending struct {
	Device  wire.Device
	Clock   wire.Clock
	Records []wire.Record
}

// Add appends o, which arrived at wall time now, and returns the batches it
// completed (zero, one or two).
func (b *Batcher) Add(o Output, now time.Time) []Pending {
	var out []Pending
	if len(b.recs) > 0 && (o.Device != b.dev || o.Clock.Synced != b.clock.Synced || o.Clock.Source != b.clock.Source ||
		!o.Record.T.After(b.recs[len(b.recs)-1].T) ||
		(b.MaxAge > 0 && o.Record.T.Sub(b.recs[0].T) >= b.MaxAge)) {
		out = append(out, b.cut())
	}
	if len(b.recs) == 0 {
		b.dev, b.clock, b.opened = o.Device, o.Clock, now
	}
	if o.Clock.OffsetMs > b.clock.OffsetMs {
		b.clock.OffsetMs = o.Clock.OffsetMs
	}
	b.recs = append(b.recs, o.Record)
	if len(b.recs) >= max(1, min(b.MaxRecords, wire.MaxRecords)) {
		out = append(out, b.cut())
	}
	return out
}

// Due returns the open batch if it was opened at least MaxAge before now
// (wall time), so records get out even when the batch is not full.
func (b *Batcher) Due(now time.Time) (Pending, bool) {
	if len(b.recs) == 0 || b.MaxAge <= 0 || now.Sub(b.opened) < b.MaxAge {
		return Pending{}, false
	}
	return b.cut(), true
}

// Flush returns the open batch, if any.
func (b *Batcher) Flush() (Pending, bool) {
	if len(b.recs) == 0 {
		return Pending{}, false
	}
	return b.cut(), true
}

// Len is the number of records waiting in the open batch.
func (b *Batcher) Len() int { return len(b.recs) }

func (b *Batcher) cut() Pending {
	p := Pending{Device: wireDevice(b.dev), Clock: b.clock, Records: b.recs}
	b.recs = nil
	return p
}

// Until is the end of the batch's latest record (t + dur_ms).
func (p Pending) Until() time.Time {
	var u time.Time
	for _, r := range p.Records {
		if e := r.T.Add(time.Duration(r.DurMs) * time.Millisecond); e.After(u) {
			u = e
		}
	}
	return u
}

func wireDevice(d bridge.Device) wire.Device {
	w := wire.Device{Model: d.Model, Serial: d.Serial, Firmware: d.Firmware, Grade: string(d.Grade)}
	if !d.CalibratedAt.IsZero() {
		w.CalibratedAt = d.CalibratedAt.UTC().Format(time.DateOnly)
	}
	return w
}
