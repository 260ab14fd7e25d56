package cases_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/cases"
)

// chain is a well-formed trail of n entries.
func chain(n int) []cases.Entry {
	var out []cases.Entry
	prev := ""
	for i := range n {
		e := cases.Entry{Seq: int64(i + 1), DocumentID: "lapa-NP-2026-000001", At: time.UnixMilli(int64(1000 * (i + 1))).UTC(),
			Actor: notice.Actor{ID: "u-ana", Name: "Ana", Role: notice.RoleFiscal}, Action: "edit", From: notice.StateDraft,
			To: notice.StateDraft, Detail: json.RawMessage(`{"field":"x"}`), PrevHash: prev}
		e.Hash = cases.EntryHash(prev, &e)
		prev = e.Hash
		out = append(out, e)
	}
	return out
}

func TestVerifyChain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func([]cases.Entry) []cases.Entry
		want   string // "" = intact
	}{
		{"intact", func(es []cases.Entry) []cases.Entry { return es }, ""},
		{"empty", func([]cases.Entry) []cases.Entry { return nil }, ""},
		{"detail edited", func(es []cases.Entry) []cases.Entry { es[1].Detail = json.RawMessage(`{"field":"y"}`); return es }, "registro 2 foi alterado"},
		{"actor edited", func(es []cases.Entry) []cases.Entry { es[2].Actor.Name = "Bia"; return es }, "registro 3 foi alterado"},
		{"entry removed", func(es []cases.Entry) []cases.Entry { return append(es[:1], es[2:]...) }, "quebrada antes do registro 3"},
		{"first removed", func(es []cases.Entry) []cases.Entry { return es[1:] }, "quebrada antes do registro 2"},
	} {
		err := cases.VerifyChain(tc.change(chain(4)))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
