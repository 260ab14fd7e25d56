package casesdb

// Alert handling: before (and besides) any document, a fiscal acknowledges
// an alert ("reconhecido": someone is on it) and assigns it to a fiscal.
// Both are kept per alert in cases_alert_triage and every change appends an
// entry to the same hash-chained audit trail as the documents, with the
// alert id as its document_id (alert ids, "sensor/instant", never collide
// with document numbers such as "lapa-NP-2026-000001").

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/cases"
)

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

const triageCols = `alert_id, acked_by, acked_name, acked_at, assignee, assigned_by, assigned_at, updated_at`

type rowScanner interface{ Scan(dest ...any) error }

func scanTriage(r rowScanner) (cases.Triage, error) {
	var t cases.Triage
	var acked, assigned, updated int64
	if err := r.Scan(&t.AlertID, &t.AckedBy, &t.AckedName, &acked, &t.Assignee, &t.AssignedBy, &assigned, &updated); err != nil {
		return cases.Triage{}, err
	}
	t.AckedAt, t.AssignedAt, t.UpdatedAt = fromMS(acked), fromMS(assigned), fromMS(updated)
	return t, nil
}

func getTriage(ctx context.Context, q queryer, alertID string) (cases.Triage, error) {
	t, err := scanTriage(q.QueryRowContext(ctx, `SELECT `+triageCols+` FROM cases_alert_triage WHERE alert_id = ?`, alertID))
	if errors.Is(err, sql.ErrNoRows) {
		return cases.Triage{AlertID: alertID}, nil
	}
	if err != nil {
		return cases.Triage{}, fmt.Errorf("cases: triage: %w", err)
	}
	return t, nil
}

// Triage returns the handling of an alert; an alert nobody touched yet has
// only its AlertID set.
func (s *Store) Triage(ctx context.Context, alertID string) (cases.Triage, error) {
	return getTriage(ctx, s.db, alertID)
}

// Triages returns the handling of the alerts touched most recently, newest
// first (limit ≤ 0: 500).
func (s *Store) Triages(ctx context.Context, limit int) ([]cases.Triage, error) {
	if limit <= 0 {
		limit = 500
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+triageCols+` FROM cases_alert_triage ORDER BY updated_at DESC, alert_id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("cases: triages: %w", err)
	}
	defer rows.Close()
	out := []cases.Triage{}
	for rows.Next() {
		t, err := scanTriage(rows)
		if err != nil {
			return nil, fmt.Errorf("cases: triages: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func saveTriage(ctx context.Context, tx queryer, t cases.Triage) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO cases_alert_triage (`+triageCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (alert_id) DO UPDATE SET acked_by = excluded.acked_by, acked_name = excluded.acked_name, acked_at = excluded.acked_at,
		assignee = excluded.assignee, assigned_by = excluded.assigned_by, assigned_at = excluded.assigned_at, updated_at = excluded.updated_at`,
		t.AlertID, t.AckedBy, t.AckedName, ms(t.AckedAt), t.Assignee, t.AssignedBy, ms(t.AssignedAt), ms(t.UpdatedAt))
	if err != nil {
		return fmt.Errorf("cases: triage: %w", err)
	}
	return nil
}

// Ack records that actor acknowledged the alert at at, with an audit entry.
// Acknowledging an alert already acknowledged changes nothing and reports
// changed = false (the first acknowledgement stands).
func (s *Store) Ack(ctx context.Context, alertID string, actor notice.Actor, at time.Time) (t cases.Triage, changed bool, err error) {
	if strings.TrimSpace(alertID) == "" {
		return cases.Triage{}, false, errors.New("cases: ack: empty alert id")
	}
	err = s.triageTx(ctx, func(tx *sql.Tx) error {
		cur, err := getTriage(ctx, tx, alertID)
		if err != nil {
			return err
		}
		if t, changed = cur.WithAck(actor, at); !changed {
			return nil
		}
		if err := saveTriage(ctx, tx, t); err != nil {
			return err
		}
		detail, _ := json.Marshal(map[string]string{"alert_id": alertID})
		return appendAudit(ctx, tx, cases.Entry{DocumentID: alertID, At: at, Actor: actor, Action: "ack", Detail: detail})
	})
	return t, changed, err
}

// Assign makes assignee (a user id) the fiscal in charge of the alert, with
// an audit entry naming the previous assignee. Assigning the same person
// again changes nothing (changed = false).
func (s *Store) Assign(ctx context.Context, alertID, assignee string, actor notice.Actor, at time.Time) (t cases.Triage, changed bool, err error) {
	if strings.TrimSpace(alertID) == "" {
		return cases.Triage{}, false, errors.New("cases: assign: empty alert id")
	}
	if assignee, err = cases.CheckAssignee(assignee); err != nil {
		return cases.Triage{}, false, err
	}
	err = s.triageTx(ctx, func(tx *sql.Tx) error {
		cur, err := getTriage(ctx, tx, alertID)
		if err != nil {
			return err
		}
		if t, changed = cur.WithAssignee(assignee, actor, at); !changed {
			return nil
		}
		if err := saveTriage(ctx, tx, t); err != nil {
			return err
		}
		detail, _ := json.Marshal(map[string]string{"alert_id": alertID, "assignee": assignee, "previous": cur.Assignee})
		return appendAudit(ctx, tx, cases.Entry{DocumentID: alertID, At: at, Actor: actor, Action: "assign", Detail: detail})
	})
	return t, changed, err
}

func (s *Store) triageTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("cases: triage: %w", err)
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("cases: triage: %w", err)
	}
	return nil
}
