package notice

import (
	"fmt"
	"time"

	"github.com/sossego/sossego/codes"
)

// Deadline statuses.
const (
	DeadlineWaiting    = "waiting"     // its starting event has not happened
	DeadlineRunning    = "running"     // running at now
	DeadlineExpired    = "expired"     // over at now
	DeadlineNotAllowed = "not_allowed" // the remedy does not exist here (Lapa Art. 346 § 1º)
	DeadlineDone       = "done"        // the document moved on (regularised, escalated, decided)
)

// DeadlineView is one deadline as the fiscal sees it.
type DeadlineView struct {
	ID       string    `json:"id"`
	Label    string    `json:"label"` // pt-BR
	Article  string    `json:"article"`
	Quote    string    `json:"quote,omitempty"`
	Days     int       `json:"days"`
	Business bool      `json:"business_days"`
	From     string    `json:"from"` // ciencia | intimacao | lavratura | decisao | ciencia_decisao
	Start    time.Time `json:"start,omitzero"`
	// End is exclusive: the start of the day after the last day.
	End     time.Time `json:"end,omitzero"`
	LastDay string    `json:"last_day,omitempty"` // dd/mm/aaaa
	Status  string    `json:"status"`
	Note    string    `json:"note,omitempty"`
}

var deadlineLabels = map[string]string{
	"defesa":                           "prazo para defesa",
	"pagamento":                        "prazo para pagamento da multa",
	"recurso":                          "prazo para recurso voluntário",
	"defesa_ou_pagamento":              "prazo para pagamento ou defesa (residente na sede)",
	"defesa_ou_pagamento_fora_da_sede": "prazo para pagamento ou defesa (residente fora da sede)",
}

// Deadlines lists the deadlines of d at now: the regularisation prazo of a
// notice, or the code's defence, payment and appeal deadlines of an auto,
// with business days where the code counts them so.
func Deadlines(c *codes.Code, d *Document, now time.Time) []DeadlineView {
	var out []DeadlineView
	if d.Draft.Kind.IsNotice() {
		v := DeadlineView{ID: "regularizacao", Label: "prazo para regularização", From: "ciencia", Days: d.PrazoDays}
		if f := d.Draft.Field("prazo"); f != nil {
			v.Article = f.Article
		}
		switch {
		case d.PrazoDays == 0 && d.State == StateDraft:
			v.Status, v.Note = DeadlineWaiting, "fixado pelo fiscal na emissão"
			if d.Draft.PrazoDaysMax > 0 {
				v.Note += fmt.Sprintf(" (máximo de %d dias)", d.Draft.PrazoDaysMax)
			}
		case d.PrazoDays == 0:
			v.Status, v.Note = DeadlineNotAllowed, "o código não fixa prazo de regularização para este documento"
		case d.PrazoEnd.IsZero():
			v.Status, v.Note = DeadlineWaiting, "corre a partir do ciente ou da recusa"
		default:
			v.Start, v.End, v.LastDay = d.CienciaAt, d.PrazoEnd, lastDay(d.PrazoEnd)
			v.Status = status(d, now, v.End)
		}
		return append(out, v)
	}
	if d.Draft.Kind != KindAuto {
		return nil
	}
	for _, dl := range d.Draft.Deadlines {
		label := deadlineLabels[dl.ID]
		if label == "" {
			label = "prazo (" + dl.ID + ")"
		}
		v := DeadlineView{ID: dl.ID, Label: label, Article: dl.Article, Quote: dl.Quote, Days: dl.Days, Business: dl.Business, From: dl.From}
		var start time.Time
		switch dl.From {
		case "intimacao":
			start = d.CienciaAt
		case "lavratura":
			start = d.IssuedAt
		case "decisao", "ciencia_decisao":
			start = d.DecidedAt
		}
		if dl.ID == "recurso" && !d.Draft.Penalty.AppealAllowed {
			v.Status, v.Note = DeadlineNotAllowed, d.Draft.Penalty.AppealNote
			out = append(out, v)
			continue
		}
		if start.IsZero() {
			v.Status = DeadlineWaiting
			v.Note = map[string]string{"intimacao": "corre a partir da intimação (ciente ou recusa)", "lavratura": "corre a partir da lavratura",
				"decisao": "corre a partir da decisão", "ciencia_decisao": "corre a partir da ciência da decisão"}[dl.From]
			out = append(out, v)
			continue
		}
		v.Start = start
		v.End = DeadlineEnd(c, start, dl.Days, dl.Business)
		v.LastDay = lastDay(v.End)
		if dl.From == "intimacao" || dl.From == "lavratura" {
			v.Status = status(d, now, v.End)
		} else if now.Before(v.End) {
			v.Status = DeadlineRunning
		} else {
			v.Status = DeadlineExpired
		}
		out = append(out, v)
	}
	return out
}

func status(d *Document, now, end time.Time) string {
	switch d.State {
	case StateRegularised, StateEscalated, StateDecided, StateCancelled:
		return DeadlineDone
	}
	if now.Before(end) {
		return DeadlineRunning
	}
	return DeadlineExpired
}

// DeadlineEnd is the exclusive end of a deadline of days counted from the
// day after start: calendar days, or the code's business days ("dias
// úteis": its business weekdays, excluding national and municipal holidays
// and the days the municipality decreed — holidays and pontos facultativos,
// codes.Calendar.Decreed — as the code c carries them).
func DeadlineEnd(c *codes.Code, start time.Time, days int, business bool) time.Time {
	if !business {
		return PrazoEnd(start, days)
	}
	t := start.In(saoPaulo)
	d := c.AddBusinessDays(codes.Date{Y: t.Year(), M: t.Month(), D: t.Day()}, days)
	return time.Date(d.Y, d.M, d.D+1, 0, 0, 0, 0, saoPaulo)
}
