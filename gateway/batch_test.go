package gateway

import (
	"testing"
	"time"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/internal/wire"
)

func out(sec int, d bridge.Device, c wire.Clock) Output {
	return Output{Record: wire.Record{T: t0.Add(time.Duration(sec) * time.Second), DurMs: 1000, LAeq: 50, LAFmax: 50, LAFmin: 50},
		Device: d, Clock: c}
}

func TestBatcher(t *testing.T) {
	other := dev
	other.Serial = "2"
	unsynced := wire.Clock{Source: "none", OffsetMs: 16000}
	worse := synced
	worse.OffsetMs = 40
	tests := []struct {
		name   string
		max    int
		age    time.Duration
		in     []Output
		sizes  []int // completed batches
		remain int
	}{
		{"by count", 3, time.Hour, []Output{out(0, dev, synced), out(1, dev, synced), out(2, dev, synced), out(3, dev, synced)}, []int{3}, 1},
		{"by age", 100, 2 * time.Second, []Output{out(0, dev, synced), out(1, dev, synced), out(2, dev, synced), out(3, dev, synced)}, []int{2}, 2},
		{"device change", 100, time.Hour, []Output{out(0, dev, synced), out(1, other, synced)}, []int{1}, 1},
		{"sync change", 100, time.Hour, []Output{out(0, dev, synced), out(1, dev, unsynced), out(2, dev, unsynced), out(3, dev, synced)}, []int{1, 2}, 1},
		{"offset change only", 100, time.Hour, []Output{out(0, dev, synced), out(1, dev, worse)}, nil, 2},
		{"one record batches", 1, time.Hour, []Output{out(0, dev, synced), out(1, dev, synced)}, []int{1, 1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &Batcher{MaxRecords: tc.max, MaxAge: tc.age}
			var sizes []int
			var all []Pending
			for _, o := range tc.in {
				for _, p := range b.Add(o, o.Record.T) {
					sizes = append(sizes, len(p.Records))
					all = append(all, p)
				}
			}
			if len(sizes) != len(tc.sizes) {
				t.Fatalf("batch sizes %v, want %v", sizes, tc.sizes)
			}
			for i := range sizes {
				if sizes[i] != tc.sizes[i] {
					t.Fatalf("batch sizes %v, want %v", sizes, tc.sizes)
				}
			}
			if b.Len() != tc.remain {
				t.Errorf("%d records left open, want %d", b.Len(), tc.remain)
			}
			for _, p := range all {
				if p.Device.Grade != "class1" || p.Device.Model != "fake" {
					t.Errorf("device %+v", p.Device)
				}
			}
		})
	}
}

func TestBatcherKeepsWorstOffsetAndDue(t *testing.T) {
	b := &Batcher{MaxRecords: 10, MaxAge: 5 * time.Second}
	worse := synced
	worse.OffsetMs = 40
	wall := t0.Add(24 * time.Hour) // records may be far older than the wall clock (replayed meter)
	b.Add(out(0, dev, synced), wall)
	b.Add(out(1, dev, worse), wall.Add(time.Second))
	if _, ok := b.Due(wall.Add(4999 * time.Millisecond)); ok {
		t.Error("due too early")
	}
	p, ok := b.Due(wall.Add(5 * time.Second))
	if !ok || len(p.Records) != 2 || p.Clock.OffsetMs != 40 || !p.Clock.Synced {
		t.Errorf("Due = %+v, %v", p, ok)
	}
	if _, ok := b.Flush(); ok {
		t.Error("flush after due returned a batch")
	}
	cal := dev
	cal.CalibratedAt = time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	if got := wireDevice(cal).CalibratedAt; got != "2026-01-02" {
		t.Errorf("calibrated_at = %q", got)
	}
}
