package ingest

import (
	"time"

	"github.com/sossego/sossego/internal/store"
)

// ack publishes the application-level acks of a commit: one per gateway
// with a new watermark, on its municipality's topic.
func (in *Ingester) ack(group []item, w store.Write, res store.Result, now time.Time) {
	muni := map[string]string{}
	for _, it := range group {
		if it.dead != nil && it.dead.Settles {
			muni[it.dead.Gateway] = it.municipality
		}
	}
	for _, b := range w.Batches {
		muni[b.Gateway] = b.Municipality
	}
	for gw, seq := range res.Watermarks {
		m, ok := muni[gw]
		if !ok || in.o.Acks == nil || seq == 0 {
			continue
		}
		if err := in.o.Acks.Ack(m, gw, seq); err != nil {
			in.o.Metrics.ackErrors.Inc()
			if in.ackFails == 0 {
				in.ackFailErr, in.ackFailGW = err, gw
			}
			in.ackFails++
		} else {
			in.o.Metrics.acks.Inc()
		}
	}
	in.logAckFailures(now)
}

// logAckFailures logs the acks that could not be published since the
// last such line, at most once per ackLogEvery. A gateway whose ack is lost
// keeps its batches and republishes them; the next ack covers them.
func (in *Ingester) logAckFailures(now time.Time) {
	if in.ackFails == 0 || now.Sub(in.ackLoggedAt) < ackLogEvery {
		return
	}
	in.o.Log.Warn("acks não publicados; os gateways reenviam e o próximo ack os cobre", "quantos", in.ackFails,
		"primeiro_gateway", in.ackFailGW, "erro", in.ackFailErr)
	in.ackFails, in.ackFailErr, in.ackFailGW, in.ackLoggedAt = 0, nil, "", now
}

// SetAcker sets the ack publisher after construction (the MQTT subscriber
// needs the Ingester first). Call it before Run.
func (in *Ingester) SetAcker(a Acker) { in.o.Acks = a }
