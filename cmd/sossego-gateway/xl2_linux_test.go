//go:build linux

package main

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/ptytest"
	"github.com/sossego/sossego/gateway/gatewaytest"
)

// serveXL2 answers the XL2 remote-measurement commands the driver sends,
// as an XL2 identifying itself with idn would, and records the commands.
func serveXL2(t *testing.T, master *os.File, idn string) (commands func() []string) {
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(master)
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			mu.Lock()
			got = append(got, line)
			mu.Unlock()
			f := strings.Fields(strings.ToUpper(line))
			if len(f) == 0 {
				continue
			}
			var reply []string
			switch f[0] {
			case "*IDN?":
				reply = []string{idn}
			case "SYST:ERR?":
				reply = []string{"0"}
			case "MEAS:SLM:123:DT?":
				for _, p := range f[1:] {
					switch p {
					case "LAEQ":
						reply = append(reply, "63.2 dB")
					case "LAFMAX":
						reply = append(reply, "70.4 dB")
					case "LAFMIN":
						reply = append(reply, "58.8 dB")
					case "LCPKMAX":
						reply = append(reply, "88.1 dB, OK")
					}
				}
			}
			for _, r := range reply {
				if _, err := master.WriteString(r + "\r\n"); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		master.Close()
		wg.Wait()
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestOpenMeterXL2 selects the XL2 the way the daemon does (meter.type xl2,
// meter.serial_port, meter.calibrated_at) with a fake XL2 on the other side
// of a pseudo-terminal: the samples carry class 1 and the calibration date.
func TestOpenMeterXL2(t *testing.T) {
	master, slave := ptytest.Open(t)
	commands := serveXL2(t, master, "NTiAudio,XL2,A2A-12345-E0,V4.21")
	cfg := defaultConfig().Meter
	cfg.Type, cfg.SerialPort, cfg.CalibratedAt = "xl2", slave, "2026-08-20"
	m, closeMeter, err := openMeter(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeMeter()
	if m.String() != "xl2{"+slave+"}" {
		t.Errorf("meter %s", m)
	}
	var s bridge.Sample
	if err := m.Sense(&s); err != nil {
		t.Fatal(err)
	}
	want := bridge.Device{Model: "NTi Audio XL2", Serial: "A2A-12345-E0", Firmware: "V4.21", Grade: bridge.GradeClass1,
		CalibratedAt: time.Date(2026, 8, 20, 0, 0, 0, 0, time.UTC)}
	if s.Device != want {
		t.Errorf("device %+v, want %+v", s.Device, want)
	}
	if s.Level != 63.2 || s.Max != 70.4 || s.Min != 58.8 || !s.HasPeakC || s.PeakC != 88.1 || s.Weighting != bridge.WeightingA {
		t.Errorf("sample %+v", s)
	}
	if err := m.Halt(); err != nil {
		t.Fatal(err)
	}
	// The fake reads asynchronously: wait for the last command to arrive.
	received := func() bool { return slices.Contains(commands(), "INIT STOP") }
	if !gatewaytest.WaitFor(5*time.Second, received) {
		t.Errorf("Halt did not stop the XL2's measurement: %q", commands())
	}
	cmds := strings.Join(commands(), "|")
	for _, c := range []string{"*IDN?", "*RST", "INIT START", "MEAS:INIT"} {
		if !strings.Contains(cmds, c) {
			t.Errorf("the XL2 never received %q: %s", c, cmds)
		}
	}
}

// TestOpenMeterXL2Errors: a wrong device or a missing port stops the start
// with an error that names the problem.
func TestOpenMeterXL2Errors(t *testing.T) {
	t.Run("not an XL2", func(t *testing.T) {
		master, slave := ptytest.Open(t)
		serveXL2(t, master, "RION,NL-52,00123456,1.0")
		cfg := defaultConfig().Meter
		cfg.Type, cfg.SerialPort = "xl2", slave
		if m, _, err := openMeter(cfg, nil); err == nil {
			m.Halt()
			t.Fatal("a Rion meter was accepted as an XL2")
		}
	})
	t.Run("no port", func(t *testing.T) {
		cfg := defaultConfig().Meter
		cfg.Type, cfg.SerialPort = "xl2", "/dev/does-not-exist-sossego"
		_, _, err := openMeter(cfg, nil)
		if err == nil || !strings.Contains(err.Error(), "/dev/does-not-exist-sossego") {
			t.Fatalf("error %v does not name the port", err)
		}
	})
}
