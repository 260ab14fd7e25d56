package notify

import (
	"slices"
	"strings"
	"time"
)

func escalateAfter(w World, muni string) time.Duration {
	m, _, ok := w.Policy.Municipality(muni)
	if !ok {
		return DefaultEscalateAfter * time.Minute
	}
	return m.EscalateAfter()
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
