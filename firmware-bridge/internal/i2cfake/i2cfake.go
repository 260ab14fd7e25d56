// Package i2cfake holds I²C bus fakes shared by the tests of the I²C
// drivers (bme280, pcbadbm, sen0232). periph's i2ctest.Playback covers
// recorded traffic; this package covers a bus with nothing on it.
package i2cfake

import (
	"os"
	"syscall"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
)

// NackBus answers every transaction with the error Linux's i2c-dev gives
// when no device acknowledges its address: an ioctl error with Errno
// (ENXIO or EREMOTEIO, depending on the bus driver).
type NackBus struct{ Errno syscall.Errno }

// String names the bus "nack".
func (NackBus) String() string { return "nack" }

// SetSpeed accepts any speed.
func (NackBus) SetSpeed(physic.Frequency) error { return nil }

// Tx fails: nobody answers.
func (b NackBus) Tx(uint16, []byte, []byte) error {
	return &os.SyscallError{Syscall: "ioctl", Err: b.Errno}
}

var _ i2c.Bus = NackBus{}
