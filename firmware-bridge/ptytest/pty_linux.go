//go:build linux

package ptytest

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// Open returns the master side of a new pseudo-terminal and the path of
// its slave, which go.bug.st/serial opens like a USB serial port. The
// master neither echoes nor translates what the driver sends. It skips t
// where there are no pseudo-terminals, and closes the master when t ends.
func Open(t testing.TB) (*os.File, string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("pty number: %v", err)
	}
	if tio, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		tio.Lflag &^= unix.ECHO | unix.ICANON | unix.ISIG | unix.IEXTEN
		tio.Iflag &^= unix.ICRNL | unix.IXON
		tio.Oflag &^= unix.OPOST
		_ = unix.IoctlSetTermios(fd, unix.TCSETS, tio)
	}
	t.Cleanup(func() { m.Close() }) // a second Close only returns an error
	return m, fmt.Sprintf("/dev/pts/%d", n)
}

// Serve plays a fake meter on master until master is closed: each chunk
// the driver sends goes to feed, and feed's reply is written back. When t
// ends, master is closed and Serve's goroutine waited for.
func Serve(t testing.TB, master *os.File, feed func([]byte) []byte) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 256)
		for {
			n, err := master.Read(buf)
			if err != nil {
				return
			}
			if out := feed(buf[:n]); len(out) > 0 {
				if _, err := master.Write(out); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		master.Close()
		wg.Wait()
	})
}
