package cases_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/cases"
)

func at(m time.Month, d, h, min int) time.Time {
	return time.Date(2026, m, d, h, min, 0, 0, noticetest.SaoPaulo)
}

func TestDaysLeft(t *testing.T) {
	end := time.Date(2026, 3, 15, 0, 0, 0, 0, noticetest.SaoPaulo) // last day 14/03
	for _, tc := range []struct {
		now  time.Time
		want int
	}{
		{at(3, 12, 0, 0), 2},
		{at(3, 14, 0, 0), 0},
		{at(3, 14, 23, 59), 0},
		{at(3, 15, 0, 0), -1},
		// 01:30 UTC on 15/03 is still 14/03 in Brasília.
		{time.Date(2026, 3, 15, 1, 30, 0, 0, time.UTC), 0},
		{at(4, 14, 12, 0), -31},
	} {
		if got := cases.DaysLeft(end, tc.now); got != tc.want {
			t.Errorf("DaysLeft at %s = %d, want %d", tc.now, got, tc.want)
		}
	}
}

func TestStateLabelAgrees(t *testing.T) {
	for _, tc := range []struct {
		k    notice.Kind
		s    notice.State
		want string
	}{
		{notice.KindNotificacaoPreliminar, notice.StateIssued, "notificação preliminar emitida"},
		{notice.KindIntimacaoPreliminar, notice.StateRegularised, "intimação preliminar regularizada"},
		{notice.KindAuto, notice.StateIssued, "auto de infração emitido"},
		{notice.KindAuto, notice.StateAcknowledged, "auto de infração com ciente do autuado"},
		{notice.KindAuto, notice.StateDecided, "auto de infração julgado"},
		{notice.KindRelatorio, notice.StateCancelled, "relatório de constatação cancelado"},
		{notice.KindNotificacaoIntimacao, notice.StateEscalated, "notificação/intimação convertida em auto de infração"},
	} {
		if got := cases.StateLabel(tc.k, tc.s); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.k, tc.s, got, tc.want)
		}
	}
	for _, s := range cases.States() {
		if l := cases.StateLabel(notice.KindAuto, s); strings.Contains(l, string(s)) {
			t.Errorf("state %s has no label: %q", s, l)
		}
	}
}
