package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/host/v3"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/nsrtmk4"
	"github.com/sossego/sossego/firmware-bridge/pcbadbm"
	"github.com/sossego/sossego/firmware-bridge/sen0232"
	"github.com/sossego/sossego/firmware-bridge/sim"
	"github.com/sossego/sossego/firmware-bridge/slm"
	"github.com/sossego/sossego/firmware-bridge/xl2"
)

// openMeter builds the configured driver. The returned closer releases the
// bus or port (after Halt).
func openMeter(c MeterConfig, stdin io.Reader) (bridge.Meter, func(), error) {
	noop := func() {}
	switch c.Type {
	case "sim":
		sc, err := sim.ParseScenario(c.SimScenario)
		if err != nil {
			return nil, noop, err
		}
		m, err := sim.New(&sim.Opts{Scenario: sc, Seed: c.SimSeed, Speed: c.SimSpeed})
		return m, noop, err
	case "pcbartists", "sen0232":
		return openI2CMeter(c)
	case "nsrt":
		cal, err := parseDate(c.CalibratedAt)
		if err != nil {
			return nil, noop, err
		}
		m, err := nsrtmk4.Open(c.SerialPort, &nsrtmk4.Opts{CalibratedAt: cal})
		if err != nil {
			return nil, noop, err
		}
		return m, noop, nil
	case "pcm":
		return openPCMMeter(c, stdin)
	case "xl2":
		o, err := xl2Opts(c)
		if err != nil {
			return nil, noop, err
		}
		m, err := xl2.Open(c.SerialPort, o) // Halt also closes the port
		if err != nil {
			return nil, noop, err
		}
		return m, noop, nil
	}
	return nil, noop, fmt.Errorf("medidor %q desconhecido", c.Type)
}

// openI2CMeter opens the I²C bus and the PCB Artists or SEN0232 meter on
// it; the closer releases the bus.
func openI2CMeter(c MeterConfig) (bridge.Meter, func(), error) {
	noop := func() {}
	if _, err := host.Init(); err != nil {
		return nil, noop, fmt.Errorf("periph host: %w", err)
	}
	bus, err := i2creg.Open(c.I2CBus)
	if err != nil {
		return nil, noop, fmt.Errorf("barramento I²C %q: %w", c.I2CBus, err)
	}
	closeBus := func() { _ = bus.Close() }
	var m bridge.Meter
	if c.Type == "pcbartists" {
		m, err = pcbadbm.NewI2C(bus, &pcbadbm.Opts{Addr: c.I2CAddr})
	} else {
		m, err = sen0232.NewI2C(bus, &sen0232.Opts{Addr: c.I2CAddr, Input: c.ADCInput, Serial: c.Serial})
	}
	if err != nil {
		closeBus()
		return nil, noop, err
	}
	return m, closeBus, nil
}

// openPCMMeter measures PCM audio from a file or stdin ("-"); the closer
// closes the file.
func openPCMMeter(c MeterConfig, stdin io.Reader) (bridge.Meter, func(), error) {
	noop := func() {}
	f, err := slm.ParseFormat(c.PCMFormat)
	if err != nil {
		return nil, noop, err
	}
	in, closeIn := stdin, noop
	if c.PCMInput != "-" {
		fh, err := os.Open(c.PCMInput)
		if err != nil {
			return nil, noop, err
		}
		in, closeIn = fh, func() { fh.Close() }
	}
	st, err := slm.NewStream(in, f, c.PCMChannels, 0)
	if err != nil {
		closeIn()
		return nil, noop, err
	}
	period := time.Duration(float64(time.Second) / c.SampleRateHz)
	m, err := slm.NewSource(st, slm.SourceOptions{Meter: slm.Options{SampleRate: c.PCMSampleRate,
		OffsetDB: c.PCMOffsetDB, RecordInterval: period}})
	if err != nil {
		closeIn()
		return nil, noop, err
	}
	return m, closeIn, nil
}

// xl2Opts are the NTi XL2 driver options for c: a class 1 instrument with
// the calibration date from meter.calibrated_at (unknown when empty).
func xl2Opts(c MeterConfig) (*xl2.Opts, error) {
	cal, err := parseDate(c.CalibratedAt)
	if err != nil {
		return nil, err
	}
	return &xl2.Opts{Grade: bridge.GradeClass1, CalibratedAt: cal}, nil
}

// parseDate parses a YYYY-MM-DD date; "" is the zero time (unknown).
func parseDate(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("data %q inválida: use AAAA-MM-DD", s)
	}
	return t, nil
}
