package slm

import (
	"errors"
	"fmt"
	"io"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
)

// Analyze runs a whole stream through a Meter and returns its summary.
// Input errors are *InputError; a stream without samples is one with
// ReasonNoSamples.
func Analyze(s *Stream, opts Options) (Summary, error) {
	m, err := NewMeter(opts)
	if err != nil {
		return Summary{}, err
	}
	buf := make([]float64, 8192)
	for {
		n, err := s.Read(buf)
		m.Process(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Summary{}, err
		}
	}
	m.Finish()
	sum, err := m.Summary()
	if errors.Is(err, ErrNoSamples) {
		return Summary{}, inputErr(ReasonNoSamples, "a entrada não tem nenhuma amostra de áudio")
	}
	return sum, err
}

// SourceOptions configures a Source.
type SourceOptions struct {
	Meter Options // SampleRate is required; RecordInterval is the Sense interval
	// Device describes the microphone and its calibration. Zero fields get
	// defaults: Model "Sossego software SLM", Grade screening (a microphone
	// is screening-grade until a laboratory says otherwise).
	Device bridge.Device
	// Now stamps each Sample; nil means time.Now. Tests pass a fake clock.
	Now func() time.Time
}

// Source is a software sound-level meter fed by a PCM Stream (a microphone
// captured by arecord, a WAV file, a pipe). It satisfies bridge.Meter, so
// the gateway can run it like a hardware meter (`--meter pcm`): each Sense
// reads one record interval of audio — it blocks for that long on a live
// capture — and reports LAeq, LAFmax, LAFmin and LCpeak over it.
type Source struct {
	s    *Stream
	m    *Meter
	dev  bridge.Device
	now  func() time.Time
	buf  []float64
	last Record
	err  error
}

var _ bridge.Meter = (*Source)(nil)

// NewSource builds a Source reading s.
func NewSource(s *Stream, opts SourceOptions) (*Source, error) {
	m, err := NewMeter(opts.Meter)
	if err != nil {
		return nil, err
	}
	dev := opts.Device
	if dev.Model == "" {
		dev.Model = "Sossego software SLM"
	}
	if dev.Grade == "" {
		dev.Grade = bridge.GradeScreening
	}
	if !dev.Grade.Valid() {
		return nil, fmt.Errorf("slm: invalid grade %q", dev.Grade)
	}
	if dev.Firmware == "" {
		dev.Firmware = "slm/1 " + s.Format().String()
	}
	if dev.Serial == "" {
		dev.Serial = fmt.Sprintf("pcm:ch%d", s.Channel())
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Source{s: s, m: m, dev: dev, now: now, buf: make([]float64, 4096)}, nil
}

// Sense reads audio until one record is complete and fills smp with it:
// Level = LAeq over the record, Max/Min = LAFmax/LAFmin, PeakC = LCpeak.
// At the end of the input it returns an error wrapping io.EOF; the partial
// last record is dropped (a sample must cover its full Duration).
func (src *Source) Sense(smp *bridge.Sample) error {
	if src.err != nil {
		return src.err
	}
	for {
		want := min(len(src.buf), src.m.UntilRecord())
		n, err := src.s.Read(src.buf[:want])
		recs := src.m.Process(src.buf[:n])
		if len(recs) > 0 {
			src.last = recs[len(recs)-1]
			src.fill(smp, src.last)
			if err != nil {
				src.err = fmt.Errorf("slm: sense: %w", err)
			}
			return nil
		}
		if err != nil {
			src.err = fmt.Errorf("slm: sense: %w", err)
			return src.err
		}
	}
}

func (src *Source) fill(smp *bridge.Sample, r Record) {
	*smp = bridge.Sample{
		At:            src.now(),
		Duration:      r.Duration,
		Weighting:     bridge.WeightingA,
		TimeWeighting: bridge.Leq,
		Level:         r.LAeq,
		Max:           r.LAFmax,
		Min:           r.LAFmin,
		HasMax:        true,
		HasMin:        true,
		PeakC:         r.LCpeak,
		HasPeakC:      true,
		Device:        src.dev,
	}
}

// Last returns the full record behind the latest Sample (LCeq, LASmax and
// the L_AF histogram, which bridge.Sample does not carry).
func (src *Source) Last() Record { return src.last }

// Halt closes the underlying reader when it is an io.Closer (stopping a
// capture pipe); it is idempotent. Sense fails afterwards.
func (src *Source) Halt() error {
	if src.err == nil {
		src.err = errors.New("slm: halted")
	}
	return src.s.Close()
}

func (src *Source) String() string {
	return fmt.Sprintf("slm{%s %d Hz %s ch%d}", src.dev.Serial, src.m.Options().SampleRate, src.s.Format(), src.s.Channel())
}
