package reports

import (
	"testing"
	"time"
)

func TestAppendFixed(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		prec int
		want string
	}{{62.345, 2, "62,35"}, {62.344, 2, "62,34"}, {0, 1, "0,0"}, {-3.05, 1, "-3,1"}, {-0.004, 2, "0,00"}, {59.999, 2, "60,00"},
		{60, 0, "60"}, {1.5, 3, "1,500"}, {48.2, 1, "48,2"}, {100, 1, "100,0"}} {
		if got := string(appendFixed(nil, tc.v, tc.prec, ',')); got != tc.want {
			t.Errorf("appendFixed(%v, %d) = %q, want %q", tc.v, tc.prec, got, tc.want)
		}
	}
	// The hour prefix cache gives what time.Format gives, across days and
	// hours.
	var e exporter
	for _, t0 := range []time.Time{time.Date(2026, 11, 30, 23, 59, 0, 0, loc), time.Date(2026, 12, 1, 0, 0, 0, 0, loc), time.Date(2018, 11, 4, 1, 7, 0, 0, loc)} {
		if got, want := string(e.appendMinute(nil, t0)), t0.In(loc).Format("2006-01-02T15:04:05-07:00"); got != want {
			t.Errorf("appendMinute %q, want %q", got, want)
		}
	}
}
