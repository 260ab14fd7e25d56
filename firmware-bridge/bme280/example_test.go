package bme280_test

import (
	"fmt"
	"log"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/bme280"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/host/v3"
)

// On a Raspberry Pi: one reading from a BME280 at 0x76.
func Example() {
	if _, err := host.Init(); err != nil {
		log.Fatal(err)
	}
	bus, err := i2creg.Open("")
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()
	s, err := bme280.NewI2C(bus, &bme280.Opts{Addr: 0x76})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Halt()
	var e bridge.Env
	if err := s.SenseEnv(&e); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.1f °C, %.0f %%RH, %.1f hPa\n", e.TemperatureC, e.HumidityPct, e.PressureHPa)
}
