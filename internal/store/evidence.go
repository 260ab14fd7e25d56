package store

import "time"

// StoredBatch is a stored signed batch as received (evidence packages,
// the calibration register's catch-up).
type StoredBatch struct {
	Gateway      string
	Municipality string
	Seq          uint64
	Sensor       string
	Kind         string
	Body         []byte // exact signed bytes
	Sig          []byte
	Verified     bool
	ReceivedAt   time.Time
}
