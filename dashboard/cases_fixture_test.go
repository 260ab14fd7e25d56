package dashboard

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/tz"
)

// caseIndex adapts internal/cases to the case routes, as internal/central
// does.
type caseIndex struct{ x *cases.Index }

func (c caseIndex) Cases(ctx context.Context, f CaseFilter, now time.Time) (int, any, error) {
	cf := cases.Filter{Municipality: f.Municipality, Overdue: f.Overdue, Actor: f.Actor, Address: f.Address, AlertIDs: f.AlertIDs,
		Sort: f.Sort, Offset: f.Offset, Limit: f.Limit}
	for _, s := range f.States {
		cf.States = append(cf.States, notice.State(s))
	}
	p, err := c.x.List(ctx, cf, now)
	return p.Total, p.Cases, err
}

func (c caseIndex) Party(ctx context.Context, doc string) (any, error) { return c.x.Party(ctx, doc) }

func caseStates() []CaseState {
	var out []CaseState
	for _, s := range cases.States() {
		out = append(out, CaseState{ID: string(s), Label: cases.StateFilterLabel(s)})
	}
	return out
}

// caseStore is a real case store in a temporary directory and its index.
type caseStore struct {
	s   *casesdb.Store
	x   *cases.Index
	set *codes.Set
	api *CasesAPI
}

func newCaseStore(t testing.TB, now func() time.Time) *caseStore {
	t.Helper()
	ctx := context.Background()
	s, err := casesdb.Open(ctx, filepath.Join(t.TempDir(), "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	set := noticetest.Codes()
	x, err := cases.NewIndex(ctx, s, set.Code)
	if err != nil {
		t.Fatal(err)
	}
	api := NewCasesAPI(CasesOptions{Source: caseIndex{x}, States: caseStates(), Municipalities: set.IDs, Now: now})
	return &caseStore{s: s, x: x, set: set, api: api}
}

var (
	caseFiscal = notice.Actor{ID: "fis", Name: "fis", Role: notice.RoleFiscal}
	caseSystem = notice.Actor{ID: "sistema", Name: "Sossego", Role: "system"}
	caseAgent  = &notice.Agent{Name: "Fernanda Fiscal", Matricula: "F-77"}
)

// add drafts a case of scenario sc for alertID at created by the system,
// for party (the scenario's when empty), and applies steps to its
// document as fiscal fis.
func (c *caseStore) add(t testing.TB, sc noticetest.Scenario, alertID, party, address string, created time.Time, steps ...notice.Action) notice.Document {
	t.Helper()
	ctx := context.Background()
	f := sc.Finding
	f.AlertID = alertID
	p := sc.Party
	if party != "" {
		p.Document, p.Name = party, "Estabelecimento "+party
	}
	if address != "" {
		p.Address = address
	}
	grounded := sc
	grounded.Party, grounded.Finding = p, f
	d, err := notice.BuildFrom(sc.Code, f, grounded.Constatacao(), sc.Site, nil, created)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := c.s.Create(ctx, d, caseSystem, created)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range steps {
		if a.Actor.ID == "" {
			a.Actor = caseFiscal
		}
		if doc, _, err = c.s.Apply(ctx, sc.Code, doc.ID, a); err != nil {
			t.Fatalf("%s %s: %v", alertID, a.Kind, err)
		}
	}
	return doc
}

// fill adds n cases spread over the three scenarios' municipalities and
// five situations, one party each, created in the 60 days before now.
func (c *caseStore) fill(t testing.TB, n int, now time.Time) {
	t.Helper()
	scs := []noticetest.Scenario{noticetest.Lapa(c.set), noticetest.Macabu(c.set), noticetest.CamposAltos(c.set)}
	loc := tz.Brasilia()
	for i := range n {
		sc := scs[i%len(scs)]
		created := now.Add(-time.Duration(60*24*(i%997)/997) * time.Hour).In(loc)
		issue := notice.Action{Kind: notice.ActIssue, At: created.Add(time.Hour), Agent: caseAgent}
		if sc.Name != "campos-altos" {
			issue.PrazoDays = 10
		}
		ciente := notice.Action{Kind: notice.ActAcknowledge, At: created.Add(2 * time.Hour), SignedBy: "Responsável"}
		var steps []notice.Action
		switch i % 5 {
		case 1:
			steps = []notice.Action{issue}
		case 2, 3:
			steps = []notice.Action{issue, ciente}
			if sc.Name == "campos-altos" {
				steps = steps[:1] // a relatório gets no ciente
			}
		case 4:
			steps = []notice.Action{{Kind: notice.ActCancel, At: created.Add(time.Hour)}}
		}
		party := fmt.Sprintf("%014d", 10_000_000+i)
		addr := fmt.Sprintf("Rua %d, %d, Centro", i%300, i)
		c.add(t, sc, fmt.Sprintf("%s/fill-%06d", sc.Site.Sensor, i), party, addr, created, steps...)
	}
}
