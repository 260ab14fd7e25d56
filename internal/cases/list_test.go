package cases_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/cases"
)

var set = noticetest.Codes()

func at(m time.Month, d, h, min int) time.Time {
	return time.Date(2026, m, d, h, min, 0, 0, noticetest.SaoPaulo)
}

// fakeSource is an in-memory case store: documents by id, the audit
// trail's last seq and the ids written at each seq.
type fakeSource struct {
	docs     map[string]cases.ListedDoc
	seq      int64
	written  map[int64]string
	loads    [][]string // the ids of every ListDocs call
	scans    int        // ListStates calls
	prepared int
}

func newFakeSource() *fakeSource {
	return &fakeSource{docs: map[string]cases.ListedDoc{}, written: map[int64]string{}}
}

// put stores d (a new document or a new state of one) as written at ms.
func (f *fakeSource) put(d notice.Document, parent string, ms int64) {
	f.seq++
	f.written[f.seq] = d.ID
	created := time.UnixMilli(ms).UTC()
	if old, ok := f.docs[d.ID]; ok {
		created = old.CreatedAt
	}
	f.docs[d.ID] = cases.ListedDoc{ID: d.ID, Parent: parent, State: d.State, UpdatedAt: ms, Party: cases.Digits(d.Draft.Party.Document),
		CreatedAt: created, Doc: &d, Actors: []string{"u-ana"}}
}

func (f *fakeSource) PrepareList(context.Context) error { f.prepared++; return nil }

func (f *fakeSource) ListStamp(context.Context) (cases.Stamp, error) {
	return cases.Stamp{Docs: int64(len(f.docs)), LastAudit: f.seq}, nil
}

func (f *fakeSource) ListStates(_ context.Context, fn func(id, parent string, state notice.State, updatedAt int64)) error {
	f.scans++
	for _, d := range f.docs {
		fn(d.ID, d.Parent, d.State, d.UpdatedAt)
	}
	return nil
}

func (f *fakeSource) ListWrittenSince(_ context.Context, seq int64) (map[string]bool, error) {
	out := map[string]bool{}
	for s, id := range f.written {
		if s > seq {
			out[id] = true
		}
	}
	return out, nil
}

func (f *fakeSource) ListDocs(_ context.Context, ids []string, fn func(cases.ListedDoc)) error {
	f.loads = append(f.loads, ids)
	for _, d := range f.docs {
		if ids == nil || slices.Contains(ids, d.ID) {
			doc := *d.Doc // the store decodes a fresh copy each time
			d.Doc = &doc
			fn(d)
		}
	}
	return nil
}

func (f *fakeSource) Party(_ context.Context, key string) (cases.PartyRef, bool, error) {
	for _, d := range f.docs {
		if d.Party == key {
			p := d.Doc.Draft.Party
			return cases.PartyRef{Document: key, Name: p.Name, Address: p.Address}, true, nil
		}
	}
	return cases.PartyRef{}, false, nil
}

func (f *fakeSource) History(context.Context, string, string, ...string) ([]codes.PriorInfraction, error) {
	return []codes.PriorInfraction{}, nil
}

// draft is the Lapa scenario's notice for alertID, numbered id, in state.
func draft(t *testing.T, id, alertID string, state notice.State) notice.Document {
	t.Helper()
	sc := noticetest.Lapa(set)
	f := sc.Finding
	f.AlertID = alertID
	k := sc.Constatacao()
	k.AlertID = alertID
	d, err := notice.BuildFrom(sc.Code, f, k, sc.Site, nil, at(3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	return notice.Document{ID: id, Draft: d, State: state}
}

// TestIndexReadsOnlyWhatChanged: the first list reads the documents, an
// unchanged store reads none, a changed document is read alone, and the
// list shows its new state.
func TestIndexReadsOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	src := newFakeSource()
	src.put(draft(t, "lapa-NP-2026-000001", "s1/a", notice.StateDraft), "", 1000)
	src.put(draft(t, "lapa-NP-2026-000002", "s1/b", notice.StateDraft), "", 2000)
	x, err := cases.NewIndex(ctx, src, set.Code)
	if err != nil || src.prepared != 1 {
		t.Fatalf("NewIndex: prepared %d times, %v", src.prepared, err)
	}
	now := at(3, 12, 12, 0)
	steps := []struct {
		name   string
		change func()
		scans  int      // ListStates calls after the step
		loads  int      // ListDocs calls after the step
		last   []string // the ids of the last call
		states map[string]notice.State
	}{
		{"first list", func() {}, 1, 1, []string{"lapa-NP-2026-000001", "lapa-NP-2026-000002"},
			map[string]notice.State{"lapa-NP-2026-000001": notice.StateDraft, "lapa-NP-2026-000002": notice.StateDraft}},
		{"nothing changed", func() {}, 1, 1, nil, nil},
		{"one issued", func() { src.put(draft(t, "lapa-NP-2026-000002", "s1/b", notice.StateIssued), "", 3000) }, 2, 2,
			[]string{"lapa-NP-2026-000002"}, map[string]notice.State{"lapa-NP-2026-000002": notice.StateIssued}},
		// An edit keeps the state and the millisecond: the audit trail says it was written.
		{"edited in the same millisecond", func() { src.put(draft(t, "lapa-NP-2026-000001", "s1/a", notice.StateDraft), "", 1000) }, 3, 3,
			[]string{"lapa-NP-2026-000001"}, nil},
	}
	for _, st := range steps {
		st.change()
		p, err := x.List(ctx, cases.Filter{}, now)
		if err != nil || p.Total != 2 {
			t.Fatalf("%s: %+v %v", st.name, p, err)
		}
		if src.scans != st.scans {
			t.Fatalf("%s: %d scans of the states, want %d", st.name, src.scans, st.scans)
		}
		if len(src.loads) != st.loads {
			t.Fatalf("%s: %d reads of documents, want %d", st.name, len(src.loads), st.loads)
		}
		if st.last != nil {
			got := slices.Clone(src.loads[len(src.loads)-1])
			slices.Sort(got)
			if !slices.Equal(got, st.last) {
				t.Errorf("%s: read %v, want %v", st.name, got, st.last)
			}
		}
		for _, c := range p.Cases {
			if want, ok := st.states[c.ID]; ok && c.State != want {
				t.Errorf("%s: case %s in %s, want %s", st.name, c.ID, c.State, want)
			}
		}
	}
}

// TestIndexReadsAllAtOnceWhenManyChanged: past 200 changed documents the
// index asks for every document in one read.
func TestIndexReadsAllAtOnceWhenManyChanged(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		n       int
		wantAll bool
	}{{200, false}, {201, true}} {
		src := newFakeSource()
		d := draft(t, "", "", notice.StateDraft)
		for i := range tc.n {
			d.ID = fmt.Sprintf("lapa-NP-2026-%06d", i+1)
			d.Draft.Finding.AlertID = "s/" + d.ID
			src.put(d, "", int64(1000+i))
		}
		x, err := cases.NewIndex(ctx, src, set.Code)
		if err != nil {
			t.Fatal(err)
		}
		p, err := x.List(ctx, cases.Filter{Limit: 1}, at(3, 12, 12, 0))
		if err != nil || p.Total != tc.n {
			t.Fatalf("%d documents: %d listed, %v", tc.n, p.Total, err)
		}
		if got := len(src.loads) == 1 && src.loads[0] == nil; got != tc.wantAll {
			t.Errorf("%d documents: one read of all = %v, want %v (reads %d)", tc.n, got, tc.wantAll, len(src.loads))
		}
	}
}

// TestIndexPartyUnknown: a CNPJ/CPF with nothing on record is not known
// and lists no documents.
func TestIndexPartyUnknown(t *testing.T) {
	ctx := context.Background()
	src := newFakeSource()
	src.put(draft(t, "lapa-NP-2026-000001", "s1/a", notice.StateIssued), "", 1000)
	x, err := cases.NewIndex(ctx, src, set.Code)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doc   string
		known bool
		docs  int
	}{
		{noticetest.Lapa(set).Party.Document, true, 1},
		{"11.222.333/0001-81", false, 0},
	} {
		h, err := x.Party(ctx, tc.doc)
		if err != nil || h.Known != tc.known || len(h.Documents) != tc.docs {
			t.Errorf("party %s: known %v, %d documents, %v; want %v, %d", tc.doc, h.Known, len(h.Documents), err, tc.known, tc.docs)
		}
	}
}

func TestDaysLeft(t *testing.T) {
	end := time.Date(2026, 3, 15, 0, 0, 0, 0, noticetest.SaoPaulo) // last day 14/03
	for _, tc := range []struct {
		now  time.Time
		want int
	}{
		{at(3, 12, 0, 0), 2},
		{at(3, 14, 0, 0), 0},
		{at(3, 14, 23, 59), 0},
		{at(3, 15, 0, 0), -1},
		// 01:30 UTC on 15/03 is still 14/03 in Brasília.
		{time.Date(2026, 3, 15, 1, 30, 0, 0, time.UTC), 0},
		{at(4, 14, 12, 0), -31},
	} {
		if got := cases.DaysLeft(end, tc.now); got != tc.want {
			t.Errorf("DaysLeft at %s = %d, want %d", tc.now, got, tc.want)
		}
	}
}

func TestStateLabelAgrees(t *testing.T) {
	for _, tc := range []struct {
		k    notice.Kind
		s    notice.State
		want string
	}{
		{notice.KindNotificacaoPreliminar, notice.StateIssued, "notificação preliminar emitida"},
		{notice.KindIntimacaoPreliminar, notice.StateRegularised, "intimação preliminar regularizada"},
		{notice.KindAuto, notice.StateIssued, "auto de infração emitido"},
		{notice.KindAuto, notice.StateAcknowledged, "auto de infração com ciente do autuado"},
		{notice.KindAuto, notice.StateDecided, "auto de infração julgado"},
		{notice.KindRelatorio, notice.StateCancelled, "relatório de constatação cancelado"},
		{notice.KindNotificacaoIntimacao, notice.StateEscalated, "notificação/intimação convertida em auto de infração"},
	} {
		if got := cases.StateLabel(tc.k, tc.s); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.k, tc.s, got, tc.want)
		}
	}
	for _, s := range cases.States() {
		if l := cases.StateLabel(notice.KindAuto, s); strings.Contains(l, string(s)) {
			t.Errorf("state %s has no label: %q", s, l)
		}
	}
}
