package notify

import (
	"slices"
	"sort"
	"time"
)

// Duty is who is on duty in a municipality at an instant.
type Duty struct {
	Municipality string    `json:"municipality"`
	Users        []string  `json:"users"`            // empty: nobody (the coordinator is called)
	Override     bool      `json:"override"`         // from an exception for the date, not the weekly schedule
	Reason       string    `json:"reason,omitempty"` // the exception's reason
	Until        time.Time `json:"until,omitzero"`   // when the set of users changes next (within 8 days)
	Coordinator  string    `json:"coordinator,omitempty"`
	Next         string    `json:"next,omitempty"` // the next person on duty: the escalation's second step
}

// interval is one concrete duty slot.
type interval struct {
	from, to time.Time
	user     string
	override bool
	reason   string
	order    int // position in the settings, to keep a stable order
}

// at returns the local instant of minutes-since-midnight min on the date
// of day (24:00 is the next midnight).
func at(day time.Time, min int, loc *time.Location) time.Time {
	y, mo, d := day.Date()
	return time.Date(y, mo, d, 0, 0, 0, 0, loc).Add(time.Duration(min) * time.Minute)
}

// intervals lists the slots that intersect [from, to).
func intervals(m Municipality, loc *time.Location, from, to time.Time) []interval {
	var out []interval
	start := from.In(loc).AddDate(0, 0, -1)
	for day := start; !day.After(to.In(loc)); day = day.AddDate(0, 0, 1) {
		wd := weekdays[day.Weekday()]
		for i, sh := range m.Weekly {
			if !slices.Contains(sh.Days, wd) {
				continue
			}
			f, err1 := ParseClock(sh.From)
			t, err2 := ParseClock(sh.To)
			if err1 != nil || err2 != nil || f == t {
				continue
			}
			a, b := at(day, f, loc), at(day, t, loc)
			if t < f {
				b = at(day.AddDate(0, 0, 1), t, loc)
			}
			if a.Before(to) && b.After(from) {
				out = append(out, interval{from: a, to: b, user: sh.User, order: i})
			}
		}
		date := day.Format("2006-01-02")
		for i, o := range m.Overrides {
			if o.Date != date {
				continue
			}
			fs, ts := o.From, o.To
			if fs == "" {
				fs = "00:00"
			}
			if ts == "" {
				ts = "24:00"
			}
			f, err1 := ParseClock(fs)
			t, err2 := ParseClock(ts)
			if err1 != nil || err2 != nil || t <= f {
				continue
			}
			a, b := at(day, f, loc), at(day, t, loc)
			if a.Before(to) && b.After(from) {
				out = append(out, interval{from: a, to: b, user: o.User, override: true, reason: o.Reason, order: i})
			}
		}
	}
	return out
}

// dutyAt returns who is on duty at t given the slots: exceptions covering
// t replace the weekly schedule.
func dutyAt(ivs []interval, t time.Time) (users []string, override bool, reason string) {
	var weekly, over []interval
	for _, iv := range ivs {
		if t.Before(iv.from) || !t.Before(iv.to) {
			continue
		}
		if iv.override {
			over = append(over, iv)
		} else {
			weekly = append(weekly, iv)
		}
	}
	pick := weekly
	if len(over) > 0 {
		pick, override, reason = over, true, over[0].reason
	}
	sort.SliceStable(pick, func(i, j int) bool { return pick[i].order < pick[j].order })
	for _, iv := range pick {
		if !slices.Contains(users, iv.user) {
			users = append(users, iv.user)
		}
	}
	return users, override, reason
}

// horizon is how far ahead the schedule is searched for the next change
// and the next person.
const horizon = 8 * 24 * time.Hour

// OnDuty returns who is on duty in municipality m at now, until when, and
// who comes next.
func OnDuty(m Municipality, loc *time.Location, now time.Time) Duty {
	ivs := intervals(m, loc, now, now.Add(horizon+24*time.Hour))
	users, over, reason := dutyAt(ivs, now)
	d := Duty{Municipality: m.ID, Users: users, Override: over, Reason: reason, Coordinator: m.Coordinator}
	if d.Users == nil {
		d.Users = []string{}
	}
	for _, b := range boundaries(ivs, now) {
		u, _, _ := dutyAt(ivs, b)
		if d.Until.IsZero() && !slices.Equal(u, users) {
			d.Until = b
		}
		if d.Next == "" {
			for _, x := range u {
				if !slices.Contains(users, x) {
					d.Next = x
					break
				}
			}
		}
		if !d.Until.IsZero() && d.Next != "" {
			break
		}
	}
	return d
}

// NextOnDuty returns the first person on duty after now who is not in
// exclude (the escalation's "next person in the schedule"), or "".
func NextOnDuty(m Municipality, loc *time.Location, now time.Time, exclude []string) string {
	ivs := intervals(m, loc, now, now.Add(horizon+24*time.Hour))
	for _, b := range append([]time.Time{now}, boundaries(ivs, now)...) {
		u, _, _ := dutyAt(ivs, b)
		for _, x := range u {
			if !slices.Contains(exclude, x) {
				return x
			}
		}
	}
	return ""
}

// boundaries returns the slot starts and ends after now and within the
// horizon, in order (the slots are listed a day past it, so that the last
// one listed ending is not taken for a change).
func boundaries(ivs []interval, now time.Time) []time.Time {
	var bs []time.Time
	for _, iv := range ivs {
		for _, t := range []time.Time{iv.from, iv.to} {
			if t.After(now) && t.Before(now.Add(horizon)) {
				bs = append(bs, t)
			}
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].Before(bs[j]) })
	return slices.CompactFunc(bs, func(a, b time.Time) bool { return a.Equal(b) })
}
