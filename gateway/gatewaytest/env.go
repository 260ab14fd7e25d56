package gatewaytest

import (
	"errors"
	"sync"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
)

// EnvSensor is a deterministic fake environmental sensor (a BME280 as the
// gateway sees it). Reading n (from 1) is stamped Start + n·Step and reads
// 15.00 + (n mod 200)/10 °C, 40 + n mod 50 %RH and 1013.25 hPa; when
// FailEvery > 0, every FailEvery-th reading fails instead. Like the driver,
// it names no grade.
type EnvSensor struct {
	Start     time.Time
	Step      time.Duration // default 1 s
	FailEvery int

	mu    sync.Mutex
	n     int
	taken []time.Time
}

var _ bridge.EnvSensor = (*EnvSensor)(nil)

// SenseEnv implements bridge.EnvSensor.
func (s *EnvSensor) SenseEnv(e *bridge.Env) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.FailEvery > 0 && s.n%s.FailEvery == 0 {
		return errors.New("gatewaytest: env sensor: simulated I²C NACK")
	}
	step := s.Step
	if step == 0 {
		step = time.Second
	}
	at := s.Start.Add(time.Duration(s.n) * step)
	s.taken = append(s.taken, at)
	*e = bridge.Env{At: at, TemperatureC: 15 + float64(s.n%200)/10, HumidityPct: float64(40 + s.n%50),
		PressureHPa: 1013.25, HasTemperature: true, HasHumidity: true, HasPressure: true,
		Device: bridge.Device{Model: "Bosch BME280", Serial: "bme280-0x76"}}
	return nil
}

// Taken returns the times of the readings that succeeded, in order.
func (s *EnvSensor) Taken() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.taken...)
}

// Attempts is the number of SenseEnv calls.
func (s *EnvSensor) Attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Halt implements bridge.EnvSensor.
func (s *EnvSensor) Halt() error { return nil }

func (s *EnvSensor) String() string { return "gatewaytest.EnvSensor" }
