package sqlitestore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// TestChecksAfter: only the field-check batches, in store order, above the
// position asked and up to the bound, with their municipality and signed
// bytes; the query reads the checks' index, not every batch.
func TestChecksAfter(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	check := func(gw string, seq uint64) store.Batch {
		b := batch(gw, seq, t0.Add(time.Duration(seq)*time.Minute))
		b.Kind, b.Topic, b.Body = wire.KindCheck, wire.CheckTopic("lapa", gw, gw+"-s"), []byte(fmt.Sprintf(`{"check":%d}`, seq))
		return b
	}
	if last, err := s.LastBatchPos(ctx); err != nil || last != 0 {
		t.Fatalf("empty store's last position %d %v", last, err)
	}
	if pos, gw, _, err := s.LastBatch(ctx); err != nil || pos != 0 || gw != "" {
		t.Fatalf("empty store's last batch %d %q %v", pos, gw, err)
	}
	for _, b := range []store.Batch{batch("gw", 1, t0, 60), check("gw", 2), batch("gw", 3, t0.Add(time.Hour), 61), check("gx", 1), check("gw", 4)} {
		if _, err := s.Apply(ctx, store.Write{Batches: []store.Batch{b}}); err != nil {
			t.Fatal(err)
		}
	}
	last, err := s.LastBatchPos(ctx)
	if err != nil || last != 5 {
		t.Fatalf("last position %d %v, want 5", last, err)
	}
	read := func(after, upTo int64) string {
		var got []string
		if err := s.ChecksAfter(ctx, after, upTo, func(pos int64, b store.StoredBatch) error {
			got = append(got, fmt.Sprintf("%d:%s/%d %s %s %s %v", pos, b.Gateway, b.Seq, b.Municipality, b.Kind, b.Body, b.Verified))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, ", ")
	}
	var lv []string
	if err := s.LevelBatchesAfter(ctx, 0, last, func(pos int64, b store.StoredBatch) error {
		lv = append(lv, fmt.Sprintf("%d:%s/%d %s %s", pos, b.Gateway, b.Seq, b.Kind, b.Body))
		return nil
	}); err != nil || strings.Join(lv, ", ") != `1:gw/1 levels {"seq":1}, 3:gw/3 levels {"seq":1}` {
		t.Errorf("LevelBatchesAfter(0, %d) = %v %v", last, lv, err)
	}
	for _, tc := range []struct {
		gw   string
		seq  uint64
		want int64
	}{{"gw", 3, 3}, {"gx", 1, 4}, {"gx", 2, 0}, {"gz", 1, 0}} {
		if pos, err := s.BatchPos(ctx, tc.gw, tc.seq); err != nil || pos != tc.want {
			t.Errorf("BatchPos(%s, %d) = %d %v, want %d", tc.gw, tc.seq, pos, err, tc.want)
		}
	}
	if pos, gw, seq, err := s.LastBatch(ctx); err != nil || pos != 5 || gw != "gw" || seq != 4 {
		t.Errorf("LastBatch = %d %s/%d %v, want 5 gw/4", pos, gw, seq, err)
	}
	for _, tc := range []struct {
		after, upTo int64
		want        string
	}{
		{0, last, `2:gw/2 lapa check {"check":2} true, 4:gx/1 lapa check {"check":1} true, 5:gw/4 lapa check {"check":4} true`},
		{2, last, `4:gx/1 lapa check {"check":1} true, 5:gw/4 lapa check {"check":4} true`},
		{2, 4, `4:gx/1 lapa check {"check":1} true`},
		{5, last, ``},
	} {
		if got := read(tc.after, tc.upTo); got != tc.want {
			t.Errorf("ChecksAfter(%d, %d) = %s, want %s", tc.after, tc.upTo, got, tc.want)
		}
	}
	var plan strings.Builder
	rows, err := s.r.QueryContext(ctx, `EXPLAIN QUERY PLAN `+checksAfterSQL, wire.KindCheck, 0, last)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "; ")
	}
	if !strings.Contains(plan.String(), "USING INDEX batches_checks") {
		t.Fatalf("query plan %q does not use the checks' index", plan.String())
	}
}
