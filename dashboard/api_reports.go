package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/pdf"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/tz"
)

// Reports and exports (docs/api.md, "Reports and exports"):
//
//	GET /api/v1/reports?sensor=…|municipality=…&from=…&to=…&format=json|csv|pdf
//	GET /api/v1/sensors/{id}/export?from=…&to=…&res=1s|1min&format=csv|json
//	GET /api/v1/sensors/{id}/limits?from=…&to=…
//
// Reports are computed by internal/stats from the long-term tier; exports
// stream (one hour of data in memory at a time).

// ReportTier is what reports and exports read of the long-term tier
// (internal/longterm).
type ReportTier interface {
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

// ReportsOptions configure the reports handler.
type ReportsOptions struct {
	Registry APIRegistry
	Tier     ReportTier
	Records  RecordReader // nil: res=1s exports answer 503
	Codes    *codes.Set
	Now      func() time.Time
	Log      *slog.Logger
	// MaxReport bounds a report's range (default 366 days); Max1s and
	// Max1min an export's (defaults 31 days and 5 years).
	MaxReport, Max1s, Max1min time.Duration
	// Concurrent bounds the reports and exports computed at once (default
	// 4); a request beyond it gets 503 at once rather than waiting.
	Concurrent int
}

// Reports serves reports, exports and limit series.
type Reports struct {
	o    ReportsOptions
	sema chan struct{}
}

// NewReports returns the handler.
func NewReports(o ReportsOptions) *Reports {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxReport <= 0 {
		o.MaxReport = 366 * 24 * time.Hour
	}
	if o.Max1s <= 0 {
		o.Max1s = 31 * 24 * time.Hour
	}
	if o.Max1min <= 0 {
		o.Max1min = 5 * 366 * 24 * time.Hour
	}
	if o.Concurrent <= 0 {
		o.Concurrent = 4
	}
	return &Reports{o: o, sema: make(chan struct{}, o.Concurrent)}
}

// Register adds the routes to mux (the API's mux, behind the session).
func (rp *Reports) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/reports", rp.report)
	mux.HandleFunc("GET /api/v1/sensors/{id}/export", rp.export)
	mux.HandleFunc("GET /api/v1/sensors/{id}/limits", rp.limits)
}

func (rp *Reports) internal(w http.ResponseWriter, err error) {
	serverError(w, rp.o.Log, "relatórios e exportações", err)
}

// acquire takes a slot or answers 503.
func (rp *Reports) acquire(w http.ResponseWriter) bool {
	select {
	case rp.sema <- struct{}{}:
		return true
	default:
		w.Header().Set("Retry-After", "5")
		apiError(w, http.StatusServiceUnavailable, "há relatórios ou exportações demais em andamento; tente de novo em alguns segundos")
		return false
	}
}

func (rp *Reports) release() { <-rp.sema }

var loc = tz.Brasilia()

// parseInstant reads RFC 3339 or a local date (YYYY-MM-DD, Brasília); a
// date as the end of a range means the end of that day.
func parseInstant(s string, end bool) (time.Time, error) {
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

// rangeOf reads from and to: defaults the local day so far; to no later
// than now (rounded up to the minute); from before to; at most max long.
// Both are rounded out to whole minutes.
func (rp *Reports) rangeOf(q map[string][]string, max time.Duration, what string) (from, to time.Time, msg string) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	now := rp.o.Now()
	y, m, d := now.In(loc).Date()
	from, to = time.Date(y, m, d, 0, 0, 0, 0, loc), now
	var err error
	if s := get("from"); s != "" {
		if from, err = parseInstant(s, false); err != nil {
			return from, to, "from inválido: " + err.Error()
		}
	}
	if s := get("to"); s != "" {
		if to, err = parseInstant(s, true); err != nil {
			return from, to, "to inválido: " + err.Error()
		}
	}
	if !from.Before(to) {
		return from, to, "o início (from) deve ser anterior ao fim (to)"
	}
	if to.Sub(from) > max {
		return from, to, fmt.Sprintf("intervalo de %s maior que o máximo de %s para %s; divida o pedido", days(to.Sub(from)), days(max), what)
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

func days(d time.Duration) string {
	n := d.Hours() / 24
	if n >= 2 {
		return fmt.Sprintf("%.0f dias", math.Floor(n))
	}
	return fmt.Sprintf("%.0f horas", math.Ceil(d.Hours()))
}

// limitFunc binds a sensor to its code's ActiveLimitFor.
func (rp *Reports) limitFunc(s registry.Sensor) (stats.LimitFunc, *codes.Code, error) {
	if rp.o.Codes == nil {
		return nil, nil, nil
	}
	c, ok := rp.o.Codes.Code(s.Code)
	if !ok {
		return nil, nil, fmt.Errorf("código municipal %q do sensor %s não está carregado", s.Code, s.ID)
	}
	est, mech := "", ""
	if len(s.Establishments) > 0 {
		est, mech = s.Establishments[0].Type, s.Establishments[0].Mechanism
	}
	return func(t time.Time) (codes.Limit, bool) { return c.ActiveLimitFor(s.Zone, est, mech, t) }, c, nil
}

// sensorsOf resolves sensor= or municipality=.
func (rp *Reports) sensorsOf(w http.ResponseWriter, sensor, municipality string) ([]registry.Sensor, bool) {
	reg := rp.o.Registry.Current()
	switch {
	case sensor != "":
		s, ok := reg.Sensor(sensor)
		if !ok {
			apiError(w, http.StatusNotFound, "sensor "+strconv.Quote(sensor)+" não está cadastrado")
			return nil, false
		}
		return []registry.Sensor{s}, true
	case municipality != "":
		var out []registry.Sensor
		for _, s := range reg.Sensors() {
			if s.Municipality() == municipality || s.Code == municipality {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			apiError(w, http.StatusNotFound, "nenhum sensor cadastrado no município "+strconv.Quote(municipality))
			return nil, false
		}
		return out, true
	}
	apiError(w, http.StatusBadRequest, "informe sensor ou municipality")
	return nil, false
}

// SensorReport is one sensor's report in the JSON answer.
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

func (rp *Reports) report(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "csv" && format != "pdf" {
		apiError(w, http.StatusBadRequest, "format "+strconv.Quote(format)+" inválido; use json, csv ou pdf")
		return
	}
	sensors, ok := rp.sensorsOf(w, q.Get("sensor"), q.Get("municipality"))
	if !ok {
		return
	}
	from, to, msg := rp.rangeOf(q, rp.o.MaxReport, "um relatório")
	if msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	if rp.o.Tier == nil {
		apiError(w, http.StatusServiceUnavailable, "relatórios indisponíveis: o armazenamento de longo prazo não está ativo")
		return
	}
	if !rp.acquire(w) {
		return
	}
	defer rp.release()
	out, pdfIn, ok := rp.reports(r.Context(), w, sensors, from, to, format == "pdf")
	if !ok {
		return
	}
	name := reportName(q.Get("sensor"), q.Get("municipality"), from, to)
	switch format {
	case "json":
		apiJSON(w, http.StatusOK, map[string]any{"from": from.UTC(), "to": to.UTC(), "generated_at": rp.o.Now().UTC(), "sensors": out})
	case "csv":
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.csv"`)
		w.Header().Set("Cache-Control", "no-store")
		bw := bufio.NewWriterSize(w, 64<<10)
		writeReportCSV(bw, out)
		bw.Flush() //nolint:errcheck // the client went away
	case "pdf":
		if pdfIn.Municipality == "" {
			pdfIn.Municipality = sensors[0].Municipality()
		}
		pdfIn.From, pdfIn.To, pdfIn.Generated = from, to, rp.o.Now()
		rp.writeReportPDF(w, name, pdfIn)
	}
}

// reports computes the report of each sensor over [from, to), and with
// withPDF the PDF's input too. On an error it answers (nothing when the
// client went away) and returns false.
func (rp *Reports) reports(ctx context.Context, w http.ResponseWriter, sensors []registry.Sensor, from, to time.Time, withPDF bool) ([]SensorReport, pdf.ReportInput, bool) {
	var out []SensorReport
	var pdfIn pdf.ReportInput
	for _, s := range sensors {
		sr, code, ok := rp.sensorReport(ctx, w, s, from, to)
		if !ok {
			return nil, pdfIn, false
		}
		out = append(out, sr)
		if withPDF {
			ps, ok := rp.pdfSensor(ctx, w, s, sr, code, from, to)
			if !ok {
				return nil, pdfIn, false
			}
			if code != nil && pdfIn.Municipality == "" {
				pdfIn.Municipality, pdfIn.State = code.Municipality, code.State
			}
			pdfIn.Sensors = append(pdfIn.Sensors, ps)
		}
	}
	return out, pdfIn, true
}

// sensorReport folds one sensor's long-term tier over [from, to) under its
// code's limits and calendar. It also returns the code (nil when the
// sensor's code is not loaded). On an error it answers and returns false.
func (rp *Reports) sensorReport(ctx context.Context, w http.ResponseWriter, s registry.Sensor, from, to time.Time) (SensorReport, *codes.Code, bool) {
	limit, code, err := rp.limitFunc(s)
	if err != nil {
		apiError(w, http.StatusUnprocessableEntity, err.Error())
		return SensorReport{}, nil, false
	}
	opt := stats.Options{From: from, To: to, Limit: limit, Loc: loc}
	if code != nil {
		opt.Calendar = stats.CodeCalendar(code)
	}
	e := stats.New(opt)
	if err := rp.o.Tier.Fold(ctx, s.ID, e, from, to); err != nil {
		if ctx.Err() == nil {
			rp.internal(w, err)
		}
		return SensorReport{}, nil, false
	}
	sr := SensorReport{Sensor: s.ID, Municipality: s.Municipality(), Code: s.Code, Zone: s.Zone, Address: s.Address,
		Limits: stats.LimitSeries(from, to, limit, loc), Report: e.Result()}
	if code != nil {
		sr.MunicipalityName = code.Municipality + "/" + code.State
	}
	return sr, code, true
}

// pdfSensor is one sensor's part of the PDF report: its report and its
// hourly levels. On an error it answers and returns false.
func (rp *Reports) pdfSensor(ctx context.Context, w http.ResponseWriter, s registry.Sensor, sr SensorReport, code *codes.Code, from, to time.Time) (pdf.ReportSensor, bool) {
	ps := pdf.ReportSensor{ID: s.ID, Address: s.Address, Zone: s.Zone, Report: sr.Report, Limits: sr.Limits,
		Meter: strings.TrimSpace(s.Meter.Model + " " + s.Meter.Serial + " (" + s.Meter.Grade + ")")}
	if code != nil {
		ps.Code = code.Title()
	}
	if err := rp.o.Tier.EachHour(ctx, s.ID, from, to, func(h stats.Hour) error {
		if lv, ok := h.LAeq(); ok {
			ps.Hours = append(ps.Hours, pdf.Point{T: h.Start, DurMs: h.DurMs, LAeq: lv, LAFmax: h.Max})
		}
		return nil
	}); err != nil {
		if ctx.Err() == nil {
			rp.internal(w, err)
		}
		return ps, false
	}
	return ps, true
}

// writeReportPDF renders the PDF report and answers it as an attachment.
func (rp *Reports) writeReportPDF(w http.ResponseWriter, name string, in pdf.ReportInput) {
	b, err := pdf.RenderReport(in)
	if err != nil {
		rp.internal(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.pdf"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b) //nolint:errcheck // the client went away
}

func reportName(sensor, municipality string, from, to time.Time) string {
	who := sensor
	if who == "" {
		who = municipality
	}
	return fmt.Sprintf("relatorio-%s-%s-a-%s", safeName(who), from.In(loc).Format("20060102-1504"), to.In(loc).Format("20060102-1504"))
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// CSV: ';'-separated with decimal commas and a UTF-8 byte-order mark, as
// spreadsheets set to pt-BR open it.

const bom = "\ufeff"

func csvDB(dst []byte, v *float64) []byte {
	if v == nil {
		return dst
	}
	return csvNum(dst, *v, 2)
}

func csvNum(dst []byte, v float64, prec int) []byte {
	if prec >= 0 && prec <= 3 && !math.IsNaN(v) && math.Abs(v) < 1e12 {
		return appendFixed(dst, v, prec, ',')
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, v, 'f', prec, 64)
	for i := n; i < len(dst); i++ {
		if dst[i] == '.' {
			dst[i] = ','
		}
	}
	return dst
}

// appendFixed appends v with prec decimals (0–3) and the decimal mark sep,
// rounding half away from zero: strconv's shortest-exact formatting was a
// third of a 1-min export's time.
func appendFixed(dst []byte, v float64, prec int, sep byte) []byte {
	scale := [...]float64{1, 10, 100, 1000}[prec]
	n := int64(math.Round(math.Abs(v) * scale))
	if v < 0 && n != 0 {
		dst = append(dst, '-')
	}
	p := int64(scale)
	dst = strconv.AppendInt(dst, n/p, 10)
	if prec > 0 {
		dst = append(dst, sep)
		frac := n % p
		for d := p / 10; d > 0; d /= 10 {
			dst = append(dst, byte('0'+frac/d))
			frac %= d
		}
	}
	return dst
}

func csvText(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, ";\"\n\r") {
		return append(dst, s...)
	}
	return append(append(append(dst, '"'), strings.ReplaceAll(s, `"`, `""`)...), '"')
}

func localTime(t time.Time) string { return t.In(loc).Format("2006-01-02T15:04:05-07:00") }

func writeReportCSV(w *bufio.Writer, reps []SensorReport) {
	w.WriteString(bom + "sensor;linha;inicio;fim;periodo;limite_dba;laeq_db;l10_db;l50_db;l90_db;l95_db;lafmax_db;lafmin_db;" +
		"ld_db;le_db;ln_db;lden_db;cobertura_pct;minutos_acima;episodios_acima\n")
	var b []byte
	row := func(sensor, kind string, start, end time.Time, period string, limit *float64, f stats.Figures, den *stats.DEN) {
		b = csvText(b[:0], sensor)
		b = append(b, ';')
		b = append(b, kind...)
		b = append(b, ';')
		b = append(b, localTime(start)...)
		b = append(b, ';')
		b = append(b, localTime(end)...)
		b = append(b, ';')
		b = csvText(b, period)
		for _, v := range []*float64{limit, f.LAeq, f.L10, f.L50, f.L90, f.L95, f.LAFmax, f.LAFmin} {
			b = csvDB(append(b, ';'), v)
		}
		for i := range 4 {
			b = append(b, ';')
			if den != nil {
				b = csvDB(b, [...]*float64{den.Ld, den.Le, den.Ln, den.Lden}[i])
			}
		}
		b = csvNum(append(b, ';'), 100*f.Coverage, 1)
		b = strconv.AppendInt(append(b, ';'), int64(f.MinutesAbove), 10)
		b = strconv.AppendInt(append(b, ';'), int64(f.EpisodesAbove), 10)
		b = append(b, '\n')
		w.Write(b) //nolint:errcheck // a bufio.Writer keeps its first error
	}
	for _, r := range reps {
		row(r.Sensor, "total", r.From, r.To, "", nil, r.Figures, &r.DEN)
		for _, p := range r.Periods {
			row(r.Sensor, "periodo_legal", r.From, r.To, p.PeriodLabel, p.LimitDBA, p.Figures, nil)
		}
		for _, o := range r.Occurrences {
			label := o.PeriodLabel
			if o.Holiday != "" {
				label += " (feriado: " + o.Holiday + ")"
			} else if o.HolidayEve {
				label += " (véspera de feriado)"
			}
			row(r.Sensor, "ocorrencia", o.Start, o.End, label, o.LimitDBA, o.Figures, nil)
		}
		for _, d := range r.Days {
			day, _ := time.ParseInLocation(time.DateOnly, d.Date, loc)
			start, end := day, day.AddDate(0, 0, 1)
			if start.Before(r.From) {
				start = r.From
			}
			if end.After(r.To) {
				end = r.To
			}
			row(r.Sensor, "dia", start, end, dayLabel(d.DayInfo), nil, d.Figures, &d.DEN)
		}
	}
}

// dayLabel is what the code's calendar says of a day, pt-BR ("" for an
// ordinary day).
func dayLabel(d stats.DayInfo) string {
	switch {
	case d.Holiday != "":
		return "feriado: " + d.Holiday
	case d.Optional != "" && d.HolidayEve:
		return "ponto facultativo: " + d.Optional + "; véspera de feriado"
	case d.Optional != "":
		return "ponto facultativo: " + d.Optional
	case d.HolidayEve:
		return "véspera de feriado"
	}
	return ""
}

// LimitSeries is the limit in force for a sensor over [from, to) as steps
// (APIOptions.LimitSeries: returned with /readings); empty when no code is
// loaded.
func (rp *Reports) LimitSeries(s registry.Sensor, from, to time.Time) ([]stats.LimitStep, error) {
	limit, _, err := rp.limitFunc(s)
	if err != nil {
		return nil, err
	}
	if limit == nil || !from.Before(to) {
		return []stats.LimitStep{}, nil
	}
	return stats.LimitSeries(from, to, limit, loc), nil
}

// Window is the figures of a sensor's [from, to) from the tier, rounded in
// to whole minutes, so that no future second counts against the coverage
// (APIOptions.Window: returned with /readings).
func (rp *Reports) Window(ctx context.Context, s registry.Sensor, from, to time.Time) (stats.Figures, error) {
	if rp.o.Tier == nil {
		return stats.Figures{}, errors.New("sem armazenamento de longo prazo")
	}
	limit, _, err := rp.limitFunc(s)
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
	e := stats.New(stats.Options{From: from, To: to, Limit: limit, Loc: loc})
	if err := rp.o.Tier.Fold(ctx, s.ID, e, from, to); err != nil {
		return stats.Figures{}, err
	}
	return e.Result().Figures, nil
}

// limits answers the limit in force for a sensor over a range, as steps.
func (rp *Reports) limits(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s, ok := rp.o.Registry.Current().Sensor(id)
	if !ok {
		apiError(w, http.StatusNotFound, "sensor "+strconv.Quote(id)+" não está cadastrado")
		return
	}
	q := r.URL.Query()
	now := rp.o.Now()
	from, to := now.Add(-24*time.Hour), now
	var err error
	if v := q.Get("from"); v != "" {
		if from, err = parseInstant(v, false); err != nil {
			apiError(w, http.StatusBadRequest, "from inválido: "+err.Error())
			return
		}
	}
	if v := q.Get("to"); v != "" {
		if to, err = parseInstant(v, true); err != nil {
			apiError(w, http.StatusBadRequest, "to inválido: "+err.Error())
			return
		}
	}
	if !from.Before(to) || to.Sub(from) > rp.o.MaxReport {
		apiError(w, http.StatusBadRequest, "intervalo inválido: from deve ser anterior a to, e o intervalo de no máximo "+days(rp.o.MaxReport))
		return
	}
	limit, _, err := rp.limitFunc(s)
	if err != nil {
		apiError(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	steps := stats.LimitSeries(from, to, limit, loc)
	if steps == nil {
		steps = []stats.LimitStep{}
	}
	apiJSON(w, http.StatusOK, map[string]any{"sensor": id, "from": from.UTC(), "to": to.UTC(), "limits": steps})
}

// export streams a sensor's data: 1-s records from the readings store or
// 1-min aggregates from the tier, as CSV or JSON, one hour in memory at a
// time. An error after the first bytes aborts the response (the client
// sees a broken download, never a silently short file).
func (rp *Reports) export(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, ok := rp.o.Registry.Current().Sensor(id); !ok {
		apiError(w, http.StatusNotFound, "sensor "+strconv.Quote(id)+" não está cadastrado")
		return
	}
	q := r.URL.Query()
	res, format, msg := exportFormat(q.Get("res"), q.Get("format"))
	if msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	max, what := rp.o.Max1min, "exportação de 1 min"
	if res == "1s" {
		max, what = rp.o.Max1s, "exportação de 1 s (use res=1min para intervalos longos)"
	}
	from, to, msg := rp.rangeOf(q, max, what)
	if msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	if res == "1s" && rp.o.Records == nil || res == "1min" && rp.o.Tier == nil {
		apiError(w, http.StatusServiceUnavailable, "exportação indisponível neste serviço")
		return
	}
	if !rp.acquire(w) {
		return
	}
	defer rp.release()
	setExportHeaders(w, id, res, format, from, to)
	// Reading and formatting run on their own goroutine, writing to the
	// connection on this one: the two halves of the work overlap.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	pipe := newChunkPipe(ctx)
	produced := make(chan error, 1)
	go func() {
		defer pipe.close()
		produced <- rp.produceExport(ctx, pipe, id, res, format == "json", from, to)
	}()
	err := writeChunks(w, pipe, cancel)
	if perr := <-produced; err == nil {
		err = perr
	}
	if err != nil {
		if r.Context().Err() == nil {
			rp.o.Log.Error("exportação interrompida", "sensor", id, "erro", err)
		}
		panic(http.ErrAbortHandler)
	}
}

// exportFormat applies the defaults to an export's res and format
// parameters (1min, csv) and checks them; msg says what is wrong.
func exportFormat(res, format string) (string, string, string) {
	if res == "" {
		res = "1min"
	}
	if format == "" {
		format = "csv"
	}
	if res != "1s" && res != "1min" {
		return "", "", "res " + strconv.Quote(res) + " inválido; use 1s (registros de 1 s) ou 1min (agregados de 1 min)"
	}
	if format != "csv" && format != "json" {
		return "", "", "format " + strconv.Quote(format) + " inválido; use csv ou json"
	}
	return res, format, ""
}

// setExportHeaders names the download after the sensor, range, resolution
// and format, and sets its content type.
func setExportHeaders(w http.ResponseWriter, id, res, format string, from, to time.Time) {
	name := fmt.Sprintf("sossego-%s-%s-a-%s-%s.%s", safeName(id), from.In(loc).Format("20060102-1504"), to.In(loc).Format("20060102-1504"), res, format)
	ctype := "text/csv; charset=utf-8"
	if format == "json" {
		ctype = "application/json; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
}

// produceExport reads the sensor's rows over [from, to) and formats them
// into pipe: the tier's minute rows, or the readings store's 1-s records an
// hour at a time.
func (rp *Reports) produceExport(ctx context.Context, pipe *chunkPipe, id, res string, asJSON bool, from, to time.Time) error {
	bw := bufio.NewWriterSize(pipe, 64<<10)
	ex := &exporter{w: bw, json: asJSON}
	ex.begin(id, res, from, to)
	var err error
	if res == "1min" {
		err = rp.o.Tier.EachMinuteRow(ctx, id, from, to, func(m *stats.MinuteRow) error { ex.minute(m); return ex.err() })
	} else {
		for t := from; t.Before(to) && err == nil; t = t.Add(time.Hour) {
			var recs []store.Record
			if recs, err = rp.o.Records.Records(ctx, id, t, minTime(t.Add(time.Hour), to), 0); err == nil {
				for i := range recs {
					ex.second(&recs[i])
				}
				err = ex.err()
			}
		}
	}
	if err == nil {
		ex.end()
		err = bw.Flush()
	}
	return err
}

// writeChunks writes pipe's chunks to the client until the producer closes
// it, recycling each; the first write error cancels the producer and is
// returned.
func writeChunks(w http.ResponseWriter, pipe *chunkPipe, cancel context.CancelFunc) error {
	var err error
	for c := range pipe.chunks {
		if err == nil {
			if _, err = w.Write(c); err != nil {
				cancel() // the client went away: stop reading
			}
		}
		pipe.recycle(c)
	}
	return err
}

// chunkPipe carries an export's bytes from the goroutine that formats them
// to the one that writes them, in chunks it recycles (a few in flight, so
// memory stays flat).
type chunkPipe struct {
	ctx    context.Context
	chunks chan []byte
	free   chan []byte
}

const chunkSize = 256 << 10

func newChunkPipe(ctx context.Context) *chunkPipe {
	p := &chunkPipe{ctx: ctx, chunks: make(chan []byte, 4), free: make(chan []byte, 6)}
	return p
}

// Write copies b into one chunk (bufio hands it at most its buffer size).
func (p *chunkPipe) Write(b []byte) (int, error) {
	var c []byte
	select {
	case c = <-p.free:
	default:
		c = make([]byte, 0, max(chunkSize, len(b)))
	}
	c = append(c[:0], b...)
	select {
	case p.chunks <- c:
		return len(b), nil
	case <-p.ctx.Done():
		return 0, p.ctx.Err()
	}
}

func (p *chunkPipe) recycle(c []byte) {
	select {
	case p.free <- c:
	default:
	}
}

func (p *chunkPipe) close() { close(p.chunks) }

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

type exporter struct {
	w     *bufio.Writer
	json  bool
	first bool
	b     []byte
	// The local time of a minute is its hour's prefix (offsets change only
	// on whole hours) and the minute: formatted once per hour.
	hour   int64
	prefix []byte // "2026-11-30T22:"
	suffix []byte // ":00-03:00"
}

// appendMinute appends t (a whole minute) as 2006-01-02T15:04:05-07:00 in
// Brasília time.
func (e *exporter) appendMinute(dst []byte, t time.Time) []byte {
	if h := t.Unix() / 3600; h != e.hour || e.prefix == nil {
		lt := t.In(loc)
		e.hour = h
		e.prefix = lt.AppendFormat(e.prefix[:0], "2006-01-02T15:")
		e.suffix = lt.AppendFormat(e.suffix[:0], ":05-07:00")
	}
	dst = append(dst, e.prefix...)
	m := t.Unix() / 60 % 60
	dst = append(dst, byte('0'+m/10), byte('0'+m%10))
	return append(dst, e.suffix...)
}

func (e *exporter) err() error {
	_, err := e.w.Write(nil)
	return err
}

func (e *exporter) begin(sensor, res string, from, to time.Time) {
	e.first = true
	if e.json {
		head, _ := json.Marshal(map[string]any{"sensor": sensor, "res": res, "from": from.UTC(), "to": to.UTC()})
		e.w.Write(head[:len(head)-1]) //nolint:errcheck // bufio keeps its first error
		e.w.WriteString(`,"records":[`)
		return
	}
	if res == "1min" {
		e.w.WriteString(bom + "inicio;segundos_presentes;laeq_db;lafmax_db;lafmin_db;l10_db;l50_db;l90_db;l95_db;percentis_de\n")
	} else {
		e.w.WriteString(bom + "inicio;duracao_ms;laeq_db;lafmax_db;lafmin_db;lcpeak_db;sobrecarga;relogio_sincronizado;gateway;seq\n")
	}
}

func (e *exporter) end() {
	if e.json {
		e.w.WriteString("]}\n")
	}
}

func (e *exporter) sep() {
	if e.json && !e.first {
		e.b = append(e.b, ',')
	}
	e.first = false
}

func jsonNum(dst []byte, v float64, prec int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, "null"...)
	}
	if prec >= 0 && prec <= 3 && math.Abs(v) < 1e12 {
		return appendFixed(dst, v, prec, '.')
	}
	return strconv.AppendFloat(dst, v, 'f', prec, 64)
}

func (e *exporter) minute(m *stats.MinuteRow) {
	if m.DurMs <= 0 || math.IsNaN(m.LAeq) {
		return
	}
	basis := "laf"
	if m.FastMs < m.DurMs {
		basis = "laeq_1s"
		if m.FastMs > 0 {
			basis = "misto"
		}
	}
	e.b = e.b[:0]
	e.sep()
	if e.json {
		e.b = append(e.b, `{"start":"`...)
		e.b = m.Start.UTC().AppendFormat(e.b, time.RFC3339)
		e.b = append(e.b, `","seconds_present":`...)
		e.b = jsonNum(e.b, float64(m.DurMs)/1000, 3)
		e.b = jsonNum(append(e.b, `,"laeq_db":`...), m.LAeq, 2)
		e.b = jsonNum(append(e.b, `,"lafmax_db":`...), m.Max, 2)
		e.b = jsonNum(append(e.b, `,"lafmin_db":`...), m.Min, 2)
		for i, k := range [...]string{`,"l10_db":`, `,"l50_db":`, `,"l90_db":`, `,"l95_db":`} {
			e.b = append(e.b, k...)
			if m.HasPct {
				e.b = jsonNum(e.b, m.Pct[i], 1)
			} else {
				e.b = append(e.b, "null"...)
			}
		}
		e.b = append(append(append(e.b, `,"percentile_basis":"`...), basis...), `"}`...)
		e.b = append(e.b, '\n')
	} else {
		e.b = e.appendMinute(e.b, m.Start)
		e.b = csvNum(append(e.b, ';'), float64(m.DurMs)/1000, 0)
		e.b = csvNum(append(e.b, ';'), m.LAeq, 2)
		e.b = csvNum(append(e.b, ';'), m.Max, 2)
		e.b = csvNum(append(e.b, ';'), m.Min, 2)
		for i := range m.Pct {
			e.b = append(e.b, ';')
			if m.HasPct {
				e.b = csvNum(e.b, m.Pct[i], 1)
			}
		}
		e.b = append(append(append(e.b, ';'), basis...), '\n')
	}
	e.w.Write(e.b) //nolint:errcheck // bufio keeps its first error
}

func (e *exporter) second(r *store.Record) {
	e.b = e.b[:0]
	e.sep()
	if e.json {
		j, _ := json.Marshal(r)
		e.b = append(append(e.b, j...), '\n')
	} else {
		e.b = r.T.In(loc).AppendFormat(e.b, "2006-01-02T15:04:05.000-07:00")
		e.b = strconv.AppendInt(append(e.b, ';'), r.DurMs, 10)
		e.b = csvNum(append(e.b, ';'), r.LAeq, 2)
		e.b = csvNum(append(e.b, ';'), r.LAFmax, 2)
		e.b = csvNum(append(e.b, ';'), r.LAFmin, 2)
		e.b = append(e.b, ';')
		if r.LCpeak != nil {
			e.b = csvNum(e.b, *r.LCpeak, 2)
		}
		e.b = append(e.b, ';')
		e.b = append(e.b, map[bool]string{true: "sim", false: "não"}[r.Overload]...)
		e.b = append(e.b, ';')
		e.b = append(e.b, map[bool]string{true: "sim", false: "não"}[r.Synced]...)
		e.b = csvText(append(e.b, ';'), r.Gateway)
		e.b = strconv.AppendUint(append(e.b, ';'), r.Seq, 10)
		e.b = append(e.b, '\n')
	}
	e.w.Write(e.b) //nolint:errcheck // bufio keeps its first error
}
