//go:build linux

package nsrtmk4

import (
	"errors"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/ptytest"
)

// TestOpenPTY runs the driver through go.bug.st/serial on a real
// (pseudo-)terminal with the fake instrument on the other side.
func TestOpenPTY(t *testing.T) {
	master, slave := ptytest.Open(t)
	inst := newInstrument()
	inst.leqs = []float32{40, 55.5, 56.5}
	ptytest.Serve(t, master, inst.feed)

	clk := newClock()
	d, err := Open(slave, &Opts{Now: clk.Now, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if d.Device().Serial != "CI-NSRT4-20931" || d.String() != "nsrtmk4{"+slave+"}" {
		t.Fatalf("device %+v %s", d.Device(), d)
	}
	for _, want := range []float64{55.5, 56.5} {
		clk.Advance(time.Second)
		var s bridge.Sample
		if err := d.Sense(&s); err != nil {
			t.Fatal(err)
		}
		if s.Level != want || s.Duration != time.Second {
			t.Fatalf("sample %+v, want %v", s, want)
		}
	}
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	var s bridge.Sample
	if err := d.Sense(&s); !errors.Is(err, ErrHalted) {
		t.Fatal(err)
	}
}
