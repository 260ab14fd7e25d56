package broker

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// scriptedListener returns the scripted errors, then its connection, then
// net.ErrClosed.
type scriptedListener struct {
	net.Listener
	errs []error
	conn net.Conn
}

func (l *scriptedListener) Accept() (net.Conn, error) {
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		return nil, err
	}
	if l.conn != nil {
		c := l.conn
		l.conn = nil
		return c, nil
	}
	return nil, net.ErrClosed
}

// mochi stops accepting for good after any Accept error; the broker's
// listener must ride out transient ones (a flood exhausting file
// descriptors) and give mochi the next connection, with its deadline, and
// end only when the listener is closed.
func TestAcceptSurvivesErrors(t *testing.T) {
	c, other := net.Pipe()
	defer other.Close()
	l := connectDeadline{Listener: &scriptedListener{errs: []error{syscall.EMFILE, errors.New("accept: connection reset")}, conn: c},
		d: time.Millisecond, log: slog.New(slog.DiscardHandler)}
	got, err := l.Accept()
	if err != nil || got != c {
		t.Fatalf("Accept = %v, %v; want the connection after the errors", got, err)
	}
	// The connect deadline is on it: a read without CONNECT times out.
	if _, err := got.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read on the accepted connection: %v, want the connect deadline", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept on a closed listener = %v, want net.ErrClosed", err)
	}
}
