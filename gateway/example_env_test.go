package gateway_test

import (
	"fmt"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/internal/wire"
)

// EnvBatcher groups one-minute BME280 readings into env batches of three.
func ExampleEnvBatcher() {
	b := &gateway.EnvBatcher{MaxRecords: 3, MaxAge: 10 * time.Minute}
	dev := bridge.Device{Model: "Bosch BME280", Serial: "bme280-0x76", Grade: bridge.GradeScreening}
	clk := wire.Clock{Synced: true, OffsetMs: 0.8, Source: "ntp"}
	start := time.Date(2026, 3, 10, 22, 0, 0, 0, time.UTC)
	for i := range 4 {
		at := start.Add(time.Duration(i) * time.Minute)
		r, err := gateway.EnvRecordOf(bridge.Env{At: at, TemperatureC: 24.512 - float64(i)/10, HasTemperature: true}, at)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, p := range b.Add(r, dev, clk, at) {
			fmt.Printf("batch of %d from %s, grade %s\n", len(p.Env), p.Device.Model, p.Device.Grade)
			for _, e := range p.Env {
				fmt.Printf("  %s %.2f °C\n", e.T.Format("15:04"), *e.TemperatureC)
			}
		}
	}
	fmt.Println("open:", b.Len())
	// Output:
	// batch of 3 from Bosch BME280, grade screening
	//   22:00 24.51 °C
	//   22:01 24.41 °C
	//   22:02 24.31 °C
	// open: 1
}
