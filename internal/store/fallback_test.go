package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)

// fakeReadings answers with one record and one bucket tagged by name, or
// with err; it counts its calls.
type fakeReadings struct {
	name  string
	err   error
	calls int
}

func (f *fakeReadings) Records(context.Context, string, time.Time, time.Time, int) ([]Record, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	return []Record{{Sensor: f.name}}, nil
}

func (f *fakeReadings) Buckets(context.Context, string, time.Time, time.Time, time.Duration) ([]Bucket, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	return []Bucket{{DurMs: int64(len(f.name))}}, nil
}

func TestFallback(t *testing.T) {
	down := errors.New("connection refused")
	cases := []struct {
		name         string
		primaryErr   error
		knownDown    bool
		want         string // which store answered
		primaryCalls int    // per query
	}{
		{"primary answers", nil, false, "influx", 1},
		{"primary fails: local answers", down, false, "sqlite", 1},
		{"primary known down: not even asked", nil, true, "sqlite", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, l := &fakeReadings{name: "influx", err: tc.primaryErr}, &fakeReadings{name: "sqlite"}
			f := Fallback{Primary: p, Local: l, Down: func() bool { return tc.knownDown }}
			recs, err := f.Records(context.Background(), "s", t0, t0.Add(time.Hour), 0)
			if err != nil || len(recs) != 1 || recs[0].Sensor != tc.want {
				t.Errorf("Records = %+v, %v; want from %s", recs, err, tc.want)
			}
			bs, err := f.Buckets(context.Background(), "s", t0, t0.Add(time.Hour), time.Minute)
			if err != nil || len(bs) != 1 || bs[0].DurMs != int64(len(tc.want)) {
				t.Errorf("Buckets = %+v, %v; want from %s", bs, err, tc.want)
			}
			if p.calls != 2*tc.primaryCalls {
				t.Errorf("primary asked %d times, want %d", p.calls, 2*tc.primaryCalls)
			}
		})
	}
	// Both fail: the local error is returned.
	f := Fallback{Primary: &fakeReadings{err: down}, Local: &fakeReadings{err: errors.New("disk")}}
	if _, err := f.Records(context.Background(), "s", t0, t0, 0); err == nil || err.Error() != "disk" {
		t.Errorf("both failing: %v", err)
	}
}
