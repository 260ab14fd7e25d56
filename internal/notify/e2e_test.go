package notify

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/testenv"
)

type fixedLimit struct{}

func (fixedLimit) LimitAt(code, zone, est, mech string, t time.Time) (alerts.Limit, bool, error) {
	return alerts.Limit{DB: 60, Period: "noturno", PeriodLabel: "período noturno (22:00–07:00)", RuleID: "art96-noturno",
		Article: "Art. 96", CodeID: "lapa", CodeVersion: "2004"}, true, nil
}

// caseAlerts adapts the case store for reconciliation (as internal/central does).
type caseAlerts struct{ cs *alertstore.Store }

func (c caseAlerts) OpenAlerts(ctx context.Context) ([]alerts.Alert, error) {
	fir, err := c.cs.ListAlerts(ctx, alertstore.Filter{State: alerts.StateFiring, Limit: 1000})
	return fir, err
}

func (c caseAlerts) Alert(ctx context.Context, id string) (alerts.Alert, bool, error) {
	a, err := c.cs.GetAlert(ctx, id)
	if err != nil {
		return alerts.Alert{}, false, nil
	}
	return a, true, nil
}

// TestEndToEndEscalationAndAck: readings → alerts monitor → case store →
// notifications → e-mail to the fiscal on duty (mailpit) → no
// acknowledgement within 15 min (injected clock) → e-mail to the next in
// the schedule → acknowledged → no third message to the coordinator.
func TestEndToEndEscalationAndAck(t *testing.T) {
	mp := testenv.StartMailpit(t, testenv.MailpitOpts{STARTTLS: true, Users: map[string]string{"sossego": "senha-smtp-123"}})
	dir := t.TempDir()
	cs, err := alertstore.Open(context.Background(), filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	clk := &clock{t: t0}
	h := start(t, filepath.Join(dir, FileName), clk, func(o *Options) { o.Alerts = caseAlerts{cs} })
	set := baseSettings()
	set.Email = emailTo(mp, "starttls", "sossego", "senha-smtp-123")
	h.put(set)

	mon, err := alerts.NewMonitor(alerts.DefaultConfig(), fixedLimit{}, alerts.Options{Store: cs, Notifier: h.svc, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	info := alerts.SensorInfo{Sensor: "lapa-bar-01", Gateway: "lapa-centro-01", Municipality: "lapa", Code: "lapa", Zone: "other",
		EstablishmentType: "bar", Establishment: "Bar do Tropeiro Ltda", Grade: alerts.GradeClass1}
	var fired string
	for i := 0; i < 400 && fired == ""; i++ {
		r := alerts.Reading{SensorInfo: info, T: t0.Add(time.Duration(i-400) * time.Second), DurMs: 1000, LAeq: 75, LAFmax: 80}
		if err := mon.Observe(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if st, _ := mon.Status("lapa-bar-01"); st.Open != nil && st.Open.State == alerts.StateFiring {
			fired = st.Open.ID
		}
	}
	if fired == "" {
		t.Fatal("the monitor did not fire")
	}
	first := mp.WaitMessages(t, 1, 20*time.Second)[0]
	if first.To[0] != "fiscal-b@lapa.pr.gov.br" || !strings.Contains(first.Subject, "lapa-bar-01") ||
		!strings.Contains(first.Text, "Art. 96") || !strings.Contains(first.Text, "Rua XV de Novembro") {
		t.Fatalf("first message %+v", first)
	}
	clk.Advance(14 * time.Minute)
	h.settled(ReceiverEmail)
	if n := mp.Count(t); n != 1 {
		t.Fatalf("%d messages before the escalation delay", n)
	}
	clk.Advance(time.Minute + time.Second)
	msgs := mp.WaitMessages(t, 2, 20*time.Second)
	esc := msgs[1]
	if esc.To[0] != "fiscal-a@lapa.pr.gov.br" || !strings.HasPrefix(esc.Subject, "[Sossego] ESCALONADO") ||
		!strings.Contains(esc.Text, "chamados antes: fiscal-b") {
		t.Fatalf("escalation %+v", esc)
	}
	// fiscal-a acknowledges in the dashboard
	h.svc.Ack(fired, "fiscal-a", clk.Now())
	h.waitHistory(fired, notify.EntryAcked, "fiscal-a")
	clk.Advance(30 * time.Minute)
	h.settled(ReceiverEmail)
	if n := mp.Count(t); n != 2 {
		t.Fatalf("%d messages after the acknowledgement, want 2", n)
	}
	hs, _ := h.svc.History(context.Background(), fired)
	var kinds []string
	for _, e := range hs {
		kinds = append(kinds, string(e.Kind)+":"+e.User)
	}
	want := []string{"notified:fiscal-b", "enqueued:fiscal-b", "sent:fiscal-b", "escalated:fiscal-a", "enqueued:fiscal-a", "sent:fiscal-a", "acked:fiscal-a"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("history %v\nwant %v", kinds, want)
	}
}
