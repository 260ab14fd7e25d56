package workflow

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/cases"
)

// TestCustodyOf: every entry of the audit trail reads in Portuguese in
// custody.json, a document's states agreeing with its kind.
func TestCustodyOf(t *testing.T) {
	at := time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC)
	ana := notice.Actor{ID: "u-ana", Name: "Ana Souza", Role: "fiscal"}
	assign, _ := json.Marshal(map[string]string{"assignee": "u-bruno", "previous": "u-caio"})
	for _, c := range []struct {
		name         string
		e            cases.Entry
		kind         notice.Kind
		action, want string
	}{
		{"ack", cases.Entry{DocumentID: "lapa-bar-01/x", Action: "ack"}, "", "alerta reconhecido", "alerta lapa-bar-01/x reconhecido"},
		{"assign", cases.Entry{DocumentID: "lapa-bar-01/x", Action: "assign", Detail: assign}, "", "alerta atribuído",
			"alerta lapa-bar-01/x atribuído a u-bruno (antes, a u-caio)"},
		{"created", cases.Entry{DocumentID: "lapa-NP-2026-000001", Action: "create", To: notice.StateDraft}, notice.KindNotificacaoPreliminar,
			"documento preparado", "lapa-NP-2026-000001: rascunho"},
		{"notice issued", cases.Entry{DocumentID: "lapa-NP-2026-000001", Action: "issue", From: notice.StateDraft, To: notice.StateIssued},
			notice.KindNotificacaoPreliminar, "documento emitido", "lapa-NP-2026-000001: rascunho → emitida"},
		{"auto issued", cases.Entry{DocumentID: "lapa-AI-2026-000001", Action: "issue", From: notice.StateDraft, To: notice.StateIssued},
			notice.KindAuto, "documento emitido", "lapa-AI-2026-000001: rascunho → emitido"},
		{"edited", cases.Entry{DocumentID: "lapa-NP-2026-000001", Action: "edit", From: notice.StateDraft, To: notice.StateDraft},
			notice.KindNotificacaoPreliminar, "minuta editada", "lapa-NP-2026-000001: rascunho"},
		{"unknown action kept", cases.Entry{DocumentID: "d", Action: "novidade"}, "", "novidade", "d"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.e.At, c.e.Actor = at, ana
			got := custodyOf(c.e, c.kind)
			if got.Action != c.action || got.Detail != c.want || got.Actor != "u-ana Ana Souza" || got.Role != "fiscal" || !got.At.Equal(at) {
				t.Errorf("custodyOf = %+v, want action %q, detail %q", got, c.action, c.want)
			}
		})
	}
	// Every action the workflow writes has its Portuguese name.
	for _, k := range []notice.ActionKind{notice.ActIssue, notice.ActAcknowledge, notice.ActRefuse, notice.ActRegularise,
		notice.ActEscalate, notice.ActCancel, notice.ActDecide} {
		if custodyActions[string(k)] == "" {
			t.Errorf("no Portuguese name for the action %q", k)
		}
	}
}
