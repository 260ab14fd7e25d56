//go:build linux

package serialport_test

import (
	"errors"
	"io"
	"testing"

	"github.com/sossego/sossego/firmware-bridge/internal/serialport"
	"github.com/sossego/sossego/firmware-bridge/ptytest"
)

// TestOpen opens a pseudo-terminal: attach gets the open port; when attach
// fails, its error comes back unchanged and the port is closed.
func TestOpen(t *testing.T) {
	master, slave := ptytest.Open(t)
	ptytest.Serve(t, master, func(b []byte) []byte { return append([]byte("ok:"), b...) })

	var kept serialport.Port
	got, c, err := serialport.Open("meter", slave, 115200, func(p serialport.Port) (string, error) {
		kept = p
		if _, err := io.WriteString(p, "hi"); err != nil {
			return "", err
		}
		b := make([]byte, 5)
		if _, err := io.ReadFull(p, b); err != nil {
			return "", err
		}
		return string(b), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != "ok:hi" || any(c) != any(kept) {
		t.Fatalf("Open = %q, closer %v (port %v)", got, c, kept)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	errNotMine := errors.New("not the meter we expected")
	_, c, err = serialport.Open("meter", slave, 115200, func(p serialport.Port) (string, error) {
		kept = p
		return "", errNotMine
	})
	if err != errNotMine || c != nil {
		t.Fatalf("Open = %v, %v; want attach's error and no closer", c, err)
	}
	if _, err := io.WriteString(kept, "after"); err == nil {
		t.Error("the port is still open after attach failed")
	}
}
