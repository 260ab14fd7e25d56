package dashboard

// Calibration routes (docs/metrology.md):
//
//	GET  /api/v1/calibration                              every role: each sensor's decision now (calibration.Decide: ok, why,
//	                                                      source) and the register's verdict (certificate, expiry, device, last field check)
//	GET  /api/v1/calibration/sensors/{sensor}             every role: the decision, the verdict, every certificate revision, field checks,
//	                                                      reported devices
//	GET  /api/v1/calibration/sensors/{sensor}/status      every role: ?at=RFC 3339 (default now): {ok, why, source, warnings}:
//	                                                      the decision the workflow applies (calibration.Decide)
//	POST /api/v1/calibration/sensors/{sensor}/certificates admin: a new revision (JSON; file_base64 optional PDF)
//	GET  /api/v1/calibration/certificates/{id}/file       every role: the revision's file (PDF), with its sha256
//	PUT  /api/v1/calibration/policy/{municipality}        admin: {"check_max_days": N} (0: back to the default 30)

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/calibration"
)

// CalibrationReader is what the calibration routes read of the register
// (*calibrationdb.Register): the overview, a sensor's verdict and record.
type CalibrationReader interface {
	Overview(ctx context.Context, at time.Time) ([]calibration.Row, error)
	Verdict(ctx context.Context, sensor string, at time.Time) (calibration.Verdict, error)
	Decide(ctx context.Context, sensor string, m calibration.SensorMeter, at time.Time) calibration.Decision
	History(ctx context.Context, sensor string) ([]calibration.Certificate, error)
	Checks(ctx context.Context, sensor string, limit int) ([]calibration.FieldCheck, error)
	Sightings(ctx context.Context, sensor string) ([]calibration.Sighting, error)
}

// CalibrationCertificates is what the admins' routes change and download
// of the register (*calibrationdb.Register).
type CalibrationCertificates interface {
	Add(ctx context.Context, c calibration.Certificate, file []byte, by string) (calibration.Certificate, error)
	File(ctx context.Context, id int64) (calibration.Certificate, []byte, error)
	SetPolicy(ctx context.Context, municipality string, days int, by string) error
}

// CalibrationOptions configure the calibration routes; *calibrationdb.Register
// is both Register and Certificates.
type CalibrationOptions struct {
	Register     CalibrationReader
	Certificates CalibrationCertificates
	Registry     APIRegistry // the sensors a certificate may name
	Now          func() time.Time
	Log          *slog.Logger
}

// CalibrationAPI serves the calibration routes.
type CalibrationAPI struct{ o CalibrationOptions }

// NewCalibrationAPI returns the routes.
func NewCalibrationAPI(o CalibrationOptions) *CalibrationAPI {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &CalibrationAPI{o: o}
}

func (c *CalibrationAPI) internal(w http.ResponseWriter, err error) {
	serverError(w, c.o.Log, "calibração", err)
}

// checkJSON is a field check with its drift.
type checkJSON struct {
	calibration.FieldCheck
	DriftDB float64 `json:"drift_db"`
}

func withDrift(ks []calibration.FieldCheck) []checkJSON {
	out := make([]checkJSON, len(ks))
	for i, k := range ks {
		out[i] = checkJSON{k, k.Drift()}
	}
	return out
}

func (c *CalibrationAPI) overview(w http.ResponseWriter, r *http.Request) {
	now := c.o.Now()
	rows, err := c.o.Register.Overview(r.Context(), now)
	if err != nil {
		c.internal(w, err)
		return
	}
	// Each row's decision is calibration.Decide's (over the register of
	// sensors' meter, Overview); why is the register's own verdict's.
	type rowJSON struct {
		calibration.Row
		Why       string     `json:"why,omitempty"`
		LastCheck *checkJSON `json:"last_check,omitempty"`
	}
	out := make([]rowJSON, len(rows))
	expiring, expired := 0, 0
	for i, row := range rows {
		out[i] = rowJSON{Row: row, Why: row.Verdict.Why()}
		if k := row.Verdict.LastCheck; k != nil {
			out[i].LastCheck = &checkJSON{*k, k.Drift()}
		}
		if row.Verdict.Expiring {
			expiring++
		}
		if row.Verdict.Expired {
			expired++
		}
	}
	apiJSON(w, http.StatusOK, map[string]any{"now": now.UTC(), "sensors": out, "expiring": expiring, "expired": expired,
		"expiring_within_days": int(calibration.ExpiringWithin / (24 * time.Hour))})
}

// known answers 404 for a sensor neither registered nor certified.
func (c *CalibrationAPI) known(w http.ResponseWriter, r *http.Request, sensor string, hist []calibration.Certificate) bool {
	if len(hist) > 0 {
		return true
	}
	if c.o.Registry != nil {
		if _, ok := c.o.Registry.Current().Sensor(sensor); ok {
			return true
		}
	}
	apiError(w, http.StatusNotFound, "sensor "+strconv.Quote(sensor)+" não está no cadastro")
	return false
}

func (c *CalibrationAPI) sensor(w http.ResponseWriter, r *http.Request) {
	ctx, id, now := r.Context(), r.PathValue("sensor"), c.o.Now()
	hist, err := c.o.Register.History(ctx, id)
	if err != nil {
		c.internal(w, err)
		return
	}
	if !c.known(w, r, id, hist) {
		return
	}
	v, err := c.o.Register.Verdict(ctx, id, now)
	if err != nil {
		c.internal(w, err)
		return
	}
	d := c.o.Register.Decide(ctx, id, c.meter(id), now)
	d.Verdict = nil // the answer's verdict
	checks, err := c.o.Register.Checks(ctx, id, 100)
	if err != nil {
		c.internal(w, err)
		return
	}
	seen, err := c.o.Register.Sightings(ctx, id)
	if err != nil {
		c.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, map[string]any{"sensor": id, "now": now.UTC(), "decision": d, "verdict": v, "why": v.Why(),
		"certificates": hist, "checks": withDrift(checks), "devices": seen})
}

func (c *CalibrationAPI) status(w http.ResponseWriter, r *http.Request) {
	id, at := r.PathValue("sensor"), c.o.Now()
	if s := r.URL.Query().Get("at"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			apiError(w, http.StatusBadRequest, "parâmetro at inválido: use data e hora RFC 3339, como 2026-12-01T22:00:00-03:00")
			return
		}
		at = t
	}
	// The decision the workflow applies (calibration.Decide).
	d := c.o.Register.Decide(r.Context(), id, c.meter(id), at)
	out := map[string]any{"sensor": id, "at": at.UTC(), "ok": d.OK, "why": d.Why, "source": d.Source}
	if v := d.Verdict; v != nil {
		out["reasons"], out["warnings"] = v.Reasons, v.Warnings
	}
	apiJSON(w, http.StatusOK, out)
}

// meter is the sensor's meter in the register of sensors in force (none:
// a sensor out of it, or no register of sensors wired).
func (c *CalibrationAPI) meter(id string) calibration.SensorMeter {
	if c.o.Registry == nil {
		return calibration.SensorMeter{}
	}
	sn, _ := c.o.Registry.Current().Sensor(id)
	return sn.Meter.Calibration()
}

// certificateIn is the body of a new revision.
type certificateIn struct {
	Number        string  `json:"number"`
	Laboratory    string  `json:"laboratory"`
	MeterModel    string  `json:"meter_model"`
	MeterSerial   string  `json:"meter_serial"`
	CalibratedOn  string  `json:"calibrated_on"`
	Expires       string  `json:"expires"`
	UncertaintyDB float64 `json:"uncertainty_db"`
	Note          string  `json:"note"`
	Replaces      int64   `json:"replaces"`
	FileName      string  `json:"file_name"`
	FileBase64    string  `json:"file_base64"`
}

// maxCertificateBody bounds the JSON of a revision: a 10 MiB file in base64.
const maxCertificateBody = calibration.MaxFileSize*4/3 + 64<<10

func (c *CalibrationAPI) add(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("sensor")
	var in certificateIn
	if err := readJSON(w, r, maxCertificateBody, jsonBody, &in); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if c.o.Registry != nil {
		if _, ok := c.o.Registry.Current().Sensor(id); !ok {
			apiError(w, http.StatusNotFound, "sensor "+strconv.Quote(id)+" não está no cadastro")
			return
		}
	}
	var file []byte
	if in.FileBase64 != "" {
		var err error
		if file, err = base64.StdEncoding.DecodeString(in.FileBase64); err != nil {
			apiError(w, http.StatusBadRequest, "file_base64 não é base64 válido")
			return
		}
	}
	cert := calibration.Certificate{Sensor: id, Number: strings.TrimSpace(in.Number), Laboratory: strings.TrimSpace(in.Laboratory),
		MeterModel: strings.TrimSpace(in.MeterModel), MeterSerial: strings.TrimSpace(in.MeterSerial), CalibratedOn: in.CalibratedOn,
		Expires: in.Expires, UncertaintyDB: in.UncertaintyDB, Note: in.Note, Replaces: in.Replaces, FileName: in.FileName}
	got, err := c.o.Certificates.Add(r.Context(), cert, file, sessionUser(r).Name)
	var ve *calibration.ValidationError
	if errors.As(err, &ve) {
		apiJSON(w, http.StatusBadRequest, map[string]any{"erro": "corrija: " + strings.Join(ve.Problems, "; "), "problemas": ve.Problems})
		return
	}
	if err != nil {
		c.internal(w, err)
		return
	}
	apiJSON(w, http.StatusCreated, got)
}

func (c *CalibrationAPI) file(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		apiError(w, http.StatusBadRequest, "identificador de certificado inválido")
		return
	}
	cert, data, err := c.o.Certificates.File(r.Context(), id)
	if errors.Is(err, calibration.ErrNotFound) {
		apiError(w, http.StatusNotFound, "certificado sem arquivo ou inexistente")
		return
	}
	if err != nil {
		c.internal(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="`+safeFileName(cert.FileName)+`"`)
	w.Header().Set("X-Content-SHA256", cert.FileSHA256)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(data)
}

// safeFileName keeps a file name's letters, digits and . _ - only.
func safeFileName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "certificado.pdf"
	}
	return string(b)
}

func (c *CalibrationAPI) policy(w http.ResponseWriter, r *http.Request) {
	var in struct {
		CheckMaxDays int `json:"check_max_days"`
	}
	if err := readJSON(w, r, 4<<10, jsonBody, &in); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	muni := r.PathValue("municipality")
	err := c.o.Certificates.SetPolicy(r.Context(), muni, in.CheckMaxDays, sessionUser(r).Name)
	var ve *calibration.ValidationError
	if errors.As(err, &ve) {
		apiJSON(w, http.StatusBadRequest, map[string]any{"erro": "corrija: " + strings.Join(ve.Problems, "; "), "problemas": ve.Problems})
		return
	}
	if err != nil {
		c.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, map[string]any{"municipality": muni, "check_max_days": in.CheckMaxDays})
}
