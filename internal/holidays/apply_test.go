package holidays

import (
	"context"
	"errors"
	"testing"

	"github.com/sossego/sossego/codes"
)

// fakeRegister is a register in memory: its entries, the number of its last
// change, and an error its reads return when set.
type fakeRegister struct {
	entries []Entry
	seq     int64
	err     error
	lists   int
}

func (f *fakeRegister) List(_ context.Context, m string) ([]Entry, error) {
	f.lists++
	if f.err != nil {
		return nil, f.err
	}
	var out []Entry
	for _, e := range f.entries {
		if m == "" || e.Municipality == m {
			out = append(out, e)
		}
	}
	return out, nil
}

func (f *fakeRegister) Seq(context.Context) (int64, error) { return f.seq, f.err }

// TestWatchSync: Sync applies the register when its log moved and only
// then; a read that fails keeps the position, so the next tick tries again.
func TestWatchSync(t *testing.T) {
	ctx := context.Background()
	set := builtin(t)
	reg := &fakeRegister{}
	w := NewWatch(reg, set, 0, nil)
	sanJose := codes.Date{Y: 2026, M: 3, D: 19}
	holiday := func() bool {
		c, _ := set.Code("lapa")
		_, ok := c.Holiday(sanJose)
		return ok
	}
	steps := []struct {
		name      string
		change    func()
		seen      int64
		want      int64
		wantErr   bool
		wantLists int
		holiday   bool
	}{
		{"first read applies the empty register", func() {}, -1, 0, false, 1, false},
		{"no change, no read", func() {}, 0, 0, false, 1, false},
		{"a new entry is applied", func() {
			reg.entries = append(reg.entries, Entry{Municipality: "lapa", MonthDay: "03-19", Name: "São José", Act: "Lei Municipal nº 1.234/2019", Kind: "feriado"})
			reg.seq = 1
		}, 0, 1, false, 2, true},
		{"a failed read keeps the position and the calendar", func() {
			reg.seq, reg.err = 2, errors.New("disco indisponível")
		}, 1, 1, true, 2, true},
		{"the entry removed", func() { reg.entries, reg.err = nil, nil }, 1, 2, false, 3, false},
	}
	for _, st := range steps {
		st.change()
		got, err := w.Sync(ctx, st.seen)
		if (err != nil) != st.wantErr || got != st.want {
			t.Fatalf("%s: Sync(%d) = %d, %v; want %d (error %v)", st.name, st.seen, got, err, st.want, st.wantErr)
		}
		if reg.lists != st.wantLists {
			t.Errorf("%s: %d reads of the register, want %d", st.name, reg.lists, st.wantLists)
		}
		if holiday() != st.holiday {
			t.Errorf("%s: 19/03/2026 a holiday = %v, want %v", st.name, holiday(), st.holiday)
		}
	}
}
