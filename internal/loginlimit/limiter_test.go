package loginlimit

import (
	"testing"
	"time"
)

// TestLoginLimiter: the limiter's arithmetic, key by key.
func TestLoginLimiter(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 22, 0, 0, 0, time.UTC)
	src := func(s string) Key { return Key{Name: "src:" + s, Budget: 2} }
	user := func(s string) Key { return Key{Name: "user:" + s, Budget: 8, ClearOnSuccess: true} }
	l := New(time.Hour, 10*time.Second)
	check := func(keys []Key, o Outcome, at time.Time) time.Duration {
		t.Helper()
		if w, _, _ := l.tryReserve(keys, at); w > 0 {
			return w
		}
		l.Resolve(keys, o, at)
		return 0
	}
	steps := []struct {
		name string
		keys []Key
		o    Outcome
		at   time.Duration
		wait time.Duration
	}{
		{"a fails once", []Key{src("a"), user("ana")}, Failed, 0, 0},
		{"a fails twice", []Key{src("a"), user("ana")}, Failed, 0, 0},
		{"a waits the backoff", []Key{src("a"), user("ana")}, Failed, time.Second, 9 * time.Second},
		{"b (another source) is not held by a", []Key{src("b"), user("ana")}, Failed, time.Second, 0},
		{"a store refusal is not counted", []Key{src("c"), user("ana")}, NotChecked, time.Second, 0},
		{"a's turn", []Key{src("a"), user("ana")}, Failed, 10 * time.Second, 0},
		{"a waits twice as long", []Key{src("a"), user("ana")}, Failed, 10 * time.Second, 20 * time.Second},
	}
	for _, st := range steps {
		if got := check(st.keys, st.o, t0.Add(st.at)); got != st.wait {
			t.Fatalf("%s: wait %v, want %v", st.name, got, st.wait)
		}
	}
	if got := l.keys["user:ana"]; got == nil || len(got.fails) != 4 || got.pending != 0 {
		t.Fatalf("ana's record %+v, want 4 failures, none pending", got)
	}
	if _, ok := l.keys["src:c"]; ok {
		t.Fatal("a source whose only check was not counted is still tracked")
	}
	if check([]Key{src("d"), user("ana")}, Succeeded, t0.Add(time.Minute)) != 0 || l.keys["user:ana"] != nil {
		t.Fatal("a right password did not clear the user's failures")
	}
	for k := 1; k <= 60; k++ {
		// Doubling, capped by the window, never overflowing.
		if d := l.delay(k); d <= 0 || d > time.Hour || (k > 1 && d < l.delay(k-1)) {
			t.Fatalf("delay(%d) = %v", k, d)
		}
	}
}
