package notify

import (
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notify"
)

func TestSilenceEnd(t *testing.T) {
	ends := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		sl   notify.Silence
		want notify.SilenceAudit
	}{
		{"expired", notify.Silence{ID: "s1", Ends: ends},
			notify.SilenceAudit{SilenceID: "s1", At: ends, Action: "expired", Detail: "silêncio expirado"}},
		{"ended early", notify.Silence{ID: "s2", Ends: ends, EndedAt: ends.Add(-time.Hour), EndedBy: "coord"},
			notify.SilenceAudit{SilenceID: "s2", At: ends.Add(-time.Hour), Action: "ended", By: "coord", Detail: "silêncio encerrado antes do fim previsto"}},
		{"ended after its end", notify.Silence{ID: "s3", Ends: ends, EndedAt: ends.Add(time.Minute), EndedBy: "coord"},
			notify.SilenceAudit{SilenceID: "s3", At: ends, Action: "expired", Detail: "silêncio expirado"}},
		{"ended exactly at its end", notify.Silence{ID: "s4", Ends: ends, EndedAt: ends, EndedBy: "coord"},
			notify.SilenceAudit{SilenceID: "s4", At: ends, Action: "expired", Detail: "silêncio expirado"}},
	} {
		if got := silenceEnd(tc.sl); got != tc.want {
			t.Errorf("%s: silenceEnd = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestHasOutcome(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results []notify.Result
		want    bool
	}{
		{"none", nil, false},
		{"time passing", []notify.Result{{Next: time.Now()}, {Undeliverable: 0}}, false},
		{"a notification", []notify.Result{{}, {Notifications: []notify.Notification{{ID: "n"}}}}, true},
		{"a log entry", []notify.Result{{Log: []notify.Entry{{}}}}, true},
		{"an ended silence", []notify.Result{{SilencesEnded: []notify.Silence{{ID: "s"}}}}, true},
	} {
		if got := hasOutcome(tc.results); got != tc.want {
			t.Errorf("%s: hasOutcome = %v, want %v", tc.name, got, tc.want)
		}
	}
}
