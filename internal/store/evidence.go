package store

import "time"

// StoredBatch is a stored signed batch as received (evidence packages).
type StoredBatch struct {
	Gateway    string
	Seq        uint64
	Sensor     string
	Kind       string
	Body       []byte // exact signed bytes
	Sig        []byte
	Verified   bool
	ReceivedAt time.Time
}
