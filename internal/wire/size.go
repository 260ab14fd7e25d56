package wire

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/sossego/sossego/internal/level"
)

// The largest message a batch of n records can need, derived from the
// contract's limits: every field present and at its longest as
// encoding/json writes it (the encoder Seal, and so every gateway, uses).
// A receiver refuses a message longer than that for the records it holds
// (CheckSize): the bytes beyond it are padding (white space, long number
// spellings) that only fill the store.
//
// The longest value of each field:
//   - ids: MaxIDLength bytes of [a-z0-9_-] (nothing to escape);
//   - free text (device.*, clock.source): MaxTextLen bytes of '<', which
//     encoding/json escapes as \u003c, 6 bytes each (no byte takes more);
//   - numbers: 17 significant digits (the most a float64 needs to round
//     trip) in the fixed form below 1e-5, "-0.0000012345678901234567",
//     25 bytes (the exponent form is shorter); seq at MaxSeq, dur_ms at
//     MaxDurMs;
//   - times: RFC 3339 with nanoseconds and a zone offset, 35 bytes;
//   - a histogram: every bin 0–2000 present.
//
// They are worked out on first use (a few milliseconds of encoding), not
// when the program starts: most commands never need them.
var worstSizes = sync.OnceValue(func() sizes {
	lr, er := mustLen(worstRecord()), mustLen(worstEnvRecord())
	return sizes{levelRecord: lr, envRecord: er, levelsOverhead: batchOverhead(KindLevels, lr), envOverhead: batchOverhead(KindEnv, er)}
})

// sizes is the longest record of each kind and the rest of a batch.
type sizes struct{ levelRecord, envRecord, levelsOverhead, envOverhead int }

const worstFloat = -1.2345678901234567e-6

func worstTime() time.Time {
	return time.Date(2026, 12, 31, 23, 59, 59, 123456789, time.FixedZone("", -(13*3600+59*60)))
}

func worstRecord() Record {
	v := worstFloat
	h := &level.Histogram{Bins: make(map[int]float64, histBins)}
	for b := range histBins {
		h.Bins[b] = worstFloat
	}
	return Record{T: worstTime(), DurMs: MaxDurMs, LAeq: v, LAFmax: v, LAFmin: v, LCpeak: &v, Hist: h, Overload: true}
}

// histBins is the number of bins a histogram may have (0–2000).
const histBins = 2001

func worstEnvRecord() EnvRecord {
	v := worstFloat
	return EnvRecord{T: worstTime(), TemperatureC: &v, HumidityPct: &v, PressureHPa: &v}
}

func mustLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		panic("wire: worst-case size: " + err.Error())
	}
	return len(b)
}

// batchOverhead is the envelope and body of a one-record batch of kind,
// less that record (rec bytes at its longest): a batch of n records takes
// overhead + n records + n−1 commas.
func batchOverhead(kind string, rec int) int {
	id := strings.Repeat("a", MaxIDLength)
	text := strings.Repeat("<", MaxTextLen)
	b := Batch{V: Version, Kind: kind, Municipality: id, Gateway: id, Sensor: id, Seq: MaxSeq, SentAt: worstTime(),
		Device: Device{Model: text, Serial: text, Firmware: text, Grade: "screening", CalibratedAt: "2026-12-31"},
		Clock:  Clock{Synced: false, OffsetMs: worstFloat, Source: text}}
	if kind == KindEnv {
		b.Env = []EnvRecord{worstEnvRecord()}
	} else {
		b.Records = []Record{worstRecord()}
	}
	body, err := json.Marshal(b)
	if err != nil {
		panic("wire: worst-case size: " + err.Error())
	}
	env := mustLen(Envelope{V: Version, Kid: id, Body: body, Sig: make([]byte, 64)})
	return env - rec
}

// MaxMessageSize is the largest envelope a batch of kind (KindLevels or
// KindEnv) with n records (or env readings) can need, at most MaxPayload.
func MaxMessageSize(kind string, n int) int {
	if n < 1 {
		n = 1
	}
	ws := worstSizes()
	over, rec := ws.levelsOverhead, ws.levelRecord
	if kind == KindEnv {
		over, rec = ws.envOverhead, ws.envRecord
	}
	if n > (MaxPayload-over)/(rec+1)+1 {
		return MaxPayload
	}
	return min(MaxPayload, over+n*rec+(n-1))
}

// CheckSize rejects (ReasonSize) a message of size bytes that is larger
// than its batch's records can need (MaxMessageSize).
func CheckSize(size int, b *Batch) error {
	if b.Kind == KindCheck {
		if size > MaxCheckPayload {
			return reject(ReasonSize, "mensagem check com %d bytes excede o máximo de %d", size, MaxCheckPayload)
		}
		return nil
	}
	n := len(b.Records)
	if b.Kind == KindEnv {
		n = len(b.Env)
	}
	if limit := MaxMessageSize(b.Kind, n); size > limit {
		return reject(ReasonSize, "mensagem com %d bytes para %d registros excede o máximo de %d que eles podem ocupar (espaços ou números escritos por extenso?)",
			size, n, limit)
	}
	return nil
}
