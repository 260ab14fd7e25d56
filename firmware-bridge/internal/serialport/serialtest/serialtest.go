// Package serialtest is an in-memory serial port for the tests of the
// serial meter drivers: a fake meter's feed function on the far side.
package serialtest

import (
	"errors"
	"sync"
	"time"

	"github.com/sossego/sossego/firmware-bridge/internal/serialport"
)

// Port connects a driver to a fake meter in memory: every Write goes to
// Feed, whose reply bytes the following Reads deliver. A Read with nothing
// to deliver times out at once, like go.bug.st/serial (0, nil). It is safe
// for concurrent use; set the exported fields before the driver uses it.
type Port struct {
	// Feed takes what the driver wrote and returns the meter's reply.
	Feed func([]byte) []byte
	// Chunk is how many bytes one Read delivers at most; 0 means all
	// available.
	Chunk int
	// FailWrites is how many Writes fail (with an I/O error) before the
	// next one reaches Feed.
	FailWrites int

	mu       sync.Mutex
	out      []byte
	timeouts []time.Duration
	closed   int
}

// ErrWrite is what a failing Write returns.
var ErrWrite = errors.New("write /dev/ttyACM0: input/output error")

// Write hands b to Feed and queues the reply.
func (p *Port) Write(b []byte) (int, error) {
	p.mu.Lock()
	if p.FailWrites > 0 {
		p.FailWrites--
		p.mu.Unlock()
		return 0, ErrWrite
	}
	p.mu.Unlock()
	r := p.Feed(b)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out = append(p.out, r...)
	return len(b), nil
}

// Read delivers queued reply bytes, at most Chunk of them.
func (p *Port) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.out)
	if p.Chunk > 0 && n > p.Chunk {
		n = p.Chunk
	}
	n = copy(b, p.out[:n])
	p.out = p.out[n:]
	return n, nil
}

// SetReadTimeout records d; see Timeouts.
func (p *Port) SetReadTimeout(d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timeouts = append(p.timeouts, d)
	return nil
}

// ResetInputBuffer drops the queued reply bytes.
func (p *Port) ResetInputBuffer() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out = nil
	return nil
}

// Close counts the call; see Closed.
func (p *Port) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed++
	return nil
}

// Timeouts returns every read timeout the driver set, in order.
func (p *Port) Timeouts() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.timeouts...)
}

// Closed returns how many times Close was called.
func (p *Port) Closed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

var _ serialport.Port = (*Port)(nil)
