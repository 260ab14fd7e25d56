package xl2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/internal/serialport"
)

// Port is the serial connection to the XL2. A read that times out returns
// 0 bytes and a nil error (as go.bug.st/serial does) or an error matching
// os.ErrDeadlineExceeded. *serial.Port satisfies it. If the port also has
// ResetInputBuffer() error, stale input is discarded before each command.
type Port = serialport.Port

// Opts configures the meter. The zero value means A-weighting, a 2 s reply
// timeout, grade class1 and an unknown calibration date.
type Opts struct {
	// Weighting is A, C or Z for the Leq, Fmax and Fmin; empty means A.
	// The peak is always C-weighted.
	Weighting bridge.Weighting
	// Timeout bounds each reply line; zero means 2 s.
	Timeout time.Duration
	// Grade overrides the default bridge.GradeClass1.
	Grade bridge.Grade
	// CalibratedAt is the date of the last calibration or verification.
	CalibratedAt time.Time
	// Now measures dt periods and stamps samples; nil means time.Now.
	Now func() time.Time
}

// Dev is an XL2 on a serial port. It is safe for concurrent use.
type Dev struct {
	p      Port
	closer io.Closer // the port, when Open opened it
	name   string
	opts   Opts
	params []string
	device bridge.Device

	mu       sync.Mutex
	buf      []byte // bytes read after the last complete line
	prevInit time.Time
	resync   bool
	halted   bool
}

const (
	maxLine = 256
	eol     = "\r\n"
)

// Open opens the USB serial port name (e.g. /dev/ttyACM0) and calls New.
// Halt stops the measurement and closes the port.
func Open(name string, opts *Opts) (*Dev, error) {
	d, p, err := serialport.Open("xl2", name, 115200, func(p Port) (*Dev, error) { return New(p, opts) })
	if err != nil {
		return nil, err
	}
	d.closer, d.name = p, name
	return d, nil
}

// New identifies the XL2 on p, resets it, starts the sound level meter and
// opens the first dt period (nil opts means the defaults).
func New(p Port, opts *Opts) (*Dev, error) {
	var o Opts
	if opts != nil {
		o = *opts
	}
	switch o.Weighting {
	case "":
		o.Weighting = bridge.WeightingA
	case bridge.WeightingA, bridge.WeightingC, bridge.WeightingZ:
	default:
		return nil, fmt.Errorf("xl2: weighting %q not supported (A, C or Z)", o.Weighting)
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Grade == "" {
		o.Grade = bridge.GradeClass1
	}
	if !o.Grade.Valid() {
		return nil, fmt.Errorf("xl2: unknown grade %q", o.Grade)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := p.SetReadTimeout(o.Timeout); err != nil {
		return nil, fmt.Errorf("xl2: set read timeout: %w", err)
	}
	w := string(o.Weighting)
	d := &Dev{
		p: p, name: "port", opts: o,
		params: []string{"L" + w + "EQ", "L" + w + "FMAX", "L" + w + "FMIN", "LCPKMAX"},
	}
	lines, err := d.query("*IDN?", 1)
	if err != nil {
		return nil, err
	}
	id, err := parseIDN(lines[0])
	if err != nil {
		return nil, err
	}
	for _, c := range []string{"*RST", "INIT START", "MEAS:INIT"} {
		if err := d.send(c); err != nil {
			return nil, err
		}
	}
	d.prevInit = o.Now()
	if err := d.checkErrors(); err != nil {
		return nil, err
	}
	d.device = bridge.Device{
		Model:        "NTi Audio " + id.unit,
		Serial:       id.serial,
		Firmware:     id.firmware,
		Grade:        o.Grade,
		CalibratedAt: o.CalibratedAt,
	}
	return d, nil
}

// checkErrors reads the XL2's error queue.
func (d *Dev) checkErrors() error {
	lines, err := d.query("SYST:ERR?", 1)
	if err != nil {
		return err
	}
	return parseErrorQueue(lines[0])
}

// Sense closes the current dt period and reads its levels.
func (d *Dev) Sense(s *bridge.Sample) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return ErrHalted
	}
	if err := d.send("MEAS:INIT"); err != nil {
		d.resync = true
		return err
	}
	at := d.opts.Now()
	from := d.prevInit
	d.prevInit = at
	if d.resync {
		// The previous MEAS:INIT may not have arrived: the period just
		// closed has an unknown start.
		d.resync = false
		return ErrNotReady
	}
	lines, err := d.query("MEAS:SLM:123:dt? "+strings.Join(d.params, " "), len(d.params))
	if err != nil {
		return err
	}
	var v [4]float64
	for i, line := range lines {
		if v[i], err = parseLevel(line, d.params[i]); err != nil {
			return err
		}
	}
	*s = bridge.Sample{
		At:            at,
		Duration:      max(at.Sub(from), 0),
		Weighting:     d.opts.Weighting,
		TimeWeighting: bridge.Leq,
		Level:         v[0],
		Max:           v[1],
		Min:           v[2],
		HasMax:        true,
		HasMin:        true,
		PeakC:         v[3],
		HasPeakC:      true,
		Device:        d.device,
	}
	return nil
}

// Device returns the metadata read at New.
func (d *Dev) Device() bridge.Device { return d.device }

// Halt stops the measurement (INIT STOP) and closes the port if Open opened
// it. It is idempotent; Sense returns ErrHalted afterwards.
func (d *Dev) Halt() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return nil
	}
	d.halted = true
	err := d.send("INIT STOP")
	if d.closer != nil {
		if cerr := d.closer.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("xl2: close %s: %w", d.name, cerr)
		}
	}
	return err
}

// String implements bridge.Meter.
func (d *Dev) String() string { return "xl2{" + d.name + "}" }

// send discards stale input and writes one command line.
func (d *Dev) send(cmd string) error {
	d.buf = d.buf[:0]
	if err := serialport.DiscardInput(d.p); err != nil {
		return fmt.Errorf("xl2: discard stale input: %w", err)
	}
	if _, err := io.WriteString(d.p, cmd+eol); err != nil {
		return fmt.Errorf("xl2: send %q: %w", cmd, err)
	}
	return nil
}

// query sends cmd and reads n reply lines.
func (d *Dev) query(cmd string, n int) ([]string, error) {
	if err := d.send(cmd); err != nil {
		return nil, err
	}
	lines := make([]string, 0, n)
	for len(lines) < n {
		line, err := d.readLine(cmd, len(lines), n)
		if err != nil {
			return nil, err
		}
		lines = append(lines, line)
	}
	return lines, nil
}

// readLine returns the next line without its CR LF.
func (d *Dev) readLine(cmd string, got, want int) (string, error) {
	var tmp [64]byte
	for {
		if i := bytes.IndexByte(d.buf, '\n'); i >= 0 {
			line := strings.TrimRight(string(d.buf[:i]), "\r")
			d.buf = append(d.buf[:0], d.buf[i+1:]...)
			return line, nil
		}
		if len(d.buf) > maxLine {
			return "", &ReplyError{Cmd: cmd, Line: string(d.buf[:32]) + "…", Msg: fmt.Sprintf("no end of line in %d bytes", len(d.buf))}
		}
		k, err := d.p.Read(tmp[:])
		d.buf = append(d.buf, tmp[:k]...)
		switch {
		case serialport.TimedOut(k, err):
			return "", &TimeoutError{Cmd: cmd, Got: got, Want: want, After: d.opts.Timeout}
		case err != nil:
			return "", fmt.Errorf("xl2: read reply to %q: %w", cmd, err)
		}
	}
}

type idn struct{ maker, unit, serial, firmware string }

// parseIDN parses "NTiAudio,XL2,A2A-10242-E0,V4.21".
func parseIDN(line string) (idn, error) {
	f := strings.Split(strings.TrimSpace(line), ",")
	if len(f) != 4 {
		return idn{}, &IDError{Line: line}
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
		if f[i] == "" || !printable(f[i]) {
			return idn{}, &IDError{Line: line}
		}
	}
	id := idn{maker: f[0], unit: f[1], serial: f[2], firmware: f[3]}
	if !strings.HasPrefix(strings.ToUpper(id.maker), "NTI") || !strings.HasPrefix(strings.ToUpper(id.unit), "XL2") {
		return idn{}, &IDError{Line: line}
	}
	return id, nil
}

func printable(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}

// invalidBelow marks the XL2's "no value yet" results (−999 dB and the like).
const invalidBelow = -50

// parseLevel parses "53.8 dB", "53.8 dB, OK" or "53.8dB,OK" for param.
func parseLevel(line, param string) (float64, error) {
	s := strings.TrimSpace(line)
	num, rest, ok := strings.Cut(s, "dB")
	if !ok {
		return 0, &ReplyError{Cmd: param, Line: line, Msg: `no "dB" unit`}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return 0, &ReplyError{Cmd: param, Line: line, Msg: "not a number"}
	}
	rest = strings.TrimSpace(rest)
	if rest != "" {
		status, ok := strings.CutPrefix(rest, ",")
		if !ok {
			return 0, &ReplyError{Cmd: param, Line: line, Msg: "unexpected text after the unit"}
		}
		switch st := strings.ToUpper(strings.TrimSpace(status)); st {
		case "OK", "":
		case "OVR", "OVERLOAD":
			return 0, &ReplyError{Cmd: param, Line: line, Msg: "overload: the level exceeds the input range"}
		case "UND", "UNDERRANGE", "UNDER":
			return 0, &ReplyError{Cmd: param, Line: line, Msg: "under range: the level is below the input range"}
		default:
			return 0, &ReplyError{Cmd: param, Line: line, Msg: fmt.Sprintf("unknown status %q", st)}
		}
	}
	switch {
	case v < invalidBelow:
		return 0, ErrNotReady
	case v > 200 || v != v:
		return 0, &ReplyError{Cmd: param, Line: line, Msg: "impossible level"}
	}
	return v, nil
}

// xl2Errors are the XL2's error codes (remote measurement manual).
var xl2Errors = map[int]string{
	-350: "error queue full",
	-115: "too many parameters",
	-113: "invalid command",
	-112: "command part too long",
	-109: "missing command or parameter",
	-108: "invalid parameter",
	1:    "command too long",
	5:    "parameter not available, licence not installed",
	6:    "dt value does not exist for this parameter",
	7:    "parameter not available in the current measurement function",
	8:    "unspecified DSP error",
	9:    "not valid while a measurement is running",
}

// parseErrorQueue parses SYST:ERR?: "0" (possibly with a message) when
// empty, otherwise the codes, comma-separated.
func parseErrorQueue(line string) error {
	first, _, _ := strings.Cut(strings.TrimSpace(line), ",")
	first, _, _ = strings.Cut(strings.TrimSpace(first), " ")
	code, err := strconv.Atoi(first)
	if err != nil {
		return &ReplyError{Cmd: "SYST:ERR?", Line: line, Msg: "no error code"}
	}
	if code == 0 {
		return nil
	}
	msg, ok := xl2Errors[code]
	if !ok {
		msg = "unknown error"
	}
	return &DeviceError{Code: code, Msg: msg}
}

// ErrNotReady means the XL2 has no valid value for the period yet (it is
// settling after INIT START, or the previous command was lost). Try again
// at the next period.
var ErrNotReady = errors.New("xl2: no valid value for this period yet")

// ErrHalted is returned by Sense after Halt.
var ErrHalted = errors.New("xl2: meter halted")

// TimeoutError is a reply that did not arrive in full in time.
type TimeoutError struct {
	Cmd       string
	Got, Want int // lines
	After     time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("xl2: no reply to %q within %v (%d of %d lines; is the XL2 connected and in COM mode?)", e.Cmd, e.After, e.Got, e.Want)
}

// Timeout reports true, as net.Error does.
func (e *TimeoutError) Timeout() bool { return true }

// ReplyError is a reply line that does not make sense.
type ReplyError struct{ Cmd, Line, Msg string }

func (e *ReplyError) Error() string {
	return fmt.Sprintf("xl2: bad reply to %s: %s (%q)", e.Cmd, e.Msg, e.Line)
}

// IDError means *IDN? did not identify an NTi XL2.
type IDError struct{ Line string }

func (e *IDError) Error() string {
	return fmt.Sprintf("xl2: %q does not identify an NTi Audio XL2", e.Line)
}

// DeviceError is an error the XL2 reported in its error queue.
type DeviceError struct {
	Code int
	Msg  string
}

func (e *DeviceError) Error() string { return fmt.Sprintf("xl2: device error %d: %s", e.Code, e.Msg) }

var _ bridge.Meter = (*Dev)(nil)
