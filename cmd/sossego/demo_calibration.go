package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/sossego/sossego/firmware-bridge/sim"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/tz"
)

// demoLaboratory marks the demo's certificates as what they are.
const demoLaboratory = "Laboratório de demonstração"

// setDemoCalibration gives each class 1 or class 2 demo meter a
// calibration certificate in the calibration register, so that the demo's
// constatações and evidence bags take the meter from the register: clearly
// fictitious (laboratory "Laboratório de demonstração", numbers DEMO-…),
// for the meter the simulated gateway reports in its signed batches,
// calibrated two months before now and valid for a year. The screening
// meter gets none: it is not a class meter. A register that already holds
// a sensor's certificate (--keep) is left as it is.
func setDemoCalibration(ctx context.Context, dir string, now time.Time) error {
	r, err := calibrationdb.Open(ctx, filepath.Join(dir, calibration.FileName), calibrationdb.Options{})
	if err != nil {
		return err
	}
	defer r.Close()
	on := now.In(tz.Brasilia()).AddDate(0, -2, 0)
	for _, d := range demoGateways {
		if d.Grade != "class1" && d.Grade != "class2" {
			continue
		}
		if h, err := r.History(ctx, d.Sensor); err != nil || len(h) > 0 {
			if err != nil {
				return err
			}
			continue
		}
		dev, err := sim.New(demoSimOpts(d))
		if err != nil {
			return err
		}
		unc := 0.7
		if d.Grade == "class1" {
			unc = 0.4
		}
		c := calibration.Certificate{Sensor: d.Sensor, Number: fmt.Sprintf("DEMO-%s-%d", strings.ToUpper(d.Sensor), on.Year()),
			Laboratory: demoLaboratory, MeterModel: dev.Device().Model, MeterSerial: dev.Device().Serial,
			CalibratedOn: on.Format(time.DateOnly), Expires: on.AddDate(1, 0, 0).Format(time.DateOnly), UncertaintyDB: unc,
			Note: "certificado fictício da demonstração: não é um certificado de calibração de verdade"}
		if _, err := r.Add(ctx, c, nil, "demonstração"); err != nil {
			return fmt.Errorf("certificado de demonstração de %s: %w", d.Sensor, err)
		}
	}
	return nil
}
