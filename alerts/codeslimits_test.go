package alerts

import (
	"testing"
	"time"

	"github.com/sossego/sossego/codes"
)

func TestCodeLimitsLapaNight(t *testing.T) {
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	cl := CodeLimits{Set: set}
	sp, _ := time.LoadLocation("America/Sao_Paulo")
	for _, tc := range []struct {
		at     time.Time
		db     float64
		period string
	}{
		{time.Date(2026, 3, 10, 21, 59, 59, 0, sp), 65, "diurno"},
		{time.Date(2026, 3, 10, 22, 0, 0, 0, sp), 60, "noturno"},
	} {
		l, ok, err := cl.LimitAt("lapa", "other", "bar", "sound_system", tc.at)
		if err != nil || !ok || l.DB != tc.db || l.Period != tc.period || l.Article != "Art. 96" || l.Quote == "" {
			t.Errorf("%s: %+v ok=%v err=%v", tc.at, l, ok, err)
		}
	}
	if _, _, err := cl.LimitAt("atlantida", "other", "bar", "", time.Now()); err == nil {
		t.Error("unknown code accepted")
	}
	if _, ok, err := cl.LimitAt("entre-rios-de-minas", "other", "bar", "", time.Now()); ok || err != nil {
		t.Errorf("entre rios has no numeric limit: ok=%v err=%v", ok, err)
	}
}
