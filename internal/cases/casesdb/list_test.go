package casesdb_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/cases/casesdb"
)

var bia = notice.Actor{ID: "u-bia", Name: "Bia Fiscal", Role: notice.RoleFiscal}

// caseFixture is a store with five cases in three municipalities, as of
// now = 12/03/2026 12:00 (Brasília).
type caseFixture struct {
	s    *casesdb.Store
	path string
	ids  map[string]string // name → first document's number
	auto *notice.Document  // the Macabu auto de infração
	now  time.Time
}

// makeCase drafts the scenario's document for alertID and applies steps
// to it; it returns the first document and the auto, if one was drawn up.
func makeCase(t *testing.T, s *casesdb.Store, sc noticetest.Scenario, alertID string, created time.Time, steps ...notice.Action) (notice.Document, *notice.Document) {
	t.Helper()
	ctx := context.Background()
	f := sc.Finding
	f.AlertID = alertID
	hist, err := s.History(ctx, sc.Party.Document, sc.Code.ID)
	if err != nil {
		t.Fatal(err)
	}
	k := sc.Constatacao()
	k.AlertID = alertID
	d, err := notice.BuildFrom(sc.Code, f, k, sc.Site, hist, created)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := s.Create(ctx, d, system, created)
	if err != nil {
		t.Fatal(err)
	}
	var auto *notice.Document
	for _, a := range steps {
		id := doc.ID
		if auto != nil {
			id = auto.ID
		}
		if a.Kind == notice.ActEscalate {
			// The auto rests on a constatação after the prazo.
			k := sc.FollowUp(id, a.At.Add(-time.Hour), *sc.Finding.LimitDB+6)
			k.AlertID = alertID
			stored, err := s.RecordConstatacao(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			a.FollowUp = &stored
		}
		_, au, err := s.Apply(ctx, sc.Code, id, a)
		if err != nil {
			t.Fatalf("%s %s: %v", alertID, a.Kind, err)
		}
		if au != nil {
			auto = au
		}
	}
	return doc, auto
}

func newCaseFixture(t *testing.T) *caseFixture {
	t.Helper()
	s, path := open(t)
	lapa, macabu, ca := noticetest.Lapa(set), noticetest.Macabu(set), noticetest.CamposAltos(set)
	f := &caseFixture{s: s, path: path, ids: map[string]string{}, now: at(3, 12, 12, 0)}
	add := func(name string, sc noticetest.Scenario, created time.Time, steps ...notice.Action) {
		d, au := makeCase(t, s, sc, sc.Site.Sensor+"/"+name, created, steps...)
		f.ids[name] = d.ID
		if au != nil {
			f.auto = au
		}
	}
	// A draft nobody issued.
	add("draft", lapa, at(3, 1, 9, 0))
	// Issued by Ana, refused on 09/03 with a 5-day prazo: last day 14/03.
	add("running", lapa, at(3, 9, 9, 0),
		notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 9, 10, 0), Agent: agent, PrazoDays: 5},
		notice.Action{Kind: notice.ActRefuse, Actor: fiscal, At: at(3, 9, 10, 30), Witnesses: wits, Declaration: declaration})
	// Another bar, issued by Bia with 2 days from the ciente on 01/03: ran
	// out on 03/03.
	other := lapa
	other.Party = otherBar
	add("overdue", other, at(3, 1, 9, 0),
		notice.Action{Kind: notice.ActIssue, Actor: bia, At: at(3, 1, 10, 0), Agent: agent, PrazoDays: 2},
		notice.Action{Kind: notice.ActAcknowledge, Actor: bia, At: at(3, 1, 11, 0), SignedBy: "Carlos Dono"})
	// Macabu: the intimação ran out, the auto was issued and refused on 11/03.
	add("auto", macabu, at(3, 1, 9, 0),
		notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 1, 10, 0), Agent: agent, PrazoDays: 5},
		notice.Action{Kind: notice.ActAcknowledge, Actor: fiscal, At: at(3, 1, 10, 5), SignedBy: "Dono"},
		notice.Action{Kind: notice.ActEscalate, Actor: fiscal, At: at(3, 10, 9, 0)},
		notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 11, 9, 0), Agent: agent},
		notice.Action{Kind: notice.ActRefuse, Actor: fiscal, At: at(3, 11, 9, 30), Witnesses: wits, Declaration: declaration})
	// Campos Altos: a relatório de constatação (no prazo), issued by Bia.
	add("relatorio", ca, at(3, 5, 9, 0),
		notice.Action{Kind: notice.ActIssue, Actor: bia, At: at(3, 5, 10, 0), Agent: agent})
	return f
}

// otherBar is the party of the fixture's overdue Lapa case.
var otherBar = notice.Party{Name: "Outro Bar Ltda (fictício)", Document: "11.444.777/0001-61", Address: "Avenida Manoel Pedro, 50, Lapa - PR", Type: "bar"}

func codeOf(id string) (*codes.Code, bool) { return set.Code(id) }

func index(t *testing.T, s *casesdb.Store) *cases.Index {
	t.Helper()
	x, err := cases.NewIndex(context.Background(), s, codeOf)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestListFilters(t *testing.T) {
	f := newCaseFixture(t)
	x := index(t, f.s)
	yes, no := true, false
	for _, tc := range []struct {
		name   string
		filter cases.Filter
		want   []string // names, in order
		total  int
	}{
		// Overdue first, then the nearest deadline (the auto's defence runs
		// past the 14/03 prazo), then cases without one, newest first.
		{"all by deadline", cases.Filter{}, []string{"overdue", "running", "auto", "relatorio", "draft"}, 5},
		{"recent first", cases.Filter{Sort: "recent"}, []string{"auto", "running", "relatorio", "overdue", "draft"}, 5},
		{"municipality", cases.Filter{Municipality: "lapa"}, []string{"overdue", "running", "draft"}, 3},
		{"unknown municipality", cases.Filter{Municipality: "curitiba"}, nil, 0},
		{"drafts", cases.Filter{States: []notice.State{notice.StateDraft}}, []string{"draft"}, 1},
		{"refused (the auto's state counts)", cases.Filter{States: []notice.State{notice.StateRefused}}, []string{"running", "auto"}, 2},
		{"escalated notice is not the case's state", cases.Filter{States: []notice.State{notice.StateEscalated}}, nil, 0},
		{"overdue", cases.Filter{Overdue: &yes}, []string{"overdue"}, 1},
		{"not overdue", cases.Filter{Overdue: &no}, []string{"running", "auto", "relatorio", "draft"}, 4},
		{"mine (Bia created or issued)", cases.Filter{Actor: "u-bia"}, []string{"overdue", "relatorio"}, 2},
		{"mine (Ana)", cases.Filter{Actor: "u-ana"}, []string{"running", "auto"}, 2},
		{"mine (the system drafts every one)", cases.Filter{Actor: "sistema"}, []string{"overdue", "running", "auto", "relatorio", "draft"}, 5},
		{"address, accents and case ignored", cases.Filter{Address: "PRACA JOSÉ bonifácio"}, []string{"auto"}, 1},
		{"address of the site", cases.Filter{Address: "largo da matriz, 7"}, []string{"relatorio"}, 1},
		{"address matches nothing", cases.Filter{Address: "rua inexistente"}, nil, 0},
		{"alert", cases.Filter{AlertIDs: []string{"lapa-bar-01/running", "ca-bar-01/relatorio"}}, []string{"running", "relatorio"}, 2},
		{"party with punctuation", cases.Filter{Party: "529.982.247-25"}, []string{"relatorio"}, 1},
		{"page 2 of size 2", cases.Filter{Offset: 2, Limit: 2}, []string{"auto", "relatorio"}, 5},
		{"offset past the end", cases.Filter{Offset: 10, Limit: 2}, nil, 5},
		{"combined", cases.Filter{Municipality: "lapa", Overdue: &no, Actor: "u-ana"}, []string{"running"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := x.List(context.Background(), tc.filter, f.now)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range p.Cases {
				for name, id := range f.ids {
					if id == c.ID {
						got = append(got, name)
					}
				}
			}
			if !slices.Equal(got, tc.want) || p.Total != tc.total {
				t.Errorf("got %v (total %d), want %v (total %d)", got, p.Total, tc.want, tc.total)
			}
		})
	}
}

func TestListDeadlinesAndLabels(t *testing.T) {
	f := newCaseFixture(t)
	x := index(t, f.s)
	p, err := x.List(context.Background(), cases.Filter{}, f.now)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]cases.Case{}
	for _, c := range p.Cases {
		byID[c.ID] = c
	}
	run := byID[f.ids["running"]]
	if run.StateLabel != "notificação preliminar com recusa testemunhada" || run.Next == nil || run.Next.LastDay != "14/03/2026" ||
		run.Next.DaysLeft != 2 || run.Next.Overdue || run.Overdue || run.Next.ID != "regularizacao" || run.Next.Label != "prazo para regularização" {
		t.Errorf("running case: %s %+v", run.StateLabel, run.Next)
	}
	over := byID[f.ids["overdue"]]
	if over.StateLabel != "notificação preliminar com ciente do notificado" || over.Next == nil || over.Next.LastDay != "03/03/2026" ||
		over.Next.DaysLeft != -9 || !over.Next.Overdue || !over.Overdue {
		t.Errorf("overdue case: %s %+v", over.StateLabel, over.Next)
	}
	if d := byID[f.ids["draft"]]; d.Next != nil || d.StateLabel != "notificação preliminar em rascunho" || d.Kind != notice.KindNotificacaoPreliminar {
		t.Errorf("draft case: %s %+v", d.StateLabel, d.Next)
	}
	if r := byID[f.ids["relatorio"]]; r.Next != nil || r.StateLabel != "relatório de constatação emitido" {
		t.Errorf("relatório: %s %+v", r.StateLabel, r.Next)
	}
	// The auto's case: its state, both documents, and the auto's earliest
	// running deadline by the code's own counting (business days where it
	// says so).
	au := byID[f.ids["auto"]]
	if au.State != notice.StateRefused || au.Kind != notice.KindAuto || au.StateLabel != "auto de infração com recusa testemunhada" ||
		len(au.Documents) != 2 || au.Documents[0].StateLabel != "intimação preliminar convertida em auto de infração" || au.Documents[1].ID != f.auto.ID {
		t.Fatalf("auto case: %+v", au)
	}
	stored, err := f.s.Get(context.Background(), f.auto.ID)
	if err != nil {
		t.Fatal(err)
	}
	var first *notice.DeadlineView
	for _, v := range notice.Deadlines(noticetest.Macabu(set).Code, &stored, f.now) {
		if v.Status == notice.DeadlineRunning && (first == nil || v.End.Before(first.End)) {
			first = &v
		}
	}
	if first == nil {
		t.Fatal("the Macabu auto has no running deadline")
	}
	if au.Next == nil || au.Next.DocumentID != f.auto.ID || !au.Next.End.Equal(first.End) || au.Next.LastDay != first.LastDay ||
		au.Next.Label != first.Label || au.Next.DaysLeft != cases.DaysLeft(first.End, f.now) || au.Overdue {
		t.Errorf("auto deadline %+v, want %+v", au.Next, first)
	}
	if !slices.Equal(au.Actors, []string{"sistema", "u-ana"}) || au.Municipality == "" || au.Party.Document != "11222333000181" {
		t.Errorf("auto case actors %v, municipality %q, party %+v", au.Actors, au.Municipality, au.Party)
	}
}

// TestListFollowsTheStore: an act stored after a list (by this process or
// another one) shows in the next list.
func TestListFollowsTheStore(t *testing.T) {
	ctx := context.Background()
	f := newCaseFixture(t)
	x := index(t, f.s)
	other, err := casesdb.Open(ctx, f.path) // another process's handle on the same file
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	yes := true
	if p, err := x.List(ctx, cases.Filter{Overdue: &yes}, f.now); err != nil || p.Total != 1 {
		t.Fatalf("overdue before: %+v %v", p, err)
	}
	lapa := noticetest.Lapa(set)
	lapa.Party = otherBar
	k := lapa.FollowUp(f.ids["overdue"], at(3, 12, 8, 0), *lapa.Finding.LimitDB+6)
	k.AlertID = "lapa-bar-01/overdue"
	follow, err := other.RecordConstatacao(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Apply(ctx, lapa.Code, f.ids["overdue"], notice.Action{Kind: notice.ActEscalate, Actor: fiscal, At: at(3, 12, 9, 0), FollowUp: &follow}); err != nil {
		t.Fatal(err)
	}
	p, err := x.List(ctx, cases.Filter{AlertIDs: []string{"lapa-bar-01/overdue"}}, f.now)
	if err != nil || p.Total != 1 {
		t.Fatalf("after the auto: %+v %v", p, err)
	}
	c := p.Cases[0]
	if c.State != notice.StateDraft || c.Kind != notice.KindAuto || c.Overdue || c.Next != nil || len(c.Documents) != 2 {
		t.Errorf("the case after its auto was drafted: %s %s overdue=%v next=%+v docs=%d", c.Kind, c.State, c.Overdue, c.Next, len(c.Documents))
	}
	if p, _ := x.List(ctx, cases.Filter{Overdue: &yes}, f.now); p.Total != 0 {
		t.Errorf("still %d overdue", p.Total)
	}
	// A later day: the running prazo (last day 14/03) is overdue on 15/03.
	if p, _ := x.List(ctx, cases.Filter{Overdue: &yes}, at(3, 15, 0, 0)); p.Total != 1 || p.Cases[0].ID != f.ids["running"] || p.Cases[0].Next.DaysLeft != -1 {
		t.Errorf("overdue on 15/03: %+v", p)
	}
	if p, _ := x.List(ctx, cases.Filter{Overdue: &yes}, at(3, 14, 23, 59)); p.Total != 0 {
		t.Errorf("overdue on the last day: %+v", p)
	}
}

func TestPartyHistory(t *testing.T) {
	ctx := context.Background()
	f := newCaseFixture(t)
	x := index(t, f.s)
	lapa := noticetest.Lapa(set)
	h, err := x.Party(ctx, lapa.Party.Document)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Known || h.Party.Name != lapa.Party.Name || h.Party.Document != "12345678000195" || len(h.Documents) != 2 {
		t.Fatalf("party %+v, %d documents", h.Party, len(h.Documents))
	}
	var ids []string
	for _, d := range h.Documents {
		ids = append(ids, d.ID)
		if d.Penalty == "" || d.PenaltyID == "" || d.Ordinal < 1 || d.CaseID != d.ID || d.StateLabel == "" {
			t.Errorf("document %+v", d)
		}
		// Exactly the records Store.History gives the ladder count.
		if want := d.State != notice.StateDraft; d.Counts != want {
			t.Errorf("%s (%s) counts=%v", d.ID, d.State, d.Counts)
		}
	}
	if want := []string{f.ids["draft"], f.ids["running"]}; !slices.Equal(ids, want) {
		t.Errorf("order %v, want %v (oldest first, then by number)", ids, want)
	}
	prior, err := f.s.History(ctx, lapa.Party.Document, "lapa")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Prior["lapa"]) != 1 || !slices.Equal(h.Prior["lapa"], prior) {
		t.Errorf("prior infractions %+v, store history %+v", h.Prior["lapa"], prior)
	}
	// The Macabu party: the auto sits in the intimação's case.
	m, err := x.Party(ctx, "11222333000181")
	if err != nil || len(m.Documents) != 2 || m.Documents[1].CaseID != f.ids["auto"] || m.Documents[1].Kind != notice.KindAuto {
		t.Fatalf("macabu history %+v %v", m, err)
	}
	u, err := x.Party(ctx, "111.444.777-35")
	if err != nil || u.Known || len(u.Documents) != 0 || u.Party.Document != "11144477735" {
		t.Errorf("unknown party %+v %v", u, err)
	}
}

// TestIndexOnFileOfCurrentRelease: a case file made without the list's
// index (the current release) gets it once; its cases list.
func TestIndexOnFileOfCurrentRelease(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cases.db")
	s, err := casesdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	makeCase(t, s, noticetest.Lapa(set), "lapa-bar-01/old", at(3, 1, 9, 0))
	s.Close()
	raw := rawDB(t, path)
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'cases_list_scan'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("index before: %d %v", n, err)
	}
	raw.Close()
	for range 2 {
		s, err = casesdb.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		x := index(t, s)
		p, err := x.List(ctx, cases.Filter{}, at(3, 2, 0, 0))
		if err != nil || p.Total != 1 {
			t.Fatalf("list %+v %v", p, err)
		}
		s.Close()
	}
	raw = rawDB(t, path)
	defer raw.Close()
	var idx, steps int
	raw.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'cases_list_scan'`).Scan(&idx)
	raw.QueryRowContext(ctx, `SELECT count(*) FROM cases_list_migrations`).Scan(&steps)
	if idx != 1 || steps != 1 {
		t.Errorf("index %d, steps recorded %d; want 1 and 1", idx, steps)
	}
}

// TestListConcurrent: lists from several goroutines while acts are stored
// (run with -race).
func TestListConcurrent(t *testing.T) {
	ctx := context.Background()
	f := newCaseFixture(t)
	x := index(t, f.s)
	done := make(chan error, 4)
	for range 4 {
		go func() {
			for range 20 {
				if _, err := x.List(ctx, cases.Filter{Limit: 2}, f.now); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	lapa := noticetest.Lapa(set)
	if _, _, err := f.s.Apply(ctx, lapa.Code, f.ids["draft"], notice.Action{Kind: notice.ActCancel, Actor: fiscal, At: at(3, 12, 9, 0)}); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	p, err := x.List(ctx, cases.Filter{States: []notice.State{notice.StateCancelled}}, f.now)
	if err != nil || p.Total != 1 || p.Cases[0].ID != f.ids["draft"] {
		t.Errorf("cancelled: %+v %v", p, err)
	}
}

// Two edits of a draft in the same millisecond keep its state and its last
// act's instant: the list still shows the second.
func TestListSeesEditsInTheSameMillisecond(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	x := index(t, s)
	sc := noticetest.Lapa(set)
	created := at(3, 9, 9, 0)
	np, err := s.Create(ctx, grounded(t, sc, nil, created), system, created)
	if err != nil {
		t.Fatal(err)
	}
	name := func() string {
		t.Helper()
		p, err := x.List(ctx, cases.Filter{AlertIDs: []string{np.Draft.Finding.AlertID}}, created)
		if err != nil || p.Total != 1 {
			t.Fatalf("list: %+v %v", p, err)
		}
		return p.Cases[0].Party.Name
	}
	if got := name(); got != np.Draft.Party.Name {
		t.Fatalf("before the edits: %q", got)
	}
	edited := at(3, 9, 9, 10) // the injected clock stands still: both edits share one millisecond
	for _, want := range []string{"Bar Primeiro Nome Ltda", "Bar Segundo Nome Ltda"} {
		if _, edits, err := s.Edit(ctx, sc.Code, np.ID, fiscal, edited, []notice.FieldChange{{Field: notice.EditPartyName, Value: want}}); err != nil || len(edits) != 1 {
			t.Fatalf("edit to %q: %+v %v", want, edits, err)
		}
		if got := name(); got != want {
			t.Errorf("after the edit to %q the list shows %q", want, got)
		}
	}
}
