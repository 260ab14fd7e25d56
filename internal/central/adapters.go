package central

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
)

// CheckRetain validates a retention (Options.Retain) against the oldest
// record the ingest accepts (stale; 0 → wire.DefaultStale): deleting a
// batch forgets its (gateway, seq), so a gateway replaying it later must
// find it refused as too old, not stored again. The retention keeps the
// alerts' evidence, so it needs the alerts monitor.
func CheckRetain(retain, stale time.Duration, alertsOff bool) error {
	if retain == 0 {
		return nil
	}
	if stale <= 0 {
		stale = wire.DefaultStale
	}
	switch {
	case retain < 0:
		return fmt.Errorf("retention %v is negative", retain)
	case retain < stale+24*time.Hour:
		return fmt.Errorf("retention of %v must be at least the record age limit (--max-age %v) plus a day: "+
			"a batch deleted sooner could be replayed by its gateway and stored again", retain, stale)
	case alertsOff:
		return errors.New("retention needs the alerts monitor: it keeps what the alerts rest on")
	}
	return nil
}

// mirrorCursors reads the InfluxDB mirror's persisted cursors for
// retention: nothing above them is deleted.
func mirrorCursors(st *sqlitestore.Store) func(context.Context) (int64, int64, error) {
	return func(ctx context.Context) (int64, int64, error) {
		lv, err := st.Cursor(ctx, store.CursorInflux)
		if err != nil {
			return 0, 0, err
		}
		env, err := st.Cursor(ctx, store.CursorInfluxEnv)
		return lv, env, err
	}
}

// withPrimary names a sensor's primary establishment in info: the type
// and mechanism its limit is looked up with, the name its alerts carry.
func withPrimary(info *alerts.SensorInfo, es []registry.Establishment) {
	if e, ok := registry.Primary(es); ok {
		info.EstablishmentType, info.Mechanism, info.Establishment = e.Type, e.Mechanism, e.Name
	}
}

func sensorInfo(s registry.Sensor, grade string) alerts.SensorInfo {
	info := alerts.SensorInfo{Sensor: s.ID, Gateway: s.Gateway, Municipality: s.Municipality(), Code: s.Code,
		Zone: s.Zone, Grade: grade}
	withPrimary(&info, s.Establishments)
	return info
}

// alertObserver hands stored readings and gateway statuses to the alerts
// monitor.
type alertObserver struct {
	m   *alerts.Monitor
	log *slog.Logger
}

func (a alertObserver) Observe(ctx context.Context, r ingest.Reading) {
	info := alerts.SensorInfo{Sensor: r.Sensor, Gateway: r.Gateway, Municipality: r.Municipality, Code: r.Code,
		Zone: r.Zone, Grade: r.Grade}
	withPrimary(&info, r.Establishments)
	err := a.m.Observe(ctx, alerts.Reading{SensorInfo: info, T: r.Record.T, DurMs: r.Record.DurMs,
		LAeq: r.Record.LAeq, LAFmax: r.Record.LAFmax, LAFmin: r.Record.LAFmin, ClockUnsynced: !r.Clock.Synced})
	if err != nil {
		a.log.Warn("avaliação de alerta falhou", "sensor", r.Sensor, "erro", err)
	}
}

func (a alertObserver) ObserveStatus(ctx context.Context, s store.GatewayStatus) {
	if err := a.m.GatewayStatus(ctx, s.Gateway, s.State == "online"); err != nil {
		a.log.Warn("estado do gateway não aplicado aos alertas", "gateway", s.Gateway, "erro", err)
	}
}

var (
	_ ingest.Observer       = alertObserver{}
	_ ingest.StatusObserver = alertObserver{}
)

// alertLister adapts the case store to the API.
type alertLister struct{ cs *alertstore.Store }

func (l alertLister) ListAlerts(ctx context.Context, f dashboard.AlertFilter) (any, error) {
	cf := alertstore.Filter{Municipality: f.Municipality, Sensor: f.Sensor, Limit: f.Limit}
	if f.State == "no_data" {
		cf.Kind = alerts.KindNoData
	} else {
		cf.State = alerts.State(f.State)
	}
	list, err := l.cs.ListAlerts(ctx, cf)
	if list == nil {
		list = []alerts.Alert{}
	}
	return list, err
}

// limitFunc gives the API the limit in force from the codes engine.
func limitFunc(l alerts.Limits) dashboard.LimitFunc {
	return func(s registry.Sensor, at time.Time) (dashboard.Limit, bool, error) {
		p, _ := s.Primary()
		lim, ok, err := l.LimitAt(s.Code, s.Zone, p.Type, p.Mechanism, at)
		if err != nil || !ok {
			return dashboard.Limit{}, ok, err
		}
		out := dashboard.Limit{LimitDBA: lim.DB, Code: lim.CodeID, Version: lim.CodeVersion, Article: lim.Article,
			Period: lim.PeriodLabel}
		if !lim.PeriodEnd.IsZero() {
			out.Until = lim.PeriodEnd.Format(time.RFC3339)
		}
		return out, true, nil
	}
}

// alertGauge exports alert counts by state from the case store.
type alertGauge struct{ cases *alertstore.Store }

var alertDesc = prometheus.NewDesc("sossego_alerts", "Alerts in the case store, by state.", []string{"state"}, nil)

func (g alertGauge) Describe(ch chan<- *prometheus.Desc) { ch <- alertDesc }

func (g alertGauge) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := g.cases.CountAlerts(ctx)
	if err != nil {
		return
	}
	for _, s := range []alerts.State{alerts.StatePending, alerts.StateFiring, alerts.StateResolved, alerts.StateCancelled} {
		ch <- prometheus.MustNewConstMetric(alertDesc, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}
