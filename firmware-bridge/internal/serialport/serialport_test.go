package serialport_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/firmware-bridge/internal/serialport"
	"github.com/sossego/sossego/firmware-bridge/internal/serialport/serialtest"
)

func TestTimedOut(t *testing.T) {
	tests := []struct {
		name string
		k    int
		err  error
		want bool
	}{
		{"go.bug.st/serial timeout", 0, nil, true},
		{"deadline", 0, os.ErrDeadlineExceeded, true},
		{"wrapped deadline with bytes", 3, fmt.Errorf("read: %w", os.ErrDeadlineExceeded), true},
		{"bytes", 3, nil, false},
		{"other error", 0, io.ErrUnexpectedEOF, false},
		{"bytes and other error", 1, io.EOF, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := serialport.TimedOut(tc.k, tc.err); got != tc.want {
				t.Errorf("TimedOut(%d, %v) = %v, want %v", tc.k, tc.err, got, tc.want)
			}
		})
	}
}

// plainPort has no ResetInputBuffer.
type plainPort struct{ io.ReadWriter }

func (plainPort) SetReadTimeout(time.Duration) error { return nil }

// failingReset cannot discard its input.
type failingReset struct{ plainPort }

var errReset = errors.New("reset: bad file descriptor")

func (failingReset) ResetInputBuffer() error { return errReset }

func TestDiscardInput(t *testing.T) {
	echo := func(b []byte) []byte { return append([]byte(nil), b...) }

	p := &serialtest.Port{Feed: echo}
	if _, err := p.Write([]byte("stale")); err != nil {
		t.Fatal(err)
	}
	if err := serialport.DiscardInput(p); err != nil {
		t.Fatal(err)
	}
	if n, err := p.Read(make([]byte, 8)); n != 0 || err != nil {
		t.Errorf("after DiscardInput, Read = %d, %v; want 0, nil", n, err)
	}

	if err := serialport.DiscardInput(plainPort{}); err != nil {
		t.Errorf("a port without ResetInputBuffer: %v", err)
	}
	if err := serialport.DiscardInput(failingReset{}); !errors.Is(err, errReset) {
		t.Errorf("DiscardInput = %v, want %v", err, errReset)
	}
}

func TestOpenMissingPort(t *testing.T) {
	called := false
	_, c, err := serialport.Open("meter", "/dev/does-not-exist-sossego", 115200, func(serialport.Port) (int, error) {
		called = true
		return 1, nil
	})
	if err == nil || c != nil || called {
		t.Fatalf("Open = %v, %v; attach called %v", c, err, called)
	}
	if want := "meter: open /dev/does-not-exist-sossego: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to start with %q", err, want)
	}
}
