// Package sen0232 reads a DFRobot Gravity SEN0232 analog sound level meter
// through an ADS1115 16-bit ADC, using periph's ads1x15 driver.
//
// # Datasheet
//
// SEN0232 wiki and sample code: https://wiki.dfrobot.com/Gravity__Analog_Sound_Level_Meter_SKU_SEN0232
// (tutorial: https://www.dfrobot.com/blog-980.html). ADS1115:
// https://www.ti.com/lit/ds/symlink/ads1115.pdf
//
// # Conversion and grade
//
// The meter outputs a DC voltage linear in A-weighted level, 0.6–2.6 V for
// 30–130 dB(A), "fast" (125 ms) response, vendor accuracy ±1.5 dB:
//
//	dB(A) = V × 50
//
// Voltages outside 0.6–2.6 V (with 10 mV, 0.5 dB, of slack for ADC and
// supply tolerance) are errors (*RangeError): they mean an unpowered meter, a
// loose wire or the wrong input, never a level. It is a screening sensor:
// every sample is flagged bridge.GradeScreening, and a sample is the
// instantaneous fast level (Duration 0); an Leq can only be approximated by
// the gateway from frequent samples.
//
// # ADC set-up
//
// NewI2C checks that an ADS1115 answers by writing its config register
// without starting a conversion and reading it back (the ADS1115 has no ID
// register), then asks ads1x15 for the input's pin with a ±4.096 V range
// (the output reaches 2.6 V, too much for ±2.048 V) at 128 samples/s. Each
// Sense is one single-shot conversion (about 8 ms). The ADS1115's default
// address 0x48 clashes with the PCB Artists meter: strap ADDR for 0x49–0x4B
// if both are on one bus.
//
// # Use from the gateway
//
//	bus, err := i2creg.Open("")              // after host.Init()
//	m, err := sen0232.NewI2C(bus, &sen0232.Opts{Addr: 0x48, Input: 0})
package sen0232
