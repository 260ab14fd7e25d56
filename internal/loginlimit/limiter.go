// Package loginlimit throttles the dashboard's password checks: every
// check counts against one or more keys (its source address, the user
// name it tries), each with a budget of free failures within a window;
// past the budget a key waits a backoff that doubles with each failure, up
// to the window, and only one check at a time runs past it. A check held
// back only by checks still running waits (PendingWait) for their
// outcome, so colleagues behind one NAT address logging in together are
// not refused for each other's typos. A right password forgets a user
// key's failures. The memory is bounded: idle keys are forgotten.
package loginlimit

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// New returns a limiter counting failures within window, with backoff the
// first wait past a key's budget.
func New(window, backoff time.Duration) *Limiter {
	return &Limiter{window: window, backoff: backoff, keys: map[string]*state{}}
}

// Waiting is how many checks are waiting for running ones to resolve.
func (l *Limiter) Waiting() int64 { return l.waiting.Load() }

// Limiter throttles password checks per key (see the file comment).
type Limiter struct {
	mu      sync.Mutex
	window  time.Duration
	backoff time.Duration
	keys    map[string]*state
	changed chan struct{} // closed (and replaced) whenever a check resolves

	// PendingWait is how long a check held back only by checks still
	// running waits for their outcome (people behind one NAT address
	// logging in at once); 3 s when zero.
	PendingWait time.Duration
	waiting     atomic.Int64 // checks waiting so (tests)
}

// Key is one throttled key of a check and its free failures.
type Key struct {
	Name           string
	Budget         int
	ClearOnSuccess bool // a right password forgets the key's failures
}

type state struct {
	fails   []time.Time // failures within the window, oldest first
	pending int         // checks reserved and not yet resolved
}

// Outcome is how a reserved check ended.
type Outcome int

const (
	NotChecked Outcome = iota // refused before the password was checked (store busy, error)
	Failed
	Succeeded
)

// delay is the wait after the k-th failure past the free ones (k ≥ 1):
// backoff·2^(k−1), at most the window.
func (l *Limiter) delay(k int) time.Duration {
	d := l.backoff
	for i := 1; i < k && d < l.window; i++ {
		d *= 2
	}
	return min(d, l.window)
}

// Reserve takes a place on every key, or returns how long to wait when one
// of them has none to give. When only checks still running stand in the
// way, it first waits (up to PendingWait) for their outcome: a failure
// takes their place for good, a success gives it back.
func (l *Limiter) Reserve(ctx context.Context, keys []Key, now func() time.Time) time.Duration {
	var timeout <-chan time.Time
	for {
		wait, pendingOnly, changed := l.tryReserve(keys, now())
		if wait == 0 || !pendingOnly {
			return wait
		}
		if timeout == nil {
			d := l.PendingWait
			if d <= 0 {
				d = 3 * time.Second
			}
			t := time.NewTimer(d)
			defer t.Stop()
			timeout = t.C
		}
		l.waiting.Add(1)
		select {
		case <-changed:
			l.waiting.Add(-1)
		case <-timeout:
			l.waiting.Add(-1)
			return wait
		case <-ctx.Done():
			l.waiting.Add(-1)
			return wait
		}
	}
}

// tryReserve is Reserve's atomic step: it takes a place on every key, or
// says how long to wait, whether only running checks are in the way, and
// the channel closed when one of them resolves.
func (l *Limiter) tryReserve(keys []Key, now time.Time) (wait time.Duration, pendingOnly bool, changed <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	pendingOnly = true
	for _, k := range keys {
		w, pending := l.waitLocked(k, now)
		if w > 0 && !pending {
			pendingOnly = false
		}
		wait = max(wait, w)
	}
	if wait > 0 {
		return wait, pendingOnly, l.changed
	}
	for _, k := range keys {
		st := l.keys[k.Name]
		if st == nil {
			st = &state{}
			l.keys[k.Name] = st
		}
		st.pending++
	}
	if len(l.keys) > 100000 { // a flood of names: forget the idle ones
		for name, st := range l.keys {
			if l.prune(st, now); len(st.fails) == 0 && st.pending == 0 {
				delete(l.keys, name)
			}
		}
	}
	return 0, false, nil
}

// waitLocked is how long k must wait before one more check, and whether
// only checks still running hold it back; the caller holds mu.
func (l *Limiter) waitLocked(k Key, now time.Time) (time.Duration, bool) {
	st := l.keys[k.Name]
	if st == nil {
		return 0, false
	}
	l.prune(st, now)
	n := len(st.fails)
	if n+st.pending < k.Budget {
		return 0, false // a free attempt
	}
	if st.pending > 0 {
		// One check at a time past the budget; should the pending ones
		// fail, this is the least the next one will wait.
		return l.delay(n + st.pending - k.Budget + 1), true
	}
	ready := st.fails[n-1].Add(l.delay(n - k.Budget + 1))
	if now.Before(ready) {
		return ready.Sub(now), false
	}
	return 0, false
}

// Resolve records the outcome of a reserved check.
func (l *Limiter) Resolve(keys []Key, o Outcome, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
		l.changed = make(chan struct{})
	}
	for _, k := range keys {
		st := l.keys[k.Name]
		if st == nil {
			continue
		}
		st.pending--
		switch {
		case o == Failed:
			st.fails = append(st.fails, now)
		case o == Succeeded && k.ClearOnSuccess:
			st.fails = nil
		}
		if l.prune(st, now); len(st.fails) == 0 && st.pending <= 0 {
			delete(l.keys, k.Name)
		}
	}
}

// prune drops failures older than the window; the caller holds mu.
func (l *Limiter) prune(st *state, now time.Time) {
	i := 0
	for i < len(st.fails) && !now.Before(st.fails[i].Add(l.window)) {
		i++
	}
	st.fails = st.fails[i:]
}

// RetrySeconds is a Retry-After value: whole seconds, at least 1.
func RetrySeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// WaitText says d in pt-BR ("3 s", "2 min").
func WaitText(d time.Duration) string {
	s := RetrySeconds(d)
	if s < 60 {
		return strconv.Itoa(s) + " s"
	}
	return strconv.Itoa((s+59)/60) + " min"
}
