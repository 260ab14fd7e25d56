// Package pcbadbm reads the PCB Artists I²C decibel sound level meter
// (PCBA-DBM-r3: the MEMS module, its spectrum-analyser variant and the
// external-microphone variant).
//
// # Datasheet
//
// Programming manual (register map):
// https://pcbartists.com/product-documentation/i2c-decibel-meter-programming-manual/
//
// Acoustic characteristics:
// https://pcbartists.com/wiki/sound-level-sensors/pcba-dbm-r3/acoustic-characteristics/
//
// # What the module measures, and its grade
//
// The module reports whole decibels (8-bit registers) from 35 to 120 dB,
// ±2 dB at 1 kHz/94 dB, 30 Hz–8 kHz, with A, C or Z weighting. Its
// "averaging" is an exponential moving average of dB values with time
// constant TAVG (125 ms stands in for Fast, 1000 ms for Slow); the vendor
// states it does not comply with IEC 61672. Every sample is therefore
// flagged bridge.GradeScreening, and a sample is a time-weighted level at an
// instant (Duration 0), never an Leq.
//
// # How the driver uses the registers
//
// NewI2C reads VERSION (0x00: 0x31 MEMS, 0x32 MEMS with spectrum, 0x81
// external microphone; high nibble hardware, low nibble firmware), then
// issues a soft reset (RESET 0x09 bit 3) and waits 5 ms: the manual says a
// module in power-down leaves it only through that reset, which restores
// the power-up defaults, so NewI2C wakes a module that Halt (or an earlier
// process, or one that crashed) left powered down. It then reads the
// 32-bit ID (0x01–0x04, ID3 first) that becomes the serial number, checks
// the bus with a SCRATCH (0x05) write and read-back, writes CONTROL (0x06:
// filter bits [2:1] 00 Z, 01 A, 10 C; interrupts off; powered up), writes
// TAVG_H then TAVG_L (0x07, 0x08; the low byte commits), waits one TAVG (at
// least the 50 ms the manual asks after a reset) for the new weighting to
// settle, and clears MIN/MAX and the history (RESET bits 1 and 2).
//
// Sense reads DECIBEL, MIN and MAX (0x0A–0x0C) in one burst and then clears
// MIN/MAX, so Max and Min cover the time since the previous Sense. DECIBEL 0
// means "not valid yet" (the first second after power-up): Sense returns
// ErrNotReady and the gateway should simply try again. Halt powers the
// module down (CONTROL bit 0; 100 µA): a stopped gateway does not keep the
// module running, and the next NewI2C wakes it (the choice: power down on
// every stop and wake on every open, rather than leave it running, because
// the wake is needed anyway after a crash left it in an unknown state).
//
// The tests replay op lists built from the programming manual's register
// map (there is no module here to record traffic from), and a register-
// level fake of the module checks that a Halted module comes back.
//
// The default address 0x48 is also the ADS1115's default: if both share a
// bus, strap the ADS1115 to 0x49–0x4B.
//
// # Use from the gateway
//
//	bus, err := i2creg.Open("")              // after host.Init()
//	m, err := pcbadbm.NewI2C(bus, &pcbadbm.Opts{Weighting: bridge.WeightingA})
//	err = m.Sense(&sample)                   // errors.Is(err, pcbadbm.ErrNotReady): retry
package pcbadbm
