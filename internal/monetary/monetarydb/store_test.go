package monetarydb

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/monetary"
)

func TestStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	first, err := s.Set(ctx, set, monetary.Period{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", Value: monetary.FromReais(4938.24), Act: "Decreto nº 20/2025"}, "ana", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set(ctx, set, monetary.Period{CodeID: "lapa", Unit: "VRM", From: "2027-01-01", Value: monetary.FromReais(5100), Act: "Decreto nº 30/2026"}, "ana", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Refused: nothing written.
	for _, p := range []monetary.Period{
		{CodeID: "lapa", Unit: "VRM", From: "2026-06-01", To: "2026-06-30", Value: monetary.FromReais(1), Act: "x"},
		{CodeID: "atlantida", Unit: "VRM", From: "2026-06-01", Value: monetary.FromReais(1), Act: "x"},
		{CodeID: "lapa", Unit: "UFM", From: "2026-06-01", Value: monetary.FromReais(1), Act: "x"},
		{CodeID: "lapa", Unit: "VRM", From: "2028-01-01", Value: monetary.FromReais(-1), Act: "x"},
	} {
		if _, err := s.Set(ctx, set, p, "ana", now); !errors.Is(err, monetary.ErrInvalid) {
			t.Errorf("Set(%+v) = %v, want monetary.ErrInvalid", p, err)
		}
	}
	s.Close()
	if s, err = OpenDir(ctx, dir); err != nil { // reopens without re-migrating
		t.Fatal(err)
	}
	defer s.Close()
	ps, err := s.Periods(ctx, "lapa")
	if err != nil || len(ps) != 2 {
		t.Fatalf("Periods = %+v, %v", ps, err)
	}
	if ps[0].ID != first.ID || ps[0].To != "2026-12-31" || ps[1].To != "" || ps[1].Value != monetary.FromReais(5100) || ps[1].SetBy != "ana" {
		t.Fatalf("periods after the new year's value: %+v", ps)
	}
	if p, ok := monetary.ValueAt(ps, "lapa", "VRM", "2026-12-01"); !ok || p.Value != monetary.FromReais(4938.24) {
		t.Fatalf("value on 01/12/2026: %+v %v", p, ok)
	}
	h, err := s.History(ctx, "lapa", "VRM")
	if err != nil || len(h) != 3 {
		t.Fatalf("History = %+v, %v", h, err)
	}
	if h[0].Action != "set" || h[1].Action != "closed" || h[1].Period.To != "2026-12-31" || h[2].Action != "set" || h[2].Period.From != "2027-01-01" {
		t.Fatalf("log %+v", h)
	}
	if all, err := s.Periods(ctx, ""); err != nil || len(all) != 2 {
		t.Fatalf("Periods(all) = %+v, %v", all, err)
	}
}
