package notify

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts"
)

// Class is how alerts are grouped besides their municipality.
type Class string

// Classes of alerts.
const (
	ClassLevel  Class = "level"   // an exceedance of the limit in force
	ClassNoData Class = "no_data" // a silent sensor or an offline gateway
	ClassClock  Class = "clock"   // an exceedance stamped by an unsynchronised gateway clock: its time is uncertain
)

// ClassOf returns the class of an alert.
func ClassOf(a alerts.Alert) Class {
	switch {
	case a.Kind == alerts.KindNoData:
		return ClassNoData
	case a.Kind == alerts.Kind(ClassClock) || a.UnsyncedRecords > 0:
		return ClassClock
	}
	return ClassLevel
}

// GroupKey is the routing key of an alert: municipality and class.
func GroupKey(a alerts.Alert) string { return a.Municipality + "/" + string(ClassOf(a)) }

// Phase is where a tracked alert is in the notification flow.
type Phase string

// Phases.
const (
	PhaseQueued    Phase = "queued"    // firing; waits for its group's next message
	PhaseSilenced  Phase = "silenced"  // firing under a silence: recorded, not sent
	PhaseNotified  Phase = "notified"  // a message went out (or the page was merged into an earlier one)
	PhaseResolving Phase = "resolving" // resolved after a message; the closing message waits for the group
)

// Tracked is one alert the engine follows.
type Tracked struct {
	Alert      alerts.Alert `json:"alert"`
	Group      string       `json:"group"`
	Phase      Phase        `json:"phase"`
	ReceivedAt time.Time    `json:"received_at"` // when the service received its firing
	Acked      bool         `json:"acked,omitempty"`
	AckedBy    string       `json:"acked_by,omitempty"`
	Silence    string       `json:"silence,omitempty"` // id of the silence muting it
	Told       []string     `json:"told,omitempty"`    // users who received a message about it
}

// Group is the notification state of one (municipality, class).
type Group struct {
	Key          string               `json:"key"`
	Municipality string               `json:"municipality"`
	Class        Class                `json:"class"`
	LastSent     time.Time            `json:"last_sent,omitzero"`
	FlushAt      time.Time            `json:"flush_at,omitzero"` // zero: nothing due
	Paged        map[string]time.Time `json:"paged,omitempty"`   // sensor → last page about it
	PagedTo      map[string][]string  `json:"paged_to,omitempty"`
}

// Page is one open escalation step: Users were called about Alerts and
// have until Deadline to acknowledge before the next step.
type Page struct {
	Notification string    `json:"notification"`
	Group        string    `json:"group"`
	Step         int       `json:"step"` // 0 on duty, 1 next in the schedule, 2 coordinator
	Users        []string  `json:"users"`
	Called       []string  `json:"called"` // everyone called in this chain so far
	Alerts       []string  `json:"alerts"`
	Deadline     time.Time `json:"deadline"`
}

// State is everything the engine remembers; the delivery shell persists it
// (JSON) with the messages each step produced, so a restart continues.
type State struct {
	Seq          uint64              `json:"seq"`
	Alerts       map[string]*Tracked `json:"alerts"`
	Groups       map[string]*Group   `json:"groups"`
	Pages        []Page              `json:"pages"`
	SilencesDone map[string]bool     `json:"silences_done,omitempty"` // ended silences already reported
}

// NewState returns an empty state.
func NewState() *State {
	return &State{Alerts: map[string]*Tracked{}, Groups: map[string]*Group{}, SilencesDone: map[string]bool{}}
}

func (st *State) init() {
	if st.Alerts == nil {
		st.Alerts = map[string]*Tracked{}
	}
	if st.Groups == nil {
		st.Groups = map[string]*Group{}
	}
	if st.SilencesDone == nil {
		st.SilencesDone = map[string]bool{}
	}
}

// Ack says a user acknowledged an alert.
type Ack struct {
	AlertID string    `json:"alert_id"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
}

// Input is one thing that happened: an alert transition, an
// acknowledgement, or nothing (a tick: time passed).
type Input struct {
	Event      *alerts.Event
	Ack        *Ack
	ReceivedAt time.Time // when the service received it (wall clock); zero → now
}

// World is what the engine reads besides its state: the validated
// settings and the silences (active, future and recently ended).
type World struct {
	Policy   *Policy
	Silences []Silence
}

// Type is what a message is about.
type Type string

// Message types.
const (
	TypeFiring     Type = "firing"     // new alerts for the fiscal on duty
	TypeEscalation Type = "escalation" // nobody acknowledged: the next step
	TypeResolved   Type = "resolved"   // alerts a user was told about closed
	TypeTest       Type = "test"       // the settings page's test button
)

// Notification is one message to one user, to be delivered on every
// channel the user has.
type Notification struct {
	ID            string         `json:"id"`
	Type          Type           `json:"type"`
	Group         string         `json:"group"`
	Municipality  string         `json:"municipality"`
	Class         Class          `json:"class"`
	Step          int            `json:"step"`
	User          string         `json:"user"`
	Called        []string       `json:"called,omitempty"` // escalation: who was called before
	Alerts        []alerts.Alert `json:"alerts"`
	At            time.Time      `json:"at"`
	ReceivedAt    time.Time      `json:"received_at"` // earliest receipt of its alerts (latency)
	EscalateAfter time.Duration  `json:"escalate_after"`
}

// EntryKind names a line of an alert's notification history.
type EntryKind string

// History entries written by the engine (the shell adds the deliveries').
const (
	EntryQueued      EntryKind = "queued"       // waiting for the group's message
	EntrySilenced    EntryKind = "silenced"     // under a silence: not sent
	EntryUnsilenced  EntryKind = "unsilenced"   // the silence ended while the alert is still on
	EntryNotified    EntryKind = "notified"     // a message to a user was produced
	EntrySuppressed  EntryKind = "suppressed"   // same sensor paged within the group interval
	EntryNoRecipient EntryKind = "no_recipient" // nobody on duty and no coordinator
	EntryEscalated   EntryKind = "escalated"
	EntryExhausted   EntryKind = "exhausted" // every step called, nobody acknowledged
	EntryAcked       EntryKind = "acked"
	EntryResolved    EntryKind = "resolved" // resolved: escalation stops; closing message if one was sent
	EntryDropped     EntryKind = "dropped"  // resolved before anything was sent, or a flap
)

// Entry is one line of an alert's notification history.
type Entry struct {
	AlertID      string    `json:"alert_id"`
	At           time.Time `json:"at"`
	Kind         EntryKind `json:"kind"`
	Notification string    `json:"notification,omitempty"`
	User         string    `json:"user,omitempty"`
	Detail       string    `json:"detail"` // pt-BR
}

// Result is what one step decided.
type Result struct {
	Notifications []Notification
	Log           []Entry
	SilencesEnded []Silence // silences that ended (expired or ended early) since the last step
	Undeliverable int       // alerts nobody could be called about
	Next          time.Time // when to step again without input; zero: only on input
}

// Step applies one input at now and returns what to send and record. It
// does no I/O and reads no clock: every instant comes from in and now.
//
// Rules (docs/notifications.md):
//   - Alerts are grouped by municipality and class (level, no_data, clock).
//     A group's first message waits Grouping.Wait after its first alert (0
//     for level alerts: at once); later messages of the group go out at
//     most every Grouping.Interval, each carrying every alert gathered
//     meanwhile. A storm of no_data alerts is therefore one message.
//   - A firing alert of a sensor that was paged less than Interval ago is
//     not paged again (fire, resolve, fire again); its escalation clock
//     starts anyway. A sensor that resolved and fired again before the
//     closing message went out gets neither message.
//   - A message goes to every fiscal on duty (weekly schedule, exceptions
//     for a date replace it); with nobody on duty, to the coordinator.
//   - Not acknowledged within the municipality's EscalateAfter, the alerts
//     still firing go to the next person on duty after the ones called,
//     then to the coordinator; then the chain ends. An acknowledgement, a
//     resolution or a silence takes an alert out of its chain.
//   - An alert under an active silence (its sensor or establishment) is
//     recorded and not sent; if it is still firing when the silence ends,
//     it is sent then.
//   - Users who were told about an alert get a closing message when it
//     resolves (grouped like the rest).
func Step(st *State, w World, in Input, now time.Time) Result {
	st.init()
	var r Result
	recv := in.ReceivedAt
	if recv.IsZero() {
		recv = now
	}
	if in.Event != nil {
		st.event(w, *in.Event, recv, now, &r)
	}
	if in.Ack != nil {
		st.ack(*in.Ack, now, &r)
	}
	st.silences(w, now, &r)
	st.flush(w, now, &r)
	st.escalate(w, now, &r)
	st.prune(w, now)
	r.Next = st.next(w, now)
	return r
}

func (st *State) group(w World, a alerts.Alert) *Group {
	key := GroupKey(a)
	g := st.Groups[key]
	if g == nil {
		g = &Group{Key: key, Municipality: a.Municipality, Class: ClassOf(a)}
		st.Groups[key] = g
	}
	return g
}

func timing(w World, c Class) Timing {
	if w.Policy == nil {
		return DefaultGrouping.Of(c)
	}
	return w.Policy.Settings.Grouping.Of(c)
}

// schedule makes the group flush: after Wait when it has been quiet for an
// Interval, else at the end of the current Interval.
func (g *Group) schedule(t Timing, now time.Time) {
	at := now.Add(t.Wait.D())
	if !g.LastSent.IsZero() && now.Before(g.LastSent.Add(t.Interval.D())) {
		at = g.LastSent.Add(t.Interval.D())
	}
	if g.FlushAt.IsZero() || at.Before(g.FlushAt) {
		g.FlushAt = at
	}
}

func (r *Result) log(a string, at time.Time, k EntryKind, notif, user, format string, args ...any) {
	r.Log = append(r.Log, Entry{AlertID: a, At: at, Kind: k, Notification: notif, User: user, Detail: fmt.Sprintf(format, args...)})
}

var localFmt = "02/01/2006 15:04"

func localTime(w World, m string, t time.Time) string {
	_, loc, _ := w.Policy.Municipality(m)
	return t.In(loc).Format(localFmt)
}

func (st *State) event(w World, ev alerts.Event, recv, now time.Time, r *Result) {
	a := ev.Alert
	switch ev.Kind {
	case alerts.EventFiring, alerts.EventNoData:
		if a.ID == "" || st.Alerts[a.ID] != nil {
			return // replayed: already followed
		}
		g := st.group(w, a)
		t := &Tracked{Alert: a, Group: g.Key, Phase: PhaseQueued, ReceivedAt: recv}
		st.Alerts[a.ID] = t
		if s, ok := silencedBy(w.Silences, a, now); ok {
			t.Phase, t.Silence = PhaseSilenced, s.ID
			r.log(a.ID, now, EntrySilenced, "", "", "silenciado (%s até %s: %s): registrado, não enviado",
				s.Target(), localTime(w, a.Municipality, s.End()), s.Reason)
			return
		}
		g.schedule(timing(w, g.Class), now)
		if g.FlushAt.After(now) {
			r.log(a.ID, now, EntryQueued, "", "", "agrupado com os alertas de %s: mensagem às %s",
				groupLabel(g), localTime(w, a.Municipality, g.FlushAt))
		}
	case alerts.EventResolved, alerts.EventDataBack, alerts.EventCancelled:
		t := st.Alerts[a.ID]
		if t == nil {
			return
		}
		t.Alert = a
		switch t.Phase {
		case PhaseQueued:
			r.log(a.ID, now, EntryDropped, "", "", "encerrado antes do envio: nenhuma mensagem enviada")
			delete(st.Alerts, a.ID)
		case PhaseSilenced:
			r.log(a.ID, now, EntryResolved, "", "", "encerrado durante o silêncio")
			delete(st.Alerts, a.ID)
		case PhaseNotified:
			inChain := st.unpage(a.ID)
			if len(t.Told) == 0 {
				if inChain {
					r.log(a.ID, now, EntryResolved, "", "", "encerrado: escalonamento interrompido")
				}
				delete(st.Alerts, a.ID)
				return
			}
			t.Phase = PhaseResolving
			g := st.Groups[t.Group]
			if g == nil {
				g = st.group(w, a)
			}
			g.schedule(timing(w, g.Class), now)
			detail := "encerrado: mensagem de encerramento para " + strings.Join(t.Told, ", ")
			if inChain {
				detail += "; escalonamento interrompido"
			}
			r.log(a.ID, now, EntryResolved, "", "", "%s", detail)
		}
	}
}

// unpage takes an alert out of every escalation chain; it reports whether
// it was in one.
func (st *State) unpage(id string) bool {
	found := false
	for i := range st.Pages {
		p := &st.Pages[i]
		if j := slices.Index(p.Alerts, id); j >= 0 {
			p.Alerts = slices.Delete(p.Alerts, j, j+1)
			found = true
		}
	}
	st.Pages = slices.DeleteFunc(st.Pages, func(p Page) bool { return len(p.Alerts) == 0 })
	return found
}

func (st *State) ack(a Ack, now time.Time, r *Result) {
	t := st.Alerts[a.AlertID]
	if t == nil || t.Acked {
		return
	}
	t.Acked, t.AckedBy = true, a.By
	switch t.Phase {
	case PhaseQueued:
		t.Phase = PhaseNotified
		r.log(a.AlertID, now, EntryAcked, "", a.By, "reconhecido por %s antes do envio: nenhuma mensagem será enviada", a.By)
	case PhaseNotified:
		if st.unpage(a.AlertID) {
			r.log(a.AlertID, now, EntryAcked, "", a.By, "reconhecido por %s: escalonamento encerrado", a.By)
		} else {
			r.log(a.AlertID, now, EntryAcked, "", a.By, "reconhecido por %s", a.By)
		}
	}
}

func (st *State) sortedAlerts() []*Tracked {
	out := make([]*Tracked, 0, len(st.Alerts))
	for _, t := range st.Alerts {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ReceivedAt.Equal(out[j].ReceivedAt) {
			return out[i].ReceivedAt.Before(out[j].ReceivedAt)
		}
		return out[i].Alert.ID < out[j].Alert.ID
	})
	return out
}

func (st *State) silences(w World, now time.Time, r *Result) {
	for _, t := range st.sortedAlerts() {
		s, muted := silencedBy(w.Silences, t.Alert, now)
		switch {
		case t.Phase == PhaseSilenced && !muted:
			t.Phase, t.Silence = PhaseQueued, ""
			g := st.Groups[t.Group]
			if g == nil {
				g = st.group(w, t.Alert)
			}
			g.schedule(timing(w, g.Class), now)
			r.log(t.Alert.ID, now, EntryUnsilenced, "", "", "silêncio encerrado com o alerta ainda ativo: será notificado")
		case t.Phase == PhaseSilenced:
			t.Silence = s.ID
		case t.Phase == PhaseQueued && muted:
			t.Phase, t.Silence = PhaseSilenced, s.ID
			r.log(t.Alert.ID, now, EntrySilenced, "", "", "silenciado (%s até %s: %s): não enviado",
				s.Target(), localTime(w, t.Alert.Municipality, s.End()), s.Reason)
		case t.Phase == PhaseNotified && muted && t.Silence != s.ID:
			t.Silence = s.ID
			if st.unpage(t.Alert.ID) {
				r.log(t.Alert.ID, now, EntrySilenced, "", "", "silenciado (%s: %s): escalonamento encerrado", s.Target(), s.Reason)
			}
		}
	}
	known := map[string]bool{}
	for _, s := range w.Silences {
		known[s.ID] = true
		if !s.End().After(now) && !st.SilencesDone[s.ID] {
			st.SilencesDone[s.ID] = true
			r.SilencesEnded = append(r.SilencesEnded, s)
		}
	}
	for id := range st.SilencesDone {
		if !known[id] {
			delete(st.SilencesDone, id)
		}
	}
}

func (st *State) newID() string {
	st.Seq++
	return fmt.Sprintf("n%08d", st.Seq)
}

func groupLabel(g *Group) string {
	switch g.Class {
	case ClassNoData:
		return g.Municipality + " (sem dados)"
	case ClassClock:
		return g.Municipality + " (relógio não sincronizado)"
	}
	return g.Municipality + " (nível)"
}

// recipients returns who is called first in a municipality: the fiscais on
// duty, else the coordinator.
func recipients(w World, muni string, now time.Time) (users []string, why string) {
	m, loc, ok := w.Policy.Municipality(muni)
	if !ok {
		return nil, "o município " + muni + " não tem plantão configurado"
	}
	d := OnDuty(m, loc, now)
	if len(d.Users) > 0 {
		return d.Users, "plantão"
	}
	if m.Coordinator != "" {
		return []string{m.Coordinator}, "coordenação (ninguém de plantão agora)"
	}
	return nil, "ninguém de plantão em " + muni + " e nenhum coordenador configurado"
}

func escalateAfter(w World, muni string) time.Duration {
	m, _, ok := w.Policy.Municipality(muni)
	if !ok {
		return DefaultEscalateAfter * time.Minute
	}
	return m.EscalateAfter()
}

func (st *State) flush(w World, now time.Time, r *Result) {
	keys := make([]string, 0, len(st.Groups))
	for k, g := range st.Groups {
		if !g.FlushAt.IsZero() && !g.FlushAt.After(now) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		st.flushGroup(w, st.Groups[k], now, r)
	}
}

func (st *State) flushGroup(w World, g *Group, now time.Time, r *Result) {
	g.FlushAt = time.Time{}
	firing, resolving := st.groupAlerts(g, now, r)
	after := escalateAfter(w, g.Municipality)
	send := st.suppressRefires(w, g, firing, after, now, r)
	sent := st.pageFiring(w, g, send, after, now, r)
	if st.notifyResolved(g, resolving, now, r) {
		sent = true
	}
	if sent {
		g.LastSent = now
	}
}

// groupAlerts returns g's alerts waiting to be sent, firing and resolving.
// A sensor that resolved and fired again gets no closing message: its
// resolved alert is dropped.
func (st *State) groupAlerts(g *Group, now time.Time, r *Result) (firing, resolving []*Tracked) {
	for _, t := range st.sortedAlerts() {
		if t.Group != g.Key {
			continue
		}
		switch t.Phase {
		case PhaseQueued:
			firing = append(firing, t)
		case PhaseResolving:
			resolving = append(resolving, t)
		}
	}
	resolving = slices.DeleteFunc(resolving, func(x *Tracked) bool {
		for _, f := range firing {
			if f.Alert.Sensor == x.Alert.Sensor {
				r.log(x.Alert.ID, now, EntryDropped, "", "", "sem mensagem de encerramento: o sensor voltou a disparar (alerta %s)", f.Alert.ID)
				delete(st.Alerts, x.Alert.ID)
				return true
			}
		}
		return false
	})
	return firing, resolving
}

// suppressRefires returns the firing alerts to send. One whose sensor was
// paged within the group's interval is not paged again but escalates: it
// joins a page to those it was sent to before.
func (st *State) suppressRefires(w World, g *Group, firing []*Tracked, after time.Duration, now time.Time, r *Result) (send []*Tracked) {
	tm := timing(w, g.Class)
	merged := map[string]*Page{}
	for _, f := range firing {
		last, ok := g.Paged[f.Alert.Sensor]
		if !ok || !f.ReceivedAt.Before(last.Add(tm.Interval.D())) {
			send = append(send, f)
			continue
		}
		to := g.PagedTo[f.Alert.Sensor]
		f.Phase = PhaseNotified
		r.log(f.Alert.ID, now, EntrySuppressed, "", "", "não enviado de novo: o sensor %s foi notificado às %s, dentro do intervalo do grupo (%s); o escalonamento segue se ninguém reconhecer",
			f.Alert.Sensor, localTime(w, g.Municipality, last), tm.Interval.D())
		key := strings.Join(to, ",")
		p := merged[key]
		if p == nil {
			p = &Page{Group: g.Key, Step: 0, Users: slices.Clone(to), Called: slices.Clone(to), Deadline: now.Add(after)}
			merged[key] = p
		}
		p.Alerts = append(p.Alerts, f.Alert.ID)
		f.Told = union(f.Told, to)
	}
	for _, key := range sortedKeys(merged) {
		st.Pages = append(st.Pages, *merged[key])
	}
	return send
}

// pageFiring sends the firing alerts send to who is called first in the
// municipality, one notification each, and opens their page; it reports
// whether it sent any.
func (st *State) pageFiring(w World, g *Group, send []*Tracked, after time.Duration, now time.Time, r *Result) bool {
	if len(send) == 0 {
		return false
	}
	users, why := recipients(w, g.Municipality, now)
	if len(users) == 0 {
		for _, f := range send {
			f.Phase = PhaseNotified
			r.Undeliverable++
			r.log(f.Alert.ID, now, EntryNoRecipient, "", "", "sem destinatário: %s", why)
		}
		return false
	}
	page := Page{Group: g.Key, Step: 0, Users: users, Called: slices.Clone(users), Deadline: now.Add(after)}
	for _, u := range users {
		n := Notification{ID: st.newID(), Type: TypeFiring, Group: g.Key, Municipality: g.Municipality, Class: g.Class,
			User: u, At: now, EscalateAfter: after}
		for _, f := range send {
			n.Alerts = append(n.Alerts, f.Alert)
			if n.ReceivedAt.IsZero() || f.ReceivedAt.Before(n.ReceivedAt) {
				n.ReceivedAt = f.ReceivedAt
			}
			r.log(f.Alert.ID, now, EntryNotified, n.ID, u, "mensagem para %s (%s)", u, why)
		}
		if page.Notification == "" {
			page.Notification = n.ID
		}
		r.Notifications = append(r.Notifications, n)
	}
	if g.Paged == nil {
		g.Paged, g.PagedTo = map[string]time.Time{}, map[string][]string{}
	}
	for _, f := range send {
		f.Phase = PhaseNotified
		f.Told = union(f.Told, users)
		page.Alerts = append(page.Alerts, f.Alert.ID)
		g.Paged[f.Alert.Sensor] = now
		g.PagedTo[f.Alert.Sensor] = users
	}
	st.Pages = append(st.Pages, page)
	return true
}

// notifyResolved tells everyone told of the resolving alerts that they
// ended, one notification per user, and forgets the alerts; it reports
// whether it sent any.
func (st *State) notifyResolved(g *Group, resolving []*Tracked, now time.Time, r *Result) bool {
	byUser := map[string][]*Tracked{}
	for _, t := range resolving {
		for _, u := range t.Told {
			byUser[u] = append(byUser[u], t)
		}
	}
	sent := false
	for _, u := range sortedKeys(byUser) {
		n := Notification{ID: st.newID(), Type: TypeResolved, Group: g.Key, Municipality: g.Municipality, Class: g.Class,
			User: u, At: now}
		for _, t := range byUser[u] {
			n.Alerts = append(n.Alerts, t.Alert)
			r.log(t.Alert.ID, now, EntryNotified, n.ID, u, "mensagem de encerramento para %s", u)
		}
		n.ReceivedAt = now
		r.Notifications = append(r.Notifications, n)
		sent = true
	}
	for _, t := range resolving {
		delete(st.Alerts, t.Alert.ID)
	}
	return sent
}

// escalate sends each page unacknowledged by its deadline to the next
// step: the next on duty, then the coordinator; past them it logs the
// escalation as exhausted.
func (st *State) escalate(w World, now time.Time, r *Result) {
	due, keep := splitDue(st.Pages, now)
	if len(due) == 0 {
		return
	}
	st.Pages = keep
	es := escalations{notes: map[escTarget]*Notification{}, pages: map[escTarget]*Page{}}
	for _, p := range due {
		left := st.unacked(p)
		if len(left) == 0 {
			continue
		}
		g := st.Groups[p.Group]
		muni := left[0].Alert.Municipality
		if g != nil {
			muni = g.Municipality
		}
		m, loc, _ := w.Policy.Municipality(muni)
		step, to, why := nextStep(m, loc, now, p)
		if to == "" {
			for _, t := range left {
				r.log(t.Alert.ID, now, EntryExhausted, "", "", "escalonamento esgotado: ninguém reconheceu (chamados: %s)", strings.Join(p.Called, ", "))
			}
			continue
		}
		n, pg := es.get(st, escTarget{p.Group, step, to}, g, muni, m, now)
		pg.Called = union(pg.Called, union(p.Called, []string{to}))
		n.Called = union(n.Called, p.Called)
		for _, t := range left {
			n.Alerts = append(n.Alerts, t.Alert)
			pg.Alerts = append(pg.Alerts, t.Alert.ID)
			t.Told = union(t.Told, []string{to})
			r.log(t.Alert.ID, now, EntryEscalated, n.ID, to, "sem reconhecimento em %s: escalonado para %s (%s; chamados antes: %s)",
				n.EscalateAfter, to, why, strings.Join(p.Called, ", "))
		}
	}
	for _, k := range es.order {
		r.Notifications = append(r.Notifications, *es.notes[k])
		st.Pages = append(st.Pages, *es.pages[k])
	}
}

// splitDue separates the pages whose deadline has come from those still
// waiting, each in order.
func splitDue(pages []Page, now time.Time) (due, keep []Page) {
	for _, p := range pages {
		if !p.Deadline.After(now) {
			due = append(due, p)
		} else {
			keep = append(keep, p)
		}
	}
	return due, keep
}

// unacked are the alerts of page p still notified and not acknowledged.
func (st *State) unacked(p Page) []*Tracked {
	var left []*Tracked
	for _, id := range p.Alerts {
		if t := st.Alerts[id]; t != nil && t.Phase == PhaseNotified && !t.Acked {
			left = append(left, t)
		}
	}
	return left
}

// nextStep is who a page unanswered by its deadline goes to: after the
// first call, the next on duty not yet called (step 1); then, or when no
// one else is on duty, the coordinator if not yet called (step 2). An
// empty to means escalation is exhausted.
func nextStep(m Municipality, loc *time.Location, now time.Time, p Page) (step int, to, why string) {
	step = p.Step + 1
	if step == 1 {
		if to = NextOnDuty(m, loc, now, p.Called); to != "" {
			why = "próximo da escala"
		} else {
			step = 2
		}
	}
	if step == 2 && m.Coordinator != "" && !slices.Contains(p.Called, m.Coordinator) {
		to, why = m.Coordinator, "coordenação"
	}
	return step, to, why
}

// escTarget is one escalation message: a group's step to one user.
type escTarget struct {
	group string
	step  int
	user  string
}

// escalations gathers the escalation messages of one pass, in the order
// first met, with the page each opens: pages due together for the same
// group, step and user become one message.
type escalations struct {
	order []escTarget
	notes map[escTarget]*Notification
	pages map[escTarget]*Page
}

// get returns the message and page for k, creating them when k is new.
func (es *escalations) get(st *State, k escTarget, g *Group, muni string, m Municipality, now time.Time) (*Notification, *Page) {
	if n := es.notes[k]; n != nil {
		return n, es.pages[k]
	}
	after := m.EscalateAfter()
	n := &Notification{ID: st.newID(), Type: TypeEscalation, Group: k.group, Municipality: muni, Step: k.step, User: k.user,
		At: now, ReceivedAt: now, EscalateAfter: after}
	if g != nil {
		n.Class = g.Class
	}
	es.notes[k] = n
	es.pages[k] = &Page{Notification: n.ID, Group: k.group, Step: k.step, Users: []string{k.user}, Deadline: now.Add(after)}
	es.order = append(es.order, k)
	return n, es.pages[k]
}

// maxTracked is how long a notified alert is followed without news
// (its resolution lost): then it is forgotten.
const maxTracked = 7 * 24 * time.Hour

func (st *State) prune(w World, now time.Time) {
	inPage := map[string]bool{}
	for _, p := range st.Pages {
		for _, id := range p.Alerts {
			inPage[id] = true
		}
	}
	for id, t := range st.Alerts {
		if t.Phase == PhaseNotified && !inPage[id] && now.Sub(t.ReceivedAt) > maxTracked {
			delete(st.Alerts, id)
		}
	}
	used := map[string]bool{}
	for _, t := range st.Alerts {
		used[t.Group] = true
	}
	for k, g := range st.Groups {
		tm := timing(w, g.Class)
		iv := tm.Interval.D()
		// A re-fire received within iv of a page may be flushed up to
		// max(wait, iv) later: keep the page that long.
		keep := iv + max(iv, tm.Wait.D())
		for s, at := range g.Paged {
			if !now.Before(at.Add(keep)) {
				delete(g.Paged, s)
				delete(g.PagedTo, s)
			}
		}
		if !used[k] && g.FlushAt.IsZero() && len(g.Paged) == 0 && (g.LastSent.IsZero() || !now.Before(g.LastSent.Add(iv))) {
			delete(st.Groups, k)
		}
	}
}

func (st *State) next(w World, now time.Time) time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, g := range st.Groups {
		consider(g.FlushAt)
	}
	for _, p := range st.Pages {
		consider(p.Deadline)
	}
	for _, s := range w.Silences {
		consider(s.Starts)
		consider(s.End())
	}
	return next
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
