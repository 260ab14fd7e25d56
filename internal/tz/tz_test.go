package tz

import (
	"testing"
	"time"
)

func TestBrasilia(t *testing.T) {
	cases := []struct {
		utc  string
		want string // wall clock in Brasília
	}{
		{"2026-01-15T03:00:00Z", "2026-01-15 00:00"}, // UTC−3, no daylight saving since 2019
		{"2026-07-15T12:30:00Z", "2026-07-15 09:30"},
		{"2018-12-01T12:00:00Z", "2018-12-01 10:00"}, // daylight saving (UTC−2) still applied in 2018
	}
	for _, c := range cases {
		u, err := time.Parse(time.RFC3339, c.utc)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.In(Brasilia()).Format("2006-01-02 15:04"); got != c.want {
			t.Errorf("%s in Brasília = %s, want %s", c.utc, got, c.want)
		}
	}
	if Brasilia().String() != Name {
		t.Errorf("zone name %q, want %q", Brasilia(), Name)
	}
}

func TestLoadUnknown(t *testing.T) {
	if _, err := Load("America/Lapa"); err == nil {
		t.Fatal("an unknown zone loaded")
	}
}
