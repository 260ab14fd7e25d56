package mqttnet

import (
	"bufio"
	"net"
)

// readBuffer is the read buffer of each connection: a burst of small
// packets, or one large PUBLISH read straight into paho's buffer (bufio
// bypasses its buffer for reads at least this large).
const readBuffer = 32 << 10

// conn is the connection Open returns: reads go through a bufio.Reader,
// everything else (writes, deadlines, Close, addresses) is the real
// connection's.
type conn struct {
	net.Conn // the real connection
	r        *bufio.Reader
}

func buffered(c net.Conn) net.Conn {
	return &conn{Conn: c, r: bufio.NewReaderSize(c, readBuffer)}
}

func (c *conn) Read(p []byte) (int, error) { return c.r.Read(p) }
