package pcbadbm_test

import (
	"errors"
	"fmt"
	"log"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/pcbadbm"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/host/v3"
)

// On a Raspberry Pi: open the default I²C bus and read one level.
func Example() {
	if _, err := host.Init(); err != nil {
		log.Fatal(err)
	}
	bus, err := i2creg.Open("")
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()
	m, err := pcbadbm.NewI2C(bus, &pcbadbm.Opts{Weighting: bridge.WeightingA, TimeWeighting: bridge.Fast})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Halt()
	var s bridge.Sample
	switch err := m.Sense(&s); {
	case errors.Is(err, pcbadbm.ErrNotReady):
		fmt.Println("warming up, try again in a second")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Printf("%s (%s, serial %s)\n", s, s.Device.Grade, s.Device.Serial)
	}
}
