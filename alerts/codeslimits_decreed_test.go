package alerts

import (
	"testing"
	"time"

	"github.com/sossego/sossego/codes"
)

// TestCodeLimitsDecreedDays: the limits the monitor applies come from the
// set the register of municipal holidays writes to (codes.Set.SetDecreed),
// so the engine's calendar and the limits are one. The five codes' numeric
// limits do not depend on the day (the loader refuses window.days on a
// level_limit), so a decreed holiday leaves every limit as it was, minute
// by minute, while the code behind them reads the day as a holiday.
func TestCodeLimitsDecreedDays(t *testing.T) {
	plain, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	decreed, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	byCode := map[string][]codes.Decreed{}
	for _, id := range decreed.IDs() {
		byCode[id] = []codes.Decreed{
			{Date: "2026-03-10", Name: "Feriado decretado", Act: "Decreto nº 1/2026", Kind: codes.DecreedHoliday},
			{MonthDay: "03-11", Name: "Padroeiro", Act: "Lei Municipal nº 2/2019", Kind: codes.DecreedHoliday},
		}
	}
	if err := decreed.SetDecreed(byCode); err != nil {
		t.Fatal(err)
	}
	a, b := CodeLimits{Set: plain}, CodeLimits{Set: decreed}
	sp, _ := time.LoadLocation("America/Sao_Paulo")
	from := time.Date(2026, 3, 9, 0, 0, 0, 0, sp)
	cases := []struct{ zone, est, mech string }{
		{"other", "bar", "sound_system"}, {"residential", "", ""}, {"industrial", "industry", "machinery"},
		{"near_hospital", "", ""}, {"commercial", "nightclub", "sound_system"},
	}
	n := 0
	for _, id := range decreed.IDs() {
		c, _ := decreed.Code(id)
		if _, h := c.Holiday(codes.Date{Y: 2026, M: 3, D: 11}); !h {
			t.Fatalf("%s: the set handed out a code without the decreed days", id)
		}
		for _, k := range cases {
			for m := from; m.Before(from.AddDate(0, 0, 4)); m = m.Add(time.Minute) {
				la, oka, erra := a.LimitAt(id, k.zone, k.est, k.mech, m)
				lb, okb, errb := b.LimitAt(id, k.zone, k.est, k.mech, m)
				if (erra == nil) != (errb == nil) || oka != okb || !sameLimit(la, lb) {
					t.Fatalf("%s %+v at %s: without decreed days %+v %v, with %+v %v", id, k, m, la, oka, lb, okb)
				}
				if okb {
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no limit compared")
	}
}

func sameLimit(a, b Limit) bool {
	ok := a.PeriodStart.Equal(b.PeriodStart) && a.PeriodEnd.Equal(b.PeriodEnd)
	a.PeriodStart, a.PeriodEnd, b.PeriodStart, b.PeriodEnd = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return ok && a == b
}
