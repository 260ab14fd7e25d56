package reports

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/sossego/sossego/internal/stats"
	"github.com/sossego/sossego/internal/store"
)

// ExportFormat applies the defaults to an export's res and format
// parameters (1min, csv) and checks them; msg says what is wrong.
func ExportFormat(res, format string) (string, string, string) {
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

// Export writes the sensor's rows over [from, to) to w: the tier's minute
// rows (res "1min"), or the readings store's 1-s records ("1s") an hour at
// a time; as JSON with asJSON, else CSV.
func (e *Engine) Export(ctx context.Context, w io.Writer, id, res string, asJSON bool, from, to time.Time) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	ex := &exporter{w: bw, json: asJSON}
	ex.begin(id, res, from, to)
	var err error
	if res == "1min" {
		err = e.tier.EachMinuteRow(ctx, id, from, to, func(m *stats.MinuteRow) error { ex.minute(m); return ex.err() })
	} else {
		for t := from; t.Before(to) && err == nil; t = t.Add(time.Hour) {
			var recs []store.Record
			if recs, err = e.records.Records(ctx, id, t, minTime(t.Add(time.Hour), to), 0); err == nil {
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
