package calibration

// FileName is the register's file in the service's data folder.
const FileName = "calibration.db"

// Sensor is what the register needs to know of a registered sensor.
type Sensor struct {
	ID           string
	Municipality string
}

// Row is one sensor in the register's overview.
type Row struct {
	Sensor       string  `json:"sensor"`
	Municipality string  `json:"municipality,omitempty"`
	Verdict      Verdict `json:"verdict"`
	Revisions    int     `json:"revisions"`
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
