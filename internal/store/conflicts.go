package store

import (
	"encoding/json"
	"time"
)

// Conflicts and skipped seqs: what a store keeps when data disagrees with
// what it holds, instead of dropping it (the SQLite store's conflicts.go
// says how).

// SeqSkip asks Apply to move a gateway's watermark up to Upto even though
// seqs below it were never stored: they will not arrive (the gateway
// holds an ack above them from an earlier state of this store, e.g. a data
// folder restored from a backup). Apply records the seqs skipped.
type SeqSkip struct {
	Gateway string
	Upto    uint64
	Reason  string // why, for the record (Portuguese)
}

// SeqRange is a range of seqs, both ends included.
type SeqRange struct{ First, Last uint64 }

// RecordConflict is a record that arrived for a (sensor, start) that
// already had a different one.
type RecordConflict struct {
	ID         int64          `json:"id"`
	ReceivedAt time.Time      `json:"received_at"`
	Kind       string         `json:"kind"` // levels | env
	Sensor     string         `json:"sensor"`
	T          time.Time      `json:"t"`
	Kept       ConflictRecord `json:"kept"`
	New        ConflictRecord `json:"new"`
}

// ConflictRecord is one side of a conflict: the batch it came in and the
// record in wire form (a wire.Record or wire.EnvRecord).
type ConflictRecord struct {
	Gateway string          `json:"gateway"`
	Seq     uint64          `json:"seq"`
	Record  json.RawMessage `json:"record"`
}

// SeqSkipRecord is one recorded skip of a gateway's seqs.
type SeqSkipRecord struct {
	Gateway string    `json:"gateway"`
	First   uint64    `json:"first"`
	Last    uint64    `json:"last"`
	At      time.Time `json:"at"`
	Reason  string    `json:"reason"`
}
