package ingest

import (
	"context"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// observe hands a committed group's new readings and statuses to the
// observers, then acknowledges its messages to the broker.
func (in *Ingester) observe(ctx context.Context, c committedGroup) {
	group, w, idx, res := c.group, c.w, c.idx, c.res
	var readings []Reading
	for j, b := range w.Batches {
		if !res.New[j] {
			continue
		}
		if b.Kind == wire.KindEnv {
			in.observeEnv(ctx, b)
			continue
		}
		if b.Kind == wire.KindCheck {
			in.observeCheck(ctx, b, group[idx[j]].check)
			continue
		}
		if len(in.o.Observers) == 0 || b.Kind != wire.KindLevels {
			continue
		}
		it := group[idx[j]]
		sn := it.sensor
		r := Reading{Sensor: b.Sensor, Gateway: b.Gateway, Municipality: b.Municipality, Code: sn.Code, Zone: sn.Zone,
			Location: sn.Location, Address: sn.Address, Establishments: sn.Establishments, Grade: it.grade,
			Meter: sn.Meter, Device: b.Device, Clock: b.Clock, Verified: b.Verified, Seq: b.Seq,
			ReceivedAt: b.ReceivedAt}
		readings = readings[:0]
		for _, rec := range b.Records {
			r.Record = rec
			readings = append(readings, r)
		}
		for _, o := range in.o.Observers {
			if bo, ok := o.(BatchObserver); ok {
				bo.ObserveBatch(ctx, readings)
				continue
			}
			for i := range readings {
				o.Observe(ctx, readings[i])
			}
		}
	}
	for _, st := range w.Statuses {
		for _, o := range in.o.Observers {
			if so, ok := o.(StatusObserver); ok {
				so.ObserveStatus(ctx, st)
			}
		}
	}
	for _, e := range c.events {
		for _, o := range in.o.Observers {
			if eo, ok := o.(EventObserver); ok {
				eo.ObserveEvent(ctx, e)
			}
		}
	}
	// The broker-level acknowledgements go last: a message counts as handled
	// once it is stored, acked to its gateway and evaluated, so whoever waits
	// for them (the MQTT session, a test) sees all of that.
	for _, it := range group {
		in.gate.release(it.msg.held)
		if it.msg.Done != nil {
			it.msg.Done()
		}
	}
}

// observeEnv hands a newly stored env batch's records to the observers
// that implement EnvObserver.
func (in *Ingester) observeEnv(ctx context.Context, b store.Batch) {
	for _, o := range in.o.Observers {
		eo, ok := o.(EnvObserver)
		if !ok {
			continue
		}
		for _, rec := range b.Env {
			eo.ObserveEnv(ctx, EnvReading{Sensor: b.Sensor, Gateway: b.Gateway, Municipality: b.Municipality,
				Device: b.Device, Clock: b.Clock, Verified: b.Verified, Seq: b.Seq, ReceivedAt: b.ReceivedAt, Record: rec})
		}
	}
}

// observeCheck hands a newly stored check to the observers that implement
// CheckObserver.
func (in *Ingester) observeCheck(ctx context.Context, b store.Batch, c *wire.Check) {
	if c == nil {
		return
	}
	for _, o := range in.o.Observers {
		if co, ok := o.(CheckObserver); ok {
			co.ObserveCheck(ctx, CheckReading{Sensor: b.Sensor, Gateway: b.Gateway, Municipality: b.Municipality, Device: b.Device,
				Check: *c, Verified: b.Verified, Seq: b.Seq, ReceivedAt: b.ReceivedAt, Body: b.Body, Sig: b.Sig})
		}
	}
}
