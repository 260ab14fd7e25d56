package sen0232_test

import (
	"fmt"
	"log"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/sen0232"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/host/v3"
)

// On a Raspberry Pi: the meter's output on A0 of an ADS1115 at 0x49.
func Example() {
	if _, err := host.Init(); err != nil {
		log.Fatal(err)
	}
	bus, err := i2creg.Open("")
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()
	m, err := sen0232.NewI2C(bus, &sen0232.Opts{Addr: 0x49, Input: 0, Serial: "rua-xv-01"})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Halt()
	var s bridge.Sample
	if err := m.Sense(&s); err != nil {
		log.Fatal(err) // a *sen0232.RangeError means a wiring or power problem
	}
	fmt.Println(s)
}
