// Package casesdb is the SQLite store of the fiscal's cases: the parties
// (infractors, keyed by CNPJ/CPF) and their history, the documents
// (notices, relatórios de constatação, autos de infração) with their
// workflow state, and an append-only audit trail of who did what and when.
//
// Every workflow step runs in one transaction: load the document, apply the
// pure state machine (alerts/notice), save, append the audit entry. The
// audit table refuses UPDATE and DELETE (SQLite triggers) and chains every
// entry to the previous one by SHA-256, so a row edited or removed behind
// the service's back is detected by VerifyAudit.
//
// History gives a party's prior infractions from its documents, by the
// rule internal/cases states (issued notices and autos count, relatórios do
// not).
//
// Tables are prefixed with cases_ and the schema is versioned in its own
// table, so the store may share a database file with internal/alertstore.
// The types it answers with, the audit trail's hash chain and the case list
// over this store are internal/cases.
//
// Overview of its parts: the case store in `cases.db` (tables `cases_`, beside
// `internal/alertstore`'s): notices/autos with their audit trail (append-only
// and hash-chained, SQLite triggers), the fiscais' constatações (never
// changed), draft edits (one audit entry per field), each issued act's PDF
// stored with its SHA-256, the alerts' triage; every workflow step one
// transaction (the pure `alerts/notice` state machine between load and save;
// the fine valued again before the act's PDF is rendered and stored); numbered
// schema steps, a release file adopted; the case list's reads (`list.go`:
// covering index, fingerprint, changed documents) as `cases.Source`; wired by
// `internal/central` and `cmd/sossego` only.
package casesdb

import (
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
	"github.com/sossego/sossego/internal/sqlitedb"
	"github.com/sossego/sossego/internal/tz"
)

// Store is an open case store, safe for concurrent use.
type Store struct {
	db *sql.DB
	// UnitValues, if set, gives the values of the monetary units an auto's
	// fine is computed with on the date of the act (notice.ApplyFine).
	UnitValues func(ctx context.Context) ([]notice.UnitValue, error)
}

var migrations = []sqlitedb.Step{{Name: "parties, documents, audit trail", SQL: `
CREATE TABLE cases_parties (
	document   TEXT PRIMARY KEY, -- CNPJ/CPF digits only
	name       TEXT NOT NULL,
	address    TEXT NOT NULL,
	type       TEXT NOT NULL DEFAULT '',
	updated_at INTEGER NOT NULL
) STRICT;
CREATE TABLE cases_documents (
	id          TEXT PRIMARY KEY,
	kind        TEXT NOT NULL,
	code_id     TEXT NOT NULL,
	alert_id    TEXT NOT NULL,
	party       TEXT NOT NULL REFERENCES cases_parties(document),
	parent_id   TEXT REFERENCES cases_documents(id),
	state       TEXT NOT NULL,
	penalty_id  TEXT NOT NULL,
	ordinal     INTEGER NOT NULL,
	punished    INTEGER NOT NULL DEFAULT 0,
	doc_json    TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX cases_first_doc_per_alert ON cases_documents(alert_id) WHERE parent_id IS NULL;
CREATE UNIQUE INDEX cases_one_auto_per_parent ON cases_documents(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX cases_by_party ON cases_documents(party, code_id);
CREATE TABLE cases_seq (
	prefix TEXT PRIMARY KEY,
	n      INTEGER NOT NULL
) STRICT;
CREATE TABLE cases_audit (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	document_id TEXT NOT NULL,
	at          INTEGER NOT NULL, -- unix ms of the act
	actor_id    TEXT NOT NULL,
	actor_name  TEXT NOT NULL,
	actor_role  TEXT NOT NULL,
	action      TEXT NOT NULL,
	from_state  TEXT NOT NULL,
	to_state    TEXT NOT NULL,
	detail      TEXT NOT NULL, -- JSON
	prev_hash   TEXT NOT NULL,
	hash        TEXT NOT NULL
) STRICT;
CREATE INDEX cases_audit_by_doc ON cases_audit(document_id, seq);
CREATE TRIGGER cases_audit_no_update BEFORE UPDATE ON cases_audit
BEGIN SELECT RAISE(ABORT, 'cases_audit é somente inclusão'); END;
CREATE TRIGGER cases_audit_no_delete BEFORE DELETE ON cases_audit
BEGIN SELECT RAISE(ABORT, 'cases_audit é somente inclusão'); END;
`},
	{Name: "alert triage (acknowledged by, assigned to)", SQL: `
CREATE TABLE IF NOT EXISTS cases_alert_triage (
	alert_id    TEXT PRIMARY KEY,
	acked_by    TEXT NOT NULL DEFAULT '',
	acked_name  TEXT NOT NULL DEFAULT '',
	acked_at    INTEGER NOT NULL DEFAULT 0, -- unix ms; 0 = not acknowledged
	assignee    TEXT NOT NULL DEFAULT '',
	assigned_by TEXT NOT NULL DEFAULT '',
	assigned_at INTEGER NOT NULL DEFAULT 0,
	updated_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS cases_alert_triage_by_update ON cases_alert_triage(updated_at);
`},
	{Name: "constatações and the issued acts' PDFs", SQL: `
CREATE TABLE cases_constatacoes (
	id          TEXT PRIMARY KEY,
	alert_id    TEXT NOT NULL,
	code_id     TEXT NOT NULL,
	follows_up  TEXT NOT NULL DEFAULT '', -- the notice whose prazo it checks
	party       TEXT NOT NULL DEFAULT '', -- CNPJ/CPF digits of the source ('' = not identified)
	at          INTEGER NOT NULL,         -- unix ms of the facts
	doc_json    TEXT NOT NULL,
	recorded_at INTEGER NOT NULL
) STRICT;
CREATE INDEX cases_constatacoes_by_alert ON cases_constatacoes(alert_id, recorded_at);
CREATE INDEX cases_constatacoes_by_notice ON cases_constatacoes(follows_up) WHERE follows_up != '';
CREATE TRIGGER cases_constatacoes_no_update BEFORE UPDATE ON cases_constatacoes
BEGIN SELECT RAISE(ABORT, 'constatação registrada não se altera'); END;
CREATE TRIGGER cases_constatacoes_no_delete BEFORE DELETE ON cases_constatacoes
BEGIN SELECT RAISE(ABORT, 'constatação registrada não se apaga'); END;
CREATE TABLE cases_pdfs (
	document_id TEXT NOT NULL REFERENCES cases_documents(id),
	seq         INTEGER NOT NULL, -- 1 at issue, 2 at the ciente or recusa
	stage       TEXT NOT NULL,    -- the step that stored it: issue | ciente | recusa
	sha256      TEXT NOT NULL,
	bytes       BLOB NOT NULL,
	stored_at   INTEGER NOT NULL,
	PRIMARY KEY (document_id, seq)
) STRICT;
CREATE TRIGGER cases_pdfs_no_update BEFORE UPDATE ON cases_pdfs
BEGIN SELECT RAISE(ABORT, 'o PDF de um ato emitido não se altera'); END;
CREATE TRIGGER cases_pdfs_no_delete BEFORE DELETE ON cases_pdfs
BEGIN SELECT RAISE(ABORT, 'o PDF de um ato emitido não se apaga'); END;
-- A correction after issue is a new act citing the one it corrects.
ALTER TABLE cases_documents ADD COLUMN corrects_id TEXT REFERENCES cases_documents(id);
DROP INDEX cases_first_doc_per_alert;
CREATE UNIQUE INDEX cases_first_doc_per_alert ON cases_documents(alert_id) WHERE parent_id IS NULL AND corrects_id IS NULL;
CREATE UNIQUE INDEX cases_one_correction ON cases_documents(corrects_id) WHERE corrects_id IS NOT NULL;
`},
}

// Open opens (creating if needed) the case store at path.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sqlitedb.Open(path, sqlitedb.Options{ForeignKeys: true, MaxOpenConns: 4})
	if err != nil {
		return nil, fmt.Errorf("cases: %w", err)
	}
	s := &Store{db: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("cases: close: %w", err)
	}
	return nil
}

func (s *Store) migrate(ctx context.Context) error {
	// Files of earlier releases kept their versions in cases_schema.
	if err := sqlitedb.Migrate(ctx, s.db, sqlitedb.Scheme{Table: "cases_migrations", Legacy: "cases_schema"}, migrations); err != nil {
		return fmt.Errorf("cases: %w", err)
	}
	return nil
}

type queryer interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

func appendAudit(ctx context.Context, tx queryer, e cases.Entry) error {
	var prev string
	if err := tx.QueryRowContext(ctx, `SELECT hash FROM cases_audit ORDER BY seq DESC LIMIT 1`).Scan(&prev); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("cases: audit: %w", err)
	}
	if len(e.Detail) == 0 {
		e.Detail = json.RawMessage("{}")
	}
	e.PrevHash = prev
	e.Hash = cases.EntryHash(prev, &e)
	_, err := tx.ExecContext(ctx, `INSERT INTO cases_audit (document_id, at, actor_id, actor_name, actor_role, action, from_state, to_state, detail, prev_hash, hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.DocumentID, e.At.UnixMilli(), e.Actor.ID, e.Actor.Name, e.Actor.Role, e.Action,
		string(e.From), string(e.To), string(e.Detail), e.PrevHash, e.Hash)
	if err != nil {
		return fmt.Errorf("cases: audit: %w", err)
	}
	return nil
}

func nextID(ctx context.Context, tx queryer, codeID string, k notice.Kind, at time.Time) (string, error) {
	return nextNumber(ctx, tx, codeID, k.Abbrev(), at)
}

func nextNumber(ctx context.Context, tx queryer, codeID, abbrev string, at time.Time) (string, error) {
	prefix := fmt.Sprintf("%s-%s-%d", codeID, abbrev, at.Year())
	var n int64
	err := tx.QueryRowContext(ctx, `INSERT INTO cases_seq (prefix, n) VALUES (?, 1)
		ON CONFLICT (prefix) DO UPDATE SET n = n + 1 RETURNING n`, prefix).Scan(&n)
	if err != nil {
		return "", fmt.Errorf("cases: number: %w", err)
	}
	return fmt.Sprintf("%s-%06d", prefix, n), nil
}

func (s *Store) insert(ctx context.Context, tx *sql.Tx, d *notice.Document, parent string, actor notice.Actor, at time.Time) error {
	return s.insertDoc(ctx, tx, d, parent, "", actor, at)
}

func (s *Store) insertDoc(ctx context.Context, tx *sql.Tx, d *notice.Document, parent, corrects string, actor notice.Actor, at time.Time) error {
	party := cases.Digits(d.Draft.Party.Document)
	if party == "" {
		return fmt.Errorf("cases: o estabelecimento %q não tem CNPJ/CPF no cadastro: complete o cadastro", d.Draft.Party.Name)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO cases_parties (document, name, address, type, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (document) DO UPDATE SET name = excluded.name, address = excluded.address, type = excluded.type, updated_at = excluded.updated_at`,
		party, d.Draft.Party.Name, d.Draft.Party.Address, d.Draft.Party.Type, at.UnixMilli()); err != nil {
		return fmt.Errorf("cases: party: %w", err)
	}
	id, err := nextID(ctx, tx, d.Draft.CodeID, d.Draft.Kind, at.In(saoPaulo))
	if err != nil {
		return err
	}
	d.ID = id
	d.State = notice.StateDraft
	js, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("cases: encode: %w", err)
	}
	var par, cor any
	if parent != "" {
		par = parent
	}
	if corrects != "" {
		cor = corrects
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO cases_documents (id, kind, code_id, alert_id, party, parent_id, corrects_id, state, penalty_id, ordinal, doc_json, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, d.ID, string(d.Draft.Kind), d.Draft.CodeID, d.Draft.Finding.AlertID, party, par, cor,
		string(d.State), d.Draft.Penalty.PenaltyID, d.Draft.Penalty.Ordinal, string(js), at.UnixMilli(), at.UnixMilli())
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return fmt.Errorf("%w: documento para o alerta %s", cases.ErrConflict, d.Draft.Finding.AlertID)
		}
		return fmt.Errorf("cases: insert: %w", err)
	}
	detail, _ := json.Marshal(map[string]any{"kind": d.Draft.Kind, "alert_id": d.Draft.Finding.AlertID, "parent_id": parent,
		"corrects": corrects, "penalty": d.Draft.Penalty.Text, "code_version": d.Draft.CodeVersion})
	return appendAudit(ctx, tx, cases.Entry{DocumentID: d.ID, At: at, Actor: actor, Action: "create", From: "", To: d.State, Detail: detail})
}

// Create stores the first draft for an alert (a notice or a relatório) and
// returns it with its number. A second draft for the same alert is refused
// with cases.ErrConflict; use ForAlert to find the first.
func (s *Store) Create(ctx context.Context, d notice.Draft, actor notice.Actor, at time.Time) (notice.Document, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return notice.Document{}, fmt.Errorf("cases: create: %w", err)
	}
	defer tx.Rollback()
	doc := notice.Document{Draft: d}
	if err := s.insert(ctx, tx, &doc, "", actor, at); err != nil {
		return notice.Document{}, err
	}
	if err := tx.Commit(); err != nil {
		return notice.Document{}, fmt.Errorf("cases: create: %w", err)
	}
	return doc, nil
}

func scanDoc(row *sql.Row) (notice.Document, error) {
	var js string
	if err := row.Scan(&js); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return notice.Document{}, cases.ErrNotFound
		}
		return notice.Document{}, fmt.Errorf("cases: load: %w", err)
	}
	var d notice.Document
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		return notice.Document{}, fmt.Errorf("cases: decode: %w", err)
	}
	return d, nil
}

// Get returns the document with id.
func (s *Store) Get(ctx context.Context, id string) (notice.Document, error) {
	return scanDoc(s.db.QueryRowContext(ctx, `SELECT doc_json FROM cases_documents WHERE id = ?`, id))
}

// ForAlert returns the first document drafted for an alert.
func (s *Store) ForAlert(ctx context.Context, alertID string) (notice.Document, error) {
	return scanDoc(s.db.QueryRowContext(ctx, `SELECT doc_json FROM cases_documents WHERE alert_id = ? AND parent_id IS NULL AND corrects_id IS NULL`, alertID))
}

// Children returns the documents that reference id (the auto of a notice).
func (s *Store) Children(ctx context.Context, id string) ([]notice.Document, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT doc_json FROM cases_documents WHERE parent_id = ? ORDER BY created_at`, id)
	if err != nil {
		return nil, fmt.Errorf("cases: children: %w", err)
	}
	defer rows.Close()
	var out []notice.Document
	for rows.Next() {
		var js string
		if err := rows.Scan(&js); err != nil {
			return nil, fmt.Errorf("cases: children: %w", err)
		}
		var d notice.Document
		if err := json.Unmarshal([]byte(js), &d); err != nil {
			return nil, fmt.Errorf("cases: children: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// History returns the prior infractions of the party with CNPJ/CPF doc
// under code, leaving out the documents in exclude.
func (s *Store) History(ctx context.Context, doc, codeID string, exclude ...string) ([]codes.PriorInfraction, error) {
	return history(ctx, s.db, cases.Digits(doc), codeID, exclude)
}

type rowsQueryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func history(ctx context.Context, db rowsQueryer, party, codeID string, exclude []string) ([]codes.PriorInfraction, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, kind, penalty_id, ordinal, punished FROM cases_documents
		WHERE party = ? AND code_id = ? AND state NOT IN ('draft', 'cancelled') AND kind != ?
		AND id NOT IN (SELECT corrects_id FROM cases_documents WHERE corrects_id IS NOT NULL AND state NOT IN ('draft', 'cancelled'))
		ORDER BY created_at, id`,
		party, codeID, string(notice.KindRelatorio))
	if err != nil {
		return nil, fmt.Errorf("cases: history: %w", err)
	}
	defer rows.Close()
	out := []codes.PriorInfraction{}
	for rows.Next() {
		var id, kind, pen string
		var ord int
		var punished bool
		if err := rows.Scan(&id, &kind, &pen, &ord, &punished); err != nil {
			return nil, fmt.Errorf("cases: history: %w", err)
		}
		skip := false
		for _, x := range exclude {
			skip = skip || x == id
		}
		if !skip {
			out = append(out, codes.PriorInfraction{PenaltyID: pen, Ordinal: ord, Punished: punished, Ref: id})
		}
	}
	return out, rows.Err()
}

// Apply performs a workflow action on document id under code c, in one
// transaction with its audit entry. For notice.ActEscalate it also drafts
// the auto de infração (with the party's history) and returns it as auto.
func (s *Store) Apply(ctx context.Context, c *codes.Code, id string, a notice.Action) (doc notice.Document, auto *notice.Document, err error) {
	return s.ApplyRender(ctx, c, id, a, nil)
}

// ApplyRender is Apply that, with render set, renders the act as issued
// (notice.ActIssue) and as delivered (ciente or recusa, with what was
// recorded) and stores its PDF bytes (immutable, with their SHA-256) in the
// same transaction as the step: the act and its paper are one. The PDF is
// rendered outside the write transaction; a document changed meanwhile is
// reloaded and the action tried again.
func (s *Store) ApplyRender(ctx context.Context, c *codes.Code, id string, a notice.Action, render cases.Render) (doc notice.Document, auto *notice.Document, err error) {
	for try := 0; ; try++ {
		doc, auto, err = s.apply(ctx, c, id, a, render)
		if !errors.Is(err, errChanged) || try == 3 {
			return doc, auto, err
		}
	}
}

func storesPDF(k notice.ActionKind) bool {
	return k == notice.ActIssue || k == notice.ActAcknowledge || k == notice.ActRefuse
}

var errChanged = errors.New("cases: o documento mudou durante a emissão; tente de novo")

func (s *Store) apply(ctx context.Context, c *codes.Code, id string, a notice.Action, render cases.Render) (doc notice.Document, auto *notice.Document, err error) {
	var values []notice.UnitValue // the units' values at issue, read once: the PDF and the stored act carry the same fine
	if a.Kind == notice.ActIssue {
		if values, err = s.unitValues(ctx); err != nil {
			return doc, nil, err
		}
	}
	var pdf *pendingPDF
	if storesPDF(a.Kind) && render != nil {
		var pre notice.Document
		if pdf, pre, err = s.renderAhead(ctx, c, id, a, values, render); err != nil {
			return pre, nil, err
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return doc, nil, fmt.Errorf("cases: apply: %w", err)
	}
	defer tx.Rollback()
	cur, err := loadForApply(ctx, tx, c, id, pdf)
	if err != nil {
		return doc, nil, err
	}
	next, a, err := transition(ctx, tx, c, id, cur, a, values)
	if err != nil {
		return cur, nil, err
	}
	if err := storePDF(ctx, tx, id, a, pdf, &next); err != nil {
		return cur, nil, err
	}
	if a.Kind == notice.ActEscalate {
		if auto, err = s.escalate(ctx, tx, c, cur, &next, a); err != nil {
			return cur, nil, err
		}
	}
	if err := save(ctx, tx, id, next, a.At); err != nil {
		return cur, nil, err
	}
	if err := appendAudit(ctx, tx, actEntry(id, a, cur.State, next, pdf)); err != nil {
		return cur, nil, err
	}
	if err := tx.Commit(); err != nil {
		return cur, nil, fmt.Errorf("cases: apply: %w", err)
	}
	return next, auto, nil
}

// pendingPDF is an act's paper rendered before the write transaction,
// from the stored document before: the transaction stores it only if the
// document is still that one.
type pendingPDF struct {
	bytes  []byte
	sum    string // SHA-256, hex
	before string // the doc_json it was rendered from
}

// renderAhead renders the PDF of the act a would produce on document id,
// outside any transaction. On an error of the action or of the render it
// also returns the document as loaded.
func (s *Store) renderAhead(ctx context.Context, c *codes.Code, id string, a notice.Action, values []notice.UnitValue, render cases.Render) (*pendingPDF, notice.Document, error) {
	var before string
	if err := s.db.QueryRowContext(ctx, `SELECT doc_json FROM cases_documents WHERE id = ?`, id).Scan(&before); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notice.Document{}, cases.ErrNotFound
		}
		return nil, notice.Document{}, fmt.Errorf("cases: load: %w", err)
	}
	var cur notice.Document
	if err := json.Unmarshal([]byte(before), &cur); err != nil {
		return nil, notice.Document{}, fmt.Errorf("cases: decode: %w", err)
	}
	next, err := cur.Apply(c, a)
	if err != nil {
		return nil, cur, err
	}
	cases.Revalue(&next, c, a, values)
	b, err := render(next)
	if err != nil {
		return nil, cur, fmt.Errorf("cases: PDF do ato emitido: %w", err)
	}
	sum := sha256.Sum256(b)
	return &pendingPDF{bytes: b, sum: hex.EncodeToString(sum[:]), before: before}, notice.Document{}, nil
}

// loadForApply loads document id in tx and checks it belongs to code c
// and, when a PDF was rendered ahead, that it did not change since
// (errChanged).
func loadForApply(ctx context.Context, tx *sql.Tx, c *codes.Code, id string, pdf *pendingPDF) (notice.Document, error) {
	var raw string
	if err := tx.QueryRowContext(ctx, `SELECT doc_json FROM cases_documents WHERE id = ?`, id).Scan(&raw); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return notice.Document{}, cases.ErrNotFound
		}
		return notice.Document{}, fmt.Errorf("cases: load: %w", err)
	}
	if pdf != nil && raw != pdf.before {
		return notice.Document{}, errChanged
	}
	var cur notice.Document
	if err := json.Unmarshal([]byte(raw), &cur); err != nil {
		return notice.Document{}, fmt.Errorf("cases: decode: %w", err)
	}
	if err := sameCode(cur, id, c); err != nil {
		return notice.Document{}, err
	}
	return cur, nil
}

// sameCode refuses to act on document id, stored as d, under a code other
// than the one it was drafted under.
func sameCode(d notice.Document, id string, c *codes.Code) error {
	if d.Draft.CodeID != c.ID {
		return fmt.Errorf("cases: o documento %s é do código %q, não de %q", id, d.Draft.CodeID, c.ID)
	}
	return nil
}

// transition applies the pure state machine to cur (document id), with the follow-up
// constatação as stored, and values an act being issued anew (with its
// audit entry). It returns the next document and the action as applied.
func transition(ctx context.Context, tx *sql.Tx, c *codes.Code, id string, cur notice.Document, a notice.Action, values []notice.UnitValue) (notice.Document, notice.Action, error) {
	if a.FollowUp != nil {
		// The auto rests on the constatação as stored, not as sent.
		k, err := getConstatacao(ctx, tx, a.FollowUp.ID)
		if err != nil {
			return notice.Document{}, a, err
		}
		a.FollowUp = &k
	}
	next, err := cur.Apply(c, a)
	if err != nil {
		return notice.Document{}, a, err
	}
	if fineBefore, changed := cases.Revalue(&next, c, a, values); changed {
		if err := appendAudit(ctx, tx, cases.FineEntry(id, a, cur.State, fineBefore, next.Draft.Fine)); err != nil {
			return notice.Document{}, a, err
		}
	}
	return next, a, nil
}

// storePDF stores the PDF rendered ahead (if any) as the next of document
// id's papers and records it on next.
func storePDF(ctx context.Context, tx *sql.Tx, id string, a notice.Action, pdf *pendingPDF, next *notice.Document) error {
	if pdf == nil {
		return nil
	}
	var seq int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM cases_pdfs WHERE document_id = ?`, id).Scan(&seq); err != nil {
		return fmt.Errorf("cases: PDF: %w", err)
	}
	next.PDF = &notice.StoredPDF{Seq: seq, Stage: string(a.Kind), SHA256: pdf.sum, Size: len(pdf.bytes), StoredAt: a.At}
	if _, err := tx.ExecContext(ctx, `INSERT INTO cases_pdfs (document_id, seq, stage, sha256, bytes, stored_at) VALUES (?, ?, ?, ?, ?, ?)`,
		id, seq, string(a.Kind), pdf.sum, pdf.bytes, a.At.UnixMilli()); err != nil {
		return fmt.Errorf("cases: PDF: %w", err)
	}
	return nil
}

// escalate drafts the auto de infração that follows next (with the party's
// history), stores it and records it on next.
func (s *Store) escalate(ctx context.Context, tx *sql.Tx, c *codes.Code, cur notice.Document, next *notice.Document, a notice.Action) (*notice.Document, error) {
	h, err := history(ctx, tx, cases.Digits(cur.Draft.Party.Document), c.ID, []string{cur.ID})
	if err != nil {
		return nil, err
	}
	ad, err := notice.BuildAuto(c, next, a.FollowUp, h, a.At)
	if err != nil {
		return nil, fmt.Errorf("cases: auto: %w", err)
	}
	if err := s.applyFine(ctx, &ad, c, a.At); err != nil {
		return nil, err
	}
	ad.Finding.AlertID = cur.Draft.Finding.AlertID
	au := notice.Document{Draft: ad}
	if err := s.insert(ctx, tx, &au, cur.ID, a.Actor, a.At); err != nil {
		return nil, err
	}
	next.EscalatedTo = au.ID
	return &au, nil
}

// save writes document id's new state.
func save(ctx context.Context, tx *sql.Tx, id string, next notice.Document, at time.Time) error {
	punished := next.Punished != nil && *next.Punished
	js, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("cases: encode: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE cases_documents SET state = ?, punished = ?, doc_json = ?, updated_at = ? WHERE id = ?`,
		string(next.State), punished, string(js), at.UnixMilli(), id); err != nil {
		return fmt.Errorf("cases: save: %w", err)
	}
	return nil
}

// actEntry is the audit entry of action a on document id: the action as
// sent, with the constatação, the auto and the PDF it produced cited by id.
func actEntry(id string, a notice.Action, from notice.State, next notice.Document, pdf *pendingPDF) cases.Entry {
	act := a
	if act.FollowUp != nil {
		act.FollowUp = nil // cited by id: the constatação is its own record
	}
	var pdfSHA string
	if pdf != nil {
		pdfSHA = next.PDF.SHA256
	}
	detail, _ := json.Marshal(struct {
		notice.Action
		FollowUpID  string `json:"follow_up_id,omitempty"`
		EscalatedTo string `json:"escalated_to,omitempty"`
		PDFSHA256   string `json:"pdf_sha256,omitempty"`
	}{act, next.FollowUp, next.EscalatedTo, pdfSHA})
	return cases.Entry{DocumentID: id, At: a.At, Actor: a.Actor, Action: string(a.Kind), From: from, To: next.State, Detail: detail}
}

// Audit returns the audit trail of a document (every entry when id is
// empty), oldest first.
func (s *Store) Audit(ctx context.Context, id string) ([]cases.Entry, error) {
	q := `SELECT seq, document_id, at, actor_id, actor_name, actor_role, action, from_state, to_state, detail, prev_hash, hash FROM cases_audit`
	var args []any
	if id != "" {
		q += ` WHERE document_id = ?`
		args = append(args, id)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("cases: audit: %w", err)
	}
	defer rows.Close()
	out := []cases.Entry{}
	for rows.Next() {
		var e cases.Entry
		var at int64
		var from, to, detail string
		if err := rows.Scan(&e.Seq, &e.DocumentID, &at, &e.Actor.ID, &e.Actor.Name, &e.Actor.Role, &e.Action, &from, &to, &detail, &e.PrevHash, &e.Hash); err != nil {
			return nil, fmt.Errorf("cases: audit: %w", err)
		}
		e.At, e.From, e.To, e.Detail = time.UnixMilli(at).UTC(), notice.State(from), notice.State(to), json.RawMessage(detail)
		out = append(out, e)
	}
	return out, rows.Err()
}

// VerifyAudit recomputes the hash chain of the whole trail and reports the
// first entry that does not match.
func (s *Store) VerifyAudit(ctx context.Context) error {
	es, err := s.Audit(ctx, "")
	if err != nil {
		return err
	}
	return cases.VerifyChain(es)
}

var saoPaulo = tz.Brasilia()

// applyFine values the fine of d on the date at with UnitValues.
func (s *Store) applyFine(ctx context.Context, d *notice.Draft, c *codes.Code, at time.Time) error {
	vs, err := s.unitValues(ctx)
	if err != nil {
		return err
	}
	notice.ApplyFine(d, c, vs, at)
	return nil
}

func (s *Store) unitValues(ctx context.Context) ([]notice.UnitValue, error) {
	if s.UnitValues == nil {
		return nil, nil
	}
	vs, err := s.UnitValues(ctx)
	if err != nil {
		return nil, fmt.Errorf("cases: unit values: %w", err)
	}
	return vs, nil
}
