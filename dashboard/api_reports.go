package dashboard

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/pdf"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/reports"
	"github.com/sossego/sossego/internal/stats"
)

// Reports and exports (docs/api.md, "Reports and exports"):
//
//	GET /api/v1/reports?sensor=…|municipality=…&from=…&to=…&format=json|csv|pdf
//	GET /api/v1/sensors/{id}/export?from=…&to=…&res=1s|1min&format=csv|json
//	GET /api/v1/sensors/{id}/limits?from=…&to=…
//
// The handlers translate; internal/reports computes the reports from the
// long-term tier and streams the exports (one hour of data in memory at a
// time).

// ReportTier is what reports and exports read of the long-term tier
// (reports.Tier).
type ReportTier = reports.Tier

// RecordReader reads 1-s records for 1-s exports (reports.RecordReader).
type RecordReader = reports.RecordReader

// SensorReport is one sensor's report in the JSON answer.
type SensorReport = reports.SensorReport

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
	eng  *reports.Engine
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
	return &Reports{o: o, eng: reports.New(o.Tier, o.Records, o.Codes), sema: make(chan struct{}, o.Concurrent)}
}

// LimitSeries is the limit in force for a sensor over [from, to) as steps
// (APIOptions.LimitSeries: returned with /readings); empty when no code is
// loaded.
func (rp *Reports) LimitSeries(s registry.Sensor, from, to time.Time) ([]stats.LimitStep, error) {
	return rp.eng.LimitSeries(s, from, to)
}

// Window is the figures of a sensor's [from, to) from the tier, rounded in
// to whole minutes (APIOptions.Window: returned with /readings).
func (rp *Reports) Window(ctx context.Context, s registry.Sensor, from, to time.Time) (stats.Figures, error) {
	return rp.eng.Window(ctx, s, from, to)
}

func (rp *Reports) internal(w http.ResponseWriter, err error) {
	serverError(w, rp.o.Log, "relatórios e exportações", err)
}

// fail answers a report's error: 422 for a sensor whose code is not
// loaded, nothing when the client went away, 500 otherwise.
func (rp *Reports) fail(ctx context.Context, w http.ResponseWriter, err error) {
	var ce *reports.CodeError
	switch {
	case errors.As(err, &ce):
		apiError(w, http.StatusUnprocessableEntity, err.Error())
	case ctx.Err() == nil:
		rp.internal(w, err)
	}
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
	from, to, msg := reports.Range(q.Get("from"), q.Get("to"), rp.o.Now(), rp.o.MaxReport, "um relatório")
	if msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	if !rp.eng.HasTier() {
		apiError(w, http.StatusServiceUnavailable, "relatórios indisponíveis: o armazenamento de longo prazo não está ativo")
		return
	}
	if !rp.acquire(w) {
		return
	}
	defer rp.release()
	out, pdfIn, err := rp.eng.Reports(r.Context(), sensors, from, to, format == "pdf")
	if err != nil {
		rp.fail(r.Context(), w, err)
		return
	}
	name := reports.ReportName(q.Get("sensor"), q.Get("municipality"), from, to)
	switch format {
	case "json":
		apiJSON(w, http.StatusOK, map[string]any{"from": from.UTC(), "to": to.UTC(), "generated_at": rp.o.Now().UTC(), "sensors": out})
	case "csv":
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.csv"`)
		w.Header().Set("Cache-Control", "no-store")
		bw := bufio.NewWriterSize(w, 64<<10)
		reports.WriteCSV(bw, out)
		bw.Flush() //nolint:errcheck // the client went away
	case "pdf":
		if pdfIn.Municipality == "" {
			pdfIn.Municipality = sensors[0].Municipality()
		}
		pdfIn.From, pdfIn.To, pdfIn.Generated = from, to, rp.o.Now()
		rp.writeReportPDF(w, name, pdfIn)
	}
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
		if from, err = reports.ParseInstant(v, false); err != nil {
			apiError(w, http.StatusBadRequest, "from inválido: "+err.Error())
			return
		}
	}
	if v := q.Get("to"); v != "" {
		if to, err = reports.ParseInstant(v, true); err != nil {
			apiError(w, http.StatusBadRequest, "to inválido: "+err.Error())
			return
		}
	}
	if !from.Before(to) || to.Sub(from) > rp.o.MaxReport {
		apiError(w, http.StatusBadRequest, "intervalo inválido: from deve ser anterior a to, e o intervalo de no máximo "+reports.Days(rp.o.MaxReport))
		return
	}
	steps, err := rp.eng.Steps(s, from, to)
	if err != nil {
		apiError(w, http.StatusUnprocessableEntity, err.Error())
		return
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
	res, format, msg := reports.ExportFormat(q.Get("res"), q.Get("format"))
	if msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	max, what := rp.o.Max1min, "exportação de 1 min"
	if res == "1s" {
		max, what = rp.o.Max1s, "exportação de 1 s (use res=1min para intervalos longos)"
	}
	from, to, msg := reports.Range(q.Get("from"), q.Get("to"), rp.o.Now(), max, what)
	if msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	if res == "1s" && !rp.eng.HasRecords() || res == "1min" && !rp.eng.HasTier() {
		apiError(w, http.StatusServiceUnavailable, "exportação indisponível neste serviço")
		return
	}
	if !rp.acquire(w) {
		return
	}
	defer rp.release()
	setExportHeaders(w, reports.ExportName(id, res, format, from, to), format)
	// Reading and formatting run on their own goroutine, writing to the
	// connection on this one: the two halves of the work overlap.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	pipe := newChunkPipe(ctx)
	produced := make(chan error, 1)
	go func() {
		defer pipe.close()
		produced <- rp.eng.Export(ctx, pipe, id, res, format == "json", from, to)
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

// setExportHeaders names the download and sets its content type.
func setExportHeaders(w http.ResponseWriter, name, format string) {
	ctype := "text/csv; charset=utf-8"
	if format == "json" {
		ctype = "application/json; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
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
