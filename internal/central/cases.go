package central

import (
	"context"
	"fmt"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/registry"
)

// caseSource adapts the case list of internal/cases to the dashboard's
// case routes.
type caseSource struct{ x *cases.Index }

func (c caseSource) Cases(ctx context.Context, f dashboard.CaseFilter, now time.Time) (int, any, error) {
	cf := cases.Filter{Municipality: f.Municipality, Overdue: f.Overdue, Actor: f.Actor, Address: f.Address, AlertIDs: f.AlertIDs,
		Sort: f.Sort, Offset: f.Offset, Limit: f.Limit}
	for _, s := range f.States {
		cf.States = append(cf.States, notice.State(s))
	}
	p, err := c.x.List(ctx, cf, now)
	return p.Total, p.Cases, err
}

func (c caseSource) Party(ctx context.Context, doc string) (any, error) { return c.x.Party(ctx, doc) }

// caseStates is the state vocabulary of the case filter.
func caseStates() []dashboard.CaseState {
	var out []dashboard.CaseState
	for _, s := range cases.States() {
		out = append(out, dashboard.CaseState{ID: string(s), Label: cases.StateFilterLabel(s)})
	}
	return out
}

// firedAlerts is what openAlerts needs of the alerts store.
type firedAlerts interface {
	ListAlerts(ctx context.Context, f alertstore.Filter) ([]alerts.Alert, error)
}

// openAlerts lists the alerts that open cases for the case list: the
// exceedances that fired (firing or resolved, the newest 1000 of each),
// with the establishment and address the register gives their sensor.
func openAlerts(as firedAlerts, reg func() *registry.Registry, set *codes.Set) cases.AlertFunc {
	return func(ctx context.Context) ([]cases.OpenAlert, error) {
		var out []cases.OpenAlert
		r := reg()
		for _, st := range []alerts.State{alerts.StateFiring, alerts.StateResolved} {
			list, err := as.ListAlerts(ctx, alertstore.Filter{State: st, Kind: alerts.KindExceedance, Limit: 1000})
			if err != nil {
				return nil, fmt.Errorf("alertas %s: %w", st, err)
			}
			for _, a := range list {
				cid := a.CodeID
				if cid == "" {
					cid = a.Code
				}
				if cid == "" {
					cid = a.Municipality
				}
				o := cases.OpenAlert{ID: a.ID, CodeID: cid, Municipality: a.Municipality, At: a.FiringAt}
				if c, ok := set.Code(cid); ok {
					o.Municipality = c.Municipality
				}
				if o.At.IsZero() {
					o.At = a.PendingAt
				}
				if sn, ok := r.Sensor(a.Sensor); ok {
					o.SiteAddress = sn.Address
					for i, e := range sn.Establishments {
						if i == 0 || e.Name == a.Establishment {
							o.Party = cases.PartyRef{Document: e.Document, Name: e.Name, Address: e.Address}
						}
					}
				}
				out = append(out, o)
			}
		}
		return out, nil
	}
}
