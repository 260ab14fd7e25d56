package calibration

// FileName is the register's file in the service's data folder.
const FileName = "calibration.db"

// Sensor is what the register needs to know of a registered sensor: its
// municipality (the field-check policy) and its meter as the register of
// sensors keeps it (the grade Decide needs).
type Sensor struct {
	ID           string
	Municipality string
	Meter        SensorMeter
}

// Row is one sensor in the register's overview: the register's own
// verdict (certificate, expiry, device, field check) and Decide's decision,
// which is whether the readings may found a constatação (its Verdict is
// nil: the row's Verdict is the same).
type Row struct {
	Sensor       string   `json:"sensor"`
	Municipality string   `json:"municipality,omitempty"`
	Verdict      Verdict  `json:"verdict"`
	Decision     Decision `json:"decision"`
	Revisions    int      `json:"revisions"`
}

// SignedCheck is a stored field check with the exact bytes the gateway
// signed and its signature (nil: unsigned), as evidence carries it.
type SignedCheck struct {
	FieldCheck
	Body []byte
	Sig  []byte
}

// MaxCheckDays bounds a municipality's field-check policy.
const MaxCheckDays = 366
