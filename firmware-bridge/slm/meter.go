package slm

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sossego/sossego/internal/level"
)

// Time constants of the exponential time weightings (IEC 61672-1 §5.7).
const (
	TauFast = 125 * time.Millisecond
	TauSlow = time.Second
)

// Defaults for Options.
const (
	DefaultRecordInterval = time.Second
	DefaultStatsInterval  = 100 * time.Millisecond
)

// FloorDBFS is the lowest level the meter reports, in dB relative to a
// full-scale sine (before OffsetDB): the level of digital silence, which
// has no finite level, while JSON, level.Histogram and the wire contract
// need one. It is 10 dB below one LSB of a 32-bit sample.
const FloorDBFS = -197.0

// msFloor is the mean square (full scale = 1) of FloorDBFS.
var msFloor = math.Pow(10, FloorDBFS/10) / 2

// histShift moves dBFS levels (FloorDBFS … +3 dB) into the 0…200 dB range
// of level.Histogram for the running summary.
const histShift = -FloorDBFS

// ErrNoSamples is returned by Summary when the meter has seen no audio.
var ErrNoSamples = errors.New("slm: no samples")

// dbfs is the level of mean square ms (full scale = 1) relative to a
// full-scale sine: 10·lg(2·ms) = 20·lg(rms / (1/√2)).
func dbfs(ms float64) float64 {
	if !(ms > msFloor) { // also catches NaN
		ms = msFloor
	}
	return 10 * math.Log10(2*ms)
}

// Options configures a Meter. SampleRate is required; zero values of the
// other fields select the defaults.
type Options struct {
	// SampleRate of the PCM, in Hz (32 000 … 192 000; the validation tests
	// cover 44 100 and 48 000).
	SampleRate int
	// OffsetDB is added to every level: the level, in dB re 20 µPa, that a
	// full-scale sine produces at the microphone (calibration). 0 gives
	// levels relative to a full-scale sine.
	OffsetDB float64
	// RecordInterval is the length of the records Process emits (default
	// 1 s). It must be a whole number of samples and of StatsIntervals.
	RecordInterval time.Duration
	// StatsInterval is how often L_AF is sampled into the histogram from
	// which L10, L50 and L90 are read (default 100 ms, or RecordInterval
	// when that is not a multiple of 100 ms).
	StatsInterval time.Duration
}

// Record holds the levels of one record interval, in dB (dBFS + OffsetDB).
type Record struct {
	Start    int64         // index of the first sample, counted from the start of the stream
	Samples  int64         // samples covered
	Duration time.Duration // Samples / SampleRate

	LAeq   float64 // A-weighted equivalent continuous level
	LCeq   float64 // C-weighted equivalent continuous level
	LAFmax float64 // maximum A-weighted Fast level
	LAFmin float64 // minimum A-weighted Fast level
	LASmax float64 // maximum A-weighted Slow level
	LCpeak float64 // peak of the C-weighted waveform (sample peak)

	// Hist holds L_AF sampled every StatsInterval, in milliseconds per
	// 0.1 dB bin. Its levels include OffsetDB, so they only fall inside the
	// histogram's 0…200 dB range once the meter is calibrated (levels below
	// 0 dB land in bin 0).
	Hist level.Histogram
}

// Summary describes a whole stream; the JSON is what `sossego slm analyze`
// prints. Levels are in dB (dBFS + OffsetDB).
type Summary struct {
	LAeq      float64 `json:"laeq_db"`
	LCeq      float64 `json:"lceq_db"`
	LAFmax    float64 `json:"lafmax_db"`
	LAFmin    float64 `json:"lafmin_db"`
	LASmax    float64 `json:"lasmax_db"`
	LCpeak    float64 `json:"lcpeak_db"`
	L10       float64 `json:"l10_db"`
	L50       float64 `json:"l50_db"`
	L90       float64 `json:"l90_db"`
	DurationS float64 `json:"duration_s"`
	Samples   int64   `json:"samples"`
	Rate      int     `json:"sample_rate"`
	OffsetDB  float64 `json:"offset_db"`
}

// acc accumulates the raw (linear) statistics of an interval.
type acc struct {
	sumA, sumC float64
	n          int64
	maxF, minF float64 // mean squares of the Fast detector
	maxS       float64
	peakC      float64 // |x_C| maximum
}

func (a *acc) reset() { *a = acc{minF: math.Inf(1)} }

func (a *acc) merge(b *acc) {
	a.sumA += b.sumA
	a.sumC += b.sumC
	a.n += b.n
	a.maxF = math.Max(a.maxF, b.maxF)
	a.minF = math.Min(a.minF, b.minF)
	a.maxS = math.Max(a.maxS, b.maxS)
	a.peakC = math.Max(a.peakC, b.peakC)
}

// Meter is a software sound-level meter: a pure engine that consumes PCM
// blocks (float64, full scale = ±1) and yields records. It does no I/O and
// reads no clock; time is the sample count. A Meter is not safe for
// concurrent use.
//
// The exponential detectors need a history the stream does not have at its
// start; the Meter therefore buffers the first 125 ms, seeds both detectors
// with their mean square (as if that sound had been going on before), and
// primes the filters with the first sample so that a DC offset does not ring.
type Meter struct {
	opts           Options
	fs             float64
	w              *bank
	alphaF, alphaS float64
	eF, eS         float64

	nWarm   int
	pending []float64
	started bool

	recN, statN   int // samples per record, per histogram tick
	recPos        int // samples into the current record
	statPos       int // samples into the current histogram tick
	pos           int64
	rec, tot      acc
	recHist       level.Histogram
	totHist       level.Histogram // dBFS + histShift
	bufA, bufC    []float64
	out           []Record
	finished      bool
	statMs, recMs float64
}

const blockLen = 1024

// NewMeter checks opts and designs the A and C filters for the sample rate.
func NewMeter(opts Options) (*Meter, error) {
	if opts.SampleRate < 32000 || opts.SampleRate > 192000 {
		return nil, &InputError{Reason: ReasonRate, Msg: fmt.Sprintf(
			"taxa de amostragem de %d Hz não suportada: use entre 32000 e 192000 Hz (44100 ou 48000 são as validadas)", opts.SampleRate)}
	}
	if math.IsNaN(opts.OffsetDB) || math.IsInf(opts.OffsetDB, 0) {
		return nil, fmt.Errorf("slm: offset %v is not a finite number", opts.OffsetDB)
	}
	if opts.RecordInterval == 0 {
		opts.RecordInterval = DefaultRecordInterval
	}
	if opts.StatsInterval == 0 {
		opts.StatsInterval = DefaultStatsInterval
		if opts.RecordInterval%DefaultStatsInterval != 0 {
			opts.StatsInterval = opts.RecordInterval
		}
	}
	fs := float64(opts.SampleRate)
	recN, okR := samplesIn(opts.RecordInterval, opts.SampleRate)
	statN, okS := samplesIn(opts.StatsInterval, opts.SampleRate)
	if !okR || !okS || recN%statN != 0 {
		return nil, fmt.Errorf("slm: record interval %v and stats interval %v must be whole numbers of samples at %d Hz, the first a multiple of the second",
			opts.RecordInterval, opts.StatsInterval, opts.SampleRate)
	}
	p, err := designParts(fs)
	if err != nil {
		return nil, err
	}
	m := &Meter{
		opts:   opts,
		fs:     fs,
		w:      newBank(p),
		alphaF: 1 - math.Exp(-1/(TauFast.Seconds()*fs)),
		alphaS: 1 - math.Exp(-1/(TauSlow.Seconds()*fs)),
		nWarm:  int(math.Round(TauFast.Seconds() * fs)),
		recN:   recN,
		statN:  statN,
		bufA:   make([]float64, blockLen),
		bufC:   make([]float64, blockLen),
		statMs: float64(opts.StatsInterval) / float64(time.Millisecond),
		recMs:  float64(opts.RecordInterval) / float64(time.Millisecond),
	}
	m.rec.reset()
	m.tot.reset()
	return m, nil
}

// samplesIn converts d to a sample count, reporting whether it is whole.
func samplesIn(d time.Duration, rate int) (int, bool) {
	if d <= 0 {
		return 0, false
	}
	num := int64(d) * int64(rate)
	if num%int64(time.Second) != 0 {
		return 0, false
	}
	return int(num / int64(time.Second)), true
}

// Options returns the options in force (defaults filled in).
func (m *Meter) Options() Options { return m.opts }

// UntilRecord is the number of samples still needed to complete the
// current record (counting the start-up buffer).
func (m *Meter) UntilRecord() int {
	if !m.started {
		return max(m.recN, m.nWarm) - len(m.pending)
	}
	return m.recN - m.recPos
}

// Process consumes x (one channel, full scale ±1, finite values) and
// returns the records completed by it, oldest first. The returned slice is
// only valid until the next call. Process after Finish panics.
func (m *Meter) Process(x []float64) []Record {
	if m.finished {
		panic("slm: Process after Finish")
	}
	m.out = m.out[:0]
	if !m.started {
		m.pending = append(m.pending, x...)
		if len(m.pending) < m.nWarm {
			return m.out
		}
		x = m.start()
	}
	m.feed(x)
	return m.out
}

// start seeds filters and detectors from the buffered samples and returns
// them for processing.
func (m *Meter) start() []float64 {
	m.started = true
	p := m.pending
	m.pending = nil
	if len(p) == 0 {
		return nil
	}
	m.w.prime(p[0])
	probe := m.w.clone()
	w := p[:min(len(p), m.nWarm)] // exactly the warm-up: the result must not depend on block sizes
	var sum float64
	for i := 0; i < len(w); i += blockLen {
		b := w[i:min(len(w), i+blockLen)]
		probe.run(b, m.bufA, m.bufC)
		for _, v := range m.bufA[:len(b)] {
			sum += v * v
		}
	}
	m.eF = sum / float64(len(w))
	m.eS = m.eF
	return p
}

// feed processes x in blocks that end on histogram and record boundaries.
func (m *Meter) feed(x []float64) {
	for len(x) > 0 {
		n := min(len(x), blockLen, m.statN-m.statPos)
		m.block(x[:n])
		x = x[n:]
		m.statPos += n
		m.recPos += n
		m.pos += int64(n)
		if m.statPos == m.statN {
			m.tick(m.statMs)
		}
		if m.recPos == m.recN {
			m.out = append(m.out, m.closeRecord())
		}
	}
}

// block runs the weighting filters and the detectors over x.
func (m *Meter) block(x []float64) {
	a := m.bufA[:len(x)]
	c := m.bufC[:len(x)]
	m.w.run(x, a, c)
	r := &m.rec
	eF, eS := m.eF, m.eS
	aF, aS := m.alphaF, m.alphaS
	sumA, sumC := r.sumA, r.sumC
	maxF, minF, maxS, peak := r.maxF, r.minF, r.maxS, r.peakC
	for i, va := range a {
		sq := va * va
		sumA += sq
		eF += aF * (sq - eF)
		eS += aS * (sq - eS)
		if eF > maxF {
			maxF = eF
		}
		if eF < minF {
			minF = eF
		}
		if eS > maxS {
			maxS = eS
		}
		vc := c[i]
		sumC += vc * vc
		if vc = math.Abs(vc); vc > peak {
			peak = vc
		}
	}
	m.eF, m.eS = eF, eS
	r.sumA, r.sumC = sumA, sumC
	r.maxF, r.minF, r.maxS, r.peakC = maxF, minF, maxS, peak
	r.n += int64(len(x))
}

// tick samples L_AF into the histograms, weighted by durMs.
func (m *Meter) tick(durMs float64) {
	l := dbfs(m.eF)
	m.recHist.Add(l+m.opts.OffsetDB, durMs)
	m.totHist.Add(l+histShift, durMs)
	m.statPos = 0
}

func (m *Meter) closeRecord() Record {
	r := m.rec
	rec := Record{
		Start:    m.pos - r.n,
		Samples:  r.n,
		Duration: time.Duration(float64(r.n) / m.fs * float64(time.Second)),
		LAeq:     dbfs(r.sumA/float64(r.n)) + m.opts.OffsetDB,
		LCeq:     dbfs(r.sumC/float64(r.n)) + m.opts.OffsetDB,
		LAFmax:   dbfs(r.maxF) + m.opts.OffsetDB,
		LAFmin:   dbfs(r.minF) + m.opts.OffsetDB,
		LASmax:   dbfs(r.maxS) + m.opts.OffsetDB,
		LCpeak:   dbfs(r.peakC*r.peakC) + m.opts.OffsetDB,
		Hist:     m.recHist,
	}
	m.tot.merge(&m.rec)
	m.rec.reset()
	m.recHist = level.Histogram{}
	m.recPos = 0
	return rec
}

// Finish processes whatever is buffered and closes the last, partial
// record, which it returns with ok = true if it holds any samples. The
// Meter accepts no more audio afterwards.
func (m *Meter) Finish() (last Record, ok bool) {
	if m.finished {
		return Record{}, false
	}
	if !m.started {
		m.feed(m.start())
	}
	m.finished = true
	if m.statPos > 0 {
		m.tick(float64(m.statPos) / m.fs * 1000)
	}
	if m.recPos == 0 {
		return Record{}, false
	}
	return m.closeRecord(), true
}

// Summary returns the levels over every record closed so far (call Finish
// first to include the last, partial one). It returns ErrNoSamples when
// there are none.
func (m *Meter) Summary() (Summary, error) {
	t := m.tot
	if t.n == 0 {
		return Summary{}, ErrNoSamples
	}
	off := m.opts.OffsetDB
	ln := func(n float64) float64 {
		p, ok := m.totHist.Percentile(n)
		if !ok {
			return dbfs(t.minF) + off
		}
		return p - histShift + off
	}
	return Summary{
		LAeq:      dbfs(t.sumA/float64(t.n)) + off,
		LCeq:      dbfs(t.sumC/float64(t.n)) + off,
		LAFmax:    dbfs(t.maxF) + off,
		LAFmin:    dbfs(t.minF) + off,
		LASmax:    dbfs(t.maxS) + off,
		LCpeak:    dbfs(t.peakC*t.peakC) + off,
		L10:       ln(10),
		L50:       ln(50),
		L90:       ln(90),
		DurationS: float64(t.n) / m.fs,
		Samples:   t.n,
		Rate:      m.opts.SampleRate,
		OffsetDB:  off,
	}, nil
}
