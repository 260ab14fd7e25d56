package main

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/internal/tz"
)

// demoEnvInterval is how often the demo's simulated environmental sensors
// are read (a real gateway defaults to once a minute): often enough that the
// sensor page shows new environmental values while one watches it.
const demoEnvInterval = 10 * time.Second

// demoClimate is the plausible climate of a demo site, for the simulated
// environmental sensor: annual mean temperature and its seasonal swing
// (warmest in mid-January, southern hemisphere), the diurnal swing (coolest
// near 06:00, warmest near 15:00 local time), the mean relative humidity and
// its diurnal swing (highest at dawn), and the altitude, which sets the
// station pressure a BME280 actually measures (sea-level 1013.25 hPa
// reduced by the standard atmosphere).
type demoClimate struct {
	MeanC, SeasonC, DiurnalC float64
	MeanRH, DiurnalRH        float64
	AltitudeM                float64
}

// demoClimates by municipality (figures in the range of INMET's climate
// normals for the regions; a simulation, not data).
var demoClimates = map[string]demoClimate{
	// Lapa/PR, Campos Gerais, about 900 m: cool and humid.
	"lapa": {MeanC: 17, SeasonC: 4.5, DiurnalC: 5, MeanRH: 80, DiurnalRH: 14, AltitudeM: 908},
	// Conceição de Macabu/RJ, Norte Fluminense lowlands, about 40 m: warm.
	"conceicao-de-macabu": {MeanC: 23.5, SeasonC: 3, DiurnalC: 4.5, MeanRH: 78, DiurnalRH: 15, AltitudeM: 40},
}

// demoEnv is the demo's simulated BME280 on a gateway: temperature,
// humidity and pressure as a deterministic function of the time (the same
// instant always gives the same reading), following the site's diurnal and
// seasonal cycle at local time, with slow pressure changes and a small
// per-gateway jitter.
type demoEnv struct {
	gateway string
	serial  string
	climate demoClimate
	loc     *time.Location
	seed    uint64
	now     func() time.Time
}

var _ gateway.EnvSensor = (*demoEnv)(nil)
var _ bridge.EnvSensor = (*demoEnv)(nil)

// newDemoEnv returns the simulated environmental sensor of demo gateway d;
// now is the clock (time.Now in the demo).
func newDemoEnv(d demoGateway, now func() time.Time) (*demoEnv, error) {
	c, ok := demoClimates[d.Municipality]
	if !ok {
		return nil, fmt.Errorf("demo: no simulated climate for municipality %q", d.Municipality)
	}
	loc := tz.Brasilia()
	h := fnv.New64a()
	h.Write([]byte(d.ID))
	return &demoEnv{gateway: d.ID, serial: "SIM-BME-" + strings.ToUpper(d.ID), climate: c, loc: loc, seed: h.Sum64(), now: now}, nil
}

// SenseEnv fills e with the reading at the current time.
func (s *demoEnv) SenseEnv(e *bridge.Env) error {
	*e = s.at(s.now())
	return nil
}

// at is the reading at t.
func (s *demoEnv) at(t time.Time) bridge.Env {
	c := s.climate
	lt := t.In(s.loc)
	hour := float64(lt.Hour()) + float64(lt.Minute())/60 + float64(lt.Second())/3600
	day := float64(lt.YearDay()) + hour/24
	diurnal := math.Cos(2 * math.Pi * (hour - 15) / 24) // +1 at 15:00, −1 at 03:00
	// Mornings warm faster than evenings cool: a second harmonic moves the
	// minimum towards dawn.
	diurnal = (diurnal + 0.25*math.Cos(4*math.Pi*(hour-13.5)/24)) / 1.25
	season := math.Cos(2 * math.Pi * (day - 15) / 365.25) // +1 in mid-January
	temp := c.MeanC + c.SeasonC*season + c.DiurnalC*diurnal + 0.08*s.jitter(t, 1)
	rh := c.MeanRH - c.DiurnalRH*diurnal + 0.4*s.jitter(t, 2)
	rh = math.Max(20, math.Min(99, rh))
	// Station pressure: altitude, the atmospheric tide (two ~1 hPa peaks a
	// day, near 10:00 and 22:00) and synoptic drift over a few days.
	base := 1013.25 * math.Pow(1-2.25577e-5*c.AltitudeM, 5.25588)
	unix := float64(t.Unix()) / 86400
	press := base + 1.0*math.Cos(2*math.Pi*(hour-10)/12) + 3*math.Sin(2*math.Pi*unix/4.7) + 1.5*math.Sin(2*math.Pi*unix/1.9+1) +
		0.05*s.jitter(t, 3)
	return bridge.Env{At: t, TemperatureC: temp, HumidityPct: rh, PressureHPa: press,
		HasTemperature: true, HasHumidity: true, HasPressure: true,
		Device: bridge.Device{Model: "BME280 (simulado)", Serial: s.serial, Grade: bridge.GradeScreening}}
}

// jitter is a deterministic value in [−1, 1] for the 10-s slot of t and a
// quantity k, different for each gateway.
func (s *demoEnv) jitter(t time.Time, k uint64) float64 {
	x := s.seed ^ uint64(t.Unix()/10)*0x9e3779b97f4a7c15 ^ k*0xbf58476d1ce4e5b9
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return float64(x%2001)/1000 - 1
}

// Halt does nothing: there is no device.
func (s *demoEnv) Halt() error { return nil }

func (s *demoEnv) String() string { return "BME280 simulado de " + s.gateway }
