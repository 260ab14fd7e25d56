// Package serialport holds what the serial meter drivers (nsrtmk4, xl2)
// share about their port: the Port they talk through, opening a USB serial
// port for a driver, discarding stale input and telling a timed-out read.
// Each driver keeps its own protocol; this package knows no command.
package serialport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.bug.st/serial"
)

// Port is the serial connection to a meter. A read that times out returns
// 0 bytes and a nil error (as go.bug.st/serial does) or an error matching
// os.ErrDeadlineExceeded; TimedOut tells both. *serial.Port satisfies it.
// If the port also has ResetInputBuffer() error, DiscardInput uses it.
type Port interface {
	io.ReadWriter
	SetReadTimeout(t time.Duration) error
}

var _ Port = serial.Port(nil)

// Open opens the USB serial port name (e.g. /dev/ttyACM0) at baud bit/s
// and hands it to attach, which identifies and sets up the meter. When
// attach fails, the port is closed again and attach's error is returned as
// it is; a port that does not open gives "pkg: open name: …". On success
// the caller owns the returned closer (the port).
func Open[D any](pkg, name string, baud int, attach func(Port) (D, error)) (D, io.Closer, error) {
	var zero D
	p, err := serial.Open(name, &serial.Mode{BaudRate: baud})
	if err != nil {
		return zero, nil, fmt.Errorf("%s: open %s: %w", pkg, name, err)
	}
	d, err := attach(p)
	if err != nil {
		p.Close()
		return zero, nil, err
	}
	return d, p, nil
}

// DiscardInput drops the bytes p has received but nobody has read yet, when
// p can (ResetInputBuffer() error); otherwise it does nothing.
func DiscardInput(p Port) error {
	if r, ok := p.(interface{ ResetInputBuffer() error }); ok {
		return r.ResetInputBuffer()
	}
	return nil
}

// TimedOut reports whether a Read that returned k bytes and err ended
// because the read timeout elapsed: go.bug.st/serial returns (0, nil),
// other ports an error matching os.ErrDeadlineExceeded.
func TimedOut(k int, err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || (k == 0 && err == nil)
}
