package reports

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/pdf"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/tz"
)

var loc = tz.Brasilia()

// Tier is what reports and exports read of the long-term tier
// (internal/longterm).
type Tier interface {
	Fold(ctx context.Context, sensor string, e *stats.Engine, from, to time.Time) error
	// EachMinuteRow reads minutes with their percentiles and without
	// their histograms (exports); the row is reused after f returns.
	EachMinuteRow(ctx context.Context, sensor string, from, to time.Time, f func(*stats.MinuteRow) error) error
	EachHour(ctx context.Context, sensor string, from, to time.Time, f func(stats.Hour) error) error
}

// RecordReader reads 1-s records (the readings store) for 1-s exports.
type RecordReader interface {
	Records(ctx context.Context, sensor string, from, to time.Time, limit int) ([]store.Record, error)
}

// Engine computes reports, limit series and exports.
type Engine struct {
	tier    Tier
	records RecordReader
	codes   *codes.Set
}

// New returns an engine over the tier (nil: no reports nor 1-min exports),
// the readings store (nil: no 1-s exports) and the codes (nil: no limits).
func New(tier Tier, records RecordReader, set *codes.Set) *Engine {
	return &Engine{tier: tier, records: records, codes: set}
}

// HasTier says whether reports and 1-min exports can be computed.
func (e *Engine) HasTier() bool { return e.tier != nil }

// HasRecords says whether 1-s exports can be computed.
func (e *Engine) HasRecords() bool { return e.records != nil }

// CodeError says a sensor's code is not loaded: its limits are unknown.
type CodeError struct{ msg string }

func (e *CodeError) Error() string { return e.msg }

// LimitFunc binds a sensor to its code's ActiveLimitFor (nil, nil, nil
// without codes).
func (e *Engine) LimitFunc(s registry.Sensor) (stats.LimitFunc, *codes.Code, error) {
	if e.codes == nil {
		return nil, nil, nil
	}
	c, ok := e.codes.Code(s.Code)
	if !ok {
		return nil, nil, &CodeError{fmt.Sprintf("código municipal %q do sensor %s não está carregado", s.Code, s.ID)}
	}
	p, _ := s.Primary()
	return func(t time.Time) (codes.Limit, bool) { return c.ActiveLimitFor(s.Zone, p.Type, p.Mechanism, t) }, c, nil
}

// SensorReport is one sensor's report.
type SensorReport struct {
	Sensor       string `json:"sensor"`
	Municipality string `json:"municipality"`
	// MunicipalityName is the code's municipality and state ("Lapa/PR").
	MunicipalityName string            `json:"municipality_name,omitempty"`
	Code             string            `json:"code"`
	Zone             string            `json:"zone"`
	Address          string            `json:"address,omitempty"`
	Limits           []stats.LimitStep `json:"limits"`
	stats.Report
}

// Reports computes the report of each sensor over [from, to), and with
// withPDF the PDF report's input too.
func (e *Engine) Reports(ctx context.Context, sensors []registry.Sensor, from, to time.Time, withPDF bool) ([]SensorReport, pdf.ReportInput, error) {
	var out []SensorReport
	var pdfIn pdf.ReportInput
	for _, s := range sensors {
		sr, code, err := e.SensorReport(ctx, s, from, to)
		if err != nil {
			return nil, pdfIn, err
		}
		out = append(out, sr)
		if withPDF {
			ps, err := e.pdfSensor(ctx, s, sr, code, from, to)
			if err != nil {
				return nil, pdfIn, err
			}
			if code != nil && pdfIn.Municipality == "" {
				pdfIn.Municipality, pdfIn.State = code.Municipality, code.State
			}
			pdfIn.Sensors = append(pdfIn.Sensors, ps)
		}
	}
	return out, pdfIn, nil
}

// SensorReport folds one sensor's long-term tier over [from, to) under its
// code's limits and calendar. It also returns the code (nil when no codes
// are loaded); a *CodeError when the sensor's code is not.
func (e *Engine) SensorReport(ctx context.Context, s registry.Sensor, from, to time.Time) (SensorReport, *codes.Code, error) {
	limit, code, err := e.LimitFunc(s)
	if err != nil {
		return SensorReport{}, nil, err
	}
	opt := stats.Options{From: from, To: to, Limit: limit, Loc: loc}
	if code != nil {
		opt.Calendar = stats.CodeCalendar(code)
	}
	en := stats.New(opt)
	if err := e.tier.Fold(ctx, s.ID, en, from, to); err != nil {
		return SensorReport{}, nil, err
	}
	sr := SensorReport{Sensor: s.ID, Municipality: s.Municipality(), Code: s.Code, Zone: s.Zone, Address: s.Address,
		Limits: stats.LimitSeries(from, to, limit, loc), Report: en.Result()}
	if code != nil {
		sr.MunicipalityName = code.Municipality + "/" + code.State
	}
	return sr, code, nil
}

// pdfSensor is one sensor's part of the PDF report: its report and its
// hourly levels.
func (e *Engine) pdfSensor(ctx context.Context, s registry.Sensor, sr SensorReport, code *codes.Code, from, to time.Time) (pdf.ReportSensor, error) {
	ps := pdf.ReportSensor{ID: s.ID, Address: s.Address, Zone: s.Zone, Report: sr.Report, Limits: sr.Limits,
		Meter: strings.TrimSpace(s.Meter.Model + " " + s.Meter.Serial + " (" + s.Meter.Grade + ")")}
	if code != nil {
		ps.Code = code.Title()
	}
	err := e.tier.EachHour(ctx, s.ID, from, to, func(h stats.Hour) error {
		if lv, ok := h.LAeq(); ok {
			ps.Hours = append(ps.Hours, pdf.Point{T: h.Start, DurMs: h.DurMs, LAeq: lv, LAFmax: h.Max})
		}
		return nil
	})
	return ps, err
}

// LimitSeries is the limit in force for a sensor over [from, to) as steps;
// empty when no code is loaded.
func (e *Engine) LimitSeries(s registry.Sensor, from, to time.Time) ([]stats.LimitStep, error) {
	limit, _, err := e.LimitFunc(s)
	if err != nil {
		return nil, err
	}
	if limit == nil || !from.Before(to) {
		return []stats.LimitStep{}, nil
	}
	return stats.LimitSeries(from, to, limit, loc), nil
}

// Steps is the limit in force for a sensor over [from, to) as steps, never
// nil; a *CodeError when the sensor's code is not loaded.
func (e *Engine) Steps(s registry.Sensor, from, to time.Time) ([]stats.LimitStep, error) {
	limit, _, err := e.LimitFunc(s)
	if err != nil {
		return nil, err
	}
	steps := stats.LimitSeries(from, to, limit, loc)
	if steps == nil {
		steps = []stats.LimitStep{}
	}
	return steps, nil
}

// Window is the figures of a sensor's [from, to) from the tier, rounded in
// to whole minutes, so that no future second counts against the coverage.
func (e *Engine) Window(ctx context.Context, s registry.Sensor, from, to time.Time) (stats.Figures, error) {
	if e.tier == nil {
		return stats.Figures{}, errors.New("sem armazenamento de longo prazo")
	}
	limit, _, err := e.LimitFunc(s)
	if err != nil {
		limit = nil // the figures do not need it; minutes above stay 0
	}
	if f := from.Truncate(time.Minute); !f.Equal(from) {
		from = f.Add(time.Minute)
	}
	to = to.Truncate(time.Minute)
	if !from.Before(to) {
		return stats.Figures{}, nil
	}
	en := stats.New(stats.Options{From: from, To: to, Limit: limit, Loc: loc})
	if err := e.tier.Fold(ctx, s.ID, en, from, to); err != nil {
		return stats.Figures{}, err
	}
	return en.Result().Figures, nil
}

// ParseInstant reads RFC 3339 or a local date (YYYY-MM-DD, Brasília); a
// date as the end of a range means the end of that day.
func ParseInstant(s string, end bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return d, nil
	}
	return time.Time{}, errors.New("use uma data (2026-11-30, horário de Brasília) ou RFC 3339 (2026-11-30T22:00:00-03:00)")
}

// Range reads a request's from and to (fromS, toS; "" for the default) at
// now: defaults the local day so far; to no later than now (rounded up to
// the minute); from before to; at most max long; both rounded out to whole
// minutes. msg says, in pt-BR, what is wrong (what names the request).
func Range(fromS, toS string, now time.Time, max time.Duration, what string) (from, to time.Time, msg string) {
	y, m, d := now.In(loc).Date()
	from, to = time.Date(y, m, d, 0, 0, 0, 0, loc), now
	var err error
	if fromS != "" {
		if from, err = ParseInstant(fromS, false); err != nil {
			return from, to, "from inválido: " + err.Error()
		}
	}
	if toS != "" {
		if to, err = ParseInstant(toS, true); err != nil {
			return from, to, "to inválido: " + err.Error()
		}
	}
	if !from.Before(to) {
		return from, to, "o início (from) deve ser anterior ao fim (to)"
	}
	if to.Sub(from) > max {
		return from, to, fmt.Sprintf("intervalo de %s maior que o máximo de %s para %s; divida o pedido", Days(to.Sub(from)), Days(max), what)
	}
	if lim := now.Truncate(time.Minute).Add(time.Minute); to.After(lim) {
		to = lim
	}
	from = from.Truncate(time.Minute)
	if t := to.Truncate(time.Minute); !t.Equal(to) {
		to = t.Add(time.Minute)
	}
	if !from.Before(to) {
		return from, to, "o intervalo pedido está todo no futuro"
	}
	return from, to, ""
}

// Days says a duration in pt-BR: whole days from two days up, else hours.
func Days(d time.Duration) string {
	n := d.Hours() / 24
	if n >= 2 {
		return fmt.Sprintf("%.0f dias", math.Floor(n))
	}
	return fmt.Sprintf("%.0f horas", math.Ceil(d.Hours()))
}

// ReportName is a report's file name, without extension.
func ReportName(sensor, municipality string, from, to time.Time) string {
	who := sensor
	if who == "" {
		who = municipality
	}
	return fmt.Sprintf("relatorio-%s-%s-a-%s", safeName(who), from.In(loc).Format("20060102-1504"), to.In(loc).Format("20060102-1504"))
}

// ExportName is an export's file name.
func ExportName(id, res, format string, from, to time.Time) string {
	return fmt.Sprintf("sossego-%s-%s-a-%s-%s.%s", safeName(id), from.In(loc).Format("20060102-1504"), to.In(loc).Format("20060102-1504"), res, format)
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
