package notify

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sossego/sossego/alerts"
)

// Silence mutes the notifications of one sensor or one establishment for
// a period (a licensed event, a works permit). Silenced alerts are still
// stored and shown; they are only not sent. A silence is never deleted:
// ending it early records who and when (EndedBy, EndedAt).
type Silence struct {
	ID            string    `json:"id"`
	Sensor        string    `json:"sensor,omitempty"`
	Establishment string    `json:"establishment,omitempty"` // registry name of the establishment
	Municipality  string    `json:"municipality,omitempty"`  // informative: the sensor's municipality
	Starts        time.Time `json:"starts"`
	Ends          time.Time `json:"ends"`
	Reason        string    `json:"reason"`
	CreatedBy     string    `json:"created_by"`
	CreatedAt     time.Time `json:"created_at"`
	EndedBy       string    `json:"ended_by,omitempty"`
	EndedAt       time.Time `json:"ended_at,omitzero"`
}

// End is when the silence stops: Ends, or EndedAt when ended early.
func (s Silence) End() time.Time {
	if !s.EndedAt.IsZero() && s.EndedAt.Before(s.Ends) {
		return s.EndedAt
	}
	return s.Ends
}

// ActiveAt reports whether the silence mutes at t.
func (s Silence) ActiveAt(t time.Time) bool { return !t.Before(s.Starts) && t.Before(s.End()) }

// Matches reports whether the silence covers the alert.
func (s Silence) Matches(a alerts.Alert) bool {
	if s.Sensor != "" {
		return a.Sensor == s.Sensor
	}
	return s.Establishment != "" && a.Establishment == s.Establishment
}

// Target describes what the silence covers, in pt-BR.
func (s Silence) Target() string {
	if s.Sensor != "" {
		return "sensor " + s.Sensor
	}
	return "estabelecimento " + s.Establishment
}

// MaxSilence is the longest silence accepted: longer mutes are a change of
// the register, not a silence.
const MaxSilence = 31 * 24 * time.Hour

// CheckSilence validates a new silence at now; the errors are pt-BR.
func CheckSilence(s Silence, now time.Time) error {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	switch {
	case s.Sensor == "" && s.Establishment == "":
		bad("informe o sensor ou o estabelecimento a silenciar")
	case s.Sensor != "" && s.Establishment != "":
		bad("informe o sensor ou o estabelecimento, não os dois")
	}
	if r := strings.TrimSpace(s.Reason); utf8.RuneCountInString(r) < 5 {
		bad("informe o motivo (ex.: evento licenciado, alvará de obra nº …), com pelo menos 5 caracteres")
	} else if utf8.RuneCountInString(r) > 500 {
		bad("motivo longo demais: até 500 caracteres")
	}
	switch {
	case s.Starts.IsZero() || s.Ends.IsZero():
		bad("informe o início e o fim do silêncio")
	case !s.Ends.After(s.Starts):
		bad("o fim do silêncio deve ser depois do início")
	case !s.Ends.After(now):
		bad("o fim do silêncio já passou")
	case s.Ends.Sub(s.Starts) > MaxSilence:
		bad("silêncio de %s: o máximo é de 31 dias", s.Ends.Sub(s.Starts).Round(time.Minute))
	}
	if len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	return nil
}

// silencedBy returns the first silence active at now that covers a.
func silencedBy(ss []Silence, a alerts.Alert, now time.Time) (Silence, bool) {
	for _, s := range ss {
		if s.ActiveAt(now) && s.Matches(a) {
			return s, true
		}
	}
	return Silence{}, false
}
