package notify

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts"
)

// Classes of alerts.
const (
	ClassLevel  Class = "level"   // an exceedance of the limit in force
	ClassNoData Class = "no_data" // a silent sensor or an offline gateway
	ClassClock  Class = "clock"   // an exceedance stamped by an unsynchronised gateway clock: its time is uncertain
)

// Phases.
const (
	PhaseQueued    Phase = "queued"    // firing; waits for its group's next message
	PhaseSilenced  Phase = "silenced"  // firing under a silence: recorded, not sent
	PhaseNotified  Phase = "notified"  // a message went out (or the page was merged into an earlier one)
	PhaseResolving Phase = "resolving" // resolved after a message; the closing message waits for the group
)

// Message types.
const (
	TypeFiring     Type = "firing"     // new alerts for the fiscal on duty
	TypeEscalation Type = "escalation" // nobody acknowledged: the next step
	TypeResolved   Type = "resolved"   // alerts a user was told about closed
	TypeTest       Type = "test"       // the settings page's test button
)

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
