package alerts

import (
	"fmt"
	"time"

	"github.com/sossego/sossego/codes"
)

// CodeLimits answers Limits from the municipal codes engine's fast path.
type CodeLimits struct {
	Set *codes.Set
}

var _ Limits = CodeLimits{}

// LimitAt returns the numeric limit in force for a sensor of code in zone
// watching an establishment type whose noise comes from mechanism, at t.
func (c CodeLimits) LimitAt(code, zone, establishment, mechanism string, t time.Time) (Limit, bool, error) {
	cd, ok := c.Set.Code(code)
	if !ok {
		return Limit{}, false, fmt.Errorf("alerts: código municipal %q desconhecido; use um de %v", code, c.Set.IDs())
	}
	l, ok := cd.ActiveLimitFor(zone, establishment, mechanism, t)
	if !ok {
		return Limit{}, false, nil
	}
	return Limit{DB: l.DBA, Period: l.Period, PeriodLabel: l.PeriodLabel, PeriodStart: l.Start, PeriodEnd: l.End,
		RuleID: l.RuleID, Article: l.Article, Quote: l.Quote, CodeID: l.CodeID, CodeVersion: l.CodeVersion}, true, nil
}
