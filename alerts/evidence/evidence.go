package evidence

import (
	"crypto/ed25519"
	"regexp"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/tz"
)

// Record is one stored 1-s level record.
type Record struct {
	T        time.Time
	DurMs    int64
	LAeq     float64
	LAFmax   float64
	LAFmin   float64
	LCpeak   *float64
	Overload bool
	Gateway  string
	Seq      uint64 // the batch that carried it
	Grade    string
	Synced   bool // gateway clock synchronised when the batch was built
	Hist     *level.Histogram
}

// EnvReading is one stored environmental reading; nil: not measured.
type EnvReading struct {
	T            time.Time
	Gateway      string
	Seq          uint64
	TemperatureC *float64
	HumidityPct  *float64
	PressureHPa  *float64
}

// Batch is one raw signed batch as received.
type Batch struct {
	Gateway          string
	Seq              uint64
	Body             []byte // exact signed bytes
	Sig              []byte
	VerifiedAtIngest bool
	ReceivedAt       time.Time // picks the gateway key in force (Package.GatewayKeys)
}

// BatchKey names a batch.
type BatchKey struct {
	Gateway string
	Seq     uint64
}

// GatewayKey is one of a gateway's keys with the time it was in force,
// [ValidFrom, ValidUntil); a zero bound is open.
type GatewayKey struct {
	Gateway    string
	PublicKey  ed25519.PublicKey
	ValidFrom  time.Time
	ValidUntil time.Time
	Revoked    bool
	Reason     string
}

func (k GatewayKey) covers(t time.Time) bool {
	return (k.ValidFrom.IsZero() || !t.Before(k.ValidFrom)) && (k.ValidUntil.IsZero() || t.Before(k.ValidUntil))
}

// Meter is the instrument behind the readings, as the register of meters
// keeps it.
type Meter struct {
	Model       string       `json:"model,omitempty"`
	Serial      string       `json:"serial,omitempty"`
	Grade       string       `json:"grade"`
	Calibration *Calibration `json:"calibration,omitempty"`
	FieldCheck  *FieldCheck  `json:"field_check,omitempty"`
	// Checks are the signed field-check messages (wire kind "check") the
	// bag carries, as received: the last one made by the window's start
	// and the first one after it. They go in data/checks.txt.
	Checks []Batch `json:"-"`
	// Source says where these data come from (e.g. "cadastro de sensores").
	Source string `json:"source,omitempty"`
	// Indicative is set when the register says the readings cannot ground
	// an act (expired calibration, serial mismatch…), with why.
	Indicative    bool   `json:"indicative,omitempty"`
	IndicativeWhy string `json:"indicative_why,omitempty"`
}

// Calibration is the meter's calibration certificate.
type Calibration struct {
	Certificate   string   `json:"certificate,omitempty"`
	Laboratory    string   `json:"laboratory,omitempty"`
	Date          string   `json:"date,omitempty"`   // YYYY-MM-DD
	Expiry        string   `json:"expiry,omitempty"` // YYYY-MM-DD
	UncertaintyDB *float64 `json:"uncertainty_db,omitempty"`
	FileName      string   `json:"file,omitempty"` // data/calibration/<FileName>, when File is set
	File          []byte   `json:"-"`
}

// FieldCheck is the last check of the meter with an acoustic calibrator.
type FieldCheck struct {
	At          time.Time `json:"at"`
	ReferenceDB float64   `json:"reference_db"`
	MeasuredDB  float64   `json:"measured_db"`
	FrequencyHz float64   `json:"frequency_hz,omitempty"`
}

// Act is one act of the case as issued: its stored PDF, byte for byte.
type Act struct {
	ID       string
	Kind     string // e.g. notificacao_preliminar, auto_de_infracao
	Name     string // file name under data/acts/ (sanitised; default <ID>.pdf)
	IssuedAt time.Time
	PDF      []byte
	// SHA256 is the digest the case store kept when the act was issued
	// (hex); Export refuses an act whose bytes no longer match it.
	SHA256 string
}

// Constatacao is one constatação record of the case (JSON as stored).
type Constatacao struct {
	ID   string
	At   time.Time
	JSON []byte
}

// Custody is one event of the chain of custody.
type Custody struct {
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Role   string    `json:"role,omitempty"`
	Action string    `json:"action"`
	Detail string    `json:"detail,omitempty"`
}

// Previous names the earlier bag of the same case.
type Previous struct {
	SHA256 string    // of the earlier zip
	Date   time.Time // its bag date
}

// Package is everything the bag holds.
type Package struct {
	AlertID      string
	Organization string // e.g. "Prefeitura Municipal de Lapa"
	CodeTitle    string // "Lei nº 1783/2004 (Lapa/PR)"
	Finding      notice.Finding
	Party        notice.Party
	Site         notice.Site
	Meter        Meter
	From, To     time.Time     // exported range: the window ± Margin
	Margin       time.Duration // stated in bag-info.txt and METODO.txt
	// Records in time order; or Stream, which yields them in time order
	// without holding them (the store's rows).
	Records []Record
	Stream  func(yield func(Record) bool) error
	Env     []EnvReading
	// Batches, or LoadBatches, which is given the batches the records and
	// env readings name (in first-seen order) and yields each.
	Batches     []Batch
	LoadBatches func(keys []BatchKey, yield func(Batch) error) error
	GatewayKeys []GatewayKey
	// GatewayKeysFor, when set, gives the keys of a gateway the batches name
	// that GatewayKeys lacks.
	GatewayKeysFor func(gateway string) []GatewayKey
	ServiceKeys    []PublicKeyInfo // the signing key's history; empty: the signing key alone
	Acts           []Act
	Constatacoes   []Constatacao
	// NoticePDF is a draft rendering, included only when Acts is empty.
	NoticePDF []byte
	NoticeID  string
	Chart     []byte // PNG
	// ChartFn, when set, draws the chart after the readings were streamed.
	ChartFn  func() ([]byte, error)
	Custody  []Custody
	Software string // e.g. "sossego v0.3.0 (commit abc123)"
	// Created is the bag's date: the case's last act, never the time of the
	// export, so the same case state exports the same bytes.
	Created  time.Time
	Previous *Previous
}

const (
	bagitTxt     = "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
	sigName      = "tagmanifest-sha256.txt.sig"
	verificarTxt = "VERIFICAR.txt"
)

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string { return strings.Trim(unsafe.ReplaceAllString(s, "_"), "_.") }

// BagName is the top directory of the bag for an alert.
func BagName(alertID string) string { return "evidencia-" + safeName(alertID) }

var saoPaulo = tz.Brasilia()
