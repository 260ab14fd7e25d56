package central

import (
	"context"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/cases"
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
		out = append(out, dashboard.CaseState{ID: string(s), Label: s.Label()})
	}
	return out
}
