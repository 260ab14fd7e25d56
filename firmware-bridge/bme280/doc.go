// Package bme280 adapts periph's bmxx80 driver (Bosch BME280, and its
// humidity-less siblings BMP280 and BMP180) to bridge.EnvSensor, so the
// gateway can publish temperature, humidity and pressure on the environment
// topic next to the sound levels.
//
// # Datasheet
//
// BME280: https://www.bosch-sensortec.com/media/boschsensortec/downloads/datasheets/bst-bme280-ds002.pdf
// Driver: https://pkg.go.dev/periph.io/x/devices/v3/bmxx80 (v3.7.4).
//
// # Behaviour
//
// NewI2C lets bmxx80 read the chip ID (0x60 BME280, 0x58 BMP280, 0x55
// BMP180) and the calibration, and configure oversampling (4× by default).
// SenseEnv runs one forced-mode measurement (about 30 ms at 4×) and converts
// it: °C, % relative humidity (BME280 only) and hPa. Readings outside the
// sensor's operating range (−40…85 °C, 300…1100 hPa, 0…100 %RH) are
// rejected as *RangeError; they come from a disconnected or damaged sensor,
// not from the weather. The chip has no serial number: Opts.Serial names it
// in records (default "bme280-<addr>").
//
// # Use from the gateway
//
//	bus, err := i2creg.Open("")              // after host.Init()
//	s, err := bme280.NewI2C(bus, &bme280.Opts{Addr: 0x76})
//	err = s.SenseEnv(&env)
package bme280
