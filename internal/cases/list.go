package cases

// The fiscal's case list ("Casos") and a party's history.
//
// A case is the chain of documents drawn up for one alert: the first
// document (a preliminary notice, or a relatório de constatação where the
// code has none) and the auto de infração that follows it. An alert that
// fired and has no document yet is a case too, in StateAlert ("alerta sem
// ato"): the indício waits for the fiscal's constatação. Its state is the
// state of its latest document; its next deadline is the earliest deadline
// of its documents still running, or one that ran out while the case waits
// for the next act (a notice's regularisation prazo, an auto's defence or
// payment deadline), computed by alerts/notice's own rules (Deadlines,
// DeadlineEnd: calendar or the code's business days, Brasília time).
//
// Index keeps a summary of every document in memory and refreshes it on
// each call from what changed in the store (its Source, casesdb.Store): a
// fingerprint (the documents' count and the audit trail's last entry, which
// every write appends to) says whether anything did; if so, the documents
// with audit entries since and a scan of (id, parent, state, updated_at)
// find the changed ones, and only those are read and decoded. So the list
// is always what the store holds, including acts written by another
// process, and 10,000 cases answer well inside the 200 ms goal
// (BENCHMARKS.md, "Casos").

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
)

// CodeFunc returns the municipal code with id (nil, false if unknown).
type CodeFunc func(id string) (*codes.Code, bool)

// StateAlert is the state of a case whose alert has no document yet.
const StateAlert notice.State = "sem_ato"

// OpenAlert is an alert that opens a case before any document is drawn up:
// an exceedance that fired.
type OpenAlert struct {
	ID           string
	CodeID       string
	Municipality string
	Party        PartyRef // the establishment the sensor watches (empty when the register names none)
	SiteAddress  string
	At           time.Time // when it fired
}

// AlertFunc lists the alerts that open cases (documents or not: Index
// leaves out those that have one).
type AlertFunc func(ctx context.Context) ([]OpenAlert, error)

// Stamp is the stored documents' fingerprint: their count and the audit
// trail's last seq. Every write of a document appends, in its transaction,
// an entry to the trail, whose seq only grows, so an unchanged Stamp means
// every document is unchanged.
type Stamp struct{ Docs, LastAudit int64 }

// ListedDoc is one stored document as the case list reads it.
type ListedDoc struct {
	ID, Parent string
	State      notice.State // the stored column: the authority on the state
	UpdatedAt  int64        // unix ms, as stored
	Party      string       // CNPJ/CPF digits
	CreatedAt  time.Time
	Doc        *notice.Document
	Actors     []string // who created or issued it (audit actor ids)
}

// Source is what the case list reads of the case store (casesdb.Store).
type Source interface {
	// PrepareList readies the store for the list's reads; NewIndex calls
	// it once.
	PrepareList(ctx context.Context) error
	// ListStamp returns the documents' fingerprint.
	ListStamp(ctx context.Context) (Stamp, error)
	// ListStates calls fn with the id, parent, state and last update
	// (unix ms) of every document.
	ListStates(ctx context.Context, fn func(id, parent string, state notice.State, updatedAt int64)) error
	// ListWrittenSince returns the ids with an audit entry after seq.
	ListWrittenSince(ctx context.Context, seq int64) (map[string]bool, error)
	// ListDocs calls fn with each of the documents ids, every document
	// when ids is nil.
	ListDocs(ctx context.Context, ids []string, fn func(ListedDoc)) error
	// Party returns the name and address on record for the party whose
	// CNPJ/CPF digits are key (false: none).
	Party(ctx context.Context, key string) (PartyRef, bool, error)
	// History returns the prior infractions the penalty ladder counts for
	// the party with CNPJ/CPF doc under code.
	History(ctx context.Context, doc, codeID string, exclude ...string) ([]codes.PriorInfraction, error)
}

// Index lists cases and party histories from a Source. Safe for concurrent
// use.
type Index struct {
	s     Source
	codes CodeFunc
	// Alerts, if set (before the first call), lists the alerts that open
	// cases: those without a document are listed in StateAlert.
	Alerts AlertFunc

	mu    sync.Mutex
	docs  map[string]*docSummary
	snap  []*docSummary // docs as a slice, as of print
	print Stamp         // the documents' fingerprint when snap was taken
}

// NewIndex prepares the case list of s; codes gives each document's
// municipal code (for deadlines counted in business days).
func NewIndex(ctx context.Context, s Source, codes CodeFunc) (*Index, error) {
	if err := s.PrepareList(ctx); err != nil {
		return nil, fmt.Errorf("cases: list: %w", err)
	}
	return &Index{s: s, codes: codes, docs: map[string]*docSummary{}}, nil
}

// docSummary is what the list needs of one document.
type docSummary struct {
	ID, Parent   string
	State        notice.State
	UpdatedAt    int64 // unix ms, as stored: the refresh key with State
	Kind         notice.Kind
	Title        string
	CodeID       string
	Municipality string
	AlertID      string
	Party        string // digits
	PartyName    string
	PartyAddress string
	SiteAddress  string
	search       string // folded addresses
	CreatedAt    time.Time
	IssuedAt     time.Time
	CienciaAt    time.Time
	DecidedAt    time.Time
	alertOnly    bool // an alert with no document: ID is empty
	Penalty      codes.PenaltyOutcome
	Punished     *bool
	Actors       []string // who created or issued it (audit actor ids)
	Deadlines    []deadline
}

// deadline is a started, not finished deadline of a document.
type deadline struct {
	DocumentID string
	ID, Label  string
	Article    string
	End        time.Time // exclusive
	LastDay    string    // dd/mm/aaaa
	// Blocking: once over, the case waits for the next act (the
	// regularisation prazo, the auto's defence and payment deadlines); an
	// appeal deadline counted from the decision just ends.
	Blocking bool
}

// Warm reads every document once (the first list after a start decodes
// them all: about a second of CPU for 10,000 cases), so that the first
// fiscal to open the page does not wait for it.
func (x *Index) Warm(ctx context.Context) error {
	_, err := x.refresh(ctx)
	return err
}

// Filter selects cases. Zero values select everything.
type Filter struct {
	Municipality string         // code id, e.g. "lapa"
	States       []notice.State // the state of the case's latest document
	Overdue      *bool          // a deadline ran out and the case waits for the next act
	Actor        string         // cases with a document this user created or issued
	Address      string         // substring of the party's or the site's address, accents and case ignored
	AlertIDs     []string       // the cases of these alerts
	Party        string         // CNPJ/CPF (digits are compared)
	// Sort: "deadline" (default: overdue first, then the nearest deadline,
	// then cases without one, newest first) or "recent" (last act first).
	Sort   string
	Offset int
	Limit  int // 0: every case
}

// DocRef is one document of a case.
type DocRef struct {
	ID         string       `json:"id"`
	Kind       notice.Kind  `json:"kind"`
	Title      string       `json:"title"`
	State      notice.State `json:"state"`
	StateLabel string       `json:"state_label"` // pt-BR
}

// NextDeadline is the deadline a fiscal must watch in a case.
type NextDeadline struct {
	DocumentID string    `json:"document_id"`
	ID         string    `json:"id"`
	Label      string    `json:"label"` // pt-BR
	Article    string    `json:"article,omitempty"`
	End        time.Time `json:"end"`      // exclusive: the start of the day after the last day
	LastDay    string    `json:"last_day"` // dd/mm/aaaa, Brasília
	// DaysLeft counts calendar days from today (Brasília) to the last day:
	// 0 = ends today, negative = ran out that many days ago.
	DaysLeft int  `json:"days_left"`
	Overdue  bool `json:"overdue"`
}

// Case is one row of the case list.
type Case struct {
	ID           string        `json:"id"` // the first document's number
	AlertID      string        `json:"alert_id"`
	CodeID       string        `json:"code_id"`
	Municipality string        `json:"municipality"`
	Party        PartyRef      `json:"party"`
	SiteAddress  string        `json:"site_address,omitempty"`
	State        notice.State  `json:"state"`       // of the latest document
	Kind         notice.Kind   `json:"kind"`        // of the latest document
	StateLabel   string        `json:"state_label"` // pt-BR, e.g. "notificação preliminar emitida"
	Documents    []DocRef      `json:"documents"`
	Next         *NextDeadline `json:"next_deadline"`
	Overdue      bool          `json:"overdue"`
	Actors       []string      `json:"actors"` // who created or issued its documents
	CreatedAt    time.Time     `json:"created_at"`
	UpdatedAt    time.Time     `json:"updated_at"`
	Penalty      string        `json:"penalty,omitempty"` // the latest document's penalty text
}

// PartyRef names a party.
type PartyRef struct {
	Document string `json:"document"` // digits
	Name     string `json:"name"`
	Address  string `json:"address"`
}

// Page is a page of the case list.
type Page struct {
	Total int    `json:"total"`
	Cases []Case `json:"cases"`
}

// List returns the cases matching f at now.
func (x *Index) List(ctx context.Context, f Filter, now time.Time) (Page, error) {
	snap, err := x.refresh(ctx)
	if err != nil {
		return Page{}, err
	}
	snap, err = x.withAlerts(ctx, snap)
	if err != nil {
		return Page{}, err
	}
	kids := make(map[string]*docSummary, len(snap)/2)
	for _, d := range snap {
		if d.Parent != "" {
			kids[d.Parent] = d
		}
	}
	want := func(set []string, v string) bool { return len(set) == 0 || slices.Contains(set, v) }
	addr := fold(f.Address)
	party := Digits(f.Party)
	// Filter and sort light candidates; only the page becomes Cases.
	var out []candidate
	for _, root := range snap {
		if root.Parent != "" {
			continue
		}
		if f.Municipality != "" && root.CodeID != f.Municipality {
			continue
		}
		if !want(f.AlertIDs, root.AlertID) || (party != "" && root.Party != party) {
			continue
		}
		c := candidate{chain: []*docSummary{root}, updated: root.UpdatedAt}
		for len(c.chain) < 8 {
			k := kids[c.chain[len(c.chain)-1].ID]
			if k == nil {
				break
			}
			c.chain = append(c.chain, k)
			c.updated = max(c.updated, k.UpdatedAt)
		}
		last := c.chain[len(c.chain)-1]
		if len(f.States) > 0 && !slices.Contains(f.States, last.State) {
			continue
		}
		if addr != "" && !strings.Contains(root.search, addr) && !strings.Contains(last.search, addr) {
			continue
		}
		if f.Actor != "" && !slices.ContainsFunc(c.chain, func(d *docSummary) bool { return slices.Contains(d.Actors, f.Actor) }) {
			continue
		}
		c.next = nextDeadline(c.chain, now)
		if f.Overdue != nil && (c.next != nil && !now.Before(c.next.End)) != *f.Overdue {
			continue
		}
		out = append(out, c)
	}
	sortCandidates(out, f.Sort)
	p := Page{Total: len(out), Cases: []Case{}}
	lo := min(max(f.Offset, 0), len(out))
	hi := len(out)
	if f.Limit > 0 {
		hi = min(lo+f.Limit, len(out))
	}
	for _, c := range out[lo:hi] {
		p.Cases = append(p.Cases, buildCase(c, now))
	}
	return p, nil
}

// candidate is a case before it is shown: its documents, first to last.
type candidate struct {
	chain   []*docSummary
	next    *deadline
	updated int64
}

func sortCandidates(cs []candidate, by string) {
	recent := func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.updated, a.updated), strings.Compare(b.chain[0].ID, a.chain[0].ID),
			strings.Compare(b.chain[0].AlertID, a.chain[0].AlertID))
	}
	if by == "recent" {
		slices.SortFunc(cs, recent)
		return
	}
	slices.SortFunc(cs, func(a, b candidate) int {
		switch {
		case a.next != nil && b.next != nil:
			if c := a.next.End.Compare(b.next.End); c != 0 {
				return c
			}
		case a.next != nil:
			return -1
		case b.next != nil:
			return 1
		}
		return recent(a, b)
	})
}

// nextDeadline is the earliest deadline of the chain still running at
// now, or over and waiting for the next act.
func nextDeadline(chain []*docSummary, now time.Time) *deadline {
	var next *deadline
	for _, d := range chain {
		for i := range d.Deadlines {
			dl := &d.Deadlines[i]
			if !dl.Blocking && !now.Before(dl.End) {
				continue // an appeal deadline that ended: nothing waits on it
			}
			if next == nil || dl.End.Before(next.End) {
				next = dl
			}
		}
	}
	return next
}

func buildCase(cd candidate, now time.Time) Case {
	root, last := cd.chain[0], cd.chain[len(cd.chain)-1]
	c := Case{ID: root.ID, AlertID: root.AlertID, CodeID: root.CodeID, Municipality: last.Municipality,
		Party: PartyRef{Document: last.Party, Name: last.PartyName, Address: last.PartyAddress}, SiteAddress: root.SiteAddress,
		State: last.State, Kind: last.Kind, StateLabel: StateLabel(last.Kind, last.State), CreatedAt: root.CreatedAt,
		UpdatedAt: time.UnixMilli(cd.updated).UTC(), Penalty: last.Penalty.Text, Actors: []string{}}
	c.Documents = []DocRef{}
	for _, d := range cd.chain {
		if d.alertOnly {
			continue
		}
		c.Documents = append(c.Documents, DocRef{ID: d.ID, Kind: d.Kind, Title: d.Title, State: d.State, StateLabel: StateLabel(d.Kind, d.State)})
		for _, a := range d.Actors {
			if !slices.Contains(c.Actors, a) {
				c.Actors = append(c.Actors, a)
			}
		}
	}
	if n := cd.next; n != nil {
		c.Next = &NextDeadline{DocumentID: n.DocumentID, ID: n.ID, Label: n.Label, Article: n.Article, End: n.End.UTC(),
			LastDay: n.LastDay, DaysLeft: DaysLeft(n.End, now), Overdue: !now.Before(n.End)}
		c.Overdue = c.Next.Overdue
	}
	return c
}

// DaysLeft is the number of calendar days from now's day to the last day
// of a deadline ending (exclusively) at end, both in Brasília time: 0 on
// the last day, negative after it.
func DaysLeft(end, now time.Time) int {
	ly, lm, ld := end.In(saoPaulo).Add(-time.Nanosecond).Date()
	ty, tm, td := now.In(saoPaulo).Date()
	last := time.Date(ly, lm, ld, 12, 0, 0, 0, time.UTC)
	today := time.Date(ty, tm, td, 12, 0, 0, 0, time.UTC)
	return int(last.Sub(today).Hours() / 24)
}

// StateLabel is the pt-BR name of a document's state, in agreement with
// its kind ("notificação preliminar emitida", "auto de infração emitido").
func StateLabel(k notice.Kind, s notice.State) string {
	if s == StateAlert {
		return "alerta sem ato"
	}
	name, fem := kindName(k)
	pick := func(f, m string) string {
		if fem {
			return f
		}
		return m
	}
	var st string
	switch s {
	case notice.StateDraft:
		st = "em rascunho"
	case notice.StateIssued:
		st = pick("emitida", "emitido")
	case notice.StateAcknowledged:
		st = "com ciente do " + pick("notificado", "autuado")
	case notice.StateRefused:
		st = "com recusa testemunhada"
	case notice.StateRegularised:
		st = pick("regularizada", "regularizado")
	case notice.StateEscalated:
		st = pick("convertida em auto de infração", "convertido em auto de infração")
	case notice.StateCancelled:
		st = pick("cancelada", "cancelado")
	case notice.StateDecided:
		st = pick("julgada", "julgado")
	default:
		st = string(s)
	}
	return name + " " + st
}

// kindName is the pt-BR name of a kind and whether it is feminine.
func kindName(k notice.Kind) (string, bool) {
	switch k {
	case notice.KindNotificacaoPreliminar:
		return "notificação preliminar", true
	case notice.KindIntimacaoPreliminar:
		return "intimação preliminar", true
	case notice.KindNotificacaoIntimacao:
		return "notificação/intimação", true
	case notice.KindRelatorio:
		return "relatório de constatação", false
	case notice.KindAuto:
		return "auto de infração", false
	}
	return "documento", false
}

// States lists the states a case may be filtered by.
func States() []notice.State {
	return []notice.State{notice.StateDraft, notice.StateIssued, notice.StateAcknowledged, notice.StateRefused,
		notice.StateRegularised, notice.StateEscalated, notice.StateCancelled, notice.StateDecided, StateAlert}
}

// StateFilterLabel is the pt-BR name of a state in the case filter.
func StateFilterLabel(s notice.State) string {
	if s == StateAlert {
		return StateLabel("", s)
	}
	return s.Label()
}

// withAlerts adds to the documents' summaries one for each alert that
// opens a case and has no document yet.
func (x *Index) withAlerts(ctx context.Context, snap []*docSummary) ([]*docSummary, error) {
	if x.Alerts == nil {
		return snap, nil
	}
	as, err := x.Alerts(ctx)
	if err != nil {
		return nil, fmt.Errorf("cases: list: alerts: %w", err)
	}
	if len(as) == 0 {
		return snap, nil
	}
	drawn := make(map[string]bool, len(snap))
	for _, d := range snap {
		drawn[d.AlertID] = true
	}
	out := slices.Clip(snap)
	for _, a := range as {
		if a.ID == "" || drawn[a.ID] {
			continue
		}
		drawn[a.ID] = true
		out = append(out, &docSummary{AlertID: a.ID, CodeID: a.CodeID, Municipality: a.Municipality, State: StateAlert,
			Party: Digits(a.Party.Document), PartyName: a.Party.Name, PartyAddress: a.Party.Address, SiteAddress: a.SiteAddress,
			search: fold(a.Party.Address + "\n" + a.SiteAddress), CreatedAt: a.At.UTC(), UpdatedAt: a.At.UnixMilli(), alertOnly: true})
	}
	return out, nil
}

// refresh brings the in-memory summaries up to date with the store and
// returns them.
func (x *Index) refresh(ctx context.Context) ([]*docSummary, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	// The fingerprint (the trail's entries a reader sees are always a
	// prefix: writers are serialised) is read before the scan, so a write
	// in between only causes one more scan.
	fp, err := x.s.ListStamp(ctx)
	if err != nil {
		return nil, err
	}
	if x.snap != nil && fp == x.print {
		return x.snap, nil
	}
	// The documents with an audit entry since the snapshot changed, even
	// when an edit kept their state and the millisecond of their last act.
	written := map[string]bool{}
	if x.snap != nil {
		if written, err = x.s.ListWrittenSince(ctx, x.print.LastAudit); err != nil {
			return nil, err
		}
	}
	var changed []string
	seen := make(map[string]bool, len(x.docs))
	err = x.s.ListStates(ctx, func(id, parent string, state notice.State, upd int64) {
		seen[id] = true
		if d := x.docs[id]; d == nil || written[id] || d.State != state || d.UpdatedAt != upd {
			changed = append(changed, id)
		}
	})
	if err != nil {
		return nil, err
	}
	for id := range x.docs {
		if !seen[id] {
			delete(x.docs, id)
		}
	}
	if len(changed) > 0 {
		// All in one scan when many changed (the first call), one by one
		// otherwise.
		ids := changed
		if len(ids) > 200 {
			ids = nil
		}
		if err := x.s.ListDocs(ctx, ids, x.summarise); err != nil {
			return nil, err
		}
	}
	out := make([]*docSummary, 0, len(x.docs))
	for _, d := range x.docs {
		out = append(out, d)
	}
	x.snap, x.print = out, fp
	return out, nil
}

// summarise keeps what the list needs of a stored document.
func (x *Index) summarise(l ListedDoc) {
	d := l.Doc
	s := docSummary{ID: l.ID, Parent: l.Parent, UpdatedAt: l.UpdatedAt, Party: l.Party}
	s.State, s.Kind, s.Title = l.State, d.Draft.Kind, d.Draft.Title
	d.State = s.State // the column is the authority on the state
	s.CodeID, s.Municipality, s.AlertID = d.Draft.CodeID, d.Draft.Municipality, d.Draft.Finding.AlertID
	s.PartyName, s.PartyAddress, s.SiteAddress = d.Draft.Party.Name, d.Draft.Party.Address, d.Draft.Site.Address
	s.search = fold(s.PartyAddress + "\n" + s.SiteAddress)
	s.CreatedAt, s.IssuedAt, s.CienciaAt, s.DecidedAt = l.CreatedAt, d.IssuedAt, d.CienciaAt, d.DecidedAt
	s.Penalty, s.Punished = d.Draft.Penalty, d.Punished
	s.Actors = l.Actors
	s.Deadlines = x.deadlines(d)
	x.docs[s.ID] = &s
}

// deadlines are d's started deadlines that its state has not finished.
func (x *Index) deadlines(d *notice.Document) []deadline {
	var c *codes.Code
	if x.codes != nil {
		c, _ = x.codes(d.Draft.CodeID)
	}
	if c == nil && d.Draft.Kind == notice.KindAuto {
		for _, dl := range d.Draft.Deadlines {
			if dl.Business {
				return nil // business days need the code's calendar
			}
		}
	}
	// Status depends on now only as running vs expired; both mean the
	// deadline started and the document has not moved on.
	var out []deadline
	for _, v := range notice.Deadlines(c, d, d.Draft.Prepared) {
		if v.End.IsZero() || (v.Status != notice.DeadlineRunning && v.Status != notice.DeadlineExpired) {
			continue
		}
		out = append(out, deadline{DocumentID: d.ID, ID: v.ID, Label: v.Label, Article: v.Article, End: v.End, LastDay: v.LastDay,
			Blocking: v.From != "decisao" && v.From != "ciencia_decisao"})
	}
	return out
}

// PartyDoc is one document of a party's history.
type PartyDoc struct {
	ID           string       `json:"id"`
	CaseID       string       `json:"case_id"`
	AlertID      string       `json:"alert_id"`
	Kind         notice.Kind  `json:"kind"`
	Title        string       `json:"title"`
	CodeID       string       `json:"code_id"`
	Municipality string       `json:"municipality"`
	State        notice.State `json:"state"`
	StateLabel   string       `json:"state_label"`
	CreatedAt    time.Time    `json:"created_at"`
	IssuedAt     time.Time    `json:"issued_at,omitzero"`
	CienciaAt    time.Time    `json:"ciencia_at,omitzero"`
	DecidedAt    time.Time    `json:"decided_at,omitzero"`
	PenaltyID    string       `json:"penalty_id"`
	Ordinal      int          `json:"ordinal"` // the ladder step it was drawn up as (1 = 1ª infração)
	Penalty      string       `json:"penalty"` // pt-BR
	AmountBRL    *float64     `json:"amount_brl,omitempty"`
	Punished     *bool        `json:"punished,omitempty"`
	// Counts: the record is one of the prior infractions the penalty
	// ladder counts for this party's next infraction under the code
	// (Source.History).
	Counts bool `json:"counts_as_prior_infraction"`
}

// PartyHistory is everything on record for a CNPJ/CPF.
type PartyHistory struct {
	Party     PartyRef   `json:"party"`
	Known     bool       `json:"known"` // the party is in the store
	Documents []PartyDoc `json:"documents"`
	// Prior lists, per code, the prior infractions the ladder counts
	// (exactly what Source.History gives a new draft).
	Prior map[string][]codes.PriorInfraction `json:"prior_infractions"`
}

// Party returns the history of the party with CNPJ/CPF doc, oldest first.
func (x *Index) Party(ctx context.Context, doc string) (PartyHistory, error) {
	key := Digits(doc)
	h := PartyHistory{Party: PartyRef{Document: key}, Documents: []PartyDoc{}, Prior: map[string][]codes.PriorInfraction{}}
	p, known, err := x.s.Party(ctx, key)
	if err != nil || !known {
		return h, err
	}
	h.Party.Name, h.Party.Address, h.Known = p.Name, p.Address, true
	snap, err := x.refresh(ctx)
	if err != nil {
		return h, err
	}
	parent := map[string]string{}
	for _, d := range snap {
		parent[d.ID] = d.Parent
	}
	root := func(id string) string {
		for i := 0; i < 8 && parent[id] != ""; i++ {
			id = parent[id]
		}
		return id
	}
	var codeIDs []string
	for _, d := range snap {
		if d.Party != key {
			continue
		}
		h.Documents = append(h.Documents, PartyDoc{ID: d.ID, CaseID: root(d.ID), AlertID: d.AlertID, Kind: d.Kind, Title: d.Title,
			CodeID: d.CodeID, Municipality: d.Municipality, State: d.State, StateLabel: StateLabel(d.Kind, d.State), CreatedAt: d.CreatedAt,
			IssuedAt: d.IssuedAt, CienciaAt: d.CienciaAt, DecidedAt: d.DecidedAt, PenaltyID: d.Penalty.PenaltyID, Ordinal: d.Penalty.Ordinal,
			Penalty: d.Penalty.Text, AmountBRL: d.Penalty.AmountBRL, Punished: d.Punished})
		if !slices.Contains(codeIDs, d.CodeID) {
			codeIDs = append(codeIDs, d.CodeID)
		}
	}
	slices.SortFunc(h.Documents, func(a, b PartyDoc) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	for _, c := range codeIDs {
		prior, err := x.s.History(ctx, key, c)
		if err != nil {
			return h, err
		}
		h.Prior[c] = prior
		for _, p := range prior {
			for i := range h.Documents {
				if h.Documents[i].ID == p.Ref {
					h.Documents[i].Counts = true
				}
			}
		}
	}
	return h, nil
}

// fold lower-cases s and drops the Portuguese diacritics, for searches.
func fold(s string) string {
	return folder.Replace(strings.ToLower(strings.TrimSpace(s)))
}

var folder = strings.NewReplacer("á", "a", "à", "a", "â", "a", "ã", "a", "ä", "a", "é", "e", "ê", "e", "è", "e", "ë", "e",
	"í", "i", "î", "i", "ì", "i", "ï", "i", "ó", "o", "ô", "o", "õ", "o", "ò", "o", "ö", "o", "ú", "u", "û", "u", "ù", "u", "ü", "u",
	"ç", "c", "ñ", "n", "º", "o", "ª", "a")
