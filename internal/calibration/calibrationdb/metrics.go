package calibrationdb

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	descExpiring = prometheus.NewDesc("sossego_calibration_expiring",
		"1 while the sensor's calibration certificate expires within 30 days (and has not yet expired).", []string{"sensor"}, nil)
	descExpired = prometheus.NewDesc("sossego_calibration_expired",
		"1 while the sensor's calibration certificate has expired, or no certificate covers today.", []string{"sensor"}, nil)
	descIndicative = prometheus.NewDesc("sossego_calibration_indicative",
		"1 while the sensor's readings are indicativas by the rule the workflow applies (calibration.Decide): a meter the register of sensors does not grade class 1 or 2; with a certificate, an expired one or another meter than the certificate's; with none, a register-of-sensors calibration missing, later or over 12 months old.", []string{"sensor"}, nil)
	descCheckAge = prometheus.NewDesc("sossego_calibration_check_age_seconds",
		"Age of the sensor's latest calibrator field check (absent before the first).", []string{"sensor"}, nil)
	descCheckStale = prometheus.NewDesc("sossego_calibration_check_stale",
		"1 while the sensor has no field check younger than its municipality's policy (default 30 days).", []string{"sensor"}, nil)
)

// Collector returns the register's /metrics gauges, computed at each
// scrape, and the device-mismatch counter.
func (r *Register) Collector() prometheus.Collector { return collector{r} }

type collector struct{ r *Register }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descExpiring, descExpired, descIndicative, descCheckAge, descCheckStale} {
		ch <- d
	}
	c.r.mismatches.Describe(ch)
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.r.mismatches.Collect(ch)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := c.r.Overview(ctx, c.r.o.Now())
	if err != nil {
		c.r.o.Log.Error("registro de calibração ilegível nas métricas", "erro", err)
		return
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	for _, row := range rows {
		v := row.Verdict
		ch <- prometheus.MustNewConstMetric(descExpiring, prometheus.GaugeValue, b(v.Expiring), row.Sensor)
		ch <- prometheus.MustNewConstMetric(descExpired, prometheus.GaugeValue, b(v.Expired || v.Certificate == nil), row.Sensor)
		ch <- prometheus.MustNewConstMetric(descIndicative, prometheus.GaugeValue, b(!row.Decision.OK), row.Sensor)
		ch <- prometheus.MustNewConstMetric(descCheckStale, prometheus.GaugeValue, b(v.CheckStale), row.Sensor)
		if v.LastCheck != nil {
			ch <- prometheus.MustNewConstMetric(descCheckAge, prometheus.GaugeValue, v.CheckAge, row.Sensor)
		}
	}
}
