package central

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/alertstore"
	inotify "github.com/sossego/sossego/internal/notify"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/workflow"
)

// openNotify opens the notifications (e-mail, webhooks, push) over the
// case store, the users and the register.
func openNotify(ctx context.Context, o Options, wb *web, cases *alertstore.Store, reg *registry.Live, promReg prometheus.Registerer,
	log *slog.Logger) (*inotify.Service, error) {
	return inotify.Open(ctx, inotify.Options{
		Path: filepath.Join(o.DataDir, inotify.FileName), ConfigFile: o.NotifyConfig, Defaults: o.NotifyDefaults,
		Users: func(ctx context.Context) ([]notify.UserRef, error) {
			list, err := wb.users.List(ctx)
			out := make([]notify.UserRef, 0, len(list))
			for _, u := range list {
				out = append(out, notify.UserRef{Name: u.Name, Role: string(u.Role), Disabled: u.Disabled})
			}
			return out, err
		},
		Alerts: notifyAlerts{cases},
		Acks: func(ctx context.Context, id string) (string, bool, error) {
			if wb.cases == nil {
				return "", false, nil
			}
			t, err := wb.cases.Triage(ctx, id)
			return t.AckedBy, t.Acked(), err
		},
		Sensors: func(id string) (notify.SensorDetails, bool) {
			s, ok := reg.Current().Sensor(id)
			if !ok {
				return notify.SensorDetails{}, false
			}
			d := notify.SensorDetails{Address: s.Address, Gateway: s.Gateway}
			if g, ok := reg.Current().Gateway(s.Gateway); ok {
				d.GatewayName = g.Name
			}
			if e, ok := s.Primary(); ok {
				d.Establishment, d.EstablishmentAddress = e.Name, e.Address
			}
			return d, true
		},
		Municipalities: func() []string {
			var ms []string
			for _, g := range reg.Current().Gateways() {
				if !slices.Contains(ms, g.Municipality) {
					ms = append(ms, g.Municipality)
				}
			}
			return ms
		},
		Registerer: promReg, Log: log.With("componente", "notificações"),
	})
}

// notifyAlerts adapts the case store for the notifications' start-up
// reconciliation.
type notifyAlerts struct{ cs *alertstore.Store }

func (n notifyAlerts) OpenAlerts(ctx context.Context) ([]alerts.Alert, error) {
	return n.cs.ListAlerts(ctx, alertstore.Filter{State: alerts.StateFiring, Limit: 1000})
}

func (n notifyAlerts) Alert(ctx context.Context, id string) (alerts.Alert, bool, error) {
	a, err := n.cs.GetAlert(ctx, id)
	switch {
	case errors.Is(err, alerts.ErrNotFound):
		return alerts.Alert{}, false, nil
	case err != nil:
		return alerts.Alert{}, false, err
	}
	return a, true, nil
}

// notifyAcks passes the fiscais' acknowledgements to the notifications
// besides the live feed.
func notifyAcks(wb *web, svc *inotify.Service) {
	if wb.svc == nil {
		return
	}
	wb.onChange = append(wb.onChange, func(c workflow.Change) {
		if c.Action == "ack" && c.AlertID != "" {
			svc.Ack(c.AlertID, c.By, c.At)
		}
	})
}

// notifyAPI serves the notification routes.
func notifyAPI(svc *inotify.Service, wb *web, reg *registry.Live, log *slog.Logger) *dashboard.NotifyAPI {
	return dashboard.NewNotifyAPI(dashboard.NotifyOptions{Settings: svc, Silences: svc, Push: svc, Registry: reg, Log: log.With("componente", "notificações"),
		Users: func(ctx context.Context) ([]users.User, error) { return wb.users.List(ctx) }})
}
