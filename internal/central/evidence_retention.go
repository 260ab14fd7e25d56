package central

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/retention"
)

// caseSpans gives retention every exceedance alert's span (alertstore's
// EvidenceSpans: all of them, whatever their number) with when its
// protection ends: retention.Expiry from the alert's end and its case —
// never while the alert or its case (notice, auto, constatação) is open,
// legal after the case closed or, without a case, after the alert ended.
func caseSpans(cs *alertstore.Store, docs *casesdb.Store, legal time.Duration) func(context.Context) ([]retention.Span, error) {
	return func(ctx context.Context) ([]retention.Span, error) {
		spans, err := cs.EvidenceSpans(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]retention.Span, len(spans))
		for i, sp := range spans {
			out[i] = retention.Span{Sensor: sp.Sensor, From: sp.From, To: sp.To}
			if sp.To.IsZero() {
				continue // open alert: kept
			}
			c, err := caseOf(ctx, docs, sp.AlertID)
			if err != nil {
				return nil, err
			}
			out[i].Until = retention.Expiry(sp.To, c, legal)
		}
		return out, nil
	}
}

// finalStates end a document's life: nothing more can happen to it.
var finalStates = map[notice.State]bool{notice.StateRegularised: true, notice.StateCancelled: true, notice.StateDecided: true}

// caseOf reads an alert's case: its documents (the notice and the auto it
// escalated to, and so on) and whether any is still open.
func caseOf(ctx context.Context, docs *casesdb.Store, alertID string) (retention.Case, error) {
	if docs == nil {
		return retention.Case{}, nil
	}
	d, err := docs.ForAlert(ctx, alertID)
	if errors.Is(err, cases.ErrNotFound) {
		return retention.Case{}, nil
	}
	if err != nil {
		return retention.Case{}, fmt.Errorf("case of alert %s: %w", alertID, err)
	}
	c := retention.Case{Exists: true}
	queue := []notice.Document{d}
	for len(queue) > 0 {
		d, queue = queue[0], queue[1:]
		if !finalStates[d.State] {
			c.Open = true
		}
		for _, t := range []time.Time{d.IssuedAt, d.CienciaAt, d.RegularisedAt, d.DecidedAt} {
			c.ClosedAt = latestOf(c.ClosedAt, t)
		}
		kids, err := docs.Children(ctx, d.ID)
		if err != nil {
			return retention.Case{}, fmt.Errorf("case of alert %s: %w", alertID, err)
		}
		queue = append(queue, kids...)
	}
	return c, nil
}

func latestOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// retentionText says a duration in days or years, pt-BR.
func retentionText(d time.Duration) string {
	days := int(d.Hours()/24 + 0.5)
	if days >= 365 && days%365 == 0 {
		if days == 365 {
			return "1 ano"
		}
		return fmt.Sprintf("%d anos", days/365)
	}
	if days == 1 {
		return "1 dia"
	}
	return fmt.Sprintf("%d dias", days)
}
