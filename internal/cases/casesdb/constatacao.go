package casesdb

// Constatações, draft edits and the issued acts' PDFs.
//
// A constatação is recorded once and never changed (SQLite triggers refuse
// UPDATE and DELETE); its audit entry goes under the alert (the first one)
// or under the notice it follows up. Every field a fiscal changes in a
// draft is one audit entry (field, before, after), in the transaction that
// saves the draft. The PDF of an act is stored at issue, with its SHA-256,
// and served byte for byte.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/cases"
)

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("cases: encode: %v", err))
	}
	return string(b)
}

// RecordConstatacao numbers and stores a constatação (already checked by
// notice.CheckConstatacao) with its audit entry, in one transaction. A
// follow-up must name a stored document of the same alert.
func (s *Store) RecordConstatacao(ctx context.Context, k notice.Constatacao) (notice.Constatacao, error) {
	if k.AlertID == "" || k.CodeID == "" || k.RecordedAt.IsZero() {
		return k, fmt.Errorf("cases: constatação sem alerta, código ou instante de registro")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return k, fmt.Errorf("cases: constatação: %w", err)
	}
	defer tx.Rollback()
	auditID := k.AlertID
	if k.FollowsUp != "" {
		doc, err := scanDoc(tx.QueryRowContext(ctx, `SELECT doc_json FROM cases_documents WHERE id = ?`, k.FollowsUp))
		if err != nil {
			return k, fmt.Errorf("documento %s acompanhado: %w", k.FollowsUp, err)
		}
		if doc.Draft.Finding.AlertID != k.AlertID {
			return k, fmt.Errorf("%w: o documento %s é de outro alerta", notice.ErrInput, k.FollowsUp)
		}
		auditID = k.FollowsUp
	}
	id, err := nextNumber(ctx, tx, k.CodeID, "CT", k.RecordedAt.In(saoPaulo))
	if err != nil {
		return k, err
	}
	k.ID = id
	js := mustJSON(k)
	if _, err := tx.ExecContext(ctx, `INSERT INTO cases_constatacoes (id, alert_id, code_id, follows_up, party, at, doc_json, recorded_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, k.ID, k.AlertID, k.CodeID, k.FollowsUp, cases.Digits(k.Source.Document), k.At.UnixMilli(), js,
		k.RecordedAt.UnixMilli()); err != nil {
		return k, fmt.Errorf("cases: constatação: %w", err)
	}
	detail := mustJSON(map[string]any{"constatacao": k.ID, "alert_id": k.AlertID, "follows_up": k.FollowsUp,
		"source": k.Source.Kind, "measurement": k.Measurement.Kind, "matricula": k.Agent.Matricula, "grounds": groundsText(k)})
	if err := appendAudit(ctx, tx, cases.Entry{DocumentID: auditID, At: k.RecordedAt, Actor: k.RecordedBy, Action: "constatacao",
		Detail: json.RawMessage(detail)}); err != nil {
		return k, err
	}
	if err := tx.Commit(); err != nil {
		return k, fmt.Errorf("cases: constatação: %w", err)
	}
	return k, nil
}

func groundsText(k notice.Constatacao) string {
	if err := k.Grounds(); err != nil {
		return err.Error()
	}
	return "sustenta a notificação"
}

func getConstatacao(ctx context.Context, q queryer, id string) (notice.Constatacao, error) {
	var js string
	if err := q.QueryRowContext(ctx, `SELECT doc_json FROM cases_constatacoes WHERE id = ?`, id).Scan(&js); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return notice.Constatacao{}, fmt.Errorf("constatação %q: %w", id, cases.ErrNotFound)
		}
		return notice.Constatacao{}, fmt.Errorf("cases: constatação: %w", err)
	}
	var k notice.Constatacao
	if err := json.Unmarshal([]byte(js), &k); err != nil {
		return k, fmt.Errorf("cases: constatação: %w", err)
	}
	return k, nil
}

// Constatacao returns the constatação with id.
func (s *Store) Constatacao(ctx context.Context, id string) (notice.Constatacao, error) {
	return getConstatacao(ctx, s.db, id)
}

// Constatacoes returns the constatações of an alert, oldest first.
func (s *Store) Constatacoes(ctx context.Context, alertID string) ([]notice.Constatacao, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT doc_json FROM cases_constatacoes WHERE alert_id = ? ORDER BY recorded_at, id`, alertID)
	if err != nil {
		return nil, fmt.Errorf("cases: constatações: %w", err)
	}
	defer rows.Close()
	out := []notice.Constatacao{}
	for rows.Next() {
		var js string
		if err := rows.Scan(&js); err != nil {
			return nil, fmt.Errorf("cases: constatações: %w", err)
		}
		var k notice.Constatacao
		if err := json.Unmarshal([]byte(js), &k); err != nil {
			return nil, fmt.Errorf("cases: constatações: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// Edit applies a fiscal's changes to a draft (notice.Document.Edit) and
// saves it with one audit entry per changed field, in one transaction.
func (s *Store) Edit(ctx context.Context, c *codes.Code, id string, actor notice.Actor, at time.Time, changes []notice.FieldChange) (notice.Document, []notice.Edit, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return notice.Document{}, nil, fmt.Errorf("cases: edit: %w", err)
	}
	defer tx.Rollback()
	cur, err := scanDoc(tx.QueryRowContext(ctx, `SELECT doc_json FROM cases_documents WHERE id = ?`, id))
	if err != nil {
		return cur, nil, err
	}
	if err := sameCode(cur, id, c); err != nil {
		return cur, nil, err
	}
	next, edits, err := cur.Edit(c, actor, at, changes)
	if err != nil {
		return cur, nil, err
	}
	if len(edits) == 0 {
		return cur, nil, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE cases_documents SET doc_json = ?, updated_at = ? WHERE id = ?`, mustJSON(next), at.UnixMilli(), id); err != nil {
		return cur, nil, fmt.Errorf("cases: edit: %w", err)
	}
	for _, e := range edits {
		detail := mustJSON(map[string]string{"field": e.Field, "before": e.Before, "after": e.After, "matricula": actor.Matricula})
		if err := appendAudit(ctx, tx, cases.Entry{DocumentID: id, At: at, Actor: actor, Action: "edit", From: cur.State, To: next.State,
			Detail: json.RawMessage(detail)}); err != nil {
			return cur, nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return cur, nil, fmt.Errorf("cases: edit: %w", err)
	}
	return next, edits, nil
}

// PDF returns the PDF last stored for document id (at issue, then at the
// ciente or recusa), byte for byte, after checking it against its SHA-256.
func (s *Store) PDF(ctx context.Context, id string) ([]byte, notice.StoredPDF, error) {
	return s.pdf(ctx, `SELECT seq, stage, bytes, sha256, stored_at FROM cases_pdfs WHERE document_id = ? ORDER BY seq DESC LIMIT 1`, id)
}

// PDFVersion returns the PDF stored for document id with seq (1: as
// issued).
func (s *Store) PDFVersion(ctx context.Context, id string, seq int) ([]byte, notice.StoredPDF, error) {
	return s.pdf(ctx, `SELECT seq, stage, bytes, sha256, stored_at FROM cases_pdfs WHERE document_id = ? AND seq = ?`, id, seq)
}

func (s *Store) pdf(ctx context.Context, q string, args ...any) ([]byte, notice.StoredPDF, error) {
	var b []byte
	var m notice.StoredPDF
	var at int64
	err := s.db.QueryRowContext(ctx, q, args...).Scan(&m.Seq, &m.Stage, &b, &m.SHA256, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notice.StoredPDF{}, cases.ErrNoPDF
	}
	if err != nil {
		return nil, notice.StoredPDF{}, fmt.Errorf("cases: PDF: %w", err)
	}
	got := sha256.Sum256(b)
	if !bytes.Equal([]byte(hex.EncodeToString(got[:])), []byte(m.SHA256)) {
		return nil, notice.StoredPDF{}, fmt.Errorf("cases: o PDF armazenado de %s não confere com o seu SHA-256 (alterado fora do sistema)", args[0])
	}
	m.Size, m.StoredAt = len(b), time.UnixMilli(at).UTC()
	return b, m, nil
}

// Correct drafts the act that corrects issued document id
// (notice.Correct), numbered in the same series, and records on the old act
// who corrects it, with audit entries on both, in one transaction. The old
// act's content and PDF stay as issued; once the correction is issued, the
// party's history counts the correction instead of the old act.
func (s *Store) Correct(ctx context.Context, c *codes.Code, id string, actor notice.Actor, at time.Time, reason string) (old, corr notice.Document, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return old, corr, fmt.Errorf("cases: correct: %w", err)
	}
	defer tx.Rollback()
	if old, err = scanDoc(tx.QueryRowContext(ctx, `SELECT doc_json FROM cases_documents WHERE id = ?`, id)); err != nil {
		return old, corr, err
	}
	if err := sameCode(old, id, c); err != nil {
		return old, corr, err
	}
	if corr, err = notice.Correct(c, &old, actor, at, reason); err != nil {
		return old, corr, err
	}
	if err := s.insertDoc(ctx, tx, &corr, "", old.ID, actor, at); err != nil {
		return old, corr, err
	}
	old.CorrectedBy = corr.ID
	if _, err := tx.ExecContext(ctx, `UPDATE cases_documents SET doc_json = ?, updated_at = ? WHERE id = ?`, mustJSON(old), at.UnixMilli(), id); err != nil {
		return old, corr, fmt.Errorf("cases: correct: %w", err)
	}
	detail := mustJSON(map[string]string{"corrected_by": corr.ID, "reason": strings.TrimSpace(reason), "matricula": actor.Matricula})
	if err := appendAudit(ctx, tx, cases.Entry{DocumentID: id, At: at, Actor: actor, Action: "correct", From: old.State, To: old.State,
		Detail: json.RawMessage(detail)}); err != nil {
		return old, corr, err
	}
	if err := tx.Commit(); err != nil {
		return old, corr, fmt.Errorf("cases: correct: %w", err)
	}
	return old, corr, nil
}
