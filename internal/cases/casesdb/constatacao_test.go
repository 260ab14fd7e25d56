package casesdb_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/cases/casesdb"
)

func TestConstatacaoRecordedOnceAndImmutable(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	sc := noticetest.Lapa(set)
	k, err := s.RecordConstatacao(ctx, sc.Constatacao())
	if err != nil {
		t.Fatal(err)
	}
	if k.ID != "lapa-CT-2026-000001" {
		t.Fatalf("id %s", k.ID)
	}
	got, err := s.Constatacoes(ctx, sc.Finding.AlertID)
	if err != nil || len(got) != 1 || got[0].ID != k.ID || got[0].Heard != k.Heard || *got[0].Measurement.LAeqDB != sc.Finding.LAeqDB {
		t.Fatalf("constatações %+v %v", got, err)
	}
	// A follow-up of an unknown notice is refused and leaves nothing.
	if _, err := s.RecordConstatacao(ctx, sc.FollowUp("lapa-NP-2026-000099", at(3, 20, 22, 0), 70)); !errors.Is(err, cases.ErrNotFound) {
		t.Fatalf("follow-up of an unknown notice: %v", err)
	}
	if got, _ := s.Constatacoes(ctx, sc.Finding.AlertID); len(got) != 1 {
		t.Fatalf("a refused constatação was stored: %d", len(got))
	}
	trail, err := s.Audit(ctx, sc.Finding.AlertID)
	if err != nil || len(trail) != 1 || trail[0].Action != "constatacao" || !strings.Contains(string(trail[0].Detail), "sustenta a notificação") ||
		!strings.Contains(string(trail[0].Detail), "F-1234") {
		t.Fatalf("audit %+v %v", trail, err)
	}
	s.Close()
	raw := rawDB(t, path)
	defer raw.Close()
	for _, q := range []string{`UPDATE cases_constatacoes SET doc_json = '{}'`, `DELETE FROM cases_constatacoes`} {
		if _, err := raw.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "constatação registrada não se") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestEditKeepsEveryChangeInTheTrail(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	sc := noticetest.Lapa(set)
	np, err := s.Create(ctx, grounded(t, sc, nil, at(3, 9, 9, 0)), system, at(3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	doc, edits, err := s.Edit(ctx, sc.Code, np.ID, fiscal, at(3, 9, 9, 10), []notice.FieldChange{
		{Field: notice.EditLavraturaPlace, Value: "Sede da Prefeitura"}, {Field: notice.EditPrazoDays, Value: "7"}})
	if err != nil || len(edits) != 2 || doc.PrazoDays != 7 {
		t.Fatalf("edit: %+v %v", edits, err)
	}
	// A refused change writes nothing.
	if _, _, err := s.Edit(ctx, sc.Code, np.ID, fiscal, at(3, 9, 9, 11), []notice.FieldChange{
		{Field: notice.EditCircumstances, Value: "x"}, {Field: notice.EditPrazoDays, Value: "10000"}}); !errors.Is(err, notice.ErrInput) {
		t.Fatalf("prazo 10000: %v", err)
	}
	got, err := s.Get(ctx, np.ID)
	if err != nil || got.Draft.LavraturaPlace != "Sede da Prefeitura" || got.Draft.Circumstances != "" || len(got.Edits) != 2 {
		t.Fatalf("stored %+v %v", got.Edits, err)
	}
	trail, _ := s.Audit(ctx, np.ID)
	var lines []string
	for _, e := range trail {
		if e.Action == "edit" {
			lines = append(lines, e.Actor.Name+" "+string(e.Detail))
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], `"after":"Sede da Prefeitura"`) || !strings.Contains(lines[0], "Ana Paula Ferreira") ||
		!strings.Contains(lines[1], `"before":""`) || !strings.Contains(lines[1], `"after":"7"`) {
		t.Fatalf("edit entries %q", lines)
	}
	if err := s.VerifyAudit(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestIssueStoresThePDF(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	sc := noticetest.Lapa(set)
	np, err := s.Create(ctx, grounded(t, sc, nil, at(3, 9, 9, 0)), system, at(3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	issue := notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 9, 10, 0), Agent: agent, PrazoDays: 5}
	// A render failure leaves the draft a draft: nothing half-written.
	if _, _, err := s.ApplyRender(ctx, sc.Code, np.ID, issue, func(notice.Document) ([]byte, error) { return nil, errors.New("sem fonte") }); err == nil {
		t.Fatal("issued without its PDF")
	}
	if d, _ := s.Get(ctx, np.ID); d.State != notice.StateDraft {
		t.Fatalf("state %s after a failed render", d.State)
	}
	var rendered notice.Document
	pdf := []byte("%PDF-1.4 ato emitido")
	doc, _, err := s.ApplyRender(ctx, sc.Code, np.ID, issue, func(d notice.Document) ([]byte, error) { rendered = d; return pdf, nil })
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pdf)
	if rendered.State != notice.StateIssued || rendered.Agent.Name != "Ana Paula Ferreira" || doc.PDF == nil || doc.PDF.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("rendered %s, pdf %+v", rendered.State, doc.PDF)
	}
	b, meta, err := s.PDF(ctx, np.ID)
	if err != nil || !bytes.Equal(b, pdf) || meta.SHA256 != doc.PDF.SHA256 || !meta.StoredAt.Equal(issue.At) {
		t.Fatalf("stored PDF %q %+v %v", b, meta, err)
	}
	if _, _, err := s.PDF(ctx, "lapa-NP-2026-000777"); !errors.Is(err, cases.ErrNoPDF) {
		t.Fatalf("PDF of an unknown act: %v", err)
	}
	trail, _ := s.Audit(ctx, np.ID)
	if last := trail[len(trail)-1]; last.Action != "issue" || !strings.Contains(string(last.Detail), doc.PDF.SHA256) {
		t.Fatalf("issue entry without the PDF's hash: %s", last.Detail)
	}
	s.Close()
	raw := rawDB(t, path)
	for _, q := range []string{`UPDATE cases_pdfs SET bytes = x'00'`, `DELETE FROM cases_pdfs`} {
		if _, err := raw.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "o PDF de um ato emitido não se") {
			t.Errorf("%s: %v", q, err)
		}
	}
	for _, q := range []string{`DROP TRIGGER cases_pdfs_no_update`, `UPDATE cases_pdfs SET bytes = x'00'`} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	s2, err := casesdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, _, err := s2.PDF(ctx, np.ID); err == nil || !strings.Contains(err.Error(), "não confere com o seu SHA-256") {
		t.Fatalf("tampered PDF served: %v", err)
	}
}

func TestAutoRestsOnTheStoredFollowUp(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	sc := noticetest.Lapa(set)
	np, err := s.Create(ctx, grounded(t, sc, nil, at(3, 9, 9, 0)), system, at(3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []notice.Action{
		{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 9, 10, 0), Agent: agent, PrazoDays: 5},
		{Kind: notice.ActAcknowledge, Actor: fiscal, At: at(3, 9, 10, 30), SignedBy: "Carlos Dono"},
	} {
		if _, _, err := s.Apply(ctx, sc.Code, np.ID, a); err != nil {
			t.Fatal(err)
		}
	}
	unstored := sc.FollowUp(np.ID, at(3, 15, 23, 0), 70)
	if _, _, err := s.Apply(ctx, sc.Code, np.ID, notice.Action{Kind: notice.ActEscalate, Actor: fiscal, At: at(3, 16, 9, 0), FollowUp: &unstored}); !errors.Is(err, cases.ErrNotFound) {
		t.Fatalf("auto on a constatação never recorded: %v", err)
	}
	k := followUp(t, s, sc, np.ID, at(3, 15, 23, 0))
	sent := *k
	sent.Heard = "outra coisa" // the stored text wins
	_, auto, err := s.Apply(ctx, sc.Code, np.ID, notice.Action{Kind: notice.ActEscalate, Actor: fiscal, At: at(3, 16, 9, 0), FollowUp: &sent})
	if err != nil {
		t.Fatal(err)
	}
	if len(auto.Draft.Constatacoes) != 2 || auto.Draft.Constatacoes[1].Heard != k.Heard {
		t.Fatalf("auto constatações %+v", auto.Draft.Constatacoes)
	}
	_ = time.Second
}

func TestCorrectionIsANewActCitingTheOld(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	sc := noticetest.Lapa(set)
	c := sc.Code
	np, err := s.Create(ctx, grounded(t, sc, nil, at(3, 9, 9, 0)), system, at(3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Correct(ctx, c, np.ID, fiscal, at(3, 9, 9, 5), "endereço errado"); !errors.Is(err, notice.ErrTransition) || !strings.Contains(err.Error(), "editando a minuta") {
		t.Fatalf("correcting a draft: %v", err)
	}
	issued, _, err := s.Apply(ctx, c, np.ID, notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 9, 10, 0), Agent: agent, PrazoDays: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Correct(ctx, c, np.ID, fiscal, at(3, 9, 11, 0), " "); !errors.Is(err, notice.ErrInput) {
		t.Fatalf("correction without a reason: %v", err)
	}
	old, corr, err := s.Correct(ctx, c, np.ID, fiscal, at(3, 9, 11, 0), "número do imóvel errado")
	if err != nil {
		t.Fatal(err)
	}
	if corr.ID != "lapa-NP-2026-000002" || corr.State != notice.StateDraft || corr.Draft.Corrects == nil || corr.Draft.Corrects.ID != np.ID ||
		corr.PrazoDays != 5 || !strings.Contains(strings.Join(corr.Draft.Notes, " "), "número do imóvel errado") {
		t.Fatalf("correction %+v", corr)
	}
	if f := corr.Draft.Field("agente"); f == nil || !f.Pending || f.Value != "" {
		t.Fatalf("the correction carries the old signature: %+v", f)
	}
	// The old act keeps its content; only who corrects it is added.
	if old.CorrectedBy != corr.ID || old.State != issued.State || old.Draft.Field("agente").Value != issued.Draft.Field("agente").Value {
		t.Fatalf("old act %+v", old)
	}
	if _, _, err := s.Apply(ctx, c, np.ID, notice.Action{Kind: notice.ActAcknowledge, Actor: fiscal, At: at(3, 9, 12, 0), SignedBy: "X"}); !errors.Is(err, notice.ErrTransition) ||
		!strings.Contains(err.Error(), "prossiga no novo ato") {
		t.Fatalf("a step on the corrected act: %v", err)
	}
	if _, _, err := s.Correct(ctx, c, np.ID, fiscal, at(3, 9, 12, 0), "de novo"); !errors.Is(err, notice.ErrTransition) {
		t.Fatalf("second correction of the same act: %v", err)
	}
	if first, err := s.ForAlert(ctx, sc.Finding.AlertID); err != nil || first.ID != np.ID {
		t.Fatalf("the alert's first document: %s %v", first.ID, err)
	}
	// Until the correction is issued the old act counts; then only the correction.
	if h, _ := s.History(ctx, sc.Party.Document, c.ID); len(h) != 1 || h[0].Ref != np.ID {
		t.Fatalf("history before the correction is issued: %+v", h)
	}
	if _, _, err := s.Apply(ctx, c, corr.ID, notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 9, 13, 0), Agent: agent}); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.History(ctx, sc.Party.Document, c.ID); len(h) != 1 || h[0].Ref != corr.ID {
		t.Fatalf("history after the correction is issued: %+v", h)
	}
	trail, _ := s.Audit(ctx, np.ID)
	if last := trail[len(trail)-1]; last.Action != "correct" || !strings.Contains(string(last.Detail), corr.ID) {
		t.Fatalf("audit of the old act: %+v", last)
	}
	if err := s.VerifyAudit(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestActsRefuseAnotherCode: a document is acted on only under the code
// it was drafted under; the refusal names both codes and changes nothing.
func TestActsRefuseAnotherCode(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	sc := noticetest.Lapa(set)
	other := noticetest.Macabu(set).Code
	np, err := s.Create(ctx, grounded(t, sc, nil, at(3, 9, 9, 0)), system, at(3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Apply(ctx, sc.Code, np.ID, notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 9, 10, 0), Agent: agent, PrazoDays: 5}); err != nil {
		t.Fatal(err)
	}
	acts := []struct {
		name string
		do   func() error
	}{
		{"apply", func() error {
			_, _, err := s.Apply(ctx, other, np.ID, notice.Action{Kind: notice.ActRegularise, Actor: fiscal, At: at(3, 9, 11, 0)})
			return err
		}},
		{"edit", func() error {
			_, _, err := s.Edit(ctx, other, np.ID, fiscal, at(3, 9, 11, 0), []notice.FieldChange{{Field: notice.EditPrazoDays, Value: "7"}})
			return err
		}},
		{"correct", func() error {
			_, _, err := s.Correct(ctx, other, np.ID, fiscal, at(3, 9, 11, 0), "número do imóvel errado")
			return err
		}},
	}
	for _, a := range acts {
		err := a.do()
		if err == nil || !strings.Contains(err.Error(), "é do código \""+sc.Code.ID+"\", não de \""+other.ID+"\"") {
			t.Errorf("%s under %s: %v", a.name, other.ID, err)
		}
	}
	got, err := s.Get(ctx, np.ID)
	if err != nil || got.State != notice.StateIssued || len(got.Edits) != 0 {
		t.Fatalf("after the refusals: state %s, %d edits, %v", got.State, len(got.Edits), err)
	}
}
