package mqttnet

import (
	"bufio"
	"net"
	"sync"
	"time"
)

const (
	// readBuffer is the read buffer of each connection: a burst of small
	// packets, or one large PUBLISH read straight into paho's buffer (bufio
	// bypasses its buffer for reads at least this large).
	readBuffer = 32 << 10
	// maxPending bounds the bytes written but not yet sent: a Write that
	// finds this much waiting blocks until the flusher has taken it.
	maxPending = 256 << 10
	// closeFlush bounds how long Close waits for what is pending (paho's
	// DISCONNECT) to be sent before it closes the connection anyway.
	closeFlush = 2 * time.Second
)

// conn is the connection Open returns: reads go through a bufio.Reader and
// writes through a writer (see the package doc); deadlines, addresses and
// the rest are the real connection's.
type conn struct {
	net.Conn // the real connection
	r        *bufio.Reader
	w        *writer
}

// buffered wraps c. writeTimeout bounds each write on the real connection
// (paho's WriteTimeout; 0: none).
func buffered(c net.Conn, writeTimeout time.Duration) net.Conn {
	w := &writer{c: c, timeout: writeTimeout, kick: make(chan struct{}, 1), stop: make(chan struct{}),
		done: make(chan struct{})}
	w.room = sync.NewCond(&w.mu)
	go w.run()
	return &conn{Conn: c, r: bufio.NewReaderSize(c, readBuffer), w: w}
}

// Read reads through the buffer. When the writer has closed the
// connection after a failed write, a failing read returns that write's
// error (writeFailed) instead of the closed connection's: paho v1.5.1's
// reader takes "use of closed network connection" for its own Close and
// reports nothing, so the client would believe itself connected, with
// nothing read any more, until its keepalive gave up (30 s + the ping
// timeout; a soak saw the central service blind for 45 s after a broker
// restart). paho reports the write error, and reconnects, at once.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil {
		if werr := c.w.failure(); werr != nil {
			return n, writeFailed{werr}
		}
	}
	return n, err
}

// writeFailed is a read's error after a failed write closed the
// connection. Its text is the write's, which paho reports (unless the
// write itself failed on a connection already closed: then it stays as
// silent as paho is about its own Close).
type writeFailed struct{ err error }

func (e writeFailed) Error() string {
	return "mqttnet: connection closed after a failed write: " + e.err.Error()
}

func (e writeFailed) Unwrap() error { return e.err }

func (c *conn) Write(p []byte) (int, error) { return c.w.write(p) }

// SetDeadline sets the read deadline; writes are bounded by the writer's
// timeout instead (see SetWriteDeadline).
func (c *conn) SetDeadline(t time.Time) error { return c.Conn.SetReadDeadline(t) }

// SetWriteDeadline does nothing: a Write returns once its bytes are queued,
// so a deadline around it (paho sets one around each PUBLISH) would bound
// nothing. Each write on the real connection is bounded by the client's
// WriteTimeout instead, and a Write waiting for room waits for exactly
// such a write.
func (c *conn) SetWriteDeadline(time.Time) error { return nil }

// Close sends what is pending (within closeFlush), then closes the
// connection.
func (c *conn) Close() error {
	c.w.close()
	return c.Conn.Close()
}

// writer queues the bytes written and sends them from its own goroutine:
// whatever was queued while the previous write was on the wire goes out
// in one write.
type writer struct {
	c       net.Conn
	timeout time.Duration

	mu      sync.Mutex
	room    *sync.Cond // signalled when pending was taken or on error
	pending []byte     // queued, not yet taken
	spare   []byte     // the buffer to queue into next (nil while in flight)
	err     error      // the first write error; every later write returns it
	closed  bool

	kick chan struct{} // something was queued
	stop chan struct{} // closed by close
	done chan struct{} // closed when run has returned
}

func (w *writer) write(p []byte) (int, error) {
	w.mu.Lock()
	for len(w.pending) >= maxPending && w.err == nil && !w.closed {
		w.room.Wait()
	}
	switch {
	case w.err != nil:
		err := w.err
		w.mu.Unlock()
		return 0, err
	case w.closed:
		w.mu.Unlock()
		return 0, net.ErrClosed
	}
	w.pending = append(w.pending, p...)
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default: // a kick is already waiting; it covers these bytes too
	}
	return len(p), nil
}

// run sends what is queued until close, then sends what is left. It
// returns early when a write fails.
func (w *writer) run() {
	defer close(w.done)
	for {
		select {
		case <-w.kick:
			if !w.flush() {
				return
			}
		case <-w.stop:
			for w.queued() && w.flush() {
			}
			return
		}
	}
}

// queued reports whether bytes are waiting to be sent.
func (w *writer) queued() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending) > 0
}

// flush sends everything queued in one write. It reports false when the
// write failed (the error is kept for every later Write).
func (w *writer) flush() bool {
	w.mu.Lock()
	if len(w.pending) == 0 {
		w.mu.Unlock()
		return true
	}
	buf := w.pending
	w.pending, w.spare = w.spare[:0], nil
	w.room.Broadcast()
	w.mu.Unlock()

	if w.timeout > 0 {
		_ = w.c.SetWriteDeadline(time.Now().Add(w.timeout)) // a failure shows in the write
	}
	_, err := w.c.Write(buf)

	w.mu.Lock()
	w.spare = buf[:0]
	if err != nil {
		w.err = err
		w.room.Broadcast()
	}
	w.mu.Unlock()
	if err != nil {
		// The reader fails at once (with the write's error: see Read)
		// and paho reconnects, as it does when its own write fails.
		_ = w.c.Close()
		return false
	}
	return true
}

// failure returns the error of the write that failed, or nil.
func (w *writer) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// close stops accepting writes and waits (up to closeFlush) for the
// queued bytes to be sent.
func (w *writer) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return
	}
	w.closed = true
	w.room.Broadcast()
	w.mu.Unlock()
	close(w.stop)
	select {
	case <-w.done:
	case <-time.After(closeFlush):
		// The peer does not read: closing the connection (Close does it
		// next) ends the write in flight.
	}
}
