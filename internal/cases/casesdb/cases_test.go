package casesdb_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/cases/casesdb"
)

var set = noticetest.Codes()

func at(m time.Month, d, h, min int) time.Time {
	return time.Date(2026, m, d, h, min, 0, 0, noticetest.SaoPaulo)
}

var (
	fiscal = notice.Actor{ID: "u-ana", Name: "Ana Paula Ferreira", Role: notice.RoleFiscal, Matricula: "F-1234"}
	system = notice.Actor{ID: "sistema", Name: "Sossego", Role: "system"}
	agent  = &notice.Agent{Name: "Ana Paula Ferreira", Matricula: "F-1234"}
	wits   = []notice.Witness{{Name: "João da Silva", DocType: notice.WitnessRG, Document: "1.234.567-8", Issuer: "SSP/PR"},
		{Name: "Maria Souza", DocType: notice.WitnessCPF, Document: "111.444.777-35"}}
)

const declaration = "O notificado recebeu a 1ª via e recusou-se a assinar diante das testemunhas."

// grounded is the scenario's first document, built from its constatação.
func grounded(t *testing.T, sc noticetest.Scenario, hist []codes.PriorInfraction, now time.Time) notice.Draft {
	t.Helper()
	d, err := notice.BuildFrom(sc.Code, sc.Finding, sc.Constatacao(), sc.Site, hist, now)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// followUp records the constatação after the prazo of notice id.
func followUp(t *testing.T, s *casesdb.Store, sc noticetest.Scenario, id string, at time.Time) *notice.Constatacao {
	t.Helper()
	k, err := s.RecordConstatacao(context.Background(), sc.FollowUp(id, at, *sc.Finding.LimitDB+6))
	if err != nil {
		t.Fatal(err)
	}
	return &k
}

func open(t *testing.T) (*casesdb.Store, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cases.db")
	s, err := casesdb.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, p
}

func TestLapaCaseAndRepeatOffender(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	sc := noticetest.Lapa(set)
	c := sc.Code
	hist, err := s.History(ctx, sc.Party.Document, c.ID)
	if err != nil || len(hist) != 0 {
		t.Fatalf("history %v %v", hist, err)
	}
	d := grounded(t, sc, hist, at(3, 9, 9, 0))
	np, err := s.Create(ctx, d, system, at(3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	if np.ID != "lapa-NP-2026-000001" {
		t.Fatalf("id %s", np.ID)
	}
	if _, err := s.Create(ctx, d, system, at(3, 9, 9, 1)); !errors.Is(err, cases.ErrConflict) {
		t.Fatalf("second draft for the alert: %v", err)
	}
	steps := []notice.Action{
		{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 9, 10, 0), Agent: agent, PrazoDays: 5},
		{Kind: notice.ActRefuse, Actor: fiscal, At: at(3, 9, 10, 30), Witnesses: wits, Declaration: declaration},
	}
	for _, a := range steps {
		if _, _, err := s.Apply(ctx, c, np.ID, a); err != nil {
			t.Fatalf("%s: %v", a.Kind, err)
		}
	}
	// An illegal step is refused, changes nothing and leaves no audit entry.
	if _, _, err := s.Apply(ctx, c, np.ID, notice.Action{Kind: notice.ActEscalate, Actor: fiscal, At: at(3, 12, 9, 0)}); !errors.Is(err, notice.ErrTransition) {
		t.Fatalf("auto inside the prazo: %v", err)
	}
	// Restart: everything is durable.
	s.Close()
	s, err = casesdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	follow := followUp(t, s, sc, np.ID, at(3, 15, 23, 0))
	got, auto, err := s.Apply(ctx, c, np.ID, notice.Action{Kind: notice.ActEscalate, Actor: fiscal, At: at(3, 16, 9, 0), FollowUp: follow})
	if err != nil {
		t.Fatal(err)
	}
	if got.State != notice.StateEscalated || auto == nil || got.EscalatedTo != auto.ID || auto.ID != "lapa-AI-2026-000001" {
		t.Fatalf("escalate: %s %+v", got.State, auto)
	}
	if auto.Draft.RefersTo.ID != np.ID || auto.Draft.Penalty.Ordinal != 2 || *auto.Draft.Penalty.Percent != 25 {
		t.Fatalf("auto: %+v %+v", auto.Draft.RefersTo, auto.Draft.Penalty)
	}
	kids, err := s.Children(ctx, np.ID)
	if err != nil || len(kids) != 1 || kids[0].ID != auto.ID {
		t.Fatalf("children %v %v", kids, err)
	}
	for _, a := range []notice.Action{
		{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 16, 10, 0), Agent: agent},
		{Kind: notice.ActAcknowledge, Actor: fiscal, At: at(3, 16, 11, 0), SignedBy: "Carlos Dono"},
	} {
		if _, _, err := s.Apply(ctx, c, auto.ID, a); err != nil {
			t.Fatalf("auto %s: %v", a.Kind, err)
		}
	}
	trail, err := s.Audit(ctx, np.ID)
	if err != nil {
		t.Fatal(err)
	}
	var acts []string
	for _, e := range trail {
		acts = append(acts, e.Action+":"+e.Actor.ID+":"+string(e.To))
	}
	if want := "create:sistema:draft issue:u-ana:issued recusa:u-ana:refused constatacao:ana: auto:u-ana:escalated"; strings.Join(acts, " ") != want {
		t.Fatalf("audit %q\nwant %q", strings.Join(acts, " "), want)
	}
	if !strings.Contains(string(trail[2].Detail), "Maria Souza") {
		t.Errorf("recusa detail lacks the witnesses: %s", trail[2].Detail)
	}
	if err := s.VerifyAudit(ctx); err != nil {
		t.Fatal(err)
	}

	// Months later the same bar exceeds again: NP (1ª) and the auto (2ª) are
	// in its history, so this is the 3ª infração: 50% VRM, appealable.
	hist, err = s.History(ctx, "12345678000195", c.ID)
	if err != nil || len(hist) != 2 {
		t.Fatalf("history %+v %v", hist, err)
	}
	f2 := sc.Finding
	f2.AlertID = "lapa-bar-01/2026-06-01T02:00:00.000Z"
	d2, err := notice.Build(c, f2, sc.Party, sc.Site, hist, at(6, 1, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	if d2.Kind != notice.KindRelatorio || d2.Penalty.Ordinal != 3 || *d2.Penalty.Percent != 50 || !d2.Penalty.AppealAllowed {
		t.Fatalf("repeat offender: %s %+v", d2.Kind, d2.Penalty)
	}
}

func TestMacabuPunishedDoubles(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	sc := noticetest.Macabu(set)
	c := sc.Code
	ip, err := s.Create(ctx, grounded(t, sc, nil, at(3, 11, 9, 0)), system, at(3, 11, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	var auto *notice.Document
	for _, a := range []notice.Action{
		{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 11, 10, 0), Agent: agent, PrazoDays: 30},
		{Kind: notice.ActAcknowledge, Actor: fiscal, At: at(3, 11, 10, 5), SignedBy: "Dono"},
		{Kind: notice.ActEscalate, Actor: fiscal, At: at(4, 11, 0, 0), FollowUp: followUp(t, s, sc, ip.ID, at(4, 11, 0, 0))},
	} {
		if _, au, err := s.Apply(ctx, c, ip.ID, a); err != nil {
			t.Fatalf("%s: %v", a.Kind, err)
		} else if au != nil {
			auto = au
		}
	}
	if auto == nil || auto.Draft.Penalty.Reincidence {
		t.Fatalf("first auto: %+v", auto)
	}
	yes := true
	for _, a := range []notice.Action{
		{Kind: notice.ActIssue, Actor: fiscal, At: at(4, 11, 9, 0), Agent: agent},
		{Kind: notice.ActRefuse, Actor: fiscal, At: at(4, 11, 9, 30), Witnesses: wits, Declaration: declaration},
		{Kind: notice.ActDecide, Actor: fiscal, At: at(5, 2, 9, 0), Punished: &yes},
	} {
		if _, _, err := s.Apply(ctx, c, auto.ID, a); err != nil {
			t.Fatalf("auto %s: %v", a.Kind, err)
		}
	}
	hist, err := s.History(ctx, sc.Party.Document, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	punished := 0
	for _, h := range hist {
		if h.Punished {
			punished++
		}
	}
	if len(hist) != 2 || punished != 1 {
		t.Fatalf("history %+v", hist)
	}
	f2 := sc.Finding
	f2.AlertID = "macabu-praca-01/2026-06-01T00:00:00.000Z"
	d2, err := notice.Build(c, f2, sc.Party, sc.Site, hist, at(6, 1, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !d2.Penalty.Reincidence || !strings.Contains(d2.Penalty.Text, "em dobro por reincidência (Art. 157)") {
		t.Fatalf("no doubling after autuado e punido: %+v", d2.Penalty)
	}
}

func TestAuditIsAppendOnlyAndChained(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	sc := noticetest.CamposAltos(set)
	rc, err := s.Create(ctx, grounded(t, sc, nil, at(3, 9, 9, 0)), system, at(3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Apply(ctx, sc.Code, rc.ID, notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 9, 10, 0), Agent: agent}); err != nil {
		t.Fatal(err)
	}
	_, auto, err := s.Apply(ctx, sc.Code, rc.ID, notice.Action{Kind: notice.ActEscalate, Actor: fiscal, At: at(3, 9, 11, 0)})
	if err != nil || auto == nil || auto.Draft.RefersTo.ID != rc.ID {
		t.Fatalf("campos altos auto: %+v %v", auto, err)
	}
	// The relatório does not count as an infraction; the draft auto neither.
	if h, _ := s.History(ctx, sc.Party.Document, sc.Code.ID); len(h) != 0 {
		t.Fatalf("history %+v", h)
	}
	s.Close()
	raw := rawDB(t, path)
	for _, q := range []string{`UPDATE cases_audit SET actor_id = 'x'`, `DELETE FROM cases_audit`} {
		if _, err := raw.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "somente inclusão") {
			t.Errorf("%s: %v", q, err)
		}
	}
	// Someone drops the trigger and edits an entry: the chain shows it.
	for _, q := range []string{`DROP TRIGGER cases_audit_no_update`, `UPDATE cases_audit SET actor_name = 'Outro' WHERE seq = 2`} {
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
	if err := s2.VerifyAudit(ctx); err == nil || !strings.Contains(err.Error(), "registro 2 foi alterado") {
		t.Fatalf("tampered trail: %v", err)
	}
}
