//go:build linux

package xl2

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"golang.org/x/sys/unix"
)

// openPTY returns the master side of a new pseudo-terminal and the path of
// its slave, which go.bug.st/serial opens like a USB serial port.
func openPTY(t *testing.T) (*os.File, string) {
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
	// The master side must not echo or translate what the driver sends.
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err == nil {
		tio.Lflag &^= unix.ECHO | unix.ICANON | unix.ISIG | unix.IEXTEN
		tio.Iflag &^= unix.ICRNL | unix.IXON
		tio.Oflag &^= unix.OPOST
		_ = unix.IoctlSetTermios(fd, unix.TCSETS, tio)
	}
	return m, fmt.Sprintf("/dev/pts/%d", n)
}

// TestOpenPTY runs the driver through go.bug.st/serial on a real
// (pseudo-)terminal with the fake XL2 on the other side.
func TestOpenPTY(t *testing.T) {
	master, slave := openPTY(t)
	m := newMeter()
	m.snaps = []map[string]string{snap("A", 40, 41, 39, 60), snap("A", 63.2, 70.4, 58.8, 88.1)}
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
			if out := m.feed(buf[:n]); len(out) > 0 {
				if _, err := master.Write(out); err != nil {
					return
				}
			}
		}
	}()
	defer func() {
		master.Close()
		wg.Wait()
	}()

	clk := newClock()
	d, err := Open(slave, &Opts{Now: clk.Now, Timeout: 5 * time.Second, CalibratedAt: certDate})
	if err != nil {
		t.Fatal(err)
	}
	if d.Device().Serial != "A2A-10242-E0" || d.String() != "xl2{"+slave+"}" {
		t.Fatalf("device %+v %s", d.Device(), d)
	}
	clk.Advance(time.Second)
	var s bridge.Sample
	if err := d.Sense(&s); err != nil {
		t.Fatal(err)
	}
	if s.Level != 63.2 || s.Max != 70.4 || s.Min != 58.8 || s.PeakC != 88.1 || s.Duration != time.Second {
		t.Fatalf("sample %+v", s)
	}
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := d.Sense(&s); !errors.Is(err, ErrHalted) {
		t.Fatal(err)
	}
}
