package calibrationdb

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/ingest"
)

// Observer feeds the register from ingest: the device each sensor's signed
// level batches report (a change of model or serial is recorded, and a
// device other than the certificate's is a warning: a log line and
// sossego_calibration_device_mismatch_total), and every stored field check.
// It runs on ingest's observer goroutine and writes only on a change of
// device or a check, which are rare.
type Observer struct{ r *Register }

// Observer returns the register's ingest observer.
func (r *Register) Observer() Observer { return Observer{r} }

// Observe takes one reading (ingest calls ObserveBatch instead).
func (o Observer) Observe(ctx context.Context, rd ingest.Reading) {
	o.ObserveBatch(ctx, []ingest.Reading{rd})
}

// ObserveBatch takes a stored batch's readings: they share one device.
func (o Observer) ObserveBatch(ctx context.Context, rs []ingest.Reading) {
	if len(rs) == 0 {
		return
	}
	rd := rs[0]
	if rd.Verified {
		o.saw(ctx, sightingOf(rd))
	}
	o.r.handled(ctx, rd.Gateway, rd.Seq)
}

// sightingOf is the device a levels batch reports, from its first reading.
func sightingOf(rd ingest.Reading) calibration.Sighting {
	return calibration.Sighting{Sensor: rd.Sensor, Model: rd.Device.Model, Serial: rd.Device.Serial, At: rd.Record.T.UTC(),
		Gateway: rd.Gateway, Seq: rd.Seq}
}

// saw records s if it is a change. A sighting that cannot be written (a
// full disk, say) is kept in memory with the sensor's others since, and
// written, dated from its own batch, with the sensor's next sighting that
// can be; meanwhile the last batch handled is not saved past it, so a stop
// reads those batches again at the next start (CatchUp).
func (o Observer) saw(ctx context.Context, s calibration.Sighting) {
	r := o.r
	if r.addPending(s, false) {
		o.flushPending(ctx, s.Sensor)
		return
	}
	changed, err := r.Saw(ctx, s)
	if err != nil {
		r.o.Log.Error("registro de calibração: não foi possível guardar o medidor informado; nova tentativa no próximo lote do sensor",
			"sensor", s.Sensor, "gateway", s.Gateway, "seq", s.Seq, "erro", err)
		r.addPending(s, true)
		return
	}
	if changed {
		r.warnMismatch(ctx, s)
	}
}

// addPending appends s to its sensor's sightings not written yet — when it
// has some, or always if force — unless it reports the same meter as the
// last of them. It says whether the sensor has any.
func (r *Register) addPending(s calibration.Sighting, force bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.pending[s.Sensor]
	if len(list) == 0 && !force {
		return false
	}
	if n := len(list); n == 0 || list[n-1].Model != s.Model || list[n-1].Serial != s.Serial {
		r.pending[s.Sensor] = append(list, s)
	}
	return true
}

// flushPending writes the sensor's sightings not written yet, in order,
// each only where the meter in force at its instant differs (sawAt); what
// fails stays for the next try.
func (o Observer) flushPending(ctx context.Context, sensor string) {
	r := o.r
	r.mu.Lock()
	list := slices.Clone(r.pending[sensor])
	r.mu.Unlock()
	for i, p := range list {
		written, err := r.sawAt(ctx, p)
		if err != nil {
			r.o.Log.Error("registro de calibração: não foi possível guardar o medidor informado; nova tentativa no próximo lote do sensor",
				"sensor", p.Sensor, "gateway", p.Gateway, "seq", p.Seq, "erro", err)
			r.mu.Lock()
			r.pending[sensor] = list[i:]
			r.mu.Unlock()
			return
		}
		if written {
			r.warnMismatch(ctx, p)
		}
	}
	r.mu.Lock()
	delete(r.pending, sensor)
	r.dev[sensor] = list[len(list)-1]
	r.mu.Unlock()
}

// warnMismatch logs and counts a new sighting whose device differs from
// the certificate in force.
func (r *Register) warnMismatch(ctx context.Context, s calibration.Sighting) {
	v, err := r.Verdict(ctx, s.Sensor, s.At)
	if err != nil {
		r.o.Log.Error("registro de calibração ilegível", "sensor", s.Sensor, "erro", err)
		return
	}
	if v.Mismatch {
		r.mismatches.Inc()
		r.o.Log.Warn("o medidor informado nos lotes assinados difere do certificado de calibração: as leituras são indicativas",
			"sensor", s.Sensor, "gateway", s.Gateway, "seq", s.Seq, "modelo", s.Model, "serie", s.Serial,
			"modelo_certificado", v.Certificate.MeterModel, "serie_certificado", v.Certificate.MeterSerial,
			"certificado", v.Certificate.Number)
	}
}

// ObserveCheck stores a field check (with its signed message) and the
// device it reports.
func (o Observer) ObserveCheck(ctx context.Context, c ingest.CheckReading) {
	r := o.r
	k := calibration.FieldCheck{Sensor: c.Sensor, Gateway: c.Gateway, Municipality: c.Municipality, Seq: c.Seq, At: c.Check.T.UTC(),
		ReferenceDB: c.Check.ReferenceDB, MeasuredDB: c.Check.MeasuredDB, FrequencyHz: c.Check.FrequencyHz,
		CalibratorModel: c.Check.CalibratorModel, CalibratorSerial: c.Check.CalibratorSerial, Note: c.Check.Note,
		MeterModel: c.Device.Model, MeterSerial: c.Device.Serial, Verified: c.Verified, ReceivedAt: c.ReceivedAt}
	stored, err := r.RecordCheck(ctx, k, c.Body, c.Sig)
	if err != nil {
		r.o.Log.Error("registro de calibração: não foi possível guardar a verificação de campo (o lote assinado está no banco de leituras)",
			"sensor", c.Sensor, "gateway", c.Gateway, "seq", c.Seq, "erro", err)
		return
	}
	if stored {
		r.o.Log.Info("verificação de campo com calibrador recebida", "sensor", c.Sensor, "gateway", c.Gateway,
			"referencia_db", k.ReferenceDB, "medido_db", k.MeasuredDB, "desvio_db", k.Drift())
	}
	if c.Verified {
		o.saw(ctx, calibration.Sighting{Sensor: c.Sensor, Model: c.Device.Model, Serial: c.Device.Serial, At: k.At, Gateway: c.Gateway, Seq: c.Seq})
	}
	r.handled(ctx, c.Gateway, c.Seq)
}

// observedEvery is how often the observer saves the last batch it handled:
// a stop reads again at most this much of the readings store at the next
// start (plus what ingest had stored but not yet handed over).
const observedEvery = 30 * time.Second

// seenBatch is the last batch the observer handled.
type seenBatch struct {
	gateway string
	seq     uint64
	savedAt time.Time
	// dirty: not saved yet. frozen: the catch-up at start failed, so what
	// is saved stays where it is and the next start reads the batches
	// after it again.
	dirty, frozen bool
}

// handled notes that the observer is done with gateway/seq. While a
// sighting waits to be written, the batch handled before it is what is
// saved.
func (r *Register) handled(ctx context.Context, gateway string, seq uint64) {
	r.mu.Lock()
	stuck := len(r.pending) > 0
	r.mu.Unlock()
	r.seenMu.Lock()
	defer r.seenMu.Unlock()
	if r.seen.frozen {
		return
	}
	if stuck {
		r.saveSeenLocked(ctx)
		return
	}
	r.seen.gateway, r.seen.seq, r.seen.dirty = gateway, seq, true
	if now := r.o.Now(); now.Sub(r.seen.savedAt) >= observedEvery || now.Before(r.seen.savedAt) {
		r.saveSeenLocked(ctx)
	}
}

// saveSeenLocked writes the last batch handled, if not written yet; a
// failure is logged and the next call tries again.
func (r *Register) saveSeenLocked(ctx context.Context) {
	if !r.seen.dirty {
		return
	}
	if err := r.saveObserved(ctx, r.seen.gateway, r.seen.seq); err != nil {
		r.o.Log.Error("registro de calibração: não foi possível guardar o último lote visto", "erro", err)
		return
	}
	r.seen.dirty, r.seen.savedAt = false, r.o.Now()
}

func (r *Register) saveObserved(ctx context.Context, gateway string, seq uint64) error {
	if _, err := r.db.ExecContext(ctx, `INSERT INTO observed(id, gateway, seq) VALUES (1, ?, ?)
		ON CONFLICT(id) DO UPDATE SET gateway = excluded.gateway, seq = excluded.seq`, gateway, int64(seq)); err != nil {
		return fmt.Errorf("calibration: last batch handled: %w", err)
	}
	return nil
}
