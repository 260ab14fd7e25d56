package notify

import (
	"slices"
	"sort"
	"strings"
	"time"
)

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
