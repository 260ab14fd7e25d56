package casesdb

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/sqlitedb"
)

// TestOpensFileOfEarlierRelease: a case file whose versions are kept in
// cases_schema (how earlier releases kept them) opens, keeps its rows, moves
// its versions to cases_migrations and runs nothing twice.
func TestOpensFileOfEarlierRelease(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cases.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE cases_schema (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`,
		migrations[0].SQL,
		`INSERT INTO cases_schema VALUES (1, 1000)`,
		migrations[1].SQL,
		`INSERT INTO cases_schema VALUES (2, 2000)`,
		// The alerts' store shares the file and keeps its own versions.
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
		`INSERT INTO schema_migrations VALUES (1, 'a', 0), (2, 'b', 0), (3, 'c', 0)`,
		`INSERT INTO cases_alert_triage (alert_id, acked_by, acked_name, acked_at, updated_at) VALUES ('s/a', 'f', 'Fiscal', 5000, 5000)`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tr, err := s.Triage(ctx, "s/a")
	if err != nil || !tr.AckedAt.Equal(time.UnixMilli(5000)) || tr.AckedName != "Fiscal" {
		t.Errorf("triage row after open: %+v, %v", tr, err)
	}
	var n, legacy int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM cases_migrations WHERE version IN (1, 2)`).Scan(&n); err != nil || n != 2 {
		t.Errorf("cases_migrations holds %d of versions 1 and 2 (err %v)", n, err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != 3 {
		t.Errorf("the alerts' versions: %d rows (err %v), want their 3 untouched", n, err)
	}
	s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'cases_schema'`).Scan(&legacy)
	if legacy != 0 {
		t.Error("cases_schema is still there")
	}
}

// releaseDoc is a notice as the release before constatações stored it: a
// refused Notificação Preliminar whose witnesses have their document as
// one free text.
const releaseDoc = `{"id":"lapa-NP-2026-000001","draft":{"kind":"notificacao_preliminar","title":"Notificação Preliminar","article":"Arts. 333–335",` +
	`"quote":"q","code_id":"lapa","code_version":"2026-01","code_title":"Lei nº 1783/2004 (Lapa/PR)","municipality":"Lapa","state":"PR",` +
	`"department":"d","finding":{"alert_id":"s/a","code_id":"lapa","code_version":"2026-01","rule_id":"lapa-96-noite-outras","article":"Art. 96",` +
	`"quote":"q","margin_db":1.4,"laeq_db":68.4,"lafmax_db":79.2,"window_start":"2026-03-07T02:10:00Z","window_end":"2026-03-07T02:14:00Z",` +
	`"sensor":"lapa-bar-01","grade":"class2","screening":false},"party":{"name":"Bar Exemplo","document":"12.345.678/0001-95",` +
	`"address":"Rua XV de Novembro, 98"},"site":{"sensor":"lapa-bar-01","address":"Rua XV, 100","lat":-25.7,"lon":-49.7,"grade":"class2"},` +
	`"fields":[{"id":"fato","label":"fato","article":"Art. 334, IV","by_hand":false,"value":"Em 06/03/2026…","pending":false}],` +
	`"penalty":{"penalty_id":"p","ordinal":1,"text":"advertência"},"history":[],"witnesses_on_refusal":2,"prepared":"2026-03-09T12:00:00Z"},` +
	`"state":"refused","agent":{"name":"fiscal","matricula":"F-1"},"prazo_days":5,"issued_at":"2026-03-09T13:00:00Z",` +
	`"ciencia_at":"2026-03-09T13:30:00Z","witnesses":[{"name":"João da Silva","document":"RG 1.234.567"},{"name":"Maria Souza","document":"CPF 111.444.777-35"}],` +
	`"prazo_end":"2026-03-15T03:00:00Z"}`

// TestMigratesReleaseCasesDB: a cases.db made by the release before
// constatações (schema steps 1 and 2, a refused notice, its audit trail and
// a triage row) opens, gains the constatações and PDF tables, and loses
// nothing: the document reads back as it was, the trail still verifies.
func TestMigratesReleaseCasesDB(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cases.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitedb.Migrate(ctx, old, sqlitedb.Scheme{Table: "cases_migrations", Legacy: "cases_schema"}, migrations[:2]); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO cases_parties VALUES ('12345678000195', 'Bar Exemplo', 'Rua XV de Novembro, 98', '', 1000)`,
		`INSERT INTO cases_documents (id, kind, code_id, alert_id, party, state, penalty_id, ordinal, doc_json, created_at, updated_at)
		 VALUES ('lapa-NP-2026-000001', 'notificacao_preliminar', 'lapa', 's/a', '12345678000195', 'refused', 'p', 1, '` + releaseDoc + `', 1000, 2000)`,
		`INSERT INTO cases_seq VALUES ('lapa-NP-2026', 1)`,
		`INSERT INTO cases_alert_triage (alert_id, acked_by, acked_name, acked_at, updated_at) VALUES ('s/a', 'f', 'Fiscal', 5000, 5000)`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i, a := range []string{"create", "issue", "recusa"} {
		if err := appendAudit(ctx, old, cases.Entry{DocumentID: "lapa-NP-2026-000001", At: time.UnixMilli(int64(1000 * (i + 1))),
			Actor: notice.Actor{ID: "fiscal", Name: "fiscal", Role: "fiscal"}, Action: a}); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, err := s.Get(ctx, "lapa-NP-2026-000001")
	if err != nil {
		t.Fatal(err)
	}
	if d.State != notice.StateRefused || len(d.Witnesses) != 2 || d.Witnesses[0].Document != "RG 1.234.567" || d.PrazoDays != 5 ||
		d.Draft.Field("fato").Value != "Em 06/03/2026…" || d.StateLabel() != "recusa testemunhada" {
		t.Fatalf("document after migration: %+v", d)
	}
	if err := s.VerifyAudit(ctx); err != nil {
		t.Fatal(err)
	}
	if es, _ := s.Audit(ctx, "lapa-NP-2026-000001"); len(es) != 3 {
		t.Fatalf("audit entries %d, want 3", len(es))
	}
	if tr, _ := s.Triage(ctx, "s/a"); tr.AckedName != "Fiscal" {
		t.Fatalf("triage %+v", tr)
	}
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM cases_migrations`).Scan(&v); err != nil || v != len(migrations) {
		t.Fatalf("version %d (%v), want %d", v, err, len(migrations))
	}
	if _, _, err := s.PDF(ctx, d.ID); !errors.Is(err, cases.ErrNoPDF) {
		t.Fatalf("an act issued before PDFs were stored: %v", err)
	}
	// The new tables work on the migrated file: the next number follows.
	id, err := nextID(ctx, s.db, "lapa", notice.KindNotificacaoPreliminar, time.Date(2026, 4, 1, 0, 0, 0, 0, saoPaulo))
	if err != nil || id != "lapa-NP-2026-000002" {
		t.Fatalf("next number %s %v", id, err)
	}
}
