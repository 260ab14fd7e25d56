package casesdb

// The case store's reads for the case list (cases.Index is its consumer):
// the documents' fingerprint, the scan of (id, parent, state, updated_at)
// through a covering index, the documents written since an audit entry and
// the documents themselves with who created or issued them.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/sqlitedb"
)

// listMigrations are the case list's own schema steps, recorded in
// cases_list_migrations beside the store's own version table.
var listMigrations = []sqlitedb.Step{
	{Name: "covering index for the case list scan", SQL: `
-- The case list refreshes itself from (id, parent_id, state, updated_at) of
-- every document; reading them from the table would touch every row's page
-- (doc_json makes rows large), this index holds just those columns.
CREATE INDEX IF NOT EXISTS cases_list_scan ON cases_documents(id, parent_id, state, updated_at);
`},
}

// PrepareList adds the case list's covering index (its own schema steps,
// once) so cases.NewIndex can read from s.
func (s *Store) PrepareList(ctx context.Context) error {
	return sqlitedb.Migrate(ctx, s.db, sqlitedb.Scheme{Table: "cases_list_migrations"}, listMigrations)
}

// ListStamp returns the documents' fingerprint: their count and the audit
// trail's last seq. Every write of a document appends, in its transaction,
// an entry to the audit trail, whose seq only grows (writers are
// serialised, so the entries a reader sees are always a prefix): with the
// documents' count it is an exact fingerprint.
func (s *Store) ListStamp(ctx context.Context) (cases.Stamp, error) {
	var fp cases.Stamp
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM cases_documents INDEXED BY cases_list_scan),
		(SELECT coalesce(max(seq), 0) FROM cases_audit)`).Scan(&fp.Docs, &fp.LastAudit); err != nil {
		return cases.Stamp{}, fmt.Errorf("cases: list: %w", err)
	}
	return fp, nil
}

// ListStates calls fn with the id, parent, state and last update (unix ms)
// of every document, read from the list's covering index.
func (s *Store) ListStates(ctx context.Context, fn func(id, parent string, state notice.State, updatedAt int64)) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, coalesce(parent_id, ''), state, updated_at FROM cases_documents INDEXED BY cases_list_scan`)
	if err != nil {
		return fmt.Errorf("cases: list: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, state string
		var upd int64
		if err := rows.Scan(&id, &parent, &state, &upd); err != nil {
			return fmt.Errorf("cases: list: %w", err)
		}
		fn(id, parent, notice.State(state), upd)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("cases: list: %w", err)
	}
	return nil
}

// ListWrittenSince returns the documents with an audit entry after seq.
func (s *Store) ListWrittenSince(ctx context.Context, seq int64) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT document_id FROM cases_audit WHERE seq > ?`, seq)
	if err != nil {
		return nil, fmt.Errorf("cases: list: audit: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("cases: list: audit: %w", err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cases: list: audit: %w", err)
	}
	return out, nil
}

// ListDocs calls fn with each of the documents ids, decoded, with who
// created or issued it: every document in one scan when ids is nil, one by
// one otherwise.
func (s *Store) ListDocs(ctx context.Context, ids []string, fn func(cases.ListedDoc)) error {
	const cols = `SELECT id, coalesce(parent_id, ''), state, updated_at, party, created_at, doc_json FROM cases_documents`
	const actorsQ = `SELECT document_id, actor_id FROM cases_audit WHERE action IN ('create', 'issue')`
	actors := map[string][]string{}
	scanActors := func(rows *sql.Rows) error {
		defer rows.Close()
		for rows.Next() {
			var doc, who string
			if err := rows.Scan(&doc, &who); err != nil {
				return err
			}
			if !slices.Contains(actors[doc], who) {
				actors[doc] = append(actors[doc], who)
			}
		}
		return rows.Err()
	}
	docs := func(q string, args ...any) error {
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("cases: list: %w", err)
		}
		defer rows.Close()
		return scanListed(rows, actors, fn)
	}
	if ids == nil {
		rows, err := s.db.QueryContext(ctx, actorsQ)
		if err == nil {
			err = scanActors(rows)
		}
		if err != nil {
			return fmt.Errorf("cases: list: audit: %w", err)
		}
		return docs(cols)
	}
	for _, id := range ids {
		rows, err := s.db.QueryContext(ctx, actorsQ+` AND document_id = ?`, id)
		if err == nil {
			err = scanActors(rows)
		}
		if err != nil {
			return fmt.Errorf("cases: list: audit: %w", err)
		}
		if err := docs(cols+` WHERE id = ?`, id); err != nil {
			return err
		}
	}
	return nil
}

func scanListed(rows *sql.Rows, actors map[string][]string, fn func(cases.ListedDoc)) error {
	for rows.Next() {
		var l cases.ListedDoc
		var state, js string
		var created int64
		if err := rows.Scan(&l.ID, &l.Parent, &state, &l.UpdatedAt, &l.Party, &created, &js); err != nil {
			return fmt.Errorf("cases: list: %w", err)
		}
		var d notice.Document
		if err := json.Unmarshal([]byte(js), &d); err != nil {
			return fmt.Errorf("cases: list: document %s: %w", l.ID, err)
		}
		l.State, l.CreatedAt, l.Doc, l.Actors = notice.State(state), time.UnixMilli(created).UTC(), &d, actors[l.ID]
		fn(l)
	}
	return rows.Err()
}

// Party returns the name and address on record for the party whose
// CNPJ/CPF digits are key (false: none).
func (s *Store) Party(ctx context.Context, key string) (cases.PartyRef, bool, error) {
	p := cases.PartyRef{Document: key}
	err := s.db.QueryRowContext(ctx, `SELECT name, address FROM cases_parties WHERE document = ?`, key).Scan(&p.Name, &p.Address)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return cases.PartyRef{}, false, nil
	case err != nil:
		return cases.PartyRef{}, false, fmt.Errorf("cases: party: %w", err)
	}
	return p, true, nil
}
