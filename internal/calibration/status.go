// Package calibration is the metrology the product keeps for each meter:
// the register of calibration certificates (with history, never
// overwritten, and the certificate's file), the field checks gateways make
// with an acoustic calibrator (signed wire check messages), the meter model
// and serial that signed batches report, and the verdict that says whether
// a meter's readings may found a constatação or a notice, or are only
// indicativas (docs/metrology.md).
//
// Evaluate is the pure rule: given a sensor's facts and an instant it
// returns the verdict, with no I/O and no clock; Decide is the rule whether
// readings may found a constatação. This package holds no driver: the
// register's store (calibration.db), its ingest observer and its /metrics
// gauges are in calibrationdb.
//
// Overview of its parts: the metrology kept per meter, as types and rules
// without a driver: calibration certificates (number, laboratory, dates,
// uncertainty, the PDF's sha256; append-only revisions) and their validation
// (pt-BR), calibrator field checks (signed `check` messages, with their
// drift), the meter model and serial signed batches report, each
// municipality's field-check policy bounds; pure `Evaluate` (readings
// "indicativas" when no certificate covers the instant, it expired, or the
// batches report another meter) and `Decide`, the one rule whether readings
// may found a constatação (never for a meter the register of sensors does not
// grade class 1 or 2; otherwise the register's verdict once it holds a
// certificate of the sensor, else the register of sensors' calibration date),
// for the workflow, the alert card, the Metrologia page, the gauges and the
// CLI; what the dashboard imports.
package calibration

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sossego/sossego/internal/tz"
	"github.com/sossego/sossego/internal/wire"
)

// Certificate is one revision of a meter's calibration certificate. A
// correction or a new calibration is a new revision; none is ever changed
// or deleted (Replaces names the revision a correction supersedes).
type Certificate struct {
	ID            int64   `json:"id"`
	Sensor        string  `json:"sensor"`
	Number        string  `json:"number"`        // the certificate's number
	Laboratory    string  `json:"laboratory"`    // who calibrated (e.g. a RBC-accredited laboratory)
	MeterModel    string  `json:"meter_model"`   // the instrument the certificate covers
	MeterSerial   string  `json:"meter_serial"`  //
	CalibratedOn  string  `json:"calibrated_on"` // YYYY-MM-DD (Brasília)
	Expires       string  `json:"expires"`       // YYYY-MM-DD, valid through that day (Brasília)
	UncertaintyDB float64 `json:"uncertainty_db"`
	Note          string  `json:"note,omitempty"`
	Replaces      int64   `json:"replaces,omitempty"`

	FileName   string `json:"file_name,omitempty"`
	FileSHA256 string `json:"file_sha256,omitempty"` // hex; the file is kept in the register
	FileSize   int64  `json:"file_size,omitempty"`

	RecordedAt time.Time `json:"recorded_at"`
	RecordedBy string    `json:"recorded_by"`
}

// FieldCheck is a calibrator check a gateway sent (a signed wire check
// message).
type FieldCheck struct {
	ID               int64     `json:"id"`
	Sensor           string    `json:"sensor"`
	Gateway          string    `json:"gateway"`
	Municipality     string    `json:"municipality"`
	Seq              uint64    `json:"seq"`
	At               time.Time `json:"at"`
	ReferenceDB      float64   `json:"reference_db"`
	MeasuredDB       float64   `json:"measured_db"`
	FrequencyHz      float64   `json:"frequency_hz"`
	CalibratorModel  string    `json:"calibrator_model"`
	CalibratorSerial string    `json:"calibrator_serial"`
	Note             string    `json:"note,omitempty"`
	MeterModel       string    `json:"meter_model"` // as the signed check reports it
	MeterSerial      string    `json:"meter_serial"`
	Verified         bool      `json:"verified"`
	ReceivedAt       time.Time `json:"received_at"`
}

// Drift is the measured level less the calibrator's reference.
func (c FieldCheck) Drift() float64 { return math.Round((c.MeasuredDB-c.ReferenceDB)*100) / 100 }

// Sighting is the meter model and serial a sensor's signed batches started
// to report at At (until the next sighting).
type Sighting struct {
	Sensor  string    `json:"sensor"`
	Model   string    `json:"model"`
	Serial  string    `json:"serial"`
	At      time.Time `json:"at"`
	Gateway string    `json:"gateway"`
	Seq     uint64    `json:"seq"`
}

// Rule defaults.
const (
	// DefaultCheckMaxAge is how old the latest field check may be before
	// it is flagged, when the municipality has no policy of its own.
	DefaultCheckMaxAge = 30 * 24 * time.Hour
	// ExpiringWithin is how far ahead an expiring certificate is announced.
	ExpiringWithin = 30 * 24 * time.Hour
	// MaxDriftDB is the field-check drift beyond which the check is flagged.
	MaxDriftDB = 0.5
)

// Facts are what the rule knows about one sensor.
type Facts struct {
	Certificates []Certificate // every revision, any order
	Sightings    []Sighting    // any order
	Checks       []FieldCheck  // any order
	CheckMaxAge  time.Duration // the municipality's policy; zero: DefaultCheckMaxAge
}

// Verdict is the rule's answer for a sensor at an instant.
type Verdict struct {
	// OK is false when the readings are indicativas: alerts still fire,
	// but no constatação or notice may rest on them. Reasons say why.
	OK       bool     `json:"ok"`
	Reasons  []string `json:"reasons,omitempty"`
	Warnings []string `json:"warnings,omitempty"`

	Certificate *Certificate `json:"certificate,omitempty"` // in force at the instant
	Expired     bool         `json:"expired"`
	Expiring    bool         `json:"expiring"`  // expires within ExpiringWithin
	DaysLeft    int          `json:"days_left"` // calendar days to the expiry date, while Expiring
	Mismatch    bool         `json:"mismatch"`  // signed batches report another model or serial
	Device      *Sighting    `json:"device,omitempty"`
	LastCheck   *FieldCheck  `json:"last_check,omitempty"`
	CheckStale  bool         `json:"check_stale"` // no check, or older than the policy
	CheckAge    float64      `json:"check_age_seconds,omitempty"`
	DriftHigh   bool         `json:"drift_high"`
	// CheckMaxDays is the field-check policy applied, in days.
	CheckMaxDays int `json:"check_max_days"`
}

// Why is the pt-BR reason the readings are indicativas ("" when OK).
func (v Verdict) Why() string {
	if v.OK {
		return ""
	}
	return "leituras indicativas: " + strings.Join(v.Reasons, "; ")
}

// dayStart is the start of the Brasília day d (YYYY-MM-DD).
func dayStart(d string) (time.Time, error) {
	return time.ParseInLocation(time.DateOnly, d, tz.Brasilia())
}

// brDate prints a YYYY-MM-DD date as DD/MM/AAAA.
func brDate(d string) string {
	t, err := dayStart(d)
	if err != nil {
		return d
	}
	return t.Format("02/01/2006")
}

// brNum prints v with two decimals and a decimal comma.
func brNum(v float64) string {
	return strings.Replace(fmt.Sprintf("%.2f", v), ".", ",", 1)
}

// inForce is the certificate in force at at: of the revisions calibrated
// on or before that day, the latest calibration, and of its revisions the
// latest recorded (a correction supersedes what it corrects).
func inForce(certs []Certificate, at time.Time) *Certificate {
	var best *Certificate
	var bestDay time.Time
	for i := range certs {
		c := &certs[i]
		day, err := dayStart(c.CalibratedOn)
		if err != nil || day.After(at) {
			continue
		}
		if best == nil || day.After(bestDay) || (day.Equal(bestDay) && c.ID > best.ID) {
			best, bestDay = c, day
		}
	}
	return best
}

// Evaluate is the rule (docs/metrology.md): the readings of a sensor at at
// are indicativas when no certificate covers at, when the certificate in
// force has expired by then, or when the signed batches of the time report
// a meter model or serial other than the certificate's. Warnings (the
// readings stay usable): a certificate expiring within 30 days, no field
// check or one older than the policy, a drift beyond ±0.5 dB.
func Evaluate(f Facts, at time.Time) Verdict {
	v := Verdict{OK: true}
	c := inForce(f.Certificates, at)
	if c == nil {
		v.reason(noCertificate(f.Certificates))
	} else {
		cc := *c
		v.Certificate = &cc
		v.judgeExpiry(c, at)
	}
	v.judgeDevice(deviceAt(f.Sightings, at), c)
	maxAge := f.CheckMaxAge
	if maxAge <= 0 {
		maxAge = DefaultCheckMaxAge
	}
	v.judgeCheck(lastCheck(f.Checks, at), maxAge, at)
	return v
}

// reason makes the readings indicativas, saying why.
func (v *Verdict) reason(s string) { v.OK = false; v.Reasons = append(v.Reasons, s) }

// noCertificate is the reason when no certificate is in force: none
// recorded, or the first one recorded is later.
func noCertificate(certs []Certificate) string {
	first := ""
	for _, x := range certs {
		if first == "" || x.CalibratedOn < first {
			first = x.CalibratedOn
		}
	}
	if first == "" {
		return "nenhum certificado de calibração cadastrado para o medidor"
	}
	return fmt.Sprintf("nenhum certificado de calibração cobre esta data (o primeiro cadastrado é de %s)", brDate(first))
}

// judgeExpiry marks the certificate in force expired by at (a reason) or
// expiring within ExpiringWithin (a warning, with the calendar days left).
func (v *Verdict) judgeExpiry(c *Certificate, at time.Time) {
	exp, err := dayStart(c.Expires)
	if err != nil {
		return
	}
	end := exp.AddDate(0, 0, 1)
	if !at.Before(end) {
		v.Expired = true
		v.reason(fmt.Sprintf("o certificado de calibração nº %s venceu em %s", c.Number, brDate(c.Expires)))
		return
	}
	if end.Sub(at) > ExpiringWithin {
		return
	}
	v.Expiring = true
	// Calendar days from at's Brasília date to the expiry date.
	y, m, d := at.In(tz.Brasilia()).Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	v.DaysLeft = int(math.Round(time.Date(exp.Year(), exp.Month(), exp.Day(), 0, 0, 0, 0, time.UTC).Sub(today).Hours() / 24))
	when := fmt.Sprintf("em %s (%d dias)", brDate(c.Expires), v.DaysLeft)
	switch v.DaysLeft {
	case 0:
		when = "hoje, " + brDate(c.Expires)
	case 1:
		when = "amanhã, " + brDate(c.Expires)
	}
	v.Warnings = append(v.Warnings, fmt.Sprintf("o certificado de calibração nº %s vence %s", c.Number, when))
}

// deviceAt is the meter the signed batches reported at at: the last
// sighting made by then (nil: none).
func deviceAt(sightings []Sighting, at time.Time) *Sighting {
	var seen *Sighting
	for i := range sightings {
		s := &sightings[i]
		if !s.At.After(at) && (seen == nil || s.At.After(seen.At)) {
			seen = s
		}
	}
	return seen
}

// judgeDevice records the device in force and, against the certificate in
// force (if any), a serial or model mismatch (reasons).
func (v *Verdict) judgeDevice(seen *Sighting, c *Certificate) {
	if seen == nil {
		return
	}
	ss := *seen
	v.Device = &ss
	if c == nil {
		return
	}
	if strings.TrimSpace(seen.Serial) != strings.TrimSpace(c.MeterSerial) {
		v.Mismatch = true
		v.reason(fmt.Sprintf("os lotes assinados informam o número de série %q, diferente do %q do certificado nº %s",
			seen.Serial, c.MeterSerial, c.Number))
	}
	if !strings.EqualFold(strings.TrimSpace(seen.Model), strings.TrimSpace(c.MeterModel)) {
		v.Mismatch = true
		v.reason(fmt.Sprintf("os lotes assinados informam o modelo %q, diferente do %q do certificado nº %s",
			seen.Model, c.MeterModel, c.Number))
	}
}

// lastCheck is the latest field check made by at (of two at the same
// instant, the later recorded; nil: none).
func lastCheck(checks []FieldCheck, at time.Time) *FieldCheck {
	var last *FieldCheck
	for i := range checks {
		k := &checks[i]
		if !k.At.After(at) && (last == nil || k.At.After(last.At) || (k.At.Equal(last.At) && k.ID > last.ID)) {
			last = k
		}
	}
	return last
}

// judgeCheck records the last field check and warns when there is none,
// when it is older than maxAge, or when its drift exceeds MaxDriftDB.
func (v *Verdict) judgeCheck(last *FieldCheck, maxAge time.Duration, at time.Time) {
	days := int(maxAge / (24 * time.Hour))
	v.CheckMaxDays = days
	if last == nil {
		v.CheckStale = true
		v.Warnings = append(v.Warnings, fmt.Sprintf("nenhuma verificação de campo com calibrador registrada (a política do município pede uma a cada %d dias)", days))
		return
	}
	lc := *last
	v.LastCheck = &lc
	age := at.Sub(last.At)
	v.CheckAge = age.Seconds()
	if age > maxAge {
		v.CheckStale = true
		v.Warnings = append(v.Warnings, fmt.Sprintf("a última verificação de campo foi em %s, há %d dias (a política do município pede uma a cada %d dias)",
			last.At.In(tz.Brasilia()).Format("02/01/2006"), int(age.Hours()/24), days))
	}
	if d := last.Drift(); math.Abs(d) > MaxDriftDB {
		v.DriftHigh = true
		v.Warnings = append(v.Warnings, fmt.Sprintf("a última verificação de campo mediu %s dB para %s dB do calibrador: desvio de %s dB, acima de ±%s dB",
			brNum(last.MeasuredDB), brNum(last.ReferenceDB), brNum(d), brNum(MaxDriftDB)))
	}
}

// ValidationError lists what is wrong with a certificate, in pt-BR.
type ValidationError struct{ Problems []string }

func (e *ValidationError) Error() string {
	return "certificado de calibração inválido: " + strings.Join(e.Problems, "; ")
}

// Limits of a certificate.
const (
	MaxTextLen  = 200
	MaxNoteLen  = 2000
	MaxFileSize = 10 << 20
	// MaxUncertaintyDB bounds the expanded uncertainty a certificate may
	// state (a class 2 meter's is under 1.5 dB).
	MaxUncertaintyDB = 5.0
)

// Validate checks a certificate before it is recorded; now is the
// recording time (a calibration cannot be dated in the future). file is
// the certificate's file, if any (a PDF).
func Validate(c Certificate, file []byte, now time.Time) error {
	var p []string
	add := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	if !wire.ValidID(c.Sensor) {
		add("sensor %q inválido: use o identificador do cadastro (letras minúsculas, dígitos, - e _)", c.Sensor)
	}
	for _, f := range []struct{ name, v string }{{"o número do certificado", c.Number}, {"o laboratório", c.Laboratory},
		{"o modelo do medidor", c.MeterModel}, {"o número de série do medidor", c.MeterSerial}} {
		switch {
		case strings.TrimSpace(f.v) == "":
			add("informe %s", f.name)
		case len(f.v) > MaxTextLen:
			add("%s tem %d bytes; o máximo é %d", f.name, len(f.v), MaxTextLen)
		case !utf8.ValidString(f.v):
			add("%s não é texto UTF-8 válido", f.name)
		}
	}
	if len(c.Note) > MaxNoteLen {
		add("a observação tem %d bytes; o máximo é %d", len(c.Note), MaxNoteLen)
	}
	cal, errCal := dayStart(c.CalibratedOn)
	exp, errExp := dayStart(c.Expires)
	switch {
	case c.CalibratedOn == "":
		add("informe a data de calibração (AAAA-MM-DD)")
	case errCal != nil:
		add("data de calibração %q inválida: use AAAA-MM-DD", c.CalibratedOn)
	case cal.After(now):
		add("a data de calibração %s está no futuro", brDate(c.CalibratedOn))
	}
	switch {
	case c.Expires == "":
		add("informe a validade do certificado (AAAA-MM-DD)")
	case errExp != nil:
		add("validade %q inválida: use AAAA-MM-DD", c.Expires)
	case errCal == nil && !exp.After(cal):
		add("a validade (%s) precisa ser posterior à data de calibração (%s)", brDate(c.Expires), brDate(c.CalibratedOn))
	}
	switch u := c.UncertaintyDB; {
	case math.IsNaN(u) || math.IsInf(u, 0) || u <= 0:
		add("informe a incerteza expandida do certificado, em dB (maior que zero)")
	case u > MaxUncertaintyDB:
		add("incerteza de %s dB acima de %s dB: confira o certificado", brNum(u), brNum(MaxUncertaintyDB))
	}
	if file != nil {
		switch {
		case len(file) == 0:
			add("o arquivo do certificado está vazio")
		case len(file) > MaxFileSize:
			add("o arquivo do certificado tem %d bytes; o máximo é %d MiB", len(file), MaxFileSize>>20)
		case !strings.HasPrefix(string(file[:min(len(file), 5)]), "%PDF-"):
			add("o arquivo do certificado não é um PDF")
		}
		if c.FileName == "" {
			add("informe o nome do arquivo do certificado")
		}
	}
	if len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

// ErrNotFound is returned for an unknown certificate, file or sensor.
var ErrNotFound = errors.New("calibration: not found")
