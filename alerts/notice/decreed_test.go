package notice_test

import (
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
)

// TestDecreedBusinessDays: a deadline in business days skips the days the
// municipality decreed — a holiday and a ponto facultativo alike.
func TestDecreedBusinessDays(t *testing.T) {
	er, _ := set.Code("entre-rios-de-minas")
	dec, err := er.WithDecreed([]codes.Decreed{
		{Date: "2026-03-10", Name: "Feriado decretado", Act: "Decreto nº 10/2026", Kind: codes.DecreedHoliday},
		{MonthDay: "03-12", Name: "Aniversário da cidade", Act: "Lei Municipal nº 500/2020", Since: "2020-01-01", Kind: codes.DecreedOptional},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    *codes.Code
		last string
	}{
		// Friday 06/03/2026 + 7: 9..13, 16, 17.
		{er, "17/03/2026"},
		// 10 (holiday) and 12 (ponto facultativo) skipped: 9, 11, 13, 16, 17, 18, 19.
		{dec, "19/03/2026"},
	} {
		end := notice.DeadlineEnd(tc.c, at(2026, 3, 6, 23, 0), 7, true)
		if got := end.Add(-time.Second).Format("02/01/2006"); got != tc.last {
			t.Errorf("decreed %d: last day %s, want %s", len(tc.c.Calendar.Decreed), got, tc.last)
		}
	}
}
