// Package tz is the product's one home for its time zone. Every date a user
// reads — on the dashboard, in a notice, in an evidence bag, in the CLI — and
// every legal period a code defines is Brasília time, America/Sao_Paulo,
// loaded from the tz database embedded in the binary (time/tzdata), so a
// Raspberry Pi or a container without /usr/share/zoneinfo reads the same
// hours as the server. It never falls back to UTC: a zone that cannot load
// is an error at startup (Load) or a broken build (Brasilia).
//
// Overview of its parts: the product's one time zone: Brasília time
// (America/Sao_Paulo) from the embedded tz database; never a silent UTC
// fallback.
package tz

import (
	"fmt"
	"time"
	_ "time/tzdata" // the Pi, CI and minimal containers need no system tz database
)

// Name is the IANA name of Brasília time.
const Name = "America/Sao_Paulo"

var brasilia = mustLoad(Name)

// Brasilia is America/Sao_Paulo.
func Brasilia() *time.Location { return brasilia }

// Load loads an IANA time zone by name (a municipal code's `timezone`),
// from the system database or the embedded one.
func Load(name string) (*time.Location, error) {
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("fuso horário %q desconhecido (use um nome IANA como %s): %w", name, Name, err)
	}
	return loc, nil
}

func mustLoad(name string) *time.Location {
	loc, err := Load(name)
	if err != nil {
		// Unreachable with the embedded database: a build without it is broken.
		panic(err)
	}
	return loc
}
