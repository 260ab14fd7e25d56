package cases

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sossego/sossego/alerts/notice"
)

// Entry is one audit-trail entry.
type Entry struct {
	Seq        int64           `json:"seq"`
	DocumentID string          `json:"document_id"`
	At         time.Time       `json:"at"`
	Actor      notice.Actor    `json:"actor"`
	Action     string          `json:"action"`
	From       notice.State    `json:"from_state"`
	To         notice.State    `json:"to_state"`
	Detail     json.RawMessage `json:"detail"`
	PrevHash   string          `json:"prev_hash"`
	Hash       string          `json:"hash"`
}

// EntryHash is the SHA-256 (hex) chaining e to the entry before it, whose
// hash is prev.
func EntryHash(prev string, e *Entry) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%d\n%s\n%s\n%s\n%s\n%s\n%s\n", prev, e.DocumentID, e.At.UnixMilli(), e.Actor.ID, e.Actor.Name,
		e.Actor.Role, e.Action, e.From, e.To)
	h.Write(e.Detail)
	return hex.EncodeToString(h.Sum(nil))
}

// VerifyChain recomputes the hash chain of a whole trail, oldest first, and
// reports the first entry that does not match.
func VerifyChain(es []Entry) error {
	prev := ""
	for _, e := range es {
		if e.PrevHash != prev {
			return fmt.Errorf("cases: trilha de auditoria quebrada antes do registro %d (registro anterior removido ou alterado)", e.Seq)
		}
		if h := EntryHash(prev, &e); h != e.Hash {
			return fmt.Errorf("cases: trilha de auditoria: registro %d foi alterado", e.Seq)
		}
		prev = e.Hash
	}
	return nil
}

// FineEntry is the audit entry of a fine valued anew at issue (Revalue) on
// document id: the valuation of the draft and the one of the act, before
// the issue's own entry.
func FineEntry(id string, a notice.Action, state notice.State, before, after *notice.Fine) Entry {
	text := func(f *notice.Fine) string {
		if f == nil {
			return ""
		}
		return f.Text
	}
	amount := func(f *notice.Fine) string {
		if f == nil {
			return ""
		}
		return f.Amount
	}
	detail, err := json.Marshal(map[string]string{"field": "multa", "before": text(before), "after": text(after),
		"before_amount": amount(before), "after_amount": amount(after), "matricula": a.Actor.Matricula,
		"reason": "multa valorada na data da emissão com o valor da unidade monetária vigente"})
	if err != nil {
		panic(fmt.Sprintf("cases: encode: %v", err)) // a map of strings always encodes
	}
	return Entry{DocumentID: id, At: a.At, Actor: a.Actor, Action: "revalue_fine", From: state, To: state, Detail: json.RawMessage(detail)}
}
