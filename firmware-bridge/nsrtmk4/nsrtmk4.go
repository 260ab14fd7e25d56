package nsrtmk4

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/internal/serialport"
)

// Commands (protocol §7.4). Bit 31 set means device → host.
const (
	cmdReadLevel     uint32 = 0x80000010
	cmdReadLEQ       uint32 = 0x80000011
	cmdReadWeighting uint32 = 0x80000020
	cmdWriteWeight   uint32 = 0x00000020
	cmdReadTau       uint32 = 0x80000022
	cmdWriteTau      uint32 = 0x00000022
	cmdReadModel     uint32 = 0x80000031
	cmdReadSN        uint32 = 0x80000032
	cmdReadFW        uint32 = 0x80000033
	cmdReadDOC       uint32 = 0x80000034

	ack       = 0x06
	maxString = 32

	drainTimeout = 50 * time.Millisecond
)

// Port is the serial connection to the instrument. A read that times out
// returns 0 bytes and a nil error (as go.bug.st/serial does) or an error
// matching os.ErrDeadlineExceeded. *serial.Port satisfies it. If the port
// also has ResetInputBuffer() error, stale input is discarded before each
// command.
type Port = serialport.Port

// Mode selects what Sense reads.
type Mode int

// Modes.
const (
	// ModeLeq reads Read_LEQ: the Leq since the previous Sense.
	ModeLeq Mode = iota
	// ModeLevel reads Read_Level: the exponential level (F or S).
	ModeLevel
)

// Opts configures the instrument. The zero value means A-weighting, the
// instrument's τ, ModeLeq, a 1 s reply timeout, grade class2 and the
// calibration date the instrument reports.
type Opts struct {
	// Weighting is A, C or Z; empty means A.
	Weighting bridge.Weighting
	// Tau is the exponential time constant: 125 ms (F) or 1 s (S); zero
	// keeps the instrument's. ModeLevel needs F or S.
	Tau time.Duration
	// Mode is ModeLeq (default) or ModeLevel.
	Mode Mode
	// Timeout bounds each reply; zero means 1 s.
	Timeout time.Duration
	// Grade overrides the default bridge.GradeClass2.
	Grade bridge.Grade
	// CalibratedAt overrides the instrument's date of calibration.
	CalibratedAt time.Time
	// Now measures Leq durations and stamps samples; nil means time.Now.
	Now func() time.Time
}

// Dev is an NSRT_mk4 on a serial port. It is safe for concurrent use.
type Dev struct {
	p      Port
	closer io.Closer // the port, when Open opened it
	name   string
	opts   Opts
	tw     bridge.TimeWeighting
	device bridge.Device

	mu     sync.Mutex
	prev   time.Time
	resync bool
	halted bool
}

// doSleep waits for the instrument's filters to settle; tests replace it.
var doSleep = time.Sleep

// Open opens the USB serial port name (e.g. /dev/ttyACM0) and calls New.
// Halt closes the port.
func Open(name string, opts *Opts) (*Dev, error) {
	d, p, err := serialport.Open("nsrtmk4", name, 115200, func(p Port) (*Dev, error) { return New(p, opts) })
	if err != nil {
		return nil, err
	}
	d.closer, d.name = p, name
	return d, nil
}

// New identifies the instrument on p, applies opts (nil means the
// defaults) and starts a fresh Leq integration.
func New(p Port, opts *Opts) (*Dev, error) {
	o, w, err := resolveOpts(opts)
	if err != nil {
		return nil, err
	}
	if err := p.SetReadTimeout(o.Timeout); err != nil {
		return nil, fmt.Errorf("nsrtmk4: set read timeout: %w", err)
	}
	d := &Dev{p: p, name: "port", opts: o, tw: bridge.Leq}
	if d.device, err = d.identify(); err != nil {
		return nil, err
	}
	changed, err := d.configure(w)
	if err != nil {
		return nil, err
	}
	if changed > 0 {
		doSleep(changed)
	}
	if _, err := d.read(cmdReadLEQ, 4, "LEQ"); err != nil { // start a fresh integration
		return nil, err
	}
	d.prev = o.Now()
	return d, nil
}

// resolveOpts applies the defaults to opts and checks them, returning the
// instrument's weighting code (0 C, 1 A, 2 Z).
func resolveOpts(opts *Opts) (Opts, byte, error) {
	var o Opts
	if opts != nil {
		o = *opts
	}
	var w byte
	switch o.Weighting {
	case "", bridge.WeightingA:
		o.Weighting, w = bridge.WeightingA, 1
	case bridge.WeightingC:
		w = 0
	case bridge.WeightingZ:
		w = 2
	default:
		return o, 0, fmt.Errorf("nsrtmk4: weighting %q not supported (A, C or Z)", o.Weighting)
	}
	if o.Tau < 0 || o.Tau > 10*time.Second {
		return o, 0, fmt.Errorf("nsrtmk4: tau %v out of range", o.Tau)
	}
	if o.Mode != ModeLeq && o.Mode != ModeLevel {
		return o, 0, fmt.Errorf("nsrtmk4: unknown mode %d", o.Mode)
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.Grade == "" {
		o.Grade = bridge.GradeClass2
	}
	if !o.Grade.Valid() {
		return o, 0, fmt.Errorf("nsrtmk4: unknown grade %q", o.Grade)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, w, nil
}

// identify reads the instrument's model (which must be an NSRT), serial
// number, firmware revision and date of calibration (unless opts override
// it).
func (d *Dev) identify() (bridge.Device, error) {
	model, err := d.readString(cmdReadModel, "model")
	if err != nil {
		return bridge.Device{}, err
	}
	if !strings.HasPrefix(strings.ToUpper(model), "NSRT") {
		return bridge.Device{}, &IDError{Model: model}
	}
	serialNo, err := d.readString(cmdReadSN, "serial number")
	if err != nil {
		return bridge.Device{}, err
	}
	fw, err := d.readString(cmdReadFW, "firmware revision")
	if err != nil {
		return bridge.Device{}, err
	}
	b, err := d.read(cmdReadDOC, 8, "calibration date")
	if err != nil {
		return bridge.Device{}, err
	}
	doc, err := parseDate(b)
	if err != nil {
		return bridge.Device{}, err
	}
	if !d.opts.CalibratedAt.IsZero() {
		doc = d.opts.CalibratedAt
	}
	return bridge.Device{Model: model, Serial: serialNo, Firmware: fw, Grade: d.opts.Grade, CalibratedAt: doc}, nil
}

// configure writes weighting and τ when they differ from the instrument's
// and returns how long to wait for the filters to settle (0: nothing
// written).
func (d *Dev) configure(w byte) (time.Duration, error) {
	b, err := d.read(cmdReadWeighting, 1, "weighting")
	if err != nil {
		return 0, err
	}
	cur := b[0]
	if cur > 2 {
		return 0, &ReplyError{What: "weighting", Msg: fmt.Sprintf("unknown weighting code %d", cur)}
	}
	b, err = d.read(cmdReadTau, 4, "tau")
	if err != nil {
		return 0, err
	}
	tau, err := parseFloat(b, "tau", 0.001, 100)
	if err != nil {
		return 0, err
	}
	var changed bool
	if cur != w {
		if err := d.write(cmdWriteWeight, []byte{w}, "weighting"); err != nil {
			return 0, err
		}
		changed = true
	}
	if want := d.opts.Tau.Seconds(); d.opts.Tau != 0 && math.Abs(tau-want) > 1e-6 {
		var v [4]byte
		binary.LittleEndian.PutUint32(v[:], math.Float32bits(float32(want)))
		if err := d.write(cmdWriteTau, v[:], "tau"); err != nil {
			return 0, err
		}
		tau, changed = want, true
	}
	if d.opts.Mode == ModeLevel {
		switch {
		case math.Abs(tau-0.125) < 1e-6:
			d.tw = bridge.Fast
		case math.Abs(tau-1) < 1e-6:
			d.tw = bridge.Slow
		default:
			return 0, fmt.Errorf("nsrtmk4: level mode needs tau 0.125 s (F) or 1 s (S), the instrument has %g s", tau)
		}
	}
	if !changed {
		return 0, nil
	}
	return max(time.Second, time.Duration(10*tau*float64(time.Second))), nil
}

// Sense reads one level; see the package documentation.
func (d *Dev) Sense(s *bridge.Sample) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return ErrHalted
	}
	if d.resync {
		if _, err := d.read(cmdReadLEQ, 4, "LEQ"); err != nil {
			return err
		}
		d.prev, d.resync = d.opts.Now(), false
		return ErrNotReady
	}
	cmd, what := cmdReadLEQ, "LEQ"
	if d.opts.Mode == ModeLevel {
		cmd, what = cmdReadLevel, "level"
	}
	b, err := d.read(cmd, 4, what)
	at := d.opts.Now()
	if err != nil {
		d.resync = d.opts.Mode == ModeLeq
		return err
	}
	lvl, err := parseFloat(b, what, -20, 200)
	if err != nil {
		d.resync = d.opts.Mode == ModeLeq
		return err
	}
	*s = bridge.Sample{
		At:            at,
		Weighting:     d.opts.Weighting,
		TimeWeighting: d.tw,
		Level:         lvl,
		Device:        d.device,
	}
	if d.opts.Mode == ModeLeq {
		s.Duration = max(at.Sub(d.prev), 0)
		d.prev = at
	}
	return nil
}

// Device returns the metadata read at New.
func (d *Dev) Device() bridge.Device { return d.device }

// Halt stops using the instrument and closes the port if Open opened it.
// It is idempotent; Sense returns ErrHalted afterwards.
func (d *Dev) Halt() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return nil
	}
	d.halted = true
	if d.closer != nil {
		if err := d.closer.Close(); err != nil {
			return fmt.Errorf("nsrtmk4: close %s: %w", d.name, err)
		}
	}
	return nil
}

// String implements bridge.Meter.
func (d *Dev) String() string { return "nsrtmk4{" + d.name + "}" }

// command encodes a command packet.
func command(cmd, count uint32) []byte {
	b := make([]byte, 12)
	binary.LittleEndian.PutUint32(b[0:], cmd)
	binary.LittleEndian.PutUint32(b[4:], 0) // address: not used by these commands
	binary.LittleEndian.PutUint32(b[8:], count)
	return b
}

// send discards stale input and writes b.
func (d *Dev) send(b []byte, what string) error {
	if err := serialport.DiscardInput(d.p); err != nil {
		return fmt.Errorf("nsrtmk4: discard stale input: %w", err)
	}
	if _, err := d.p.Write(b); err != nil {
		return fmt.Errorf("nsrtmk4: send %s command: %w", what, err)
	}
	return nil
}

// recv reads exactly len(b) bytes, or until stop returns true on the bytes
// read so far; it returns how many bytes it read.
func (d *Dev) recv(b []byte, what string, stop func([]byte) bool) (int, error) {
	n := 0
	for n < len(b) {
		k, err := d.p.Read(b[n:])
		n += k
		if stop != nil && n > 0 && stop(b[:n]) {
			return n, nil
		}
		switch {
		case serialport.TimedOut(k, err):
			return n, &TimeoutError{What: what, Got: n, Want: len(b), After: d.opts.Timeout}
		case err != nil:
			return n, fmt.Errorf("nsrtmk4: read %s: %w", what, err)
		}
	}
	return n, nil
}

// read sends a read command and returns its count data bytes.
func (d *Dev) read(cmd uint32, count int, what string) ([]byte, error) {
	if err := d.send(command(cmd, uint32(count)), what); err != nil {
		return nil, err
	}
	b := make([]byte, count)
	if _, err := d.recv(b, what, nil); err != nil {
		return nil, err
	}
	return b, nil
}

// readString reads a NUL-terminated string of at most 32 bytes.
func (d *Dev) readString(cmd uint32, what string) (string, error) {
	if err := d.send(command(cmd, maxString), what); err != nil {
		return "", err
	}
	b := make([]byte, maxString)
	n, err := d.recv(b, what, func(b []byte) bool { return indexNUL(b) >= 0 })
	if err != nil {
		return "", err
	}
	if n < maxString {
		// An instrument may pad the string to the requested count: drain
		// the padding briefly so that it cannot prefix the next reply.
		if err := d.p.SetReadTimeout(drainTimeout); err != nil {
			return "", fmt.Errorf("nsrtmk4: set read timeout: %w", err)
		}
		_, _ = d.recv(b[n:], what, nil)
		if err := d.p.SetReadTimeout(d.opts.Timeout); err != nil {
			return "", fmt.Errorf("nsrtmk4: set read timeout: %w", err)
		}
	}
	return parseString(b[:n], what)
}

// write sends a write command with its data and checks the Ack.
func (d *Dev) write(cmd uint32, data []byte, what string) error {
	if err := d.send(append(command(cmd, uint32(len(data))), data...), what); err != nil {
		return err
	}
	var a [1]byte
	if _, err := d.recv(a[:], what+" ack", nil); err != nil {
		return err
	}
	if a[0] != ack {
		return &ReplyError{What: what + " ack", Msg: fmt.Sprintf("got %#02x, want 0x06", a[0])}
	}
	return nil
}

// parseString decodes an instrument string: printable ASCII, terminated
// by NUL (or filling all 32 bytes), not empty.
func parseString(b []byte, what string) (string, error) {
	if i := indexNUL(b); i >= 0 {
		b = b[:i]
	} else if len(b) < maxString {
		return "", &ReplyError{What: what, Msg: "string not terminated"}
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7E {
			return "", &ReplyError{What: what, Msg: fmt.Sprintf("non-printable byte %#02x", c)}
		}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", &ReplyError{What: what, Msg: "empty"}
	}
	return s, nil
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// parseFloat decodes a little-endian float32 and checks lo ≤ v ≤ hi.
func parseFloat(b []byte, what string, lo, hi float64) (float64, error) {
	if len(b) != 4 {
		return 0, &ReplyError{What: what, Msg: fmt.Sprintf("%d bytes, want 4", len(b))}
	}
	v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	if math.IsNaN(v) || v < lo || v > hi {
		return 0, &ReplyError{What: what, Msg: fmt.Sprintf("value %g outside %g…%g", v, lo, hi)}
	}
	// float32 carries ~7 significant digits: drop the binary noise.
	return math.Round(v*1e4) / 1e4, nil
}

// epoch1904 is the instrument's time origin.
var epoch1904 = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)

// parseDate decodes a U64 count of seconds since 1904-01-01 UTC. Zero
// means "never" and gives the zero time; dates before 1990 or after 2200
// are garbage.
func parseDate(b []byte) (time.Time, error) {
	if len(b) != 8 {
		return time.Time{}, &ReplyError{What: "calibration date", Msg: fmt.Sprintf("%d bytes, want 8", len(b))}
	}
	s := binary.LittleEndian.Uint64(b)
	if s == 0 {
		return time.Time{}, nil
	}
	const lo, hi = 86 * 365.25 * 86400, 296 * 365.25 * 86400 // 1990, 2200
	if s < lo || s > hi {
		return time.Time{}, &ReplyError{What: "calibration date", Msg: fmt.Sprintf("%d s after 1904 is not a plausible date", s)}
	}
	return time.Unix(int64(s)+epoch1904.Unix(), 0).UTC(), nil
}

// ErrNotReady is returned by the first Sense after a failed exchange: the
// Leq integration was restarted and the next Sense reports a level again.
var ErrNotReady = errors.New("nsrtmk4: Leq integration restarted after an error, no level this time")

// ErrHalted is returned by Sense after Halt.
var ErrHalted = errors.New("nsrtmk4: meter halted")

// TimeoutError is a reply that did not arrive in full in time.
type TimeoutError struct {
	What      string
	Got, Want int
	After     time.Duration
}

func (e *TimeoutError) Error() string {
	if e.Got == 0 {
		return fmt.Sprintf("nsrtmk4: no reply to %s within %v (is the meter connected?)", e.What, e.After)
	}
	return fmt.Sprintf("nsrtmk4: short reply to %s: %d of %d bytes within %v", e.What, e.Got, e.Want, e.After)
}

// Timeout reports true, as net.Error does.
func (e *TimeoutError) Timeout() bool { return true }

// ReplyError is a reply that arrived but makes no sense.
type ReplyError struct{ What, Msg string }

func (e *ReplyError) Error() string { return "nsrtmk4: bad " + e.What + " reply: " + e.Msg }

// IDError means the instrument's model is not an NSRT.
type IDError struct{ Model string }

func (e *IDError) Error() string {
	return fmt.Sprintf("nsrtmk4: model %q is not a Convergence Instruments NSRT", e.Model)
}

var _ bridge.Meter = (*Dev)(nil)
