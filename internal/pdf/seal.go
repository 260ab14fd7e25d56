package pdf

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
)

// Seal ties a printed page to the stored act and its evidence bag: every
// page carries it as text and as a QR code (URI).
type Seal struct {
	ID   string // the act's number; "sem-numero" before it has one
	Hash string // the first 16 hex digits of the SHA-256 of the act's canonical content
	Bag  string // the name of the alert's evidence bag
}

// SealHashLen is how many hex digits of the SHA-256 the seal prints (64
// bits).
const SealHashLen = 16

// URI is what the QR code encodes: "sossego:ato:<id>:<hash>".
func (s Seal) URI() string { return "sossego:ato:" + s.ID + ":" + s.Hash }

// sealContent is the canonical content of an act: what it states (the
// finding, the party, the constatações, the place of lavratura, the
// fiscal's circumstances, the penalty) and who issued it, when. What is recorded after issue (ciente, recusa and its
// witnesses, the prazo's end, regularisation, escalation, decision) lives
// in the audit trail and is left out, so the paper handed over at issue
// still matches the stored act afterwards. A draft's seal changes with
// every edit of its content.
type sealContent struct {
	ID           string                  `json:"id"`
	Kind         notice.Kind             `json:"kind"`
	Title        string                  `json:"title"`
	CodeID       string                  `json:"code_id"`
	CodeVersion  string                  `json:"code_version"`
	Article      string                  `json:"article"`
	Finding      notice.Finding          `json:"finding"`
	Party        notice.Party            `json:"party"`
	Site         notice.Site             `json:"site"`
	Penalty      codes.PenaltyOutcome    `json:"penalty"`
	Next         *codes.PenaltyOutcome   `json:"on_non_compliance,omitempty"`
	RefersTo     string                  `json:"refers_to,omitempty"`
	Agent        *notice.Agent           `json:"agent,omitempty"`
	IssuedAt     time.Time               `json:"issued_at,omitzero"`
	PrazoDays    int                     `json:"prazo_days,omitempty"`
	ImminentRisk bool                    `json:"imminent_risk,omitempty"`
	History      []codes.PriorInfraction `json:"history"`
	Constatacoes []notice.Constatacao    `json:"constatacoes,omitempty"`
	Lavratura    string                  `json:"lavratura_place,omitempty"`
	Circumst     string                  `json:"circumstances,omitempty"`
	Corrects     string                  `json:"corrects,omitempty"`
}

// rfc3339 matches the timestamps encoding/json writes, so that the
// canonical form can write each one in UTC: the same instant stored with
// another offset seals the same.
var rfc3339 = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`)

// Canonical is the act's canonical content as bytes: the JSON of what the
// act states (sealContent), every timestamp in UTC.
func Canonical(d notice.Document) ([]byte, error) {
	dr := d.Draft
	c := sealContent{ID: d.ID, Kind: dr.Kind, Title: dr.Title, CodeID: dr.CodeID, CodeVersion: dr.CodeVersion, Article: dr.Article,
		Finding: dr.Finding, Party: dr.Party, Site: dr.Site, Penalty: dr.Penalty, Next: dr.OnNonCompliance, Agent: d.Agent,
		IssuedAt: d.IssuedAt, PrazoDays: d.PrazoDays, ImminentRisk: d.ImminentRisk, History: dr.History}
	c.Constatacoes, c.Lavratura, c.Circumst = dr.Constatacoes, dr.LavraturaPlace, dr.Circumstances
	if dr.RefersTo != nil {
		c.RefersTo = dr.RefersTo.ID
	}
	if dr.Corrects != nil {
		c.Corrects = dr.Corrects.ID
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("pdf: seal: %w", err)
	}
	return rfc3339.ReplaceAllFunc(b, func(ts []byte) []byte {
		t, err := time.Parse(time.RFC3339Nano, string(ts[1:len(ts)-1]))
		if err != nil {
			return ts
		}
		return []byte(`"` + t.UTC().Format(time.RFC3339Nano) + `"`)
	}), nil
}

// SealOf is the seal of a document.
func SealOf(d notice.Document) (Seal, error) {
	b, err := Canonical(d)
	if err != nil {
		return Seal{}, err
	}
	sum := sha256.Sum256(b)
	id := d.ID
	if id == "" {
		id = "sem-numero"
	}
	return Seal{ID: id, Hash: hex.EncodeToString(sum[:])[:SealHashLen], Bag: evidence.BagName(d.Draft.Finding.AlertID)}, nil
}
