//go:build linux

package xl2

import (
	"errors"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/ptytest"
)

// TestOpenPTY runs the driver through go.bug.st/serial on a real
// (pseudo-)terminal with the fake XL2 on the other side.
func TestOpenPTY(t *testing.T) {
	master, slave := ptytest.Open(t)
	m := newMeter()
	m.snaps = []map[string]string{snap("A", 40, 41, 39, 60), snap("A", 63.2, 70.4, 58.8, 88.1)}
	ptytest.Serve(t, master, m.feed)

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
