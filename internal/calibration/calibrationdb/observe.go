package calibrationdb

import (
	"context"

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
	if len(rs) == 0 || !rs[0].Verified {
		return
	}
	rd := rs[0]
	o.saw(ctx, calibration.Sighting{Sensor: rd.Sensor, Model: rd.Device.Model, Serial: rd.Device.Serial, At: rd.Record.T.UTC(),
		Gateway: rd.Gateway, Seq: rd.Seq})
}

func (o Observer) saw(ctx context.Context, s calibration.Sighting) {
	r := o.r
	changed, err := r.Saw(ctx, s)
	if err != nil {
		r.o.Log.Error("registro de calibração: não foi possível guardar o medidor informado", "sensor", s.Sensor, "erro", err)
		return
	}
	if !changed {
		return
	}
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
}
